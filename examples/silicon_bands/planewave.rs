//! The Cohen–Bergstresser Hamiltonian applied with FFTs, as a plane-wave DFT code applies
//! its own: `H ψ = |k + G|² ψ + FFT(V(r) · IFFT(ψ))`, never forming the npw × npw matrix.
//!
//! The grid is the conventional cubic cell's, `N³` points with `G = (2π/a)(h, k, l)` at
//! index `(h mod N, k mod N, l mod N)`; `N` is the smallest 2-3-5-smooth size with
//! `N ≥ 2 h_max + q_max + 1` (`h_max` the largest component of a basis vector, `q_max = 3`
//! that of the potential's), so that no product `V(q) ψ(G)` that lands back on the basis
//! sphere is aliased: the operator equals the dense `H` to rounding.
//!
//! Sphere ↔ grid: `index_copy_with` puts the coefficients on the grid, `index_select_with`
//! takes them back, at positions checked once per basis ([`Indices`]). `V(r)` is built once per material and k-point basis by an inverse FFT of
//! the form factors on the grid.

use ctensor::{c64, DataType, DeviceType, FftNorm, Indices, Result, Tensor};

use crate::model::Material;

/// The largest component of a q vector with a nonzero form factor (|q|² ≤ 11).
const Q_MAX: usize = 3;

/// The smallest `n' ≥ n` whose only prime factors are 2, 3 and 5 (FFT-friendly).
fn smooth_at_least(n: usize) -> usize {
    (n.max(1)..)
        .find(|&m| {
            let mut r = m;
            for p in [2, 3, 5] {
                while r % p == 0 {
                    r /= p;
                }
            }
            r == 1
        })
        .unwrap_or(n)
}

/// V(q) in Ry of the model for a reciprocal vector `q` in units of 2π/a (integers):
/// `V^S(|q|²) cos(q·τ) + i V^A(|q|²) sin(q·τ)`, τ = (a/8)(1, 1, 1); zero off the shells.
pub fn form_factor(mat: &Material, q: [i64; 3]) -> c64 {
    let q2 = q.iter().map(|x| x * x).sum::<i64>();
    let pick = |shells: [i64; 3], ff: [f64; 3]| {
        shells
            .iter()
            .zip(ff)
            .find(|(s, _)| **s == q2)
            .map_or(0.0, |(_, f)| f)
    };
    let (vs, va) = (pick([3, 8, 11], mat.vs), pick([3, 4, 11], mat.va));
    let phase = std::f64::consts::PI / 4.0 * (q[0] + q[1] + q[2]) as f64;
    c64::new(vs * phase.cos(), va * phase.sin())
}

/// `H(k)` of one basis as an operator on blocks of coefficient columns.
pub struct PlaneWaveOperator {
    /// Grid points per side.
    pub n: usize,
    /// Flat grid index of each basis vector, checked once (every apply moves no index).
    idx: Indices,
    /// `(2π/a)² |k + G|²` in Ry, `[npw, 1]`, in the operator's dtype.
    kinetic: Tensor,
    /// `V(r)` on the grid, `[N, N, N]`, in the operator's dtype.
    v_r: Tensor,
}

impl PlaneWaveOperator {
    /// The operator for the basis `g` (integer vectors in units of 2π/a), k-point `k`,
    /// kinetic prefactor `kin`, in `dtype` (c64 or c32) on `device`.
    pub fn new(
        mat: &Material,
        g: &[[f64; 3]],
        k: [f64; 3],
        kin: f64,
        dtype: DataType,
        device: DeviceType,
    ) -> Result<PlaneWaveOperator> {
        let h_max = g
            .iter()
            .flat_map(|v| v.iter().map(|x| x.abs() as usize))
            .max()
            .unwrap_or(0);
        let n = smooth_at_least(2 * h_max + Q_MAX + 1);
        let wrap = |x: f64| (x as i64).rem_euclid(n as i64) as usize;
        let idx: Vec<i64> = g
            .iter()
            .map(|v| ((wrap(v[0]) * n + wrap(v[1])) * n + wrap(v[2])) as i64)
            .collect();
        let kinetic: Vec<f64> = g
            .iter()
            .map(|v| kin * (0..3).map(|d| (v[d] + k[d]).powi(2)).sum::<f64>())
            .collect();
        // The form factors on the grid, then V(r_j) = Σ_q V(q) e^{iq·r_j} = N³ · IFFT.
        let mut vq = vec![c64::new(0.0, 0.0); n * n * n];
        let r = Q_MAX as i64;
        for a in -r..=r {
            for b in -r..=r {
                for c in -r..=r {
                    let w = |x: i64| x.rem_euclid(n as i64) as usize;
                    vq[(w(a) * n + w(b)) * n + w(c)] = form_factor(mat, [a, b, c]);
                }
            }
        }
        let v_r = ctensor::ifftn(
            &Tensor::from_slice(&vq, &[n, n, n])?,
            &[0, 1, 2],
            FftNorm::Forward,
        )?;
        let npw = g.len();
        Ok(PlaneWaveOperator {
            n,
            idx: Indices::new(&Tensor::from_slice(&idx, &[npw])?, n * n * n, device)?,
            kinetic: Tensor::from_slice(&kinetic, &[npw, 1])?
                .cast(dtype)?
                .to_device(device)?,
            v_r: v_r.cast(dtype)?.to_device(device)?,
        })
    }

    /// The diagonal of `H` (real, `[npw]`): the kinetic energies (V(0) = 0 in this
    /// model), for the preconditioner.
    pub fn diagonal(&self) -> Result<Tensor> {
        self.kinetic.reshape(&[-1])?.real()?.contiguous()
    }

    /// `H X` for a block `X` of coefficient columns (`[npw, nb]`).
    pub fn apply(&self, x: &Tensor) -> Result<Tensor> {
        let (npw, nb) = (x.dims()[0], x.dims()[1]);
        let n = self.n;
        let mut grid = Tensor::zeros(x.dtype(), x.device(), &[nb, n * n * n])?;
        grid.index_copy_with(1, &self.idx, &x.t()?)?;
        let mut grid = grid.reshape(&[nb as i64, n as i64, n as i64, n as i64])?;
        // ψ(r) (up to the 1/N³ the forward transform takes back), times V(r), back.
        grid.ifftn_(&[1, 2, 3], FftNorm::Backward)?;
        grid.mul_(&self.v_r)?;
        grid.fftn_(&[1, 2, 3], FftNorm::Backward)?;
        let vx = grid
            .reshape(&[nb as i64, (n * n * n) as i64])?
            .index_select_with(1, &self.idx)?;
        debug_assert_eq!(vx.dims(), [nb, npw]);
        vx.t()?.add(&x.mul(&self.kinetic)?)
    }
}
