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

/// Atoms whose projectors are formed and applied together (8 silicon atoms: 40
/// projector columns, 15 MB at 24 000 plane waves).
pub const ATOMS_PER_CHUNK: usize = 8;

/// `H(k)` of one k-point on a block of coefficient columns.
pub struct KOperator {
    /// The basis.
    pub sphere: Sphere,
    /// The sphere ↔ box transform of this basis.
    fft: SphereFft,
    /// `½|k+G|²`, f64 `[npw, 1]` on the device.
    kinetic: Tensor,
    /// The projectors of each species without their atom's phase, `Y_lm(K̂) p_i(|K|)`
    /// times `(-i)^l / √Ω`, c64 `[npw, np]` (columns: channel, projector i, m), with the
    /// coupling `h` between them, c64 `[np, np]`.
    species: Vec<(Tensor, Tensor)>,
    /// The structure phases `e^{-iK·τ_a}` of the atoms, c64 `[npw, natom]`.
    phases: Tensor,
    /// Runs of consecutive atoms of one species, `(species, first atom, count)`, at most
    /// [`ATOMS_PER_CHUNK`] each: the projectors are formed one run at a time as they are
    /// applied (a 64-atom cell's full projector matrix is 126 MB).
    chunks: Vec<(usize, usize, usize)>,
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
        let mut species = Vec::with_capacity(psps.len());
        for psp in psps {
            // Columns: channel, projector i, m.
            let mut cols: Vec<Vec<c64>> = Vec::new();
            let mut blocks: Vec<(usize, usize, f64)> = Vec::new();
            for ch in &psp.channels {
                let nl = 2 * ch.l + 1;
                let first = cols.len();
                let il = (0..ch.l).fold(c64::new(1.0, 0.0), |z, _| z * c64::new(0.0, -1.0));
                for i in 0..ch.h.len() {
                    for m in 0..nl {
                        cols.push(
                            sphere
                                .kcart
                                .iter()
                                .map(|k| {
                                    let q = dot(*k, *k).sqrt();
                                    let y = real_ylm(ch.l, m, *k);
                                    il * (y * psp.projector(ch, i, q) / omega.sqrt())
                                })
                                .collect(),
                        );
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
            let np = cols.len();
            let mut flat = vec![c64::new(0.0, 0.0); npw * np];
            for (j, col) in cols.iter().enumerate() {
                for (g, v) in col.iter().enumerate() {
                    flat[g * np + j] = *v;
                }
            }
            let mut d = vec![c64::new(0.0, 0.0); np * np];
            for (i, j, h) in blocks {
                d[i * np + j] = c64::new(h, 0.0);
            }
            species.push((
                Tensor::from_vec(flat, &[npw, np])?.to_device(device)?,
                Tensor::from_vec(d, &[np, np])?.to_device(device)?,
            ));
        }
        let natom = crystal.atoms.len();
        let mut phases = vec![c64::new(0.0, 0.0); npw * natom];
        for (a, atom) in crystal.atoms.iter().enumerate() {
            let tau = crystal.to_cartesian(atom.reduced);
            for (g, k) in sphere.kcart.iter().enumerate() {
                phases[g * natom + a] = c64::from_polar(1.0, -dot(*k, tau));
            }
        }
        let mut chunks: Vec<(usize, usize, usize)> = Vec::new();
        for (a, atom) in crystal.atoms.iter().enumerate() {
            match chunks.last_mut() {
                Some((sp, _, n)) if *sp == atom.species && *n < ATOMS_PER_CHUNK => *n += 1,
                _ => chunks.push((atom.species, a, 1)),
            }
        }
        // Species without projectors (a purely local pseudopotential) add nothing.
        chunks.retain(|&(sp, _, _)| species[sp].0.dims()[1] > 0);
        Ok(KOperator {
            fft: SphereFft::new(grid.n, &sphere.grid_index, device)?,
            kinetic: Tensor::from_slice(&sphere.kinetic, &[npw, 1])?.to_device(device)?,
            species,
            phases: Tensor::from_vec(phases, &[npw, natom])?.to_device(device)?,
            chunks,
            sphere,
            spent: [AtomicU64::new(0), AtomicU64::new(0)],
        })
    }

    /// The projectors of the atoms of chunk `(sp, first, n)`, `[npw, n·np]` (columns:
    /// atom, then the species' columns), their coupling applied to `⟨p|x⟩` atom by atom,
    /// and `⟨p|x⟩` itself: `(P, D·Pᴴx, Pᴴx)`.
    fn project(&self, chunk: (usize, usize, usize), x: &Tensor) -> Result<[Tensor; 3]> {
        let (sp, first, n) = chunk;
        let (form, dmat) = &self.species[sp];
        let (npw, np, nb) = (self.npw() as i64, form.dims()[1] as i64, x.dims()[1] as i64);
        let p = form
            .unsqueeze(1)?
            .mul(&self.phases.narrow(1, first, n)?.unsqueeze(2)?)?
            .reshape(&[npw, n as i64 * np])?;
        let beta = matmul_op(&p, Trans::C, x, Trans::N)?;
        let dbeta = matmul(dmat, &beta.reshape(&[n as i64, np, nb])?)?.reshape(&[-1, nb])?;
        Ok([p, dbeta, beta])
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
        for &chunk in &self.chunks {
            let [p, dbeta, _] = self.project(chunk, x)?;
            matmul_into(&p, Trans::N, &dbeta, Trans::N, 1.0, 1.0, &mut out)?;
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
        let fc = f.cast(DataType::ComplexDouble)?;
        let mut e = 0.0;
        for &chunk in &self.chunks {
            let [_, dbeta, beta] = self.project(chunk, x)?;
            e += beta
                .conj()?
                .mul(&dbeta)?
                .mul(&fc)?
                .sum_all()?
                .item::<c64>()?
                .re;
        }
        Ok((t, e))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crystal::Atom;
    use std::path::Path;

    /// The projector term formed atom run by atom run (runs of up to eight atoms of one
    /// species: here 8 + 2 silicon, 2 arsenic, 1 gallium with its d channel, 1 silicon)
    /// against a plain sum over atoms, channels, projector pairs and m of
    /// `|p⟩ h ⟨p|x⟩`, at a general k-point; and the nonlocal energy against the same sum.
    #[test]
    fn the_projector_term_formed_by_runs_of_atoms_is_the_plain_sum() -> Result<()> {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
        let psps: Vec<Hgh> = ["14si.4.hgh", "31ga.3.hgh", "33as.5.hgh"]
            .iter()
            .map(|f| Hgh::from_file(&data.join(f)))
            .collect::<Result<_>>()?;
        let kinds = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 1, 0];
        let atoms: Vec<Atom> = kinds
            .iter()
            .enumerate()
            .map(|(a, &species)| {
                let t = a as f64;
                Atom {
                    species,
                    reduced: [
                        (0.37 * t + 0.05) % 1.0,
                        (0.61 * t + 0.11) % 1.0,
                        (0.83 * t + 0.17) % 1.0,
                    ],
                }
            })
            .collect();
        let lattice = [[11.0, 0.3, 0.0], [0.0, 12.0, 0.4], [0.5, 0.0, 13.0]];
        let names = ["Si", "Ga", "As"].map(String::from).to_vec();
        let crystal = Crystal::new(lattice, names, atoms)?;
        let ecut = 2.5;
        let grid = FftGrid::for_cutoff(&crystal, ecut);
        let sphere = Sphere::new(&crystal, [0.1, -0.2, 0.3], ecut, &grid)?;
        let op = KOperator::new(&crystal, &psps, sphere.clone(), grid, DeviceType::Cpu)?;
        assert_eq!(op.chunks.len(), 5);
        let (npw, nb) = (sphere.len(), 7);
        let x = Tensor::randn(DataType::ComplexDouble, DeviceType::Cpu, &[npw, nb], 3)?;
        let xv = x.to_vec::<c64>()?;
        // The plain sum.
        let omega = crystal.volume();
        let mut want = vec![c64::new(0.0, 0.0); npw * nb];
        let mut energy = 0.0;
        let occ: Vec<f64> = (0..nb).map(|b| 0.5 + b as f64).collect();
        for atom in &crystal.atoms {
            let psp = &psps[atom.species];
            let tau = crystal.to_cartesian(atom.reduced);
            for ch in &psp.channels {
                let il = (0..ch.l).fold(c64::new(1.0, 0.0), |z, _| z * c64::new(0.0, -1.0));
                let p = |i: usize, m: usize, g: usize| {
                    let k = sphere.kcart[g];
                    let q = dot(k, k).sqrt();
                    il * c64::from_polar(1.0, -dot(k, tau))
                        * real_ylm(ch.l, m, k)
                        * psp.projector(ch, i, q)
                        / omega.sqrt()
                };
                for m in 0..2 * ch.l + 1 {
                    for i in 0..ch.h.len() {
                        for j in 0..ch.h.len() {
                            for b in 0..nb {
                                let pj_x: c64 =
                                    (0..npw).map(|g| p(j, m, g).conj() * xv[g * nb + b]).sum();
                                let pi_x: c64 =
                                    (0..npw).map(|g| p(i, m, g).conj() * xv[g * nb + b]).sum();
                                energy += occ[b] * ch.h[i][j] * (pi_x.conj() * pj_x).re;
                                for g in 0..npw {
                                    want[g * nb + b] += p(i, m, g) * ch.h[i][j] * pj_x;
                                }
                            }
                        }
                    }
                }
            }
        }
        // apply() with a zero potential is the kinetic term plus the projector term.
        let zero = Tensor::zeros(DataType::Double, DeviceType::Cpu, &grid.n)?;
        let got = op.apply(&zero, &x)?.sub(&x.mul(&op.kinetic)?)?;
        let want = Tensor::from_vec(want, &[npw, nb])?;
        let scale = want.abs()?.to_vec::<f64>()?.into_iter().fold(0.0, f64::max);
        assert!(
            scale > 1e-3,
            "the projector term is too small to test: {scale}"
        );
        assert!(got.allclose(&want, 0.0, 1e-12 * scale)?);
        let (_, e) = op.kinetic_and_nonlocal(&x, &occ)?;
        assert!(
            (e - energy).abs() <= 1e-11 * energy.abs(),
            "{e} against {energy}"
        );
        Ok(())
    }
}
