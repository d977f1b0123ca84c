//! The Kohn–Sham Hamiltonian of one k-point applied to a block of bands, never formed:
//! kinetic diagonal, local potential in real space (sphere → box, FFT, multiply, FFT,
//! box → sphere), and the separable HGH projectors as two gemms (`⟨p|ψ⟩`, then
//! `Σ |p⟩ h ⟨p|ψ⟩`).

use crate::basis::{FftGrid, Sphere};
use crate::crystal::{dot, Crystal};
use crate::error::Result;
use crate::psp::Hgh;
use ctensor::{
    c64, matmul, matmul_into, matmul_op, DataType, DeviceType, SphereFft, Tensor, Trans,
};
use std::f64::consts::PI;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// `H(k)` of one k-point on a block of coefficient columns.
pub struct KOperator {
    /// The basis.
    pub sphere: Sphere,
    /// The sphere ↔ box transform of this basis.
    fft: SphereFft,
    /// `½|k+G|²`, f64 `[npw, 1]` on the device.
    kinetic: Tensor,
    /// `⟨K|p_j⟩`, c64 `[npw, nproj]`.
    proj: Tensor,
    /// The coupling `h` between projectors, c64 `[nproj, nproj]` (block diagonal).
    dmat: Tensor,
    /// Nanoseconds spent in the local-potential transforms (with the kinetic term) and in
    /// the projector gemms.
    spent: [AtomicU64; 2],
}

impl KOperator {
    /// The operator of `sphere` for `crystal` with pseudopotentials `psps` (by species),
    /// on `device`.
    pub fn new(
        crystal: &Crystal,
        psps: &[Hgh],
        sphere: Sphere,
        grid: FftGrid,
        device: DeviceType,
    ) -> Result<KOperator> {
        let npw = sphere.len();
        let omega = crystal.volume();
        // Columns: atom, channel, projector i, m.
        let mut cols: Vec<Vec<c64>> = Vec::new();
        let mut blocks: Vec<(usize, usize, f64)> = Vec::new();
        for atom in &crystal.atoms {
            let psp = &psps[atom.species];
            let tau = crystal.to_cartesian(atom.reduced);
            let phase: Vec<c64> = sphere
                .kcart
                .iter()
                .map(|k| c64::from_polar(1.0, -dot(*k, tau)))
                .collect();
            for ch in &psp.channels {
                let nl = 2 * ch.l + 1;
                let first = cols.len();
                let il = (0..ch.l).fold(c64::new(1.0, 0.0), |z, _| z * c64::new(0.0, -1.0));
                for i in 0..ch.h.len() {
                    for m in 0..nl {
                        let col: Vec<c64> = sphere
                            .kcart
                            .iter()
                            .zip(&phase)
                            .map(|(k, ph)| {
                                let q = dot(*k, *k).sqrt();
                                let y = real_ylm(ch.l, m, *k);
                                il * ph * (y * psp.projector(ch, i, q) / omega.sqrt())
                            })
                            .collect();
                        cols.push(col);
                    }
                }
                for i in 0..ch.h.len() {
                    for j in 0..ch.h.len() {
                        for m in 0..nl {
                            blocks.push((first + i * nl + m, first + j * nl + m, ch.h[i][j]));
                        }
                    }
                }
            }
        }
        let nproj = cols.len();
        let mut flat = vec![c64::new(0.0, 0.0); npw * nproj];
        for (j, col) in cols.iter().enumerate() {
            for (g, v) in col.iter().enumerate() {
                flat[g * nproj + j] = *v;
            }
        }
        let mut d = vec![c64::new(0.0, 0.0); nproj * nproj];
        for (i, j, h) in blocks {
            d[i * nproj + j] = c64::new(h, 0.0);
        }
        Ok(KOperator {
            fft: SphereFft::new(grid.n, &sphere.grid_index, device)?,
            kinetic: Tensor::from_slice(&sphere.kinetic, &[npw, 1])?.to_device(device)?,
            proj: Tensor::from_slice(&flat, &[npw, nproj])?.to_device(device)?,
            dmat: Tensor::from_slice(&d, &[nproj, nproj])?.to_device(device)?,
            sphere,
            spent: [AtomicU64::new(0), AtomicU64::new(0)],
        })
    }

    /// Plane waves in the basis.
    pub fn npw(&self) -> usize {
        self.sphere.len()
    }

    /// The kinetic diagonal `½|k+G|²`, f64 `[npw]` (for the preconditioner).
    pub fn kinetic(&self) -> Result<Tensor> {
        Ok(self.kinetic.reshape(&[-1])?)
    }

    /// `Σ_n w_n |u_n(r)|²` on the grid (f64 `[n1, n2, n3]`) for the columns of `x`,
    /// with `u_n(r) = Σ_G c_n(G) e^{iG·r}`.
    pub fn density(&self, x: &Tensor, weights: &[f64]) -> Result<Tensor> {
        Ok(self.fft.density(x, weights)?)
    }

    /// `H X` for the columns of `x` (`[npw, nb]`, c64) with the local potential `v_r`
    /// (f64 `[n1, n2, n3]`, Ha).
    pub fn apply(&self, v_r: &Tensor, x: &Tensor) -> Result<Tensor> {
        let t0 = Instant::now();
        // The local potential and the kinetic diagonal in one pass over the bands; the
        // projector term accumulates into the result (no block-sized temporaries: the
        // 64-atom cell's blocks are 50 MB each).
        let mut out = self.fft.apply_local(v_r, &self.kinetic, x)?;
        let t1 = Instant::now();
        if self.proj.dims()[1] > 0 {
            let beta = matmul_op(&self.proj, Trans::C, x, Trans::N)?;
            let dbeta = matmul(&self.dmat, &beta)?;
            matmul_into(&self.proj, Trans::N, &dbeta, Trans::N, 1.0, 1.0, &mut out)?;
        }
        self.spent[0].fetch_add((t1 - t0).as_nanos() as u64, Ordering::Relaxed);
        self.spent[1].fetch_add(t1.elapsed().as_nanos() as u64, Ordering::Relaxed);
        Ok(out)
    }

    /// Seconds spent so far in [`apply`](Self::apply)'s local-potential transforms (the
    /// kinetic term included) and in its projector term (reset to zero by the call).
    pub fn take_seconds(&self) -> (f64, f64) {
        let f = |a: &AtomicU64| a.swap(0, Ordering::Relaxed) as f64 * 1e-9;
        (f(&self.spent[0]), f(&self.spent[1]))
    }

    /// `Σ_n f_n ⟨x_n|T|x_n⟩` and `Σ_n f_n ⟨x_n|V_nl|x_n⟩` for occupations `occ` of the
    /// columns of `x`.
    pub fn kinetic_and_nonlocal(&self, x: &Tensor, occ: &[f64]) -> Result<(f64, f64)> {
        let nb = x.dims()[1];
        let f = Tensor::from_slice(occ, &[1, nb])?.to_device(x.device())?;
        let a2 = x.abs()?;
        let t = a2
            .mul(&a2)?
            .mul(&self.kinetic)?
            .mul(&f)?
            .sum_all()?
            .item::<f64>()?;
        if self.proj.dims()[1] == 0 {
            return Ok((t, 0.0));
        }
        let beta = matmul_op(&self.proj, Trans::C, x, Trans::N)?;
        let dbeta = matmul(&self.dmat, &beta)?;
        let e = beta
            .conj()?
            .mul(&dbeta)?
            .mul(&f.cast(DataType::ComplexDouble)?)?
            .sum_all()?;
        Ok((t, e.item::<c64>()?.re))
    }
}

/// The real spherical harmonic `Y_lm(K̂)` (`m` in `0..2l+1`), orthonormal on the sphere;
/// 0 at K = 0 for l ≥ 1 (where every projector of l ≥ 1 vanishes anyway).
pub fn real_ylm(l: usize, m: usize, k: [f64; 3]) -> f64 {
    let r = dot(k, k).sqrt();
    if l == 0 {
        return 0.5 / PI.sqrt();
    }
    if r == 0.0 {
        return 0.0;
    }
    let (x, y, z) = (k[0] / r, k[1] / r, k[2] / r);
    let c = |v: f64| (v / PI).sqrt();
    match (l, m) {
        (1, 0) => c(3.0 / 4.0) * x,
        (1, 1) => c(3.0 / 4.0) * y,
        (1, 2) => c(3.0 / 4.0) * z,
        (2, 0) => c(15.0 / 4.0) * x * y,
        (2, 1) => c(15.0 / 4.0) * y * z,
        (2, 2) => c(15.0 / 4.0) * x * z,
        (2, 3) => c(5.0 / 16.0) * (3.0 * z * z - 1.0),
        (2, 4) => c(15.0 / 16.0) * (x * x - y * y),
        (3, 0) => c(35.0 / 32.0) * (3.0 * x * x - y * y) * y,
        (3, 1) => c(105.0 / 4.0) * x * y * z,
        (3, 2) => c(21.0 / 32.0) * y * (5.0 * z * z - 1.0),
        (3, 3) => c(7.0 / 16.0) * (5.0 * z * z * z - 3.0 * z),
        (3, 4) => c(21.0 / 32.0) * x * (5.0 * z * z - 1.0),
        (3, 5) => c(105.0 / 16.0) * (x * x - y * y) * z,
        (3, 6) => c(35.0 / 32.0) * (x * x - 3.0 * y * y) * x,
        _ => 0.0,
    }
}
