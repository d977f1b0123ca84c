//! Real bands at Γ (ABINIT's `istwfk 2`, Quantum ESPRESSO's `gamma_only`).
//!
//! At k = 0 the Hamiltonian is real in real space, so its eigenvectors can be chosen
//! real: `u(r)` real, `c(−G) = c(G)*`. Such a band is stored as `npw` real numbers in an
//! orthonormal real basis of the Hermitian-symmetric coefficient vectors,
//!
//! ```text
//! x[0]     = c(0)                (real)
//! x[j]     = √2 Re c(G_j)        j = 1..=h, one G_j of each pair {G, −G}
//! x[h + j] = √2 Im c(G_j)
//! ```
//!
//! with `npw = 2h + 1`. The map is an isometry (`‖x‖ = ‖c‖`), so inner products,
//! Rayleigh quotients and the eigensolvers work unchanged on f64 blocks of half the
//! bytes and a quarter of the gemm work. The local potential is applied to two real
//! bands at once: `c₁ + i c₂` is one complex band of the full sphere whose transform is
//! `u₁(r) + i u₂(r)`, and `V` (real) keeps the two apart, so a block of `nb` real bands
//! takes `⌈nb/2⌉` transforms; the density of the pair is `u₁² + u₂²`.

use crate::basis::Sphere;
use crate::error::Result;
use ctensor::{c64, DataType, DeviceType, Tensor};
use std::collections::HashMap;
use std::f64::consts::FRAC_1_SQRT_2;

/// The real basis of Hermitian-symmetric coefficient vectors on the Γ sphere.
pub struct GammaPacking {
    /// Plane waves (real coordinates per band).
    npw: usize,
    /// Per sphere index `q`: the real coordinate holding `Re c(q)` up to scale, i64.
    re_at: Tensor,
    /// Per sphere index `q`: the real coordinate holding `Im c(q)` up to scale, i64.
    im_at: Tensor,
    /// Per sphere index: `c(q) = a_q z[re_at] + (i b_q) z[im_at]` — `a`, c64 `[npw, 1]`.
    a: Tensor,
    /// … and `i b_q`, c64 `[npw, 1]`.
    ib: Tensor,
    /// Per real coordinate: the sphere index of its `G`, i64.
    g: Tensor,
    /// Per real coordinate: the sphere index of `−G`, i64.
    minus_g: Tensor,
    /// Per real coordinate: `x + i y = κ (e(G) + σ e(−G))`, σ c64 `[npw, 1]` …
    sigma: Tensor,
    /// … and κ.
    kappa: Tensor,
    /// The sphere index of each real coordinate's `G`.
    source: Vec<usize>,
    /// `G = 0` and the chosen `G_j`, i64 `[h + 1]` …
    half: Tensor,
    /// … and the scale of their rows, `1, √2, √2, …`, c64 `[h + 1, 1]`.
    half_scale: Tensor,
}

impl GammaPacking {
    /// The packing of `sphere`, on `device`; `None` unless the sphere is Γ's.
    pub fn new(sphere: &Sphere, device: DeviceType) -> Result<Option<GammaPacking>> {
        if sphere.kred != [0.0; 3] {
            return Ok(None);
        }
        let npw = sphere.len();
        let at: HashMap<[i64; 3], usize> =
            sphere.g.iter().enumerate().map(|(q, &m)| (m, q)).collect();
        let minus: Vec<usize> = sphere
            .g
            .iter()
            .map(|m| at.get(&[-m[0], -m[1], -m[2]]).copied())
            .collect::<Option<_>>()
            .ok_or_else(|| internal("the Γ sphere is not symmetric"))?;
        let zero = at
            .get(&[0, 0, 0])
            .copied()
            .ok_or_else(|| internal("the Γ sphere lacks G = 0"))?;
        // One G of each pair: the one with the smaller sphere index.
        let reps: Vec<usize> = (0..npw).filter(|&q| q < minus[q]).collect();
        let h = reps.len();
        debug_assert_eq!(2 * h + 1, npw);
        let s = FRAC_1_SQRT_2;
        let (mut re_at, mut im_at) = (vec![0i64; npw], vec![0i64; npw]);
        let (mut a, mut ib) = (vec![c64::new(1.0, 0.0); npw], vec![c64::new(0.0, 0.0); npw]);
        for (j, &q) in reps.iter().enumerate() {
            let (r, i) = (1 + j as i64, (1 + h + j) as i64);
            for (p, sign) in [(q, 1.0), (minus[q], -1.0)] {
                re_at[p] = r;
                im_at[p] = i;
                a[p] = c64::new(s, 0.0);
                ib[p] = c64::new(0.0, sign * s);
            }
        }
        let mut source = vec![zero];
        source.extend(&reps);
        source.extend(&reps);
        let g: Vec<i64> = source.iter().map(|&q| q as i64).collect();
        let minus_g: Vec<i64> = source.iter().map(|&q| minus[q] as i64).collect();
        let mut sigma = vec![c64::new(1.0, 0.0); npw];
        let mut kappa = vec![c64::new(0.5, 0.0); npw];
        for j in 1..=h {
            kappa[j] = c64::new(s, 0.0);
            sigma[h + j] = c64::new(-1.0, 0.0);
            kappa[h + j] = c64::new(0.0, -s);
        }
        let column = |v: Vec<c64>| -> Result<Tensor> {
            let n = v.len();
            Ok(Tensor::from_vec(v, &[n, 1])?.to_device(device)?)
        };
        let mut half_scale = vec![c64::new(2f64.sqrt(), 0.0); h + 1];
        half_scale[0] = c64::new(1.0, 0.0);
        let index = |v: Vec<i64>| -> Result<Tensor> {
            let n = v.len();
            Ok(Tensor::from_vec(v, &[n])?.to_device(device)?)
        };
        Ok(Some(GammaPacking {
            npw,
            re_at: index(re_at)?,
            im_at: index(im_at)?,
            a: column(a)?,
            ib: column(ib)?,
            g: index(g.clone())?,
            minus_g: index(minus_g)?,
            sigma: column(sigma)?,
            kappa: column(kappa)?,
            half: index(g[..=h].to_vec())?,
            half_scale: column(half_scale)?,
            source,
        }))
    }

    /// The per-plane-wave values `full` (e.g. `½|G|²`) in the order of the real
    /// coordinates.
    pub fn reorder(&self, full: &[f64]) -> Vec<f64> {
        self.source.iter().map(|&q| full[q]).collect()
    }

    /// The complex sphere coefficients of the real bands `x` (f64 `[npw, nb]`), c64
    /// `[npw, m]`. Paired, column `j` holds band `j` plus `i` times band `m + j` with
    /// `m = ⌈nb/2⌉` (the last column of an odd count holds one band); unpaired, `m = nb`
    /// and each column is one band.
    pub fn to_complex(&self, x: &Tensor, paired: bool) -> Result<Tensor> {
        let nb = x.dims()[1];
        let m = if paired { nb.div_ceil(2) } else { nb };
        let z = Tensor::zeros(DataType::ComplexDouble, x.device(), &[self.npw, m])?;
        z.real()?.assign(&x.narrow(1, 0, m)?)?;
        z.imag()?
            .narrow(1, 0, nb - m)?
            .assign(&x.narrow(1, m, nb - m)?)?;
        let mut c = z.index_select(0, &self.re_at)?;
        c.mul_(&self.a)?;
        let mut im = z.index_select(0, &self.im_at)?;
        im.mul_(&self.ib)?;
        c.add_(&im)?;
        Ok(c)
    }

    /// The inverse of [`to_complex`](Self::to_complex): the real bands of the complex
    /// columns `e` (`[npw, m]`), written into `out` (f64 `[npw, nb]`, any layout, with
    /// `nb` between `m` and `2m`: the last `nb − m` bands from the imaginary parts).
    /// Columns need not be Hermitian-symmetric: each is split into `e₁ + i e₂` with `e₁`,
    /// `e₂` Hermitian-symmetric, its projection, which is exact for `H` applied to a pair.
    pub fn from_complex(&self, e: &Tensor, out: &mut Tensor) -> Result<()> {
        let (m, nb) = (e.dims()[1], out.dims()[1]);
        // The rows are gathered where they lie: a band-major `e` (the transforms'
        // result) is read as its transpose, so no row-major copy of it is made.
        let rows = |at: &Tensor| -> Result<Tensor> {
            if e.t()?.is_contiguous() && !e.is_contiguous() {
                Ok(e.t()?.index_select(1, at)?.t()?)
            } else {
                Ok(e.index_select(0, at)?)
            }
        };
        let mut w = rows(&self.g)?;
        let mut em = rows(&self.minus_g)?;
        em.mul_(&self.sigma)?;
        w.add_(&em)?;
        drop(em);
        w.mul_(&self.kappa)?;
        out.narrow(1, 0, m)?.assign(&w.real()?)?;
        out.narrow(1, m, nb - m)?
            .assign(&w.imag()?.narrow(1, 0, nb - m)?)?;
        Ok(())
    }

    /// The rows at `G = 0, G_1, …, G_h` of complex columns `p` (`[npw, k]`), the rows
    /// of `G_j` times √2: `[h + 1, k]`. For Hermitian-symmetric columns (e.g. projectors
    /// real in real space) their real and imaginary parts are the real coordinates
    /// ([`real_of_half`](Self::real_of_half)), and products with phases `e^{−iG·τ}`
    /// taken at the same rows keep that true.
    pub fn halve(&self, p: &Tensor) -> Result<Tensor> {
        let mut out = p.index_select(0, &self.half)?;
        out.mul_(&self.half_scale)?;
        Ok(out)
    }

    /// The rows at `G = 0, G_1, …, G_h` of `p` (`[npw, k]`), unscaled: `[h + 1, k]`.
    pub fn index_half(&self, p: &Tensor) -> Result<Tensor> {
        Ok(p.index_select(0, &self.half)?)
    }

    /// The real coordinates (f64 `[npw, k]`) of Hermitian-symmetric columns given by
    /// their [`halve`](Self::halve)d rows `half` (`[h + 1, k]`).
    pub fn real_of_half(&self, half: &Tensor) -> Result<Tensor> {
        let out = Tensor::new(DataType::Double, half.device(), &[self.npw, half.dims()[1]])?;
        self.real_of_half_into(half, &out)?;
        Ok(out)
    }

    /// [`real_of_half`](Self::real_of_half) written into `out` (f64 `[npw, k]`, which
    /// may be a window of a wider block).
    pub fn real_of_half_into(&self, half: &Tensor, out: &Tensor) -> Result<()> {
        let h = self.npw / 2;
        out.narrow(0, 0, h + 1)?.assign(&half.real()?)?;
        out.narrow(0, h + 1, h)?
            .assign(&half.imag()?.narrow(0, 1, h)?)?;
        Ok(())
    }
}

impl GammaPacking {
    /// `Q M` for rows `q` (f64 `[k, npw]`) over the real coordinates, where `M` is the
    /// real form of `c(G) → i g(G) c(G)` for a real per-plane-wave factor `g` (given in
    /// sphere order, e.g. a Cartesian component of G): a derivative of a real function is
    /// real, and on a pair's coordinates `(√2 Re c, √2 Im c)` it acts as
    /// `(a, b) → (−g b, g a)`, with `G = 0` sent to zero. So `(Q M) x = Q (M x)`: the
    /// projections of the derivative of the bands `x`, without forming it.
    pub fn times_i_g_right(&self, q: &Tensor, g: &[f64]) -> Result<Tensor> {
        let h = self.npw / 2;
        let (rows, cols) = (q.dims()[0], q.dims()[1]);
        if cols != self.npw || g.len() != self.npw {
            return Err(ctensor::Error::ShapeMismatch {
                op: "GammaPacking::times_i_g_right",
                expected: format!(
                    "rows over the {} real coordinates and one factor each",
                    self.npw
                ),
                got: vec![q.dims().to_vec(), vec![g.len()]],
            }
            .into());
        }
        let gj =
            Tensor::from_vec(self.reorder(g)[1..=h].to_vec(), &[1, h])?.to_device(q.device())?;
        let out = Tensor::zeros(DataType::Double, q.device(), &[rows, self.npw])?;
        // (Q M)[:, j] = g_j Q[:, h + j] and (Q M)[:, h + j] = −g_j Q[:, j].
        q.narrow(1, 1 + h, h)?
            .mul_into(&gj, &mut out.narrow(1, 1, h)?)?;
        q.narrow(1, 1, h)?
            .mul_into(&gj.neg()?, &mut out.narrow(1, 1 + h, h)?)?;
        Ok(out)
    }
}

/// A sphere at Γ that breaks its own definition (cannot happen for [`Sphere::new`]'s).
fn internal(what: &str) -> crate::error::PwError {
    ctensor::Error::Internal {
        op: "GammaPacking::new",
        what: what.into(),
    }
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::basis::FftGrid;
    use crate::crystal::{Atom, Crystal};

    /// A skewed cell's Γ sphere (no symmetry to lean on), and one at another k.
    fn spheres() -> Result<(Sphere, Sphere)> {
        let lattice = [[7.0, 0.4, 0.0], [0.3, 8.0, 0.2], [0.0, 0.5, 9.0]];
        let atoms = vec![Atom {
            species: 0,
            reduced: [0.1, 0.2, 0.3],
        }];
        let crystal = Crystal::new(lattice, vec!["Si".into()], atoms)?;
        let grid = FftGrid::for_cutoff(&crystal, 5.0);
        Ok((
            Sphere::new(&crystal, [0.0; 3], 5.0, &grid)?,
            Sphere::new(&crystal, [0.5, 0.0, 0.0], 5.0, &grid)?,
        ))
    }

    /// The real coordinates map onto Hermitian-symmetric coefficient vectors of the same
    /// norm (checked against the sphere's Miller indices by a plain loop), pairs are the
    /// plain `c₁ + i c₂`, and `from_complex` inverts both, writing only its window.
    #[test]
    fn real_coordinates_are_an_isometry_onto_hermitian_symmetric_coefficients() -> Result<()> {
        let (sphere, other) = spheres()?;
        assert!(GammaPacking::new(&other, DeviceType::Cpu)?.is_none());
        let gp = GammaPacking::new(&sphere, DeviceType::Cpu)?.expect("Γ");
        let npw = sphere.len();
        assert!(npw > 256 && npw % 2 == 1, "{npw} plane waves");
        let minus = |q: usize| {
            let m = sphere.g[q];
            sphere
                .g
                .iter()
                .position(|&p| p == [-m[0], -m[1], -m[2]])
                .unwrap()
        };
        for nb in [0usize, 1, 2, 5, 8] {
            let x = Tensor::randn(DataType::Double, DeviceType::Cpu, &[npw, nb], 7 + nb as u64)?;
            let xv = x.to_vec::<f64>()?;
            let c = gp.to_complex(&x, false)?;
            assert_eq!(c.dims(), [npw, nb]);
            let cv = c.to_vec::<c64>()?;
            for b in 0..nb {
                let (mut nc, mut nx) = (0.0, 0.0);
                for q in 0..npw {
                    let (z, zm) = (cv[q * nb + b], cv[minus(q) * nb + b]);
                    assert!((z - zm.conj()).norm() < 1e-15, "c(-G) = c(G)* at {q}");
                    nc += z.norm_sqr();
                    nx += xv[q * nb + b].powi(2);
                }
                assert!((nc - nx).abs() < 1e-12 * nx, "norm {nc} against {nx}");
            }
            // Pairs: column j is c_j + i c_{m+j}.
            let m = nb.div_ceil(2);
            let pairs = gp.to_complex(&x, true)?.to_vec::<c64>()?;
            for q in 0..npw {
                for j in 0..m {
                    let second = if m + j < nb {
                        cv[q * nb + m + j]
                    } else {
                        c64::new(0.0, 0.0)
                    };
                    let want = cv[q * nb + j] + c64::new(0.0, 1.0) * second;
                    assert!((pairs[q * m + j] - want).norm() < 1e-15);
                }
            }
            // Rows of another length, or factors not one per plane wave, are errors.
            let q = Tensor::zeros(DataType::Double, DeviceType::Cpu, &[2, npw + 1])?;
            let e = gp.times_i_g_right(&q, &vec![1.0; npw]).unwrap_err();
            assert!(e.to_string().contains("rows over the"), "{e}");
            let q = Tensor::zeros(DataType::Double, DeviceType::Cpu, &[2, npw])?;
            assert!(gp.times_i_g_right(&q, &vec![1.0; npw - 1]).is_err());
            // No rows: no rows back.
            let q = Tensor::zeros(DataType::Double, DeviceType::Cpu, &[0, npw])?;
            assert_eq!(gp.times_i_g_right(&q, &vec![1.0; npw])?.dims(), [0, npw]);
            // Hermitian-symmetric columns from their halved rows.
            assert!(gp.real_of_half(&gp.halve(&c)?)?.allclose(&x, 0.0, 1e-14)?);
            // Back, into a window of a block whose other columns are NaN.
            for (e, paired) in [(&c, false), (&Tensor::from_vec(pairs, &[npw, m])?, true)] {
                let wide = Tensor::full(f64::NAN, DeviceType::Cpu, &[npw, nb + 3])?;
                gp.from_complex(e, &mut wide.narrow(1, 1, nb)?)?;
                let w = wide.to_vec::<f64>()?;
                for q in 0..npw {
                    assert!(w[q * (nb + 3)].is_nan() && w[q * (nb + 3) + nb + 1].is_nan());
                    for b in 0..nb {
                        let got = w[q * (nb + 3) + 1 + b];
                        assert!((got - xv[q * nb + b]).abs() < 1e-14, "paired {paired}");
                    }
                }
            }
        }
        Ok(())
    }
}
