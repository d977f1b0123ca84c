//! [`SphereFft`]: the plane-wave sphere ↔ box transform of a block of bands, as a
//! reusable plan (see `ctensor_kernels::sphere_fft` for the algorithm).

use crate::core::tensor::Tensor;
use crate::core::tensor_map::span_of;
use crate::ops::fft::FftNorm;
use crate::ops::indices::Indices;
use ctensor_base::{c32, c64, DataType, DeviceType, Error, Result, Scalar};
use ctensor_kernels::sphere_fft::{BandLayout, SpherePlan};

/// A plane-wave basis's transform between coefficients on a G-sphere and a real-space
/// box, for blocks of bands: build it once per basis and apply it at every step.
///
/// Coefficient blocks are `[npw, nb]` (one column per band, any strides), grids
/// `[nb, n0, n1, n2]`; c64 or c32, on the plan's device. On the host the plan transforms
/// only the box columns and planes the sphere touches, threads over bands and reuses
/// its buffers; on a GPU it scatters into the box and runs cuFFT on the whole box.
///
/// ```
/// use ctensor_aten::{c64, DeviceType, SphereFft, Tensor};
/// // Two coefficients of a 4×4×4 box: G = 0 and G = (0, 0, 1).
/// let plan = SphereFft::new([4, 4, 4], &[0, 1], DeviceType::Cpu)?;
/// let c = Tensor::from_slice(&[c64::new(1.0, 0.0), c64::new(0.5, 0.0)], &[2, 1])?;
/// let u = plan.to_grid(&c)?; // u(r) = 1 + 0.5 e^{2πi r2/4}
/// assert_eq!(u.dims(), [1, 4, 4, 4]);
/// let back = plan.from_grid(&u)?;
/// assert!(back.allclose(&c, 0.0, 1e-14)?);
/// # Ok::<(), ctensor_aten::Error>(())
/// ```
pub struct SphereFft {
    n: [usize; 3],
    npw: usize,
    device: DeviceType,
    host: Option<(SpherePlan<f64>, SpherePlan<f32>)>,
    indices: Indices,
}

impl SphereFft {
    /// The plan for a box of `shape` and the sphere at flat (row-major) grid indices
    /// `index`, on `device`. Errors: an empty or oversized box, an index outside the box
    /// or given twice, an unusable device.
    pub fn new(shape: [usize; 3], index: &[usize], device: DeviceType) -> Result<SphereFft> {
        let p64 = SpherePlan::<f64>::new(shape, index)?;
        let host = match device {
            DeviceType::Cpu => Some((p64, SpherePlan::<f32>::new(shape, index)?)),
            _ => None,
        };
        Ok(SphereFft {
            n: shape,
            npw: index.len(),
            device,
            host,
            indices: Indices::from_slice(index, shape.iter().product(), device)?,
        })
    }

    /// Coefficients per band.
    pub fn npw(&self) -> usize {
        self.npw
    }

    /// The box shape.
    pub fn shape(&self) -> [usize; 3] {
        self.n
    }

    fn points(&self) -> usize {
        self.n.iter().product()
    }

    /// The band count of a coefficient block after checking it.
    fn bands(&self, op: &'static str, c: &Tensor) -> Result<usize> {
        self.check_complex(op, c)?;
        if c.ndim() != 2 || c.dims()[0] != self.npw {
            return Err(Error::ShapeMismatch {
                op,
                expected: format!("coefficients [{}, nb]", self.npw),
                got: vec![c.dims().to_vec()],
            });
        }
        Ok(c.dims()[1])
    }

    fn check_complex(&self, op: &'static str, t: &Tensor) -> Result<()> {
        if !matches!(t.dtype(), DataType::ComplexDouble | DataType::ComplexFloat) {
            return Err(Error::UnsupportedDType {
                op,
                dtype: t.dtype(),
                supported: "c32, c64",
            });
        }
        if t.device() != self.device {
            return Err(Error::DeviceMismatch {
                op,
                expected: self.device,
                got: t.device(),
            });
        }
        Ok(())
    }

    /// `u_b(r) = Σ_G c_b(G) e^{iG·r}` (no normalisation) of every column of `coeffs`
    /// (`[npw, nb]`): `[nb, n0, n1, n2]` in the same dtype.
    pub fn to_grid(&self, coeffs: &Tensor) -> Result<Tensor> {
        let nb = self.bands("SphereFft::to_grid", coeffs)?;
        let [n0, n1, n2] = self.n;
        let shape = [nb, n0, n1, n2];
        match (&self.host, coeffs.dtype()) {
            (Some((p, _)), DataType::ComplexDouble) => {
                let mut g = vec![c64::new(0.0, 0.0); nb * self.points()];
                with_block::<c64, _>(coeffs, |c, layout| p.to_grid_strided(nb, c, layout, &mut g))?;
                Tensor::from_vec(g, &shape)
            }
            (Some((_, p)), _) => {
                let mut g = vec![c32::new(0.0, 0.0); nb * self.points()];
                with_block::<c32, _>(coeffs, |c, layout| p.to_grid_strided(nb, c, layout, &mut g))?;
                Tensor::from_vec(g, &shape)
            }
            (None, _) => self.dense_to_grid(coeffs, nb),
        }
    }

    /// `c_b(G) = (1/N) Σ_r u_b(r) e^{−iG·r}` of a grid block (`[nb, n0, n1, n2]`): the
    /// inverse of [`to_grid`](Self::to_grid), `[npw, nb]`.
    pub fn from_grid(&self, grid: &Tensor) -> Result<Tensor> {
        let op = "SphereFft::from_grid";
        self.check_complex(op, grid)?;
        let [n0, n1, n2] = self.n;
        if grid.ndim() != 4 || grid.dims()[1..] != [n0, n1, n2] {
            return Err(Error::ShapeMismatch {
                op,
                expected: format!("a grid [nb, {n0}, {n1}, {n2}]"),
                got: vec![grid.dims().to_vec()],
            });
        }
        let nb = grid.dims()[0];
        match (&self.host, grid.dtype()) {
            (Some((p, _)), DataType::ComplexDouble) => {
                let g = grid.contiguous()?.to_vec::<c64>()?;
                let mut c = vec![c64::new(0.0, 0.0); nb * self.npw];
                p.from_grid(nb, &g, 1.0 / self.points() as f64, &mut c)?;
                Tensor::from_vec(c, &[nb, self.npw])?.t()
            }
            (Some((_, p)), _) => {
                let g = grid.contiguous()?.to_vec::<c32>()?;
                let mut c = vec![c32::new(0.0, 0.0); nb * self.npw];
                p.from_grid(nb, &g, 1.0 / self.points() as f32, &mut c)?;
                Tensor::from_vec(c, &[nb, self.npw])?.t()
            }
            (None, _) => {
                let mut g = grid.contiguous()?;
                g.fftn_(&[1, 2, 3], FftNorm::Forward)?;
                g.reshape(&[nb as i64, self.points() as i64])?
                    .index_select_with(1, &self.indices)?
                    .t()
            }
        }
    }

    /// `from_grid(v · to_grid(coeffs))` for a real potential `v` (`[n0, n1, n2]`, f64 or
    /// f32): the local-potential term of a Hamiltonian on a block of bands, `[npw, nb]`.
    /// On the host each band goes through one box buffer and no grid block is formed.
    pub fn apply_potential(&self, v: &Tensor, coeffs: &Tensor) -> Result<Tensor> {
        self.local("SphereFft::apply_potential", v, None, coeffs)
    }

    /// [`apply_potential`](Self::apply_potential) plus the diagonal term `diag ∘ coeffs`
    /// for a real `diag` of `npw` entries (`[npw]` or `[npw, 1]`, f64 or f32; the kinetic
    /// energies `½|k+G|²`): the local part of a plane-wave Hamiltonian, `[npw, nb]`. On
    /// the host the diagonal term is added band by band inside the transform, so the sum
    /// costs no block-sized temporary (a 64-atom cell's block is 50 MB).
    ///
    /// ```
    /// use ctensor_aten::{c64, DeviceType, SphereFft, Tensor};
    /// let plan = SphereFft::new([4, 4, 4], &[0, 1], DeviceType::Cpu)?;
    /// let c = Tensor::from_slice(&[c64::new(1.0, 0.0), c64::new(0.5, 0.0)], &[2, 1])?;
    /// let v = Tensor::full(0.25f64, DeviceType::Cpu, &[4, 4, 4])?; // a constant potential
    /// let kinetic = Tensor::from_slice(&[0.0f64, 2.0], &[2])?;
    /// let h = plan.apply_local(&v, &kinetic, &c)?; // (0.25 + T) c
    /// let want = Tensor::from_slice(&[c64::new(0.25, 0.0), c64::new(1.125, 0.0)], &[2, 1])?;
    /// assert!(h.allclose(&want, 0.0, 1e-14)?);
    /// # Ok::<(), ctensor_aten::Error>(())
    /// ```
    pub fn apply_local(&self, v: &Tensor, diag: &Tensor, coeffs: &Tensor) -> Result<Tensor> {
        let op = "SphereFft::apply_local";
        self.check_diagonal(op, diag)?;
        self.local(op, v, Some(diag), coeffs)
    }

    /// [`apply_local`](Self::apply_local) written into `out`: `[npw, nb]` of `coeffs`'s
    /// dtype on the plan's device, in any layout (a window of columns of a solver's
    /// `H V`, a column-major map). On the host each band's result is written where it
    /// lies in `out`, so no result block is made beside it and none is copied. When
    /// `out` overlaps `coeffs`, or its strides are one-to-one only by an exact check of
    /// its offsets, the result goes through a temporary instead (the same values; on a
    /// GPU it always does). An `out` whose elements share memory (a broadcast view) is
    /// refused.
    ///
    /// ```
    /// use ctensor_aten::{c64, DeviceType, SphereFft, Tensor};
    /// let plan = SphereFft::new([4, 4, 4], &[0, 1], DeviceType::Cpu)?;
    /// let c = Tensor::from_slice(&[c64::new(1.0, 0.0), c64::new(0.5, 0.0)], &[2, 1])?;
    /// let v = Tensor::full(0.25f64, DeviceType::Cpu, &[4, 4, 4])?;
    /// let kinetic = Tensor::from_slice(&[0.0f64, 2.0], &[2])?;
    /// // Into the second column of a wider block.
    /// let block = Tensor::zeros(ctensor_aten::DataType::ComplexDouble, DeviceType::Cpu, &[2, 3])?;
    /// plan.apply_local_into(&v, &kinetic, &c, &mut block.narrow(1, 1, 1)?)?;
    /// let want = Tensor::from_slice(&[c64::new(0.25, 0.0), c64::new(1.125, 0.0)], &[2, 1])?;
    /// assert!(block.narrow(1, 1, 1)?.allclose(&want, 0.0, 1e-14)?);
    /// # Ok::<(), ctensor_aten::Error>(())
    /// ```
    pub fn apply_local_into(
        &self,
        v: &Tensor,
        diag: &Tensor,
        coeffs: &Tensor,
        out: &mut Tensor,
    ) -> Result<()> {
        let op = "SphereFft::apply_local_into";
        self.check_diagonal(op, diag)?;
        let nb = self.bands(op, coeffs)?;
        self.check_potential(op, v)?;
        if out.dims() != [self.npw, nb] {
            return Err(Error::ShapeMismatch {
                op,
                expected: format!("an output [{}, {nb}]", self.npw),
                got: vec![out.dims().to_vec()],
            });
        }
        if out.dtype() != coeffs.dtype() {
            return Err(Error::DTypeMismatch {
                op,
                expected: coeffs.dtype(),
                got: out.dtype(),
            });
        }
        if out.device() != self.device {
            return Err(Error::DeviceMismatch {
                op,
                expected: self.device,
                got: out.device(),
            });
        }
        let s = out.strides();
        let out_layout = BandLayout {
            band: s[1],
            pw: s[0],
        };
        // Layouts the sorted-stride rule cannot vouch for are checked exactly: refused
        // when two elements share memory, else written through a temporary.
        let one_to_one = out_layout.is_one_to_one(nb, self.npw);
        if !one_to_one && span_of(out.dims(), s).is_err() {
            return Err(Error::InvalidArgument {
                op,
                expected: "an output whose elements each have memory of their own".into(),
                given: format!("strides {s:?} for shape {:?}", out.dims()),
            });
        }
        let direct = one_to_one && !out.shares_memory_with(coeffs);
        match (&self.host, coeffs.dtype()) {
            (Some((p, _)), DataType::ComplexDouble) if direct => {
                let vv = v.cast(DataType::Double)?.contiguous()?.to_vec::<f64>()?;
                let d = diag.cast(DataType::Double)?.contiguous()?.to_vec::<f64>()?;
                with_block::<c64, _>(coeffs, |c, layout| {
                    with_block_mut::<c64>(out, |o| {
                        p.apply_local_strided_into(nb, &vv, Some(&d), c, layout, o, out_layout)
                    })
                })
            }
            (Some((_, p)), DataType::ComplexFloat) if direct => {
                let vv = v.cast(DataType::Float)?.contiguous()?.to_vec::<f32>()?;
                let d = diag.cast(DataType::Float)?.contiguous()?.to_vec::<f32>()?;
                with_block::<c32, _>(coeffs, |c, layout| {
                    with_block_mut::<c32>(out, |o| {
                        p.apply_local_strided_into(nb, &vv, Some(&d), c, layout, o, out_layout)
                    })
                })
            }
            _ => out.assign(&self.local(op, v, Some(diag), coeffs)?),
        }
    }

    /// That `diag` is a real diagonal of `npw` entries (`[npw]` or `[npw, 1]`) on the
    /// plan's device.
    fn check_diagonal(&self, op: &'static str, diag: &Tensor) -> Result<()> {
        let ok = match diag.dims() {
            [n] | [n, 1] => *n == self.npw,
            _ => false,
        };
        if !ok || diag.dtype().is_complex() {
            return Err(Error::ShapeMismatch {
                op,
                expected: format!("a real diagonal [{}] or [{}, 1]", self.npw, self.npw),
                got: vec![diag.dims().to_vec()],
            });
        }
        if diag.device() != self.device {
            return Err(Error::DeviceMismatch {
                op,
                expected: self.device,
                got: diag.device(),
            });
        }
        Ok(())
    }

    /// That `v` is a real potential of the box's shape.
    fn check_potential(&self, op: &'static str, v: &Tensor) -> Result<()> {
        if v.dims() != self.n || v.dtype().is_complex() {
            return Err(Error::ShapeMismatch {
                op,
                expected: format!("a real potential {:?}", self.n),
                got: vec![v.dims().to_vec()],
            });
        }
        Ok(())
    }

    /// `from_grid(v · to_grid(coeffs)) + diag ∘ coeffs` (the diagonal when given).
    fn local(
        &self,
        op: &'static str,
        v: &Tensor,
        diag: Option<&Tensor>,
        coeffs: &Tensor,
    ) -> Result<Tensor> {
        let nb = self.bands(op, coeffs)?;
        self.check_potential(op, v)?;
        match (&self.host, coeffs.dtype()) {
            (Some((p, _)), DataType::ComplexDouble) => {
                let vv = v.cast(DataType::Double)?.contiguous()?.to_vec::<f64>()?;
                let d = diag
                    .map(|d| d.cast(DataType::Double)?.contiguous()?.to_vec::<f64>())
                    .transpose()?;
                let mut out = vec![c64::new(0.0, 0.0); nb * self.npw];
                with_block::<c64, _>(coeffs, |c, layout| {
                    p.apply_local_strided(nb, &vv, d.as_deref(), c, layout, &mut out)
                })?;
                Tensor::from_vec(out, &[nb, self.npw])?.t()
            }
            (Some((_, p)), _) => {
                let vv = v.cast(DataType::Float)?.contiguous()?.to_vec::<f32>()?;
                let d = diag
                    .map(|d| d.cast(DataType::Float)?.contiguous()?.to_vec::<f32>())
                    .transpose()?;
                let mut out = vec![c32::new(0.0, 0.0); nb * self.npw];
                with_block::<c32, _>(coeffs, |c, layout| {
                    p.apply_local_strided(nb, &vv, d.as_deref(), c, layout, &mut out)
                })?;
                Tensor::from_vec(out, &[nb, self.npw])?.t()
            }
            (None, _) => {
                let mut g = self.dense_to_grid(coeffs, nb)?;
                g.mul_(v)?;
                let mut out = self.from_grid(&g)?;
                drop(g);
                if let Some(d) = diag {
                    let d = d.reshape(&[self.npw as i64, 1])?;
                    out.add_(&coeffs.mul(&d.cast(coeffs.dtype().real_type())?)?)?;
                }
                Ok(out)
            }
        }
    }

    /// `Σ_b weights[b] |u_b(r)|²` over the columns of `coeffs`: a density on the box,
    /// real `[n0, n1, n2]` (f64 for c64, f32 for c32).
    pub fn density(&self, coeffs: &Tensor, weights: &[f64]) -> Result<Tensor> {
        let op = "SphereFft::density";
        let nb = self.bands(op, coeffs)?;
        if weights.len() != nb {
            return Err(Error::InvalidArgument {
                op,
                expected: format!("{nb} weights, one per band"),
                given: format!("{}", weights.len()),
            });
        }
        match (&self.host, coeffs.dtype()) {
            (Some((p, _)), DataType::ComplexDouble) => {
                let mut rho = vec![0.0; self.points()];
                with_block::<c64, _>(coeffs, |c, layout| {
                    p.accumulate_density_strided(nb, c, layout, weights, &mut rho)
                })?;
                Tensor::from_vec(rho, &self.n)
            }
            (Some((_, p)), _) => {
                let w: Vec<f32> = weights.iter().map(|&x| x as f32).collect();
                let mut rho = vec![0.0f32; self.points()];
                with_block::<c32, _>(coeffs, |c, layout| {
                    p.accumulate_density_strided(nb, c, layout, &w, &mut rho)
                })?;
                Tensor::from_vec(rho, &self.n)
            }
            (None, _) => {
                let u = self.dense_to_grid(coeffs, nb)?;
                let a = u.abs()?;
                let real = a.dtype();
                let w = Tensor::from_slice(weights, &[nb, 1, 1, 1])?
                    .cast(real)?
                    .to_device(self.device)?;
                a.mul(&a)?
                    .mul(&w)?
                    .sum(&[0])?
                    .reshape(&self.n.map(|x| x as i64))
            }
        }
    }

    /// The dense path (GPU): scatter into a zeroed box, inverse FFT of the whole box.
    fn dense_to_grid(&self, coeffs: &Tensor, nb: usize) -> Result<Tensor> {
        let [n0, n1, n2] = self.n;
        let mut grid = Tensor::zeros(coeffs.dtype(), self.device, &[nb, self.points()])?;
        grid.index_copy_with(1, &self.indices, &coeffs.t()?)?;
        let mut grid = grid.reshape(&[nb as i64, n0 as i64, n1 as i64, n2 as i64])?;
        grid.ifftn_(&[1, 2, 3], FftNorm::Forward)?;
        Ok(grid)
    }
}

/// Runs `f` on the host block `coeffs` (`[npw, nb]` of `T`, as the callers' dtype match
/// guarantees) where it lies: the memory from its first element, and its strides as the
/// plan's [`BandLayout`] (band `b`'s coefficient `k` at `b·strides[1] + k·strides[0]`),
/// under a shared borrow. No band-major copy of a solver's block.
fn with_block<T: Scalar, R>(
    coeffs: &Tensor,
    f: impl FnOnce(&[T], BandLayout) -> Result<R>,
) -> Result<R> {
    if coeffs.dtype() != T::DTYPE || coeffs.ndim() != 2 {
        return Err(Error::Internal {
            op: "SphereFft",
            what: format!(
                "a [npw, nb] block of {} was expected, {:?} of {} came",
                T::DTYPE,
                coeffs.dims(),
                coeffs.dtype()
            ),
        });
    }
    let (d, s) = (coeffs.dims(), coeffs.strides());
    let layout = BandLayout {
        band: s[1],
        pw: s[0],
    };
    let span = if d[0] == 0 || d[1] == 0 {
        0
    } else {
        (d[0] - 1) * s[0] + (d[1] - 1) * s[1] + 1
    };
    let _r = coeffs.buffer.read("SphereFft")?;
    let data = if span == 0 {
        &[][..]
    } else {
        // SAFETY: the tensor's elements lie within `span` elements of T from its first
        // one (non-negative strides), inside its host buffer; the shared borrow held
        // until `f` returns excludes writers.
        unsafe { std::slice::from_raw_parts(coeffs.typed_ptr::<T>(), span) }
    };
    f(data, layout)
}

/// Runs `f` on the host block `out` (`[npw, nb]` of `T`, as the callers check) where it
/// lies, mutably: the memory from its first element through its last, under an
/// exclusive borrow. The caller's layout (from `out`'s strides) says which elements `f`
/// may write.
fn with_block_mut<T: Scalar>(
    out: &mut Tensor,
    f: impl FnOnce(&mut [T]) -> Result<()>,
) -> Result<()> {
    if out.dtype() != T::DTYPE || out.ndim() != 2 {
        return Err(Error::Internal {
            op: "SphereFft",
            what: format!(
                "a [npw, nb] output of {} was expected, {:?} of {} came",
                T::DTYPE,
                out.dims(),
                out.dtype()
            ),
        });
    }
    let (d, s) = (out.dims(), out.strides());
    let span = if d[0] == 0 || d[1] == 0 {
        0
    } else {
        (d[0] - 1) * s[0] + (d[1] - 1) * s[1] + 1
    };
    let _w = out.buffer.write("SphereFft")?;
    let data = if span == 0 {
        &mut [][..]
    } else {
        // SAFETY: the tensor's elements lie within `span` elements of T from its first
        // one (non-negative strides), inside its host buffer; the exclusive borrow held
        // until `f` returns excludes every other reader and writer.
        unsafe { std::slice::from_raw_parts_mut(out.typed_ptr::<T>(), span) }
    };
    f(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The host plan against the dense path (scatter + whole-box FFT) on the same data.
    #[test]
    fn the_host_plan_equals_the_dense_path_for_both_dtypes() -> Result<()> {
        let n = [9, 10, 12];
        let idx: Vec<usize> = (0..1080).filter(|i| i % 7 == 3 || i % 11 == 0).collect();
        let plan = SphereFft::new(n, &idx, DeviceType::Cpu)?;
        for dtype in [DataType::ComplexDouble, DataType::ComplexFloat] {
            let tol = if dtype == DataType::ComplexDouble {
                1e-12
            } else {
                1e-4
            };
            for nb in [0, 1, 5] {
                // A transposed (non-contiguous) block, as a solver hands it over.
                let c = Tensor::randn(dtype, DeviceType::Cpu, &[nb, idx.len()], 4)?.t()?;
                let fast = plan.to_grid(&c)?;
                let dense = plan.dense_to_grid(&c, nb)?;
                assert!(fast.allclose(&dense, tol, tol)?);
                let v = Tensor::randn(DataType::Double, DeviceType::Cpu, &n, 5)?;
                let hv = plan.apply_potential(&v, &c)?;
                // The same block row-major, and as a window of a wider row-major block:
                // every layout is read where it lies, to the same values.
                let wide = Tensor::zeros(dtype, DeviceType::Cpu, &[idx.len(), nb + 3])?;
                wide.narrow(1, 2, nb)?.assign(&c)?;
                for other in [c.contiguous()?, wide.narrow(1, 2, nb)?] {
                    assert!(plan.to_grid(&other)?.allclose(&fast, 0.0, 0.0)?);
                    assert!(plan.apply_potential(&v, &other)?.allclose(&hv, 0.0, 0.0)?);
                    let w: Vec<f64> = (0..nb).map(|b| 0.5 + b as f64).collect();
                    assert!(plan.density(&other, &w)?.allclose(
                        &plan.density(&c, &w)?,
                        0.0,
                        0.0
                    )?);
                }
                let mut g = dense.clone();
                g.mul_(&v)?;
                g.fftn_(&[1, 2, 3], FftNorm::Forward)?;
                let want = g
                    .reshape(&[nb as i64, 1080])?
                    .index_select_with(1, &plan.indices)?
                    .t()?;
                assert!(hv.allclose(&want, tol, tol)?);
                let w: Vec<f64> = (0..nb).map(|b| 1.0 + b as f64).collect();
                let rho = plan.density(&c, &w)?;
                let a = dense.abs()?;
                let real = a.dtype();
                let wt = Tensor::from_slice(&w, &[nb, 1, 1, 1])?.cast(real)?;
                let want = a.mul(&a)?.mul(&wt)?.sum(&[0])?;
                assert!(rho.allclose(&want.reshape(&[9, 10, 12])?, tol, tol)?);
            }
        }
        Ok(())
    }

    /// `apply_local` against `apply_potential` plus the diagonal term from a plain loop,
    /// on the host plan and on the dense (GPU) path run on the host, for both dtypes,
    /// three layouts, 0 to 300 bands, and the diagonal as `[npw]` f64 or `[npw, 1]` f32.
    #[test]
    fn apply_local_is_the_potential_term_plus_the_diagonal() -> Result<()> {
        let n = [9, 10, 12];
        let idx: Vec<usize> = (0..1080).filter(|i| i % 7 == 3 || i % 11 == 0).collect();
        let npw = idx.len();
        let v = Tensor::randn(DataType::Double, DeviceType::Cpu, &n, 21)?;
        // Values exact in f32, so the f32 diagonal is the same diagonal.
        let d64 = Tensor::randn(DataType::Double, DeviceType::Cpu, &[npw], 22)?
            .cast(DataType::Float)?
            .cast(DataType::Double)?;
        let dh = d64.to_vec::<f64>()?;
        for dense in [false, true] {
            let mut plan = SphereFft::new(n, &idx, DeviceType::Cpu)?;
            if dense {
                plan.host = None;
            }
            for dtype in [DataType::ComplexDouble, DataType::ComplexFloat] {
                let tol = if dtype == DataType::ComplexDouble {
                    1e-13
                } else {
                    1e-5
                };
                for nb in [0, 1, 5, 300] {
                    let c = Tensor::randn(dtype, DeviceType::Cpu, &[nb, npw], 23)?.t()?;
                    let wide = Tensor::zeros(dtype, DeviceType::Cpu, &[npw, nb + 3])?;
                    wide.narrow(1, 2, nb)?.assign(&c)?;
                    let hv = plan
                        .apply_potential(&v, &c)?
                        .cast(DataType::ComplexDouble)?
                        .contiguous()?
                        .to_vec::<c64>()?;
                    let ch = c
                        .cast(DataType::ComplexDouble)?
                        .contiguous()?
                        .to_vec::<c64>()?;
                    let mut want = vec![c64::new(0.0, 0.0); npw * nb];
                    for g in 0..npw {
                        for b in 0..nb {
                            want[g * nb + b] = hv[g * nb + b] + ch[g * nb + b] * dh[g];
                        }
                    }
                    let want = Tensor::from_vec(want, &[npw, nb])?;
                    let d32 = d64.cast(DataType::Float)?.reshape(&[npw as i64, 1])?;
                    for layout in [c.clone(), c.contiguous()?, wide.narrow(1, 2, nb)?] {
                        for d in [&d64, &d32] {
                            let h = plan.apply_local(&v, d, &layout)?;
                            assert_eq!((h.dims(), h.dtype()), (&[npw, nb][..], dtype));
                            let h = h.cast(DataType::ComplexDouble)?;
                            assert!(h.allclose(&want, tol, tol)?, "dense {dense} {dtype:?} {nb}");
                        }
                    }
                }
            }
        }
        // A NaN in one diagonal entry stays in that plane wave's row.
        let plan = SphereFft::new(n, &idx, DeviceType::Cpu)?;
        let c = Tensor::randn(DataType::ComplexDouble, DeviceType::Cpu, &[npw, 4], 24)?;
        let mut dn = dh.clone();
        dn[7] = f64::NAN;
        let h = plan.apply_local(&v, &Tensor::from_vec(dn, &[npw])?, &c)?;
        let clean = plan.apply_local(&v, &d64, &c)?;
        assert!(!h.narrow(0, 7, 1)?.isfinite()?.any()?);
        assert!(h
            .narrow(0, 0, 7)?
            .allclose(&clean.narrow(0, 0, 7)?, 0.0, 0.0)?);
        assert!(h
            .narrow(0, 8, npw - 8)?
            .allclose(&clean.narrow(0, 8, npw - 8)?, 0.0, 0.0)?);
        // Diagonals of the wrong length, rank or type are refused with what was expected.
        for bad in [
            Tensor::zeros(DataType::Double, DeviceType::Cpu, &[npw + 1])?,
            Tensor::zeros(DataType::Double, DeviceType::Cpu, &[npw, 2])?,
            Tensor::zeros(DataType::Double, DeviceType::Cpu, &[1, npw])?,
            Tensor::zeros(DataType::ComplexDouble, DeviceType::Cpu, &[npw])?,
        ] {
            let e = plan.apply_local(&v, &bad, &c).err().unwrap();
            assert!(e.to_string().contains("a real diagonal"), "{e}");
        }
        Ok(())
    }

    /// `apply_local_into` gives `apply_local`'s values in every output layout, on the host
    /// plan and the dense (GPU) path, for both dtypes and 0 to 300 bands: a window of
    /// columns of a wider block (the elements around it untouched), a column-major block
    /// (a transposed view), a window of rows; an output that is the input itself or
    /// overlaps it (through a temporary); a broadcast output, wrong shapes and dtypes, a
    /// bad potential or diagonal refused.
    #[test]
    fn apply_local_into_writes_where_the_output_lies() -> Result<()> {
        let n = [9, 10, 12];
        let idx: Vec<usize> = (0..1080).filter(|i| i % 7 == 3 || i % 11 == 0).collect();
        let npw = idx.len();
        let v = Tensor::randn(DataType::Double, DeviceType::Cpu, &n, 31)?;
        let d = Tensor::randn(DataType::Double, DeviceType::Cpu, &[npw], 32)?;
        for dense in [false, true] {
            let mut plan = SphereFft::new(n, &idx, DeviceType::Cpu)?;
            if dense {
                plan.host = None;
            }
            for dtype in [DataType::ComplexDouble, DataType::ComplexFloat] {
                for nb in [0, 1, 5, 300] {
                    let c = Tensor::randn(dtype, DeviceType::Cpu, &[npw, nb], 33)?;
                    let want = plan.apply_local(&v, &d, &c)?;
                    let what = format!("dense {dense} {dtype:?} nb {nb}");
                    let sentinel =
                        Tensor::full(-7.25, DeviceType::Cpu, &[npw + 4, nb + 3])?.cast(dtype)?;
                    // Columns 2.. of a wider block, rows 1.. of a taller one.
                    let wide = sentinel.clone();
                    plan.apply_local_into(
                        &v,
                        &d,
                        &c,
                        &mut wide.narrow(1, 2, nb)?.narrow(0, 1, npw)?,
                    )?;
                    let got = wide.narrow(1, 2, nb)?.narrow(0, 1, npw)?;
                    assert!(got.allclose(&want, 0.0, 0.0)?, "{what}: window");
                    let mut outside = wide.cast(DataType::ComplexDouble)?.to_vec::<c64>()?;
                    for g in 0..npw {
                        for b in 0..nb {
                            outside[(g + 1) * (nb + 3) + b + 2] = c64::new(-7.25, 0.0);
                        }
                    }
                    assert!(
                        outside.iter().all(|x| *x == c64::new(-7.25, 0.0)),
                        "{what}: outside"
                    );
                    // Column-major.
                    let mut cm = Tensor::zeros(dtype, DeviceType::Cpu, &[nb, npw])?.t()?;
                    plan.apply_local_into(&v, &d, &c, &mut cm)?;
                    assert!(cm.allclose(&want, 0.0, 0.0)?, "{what}: column-major");
                    // In place, and overlapping by one column.
                    let mut same = c.clone();
                    plan.apply_local_into(&v, &d, &same.share(), &mut same)?;
                    assert!(same.allclose(&want, 0.0, 0.0)?, "{what}: in place");
                    if nb > 1 {
                        let block = Tensor::zeros(dtype, DeviceType::Cpu, &[npw, nb + 1])?;
                        block.narrow(1, 0, nb)?.assign(&c)?;
                        let input = block.narrow(1, 0, nb)?;
                        plan.apply_local_into(&v, &d, &input, &mut block.narrow(1, 1, nb)?)?;
                        assert!(
                            block.narrow(1, 1, nb)?.allclose(&want, 0.0, 0.0)?,
                            "{what}: overlap"
                        );
                    }
                }
                // Refusals.
                let c = Tensor::randn(dtype, DeviceType::Cpu, &[npw, 3], 34)?;
                let other = if dtype == DataType::ComplexDouble {
                    DataType::ComplexFloat
                } else {
                    DataType::ComplexDouble
                };
                for (mut bad, says) in [
                    (
                        Tensor::zeros(dtype, DeviceType::Cpu, &[npw, 4])?,
                        "an output",
                    ),
                    (
                        Tensor::zeros(dtype, DeviceType::Cpu, &[npw + 1, 3])?,
                        "an output",
                    ),
                    (Tensor::zeros(other, DeviceType::Cpu, &[npw, 3])?, "type"),
                ] {
                    let e = plan.apply_local_into(&v, &d, &c, &mut bad).unwrap_err();
                    assert!(e.to_string().contains(says), "{e}");
                }
                let mut broadcast =
                    Tensor::zeros(dtype, DeviceType::Cpu, &[npw, 1])?.broadcast_to(&[npw, 3])?;
                let e = plan
                    .apply_local_into(&v, &d, &c, &mut broadcast)
                    .unwrap_err();
                assert!(e.to_string().contains("memory of their own"), "{e}");
                // Strides [3, 2] for [npw, 3]: one-to-one (3r + 2c repeats no offset for
                // c < 3), but only an exact check can tell, so through a temporary.
                let span = 3 * (npw - 1) + 2 * 2 + 1;
                let store = Tensor::zeros(dtype, DeviceType::Cpu, &[span])?;
                let ptr = store.data_ptr();
                // SAFETY: `store` holds `span` elements of `dtype`, which the view reaches
                // exactly, and outlives the map.
                let mut odd = unsafe {
                    crate::TensorMap::from_raw(
                        ptr,
                        dtype,
                        DeviceType::Cpu,
                        &[npw, 3],
                        &[3, 2],
                        None,
                    )?
                };
                plan.apply_local_into(&v, &d, &c, &mut odd)?;
                let want = plan.apply_local(&v, &d, &c)?;
                assert!(odd.allclose(&want, 0.0, 0.0)?, "strides [3, 2]");
                drop(odd);
                let bad_v = Tensor::zeros(DataType::Double, DeviceType::Cpu, &[9, 10])?;
                let mut out = Tensor::zeros(dtype, DeviceType::Cpu, &[npw, 3])?;
                let e = plan.apply_local_into(&bad_v, &d, &c, &mut out).unwrap_err();
                assert!(e.to_string().contains("a real potential"), "{e}");
                let e = plan.apply_local_into(&v, &v, &c, &mut out).unwrap_err();
                assert!(e.to_string().contains("a real diagonal"), "{e}");
            }
        }
        Ok(())
    }

    /// A NaN in one band stays in that band: the per-worker box buffers are reused from
    /// band to band and must not carry it over; a NaN potential reaches every band.
    #[test]
    fn a_non_finite_band_does_not_leak_into_the_others() -> Result<()> {
        let idx: Vec<usize> = (0..216).step_by(5).collect();
        let plan = SphereFft::new([6, 6, 6], &idx, DeviceType::Cpu)?;
        let clean = Tensor::randn(DataType::ComplexDouble, DeviceType::Cpu, &[idx.len(), 6], 8)?;
        let mut vals = clean.to_vec::<c64>()?;
        vals[6 * 3] = c64::new(f64::NAN, 0.0); // band 0, coefficient 3
        let dirty = Tensor::from_vec(vals, &[idx.len(), 6])?;
        let v = Tensor::randn(DataType::Double, DeviceType::Cpu, &[6, 6, 6], 9)?;
        let (a, b) = (
            plan.apply_potential(&v, &clean)?,
            plan.apply_potential(&v, &dirty)?,
        );
        assert!(!b.narrow(1, 0, 1)?.isfinite()?.all()?);
        assert!(b.narrow(1, 1, 5)?.allclose(&a.narrow(1, 1, 5)?, 0.0, 0.0)?);
        let vn = Tensor::full(f64::NAN, DeviceType::Cpu, &[6, 6, 6])?;
        assert!(!plan.apply_potential(&vn, &clean)?.isfinite()?.any()?);
        // No bands: empty results of the right shapes.
        let none = Tensor::zeros(DataType::ComplexDouble, DeviceType::Cpu, &[idx.len(), 0])?;
        assert_eq!(plan.to_grid(&none)?.dims(), [0, 6, 6, 6]);
        assert_eq!(plan.apply_potential(&v, &none)?.dims(), [idx.len(), 0]);
        assert_eq!(plan.density(&none, &[])?.sum_all()?.item::<f64>()?, 0.0);
        // A huge box is an error, not an allocation.
        assert!(SphereFft::new([1 << 30, 1 << 30, 1], &[0], DeviceType::Cpu).is_err());
        Ok(())
    }

    #[test]
    fn wrong_shapes_dtypes_and_weights_are_refused() -> Result<()> {
        let plan = SphereFft::new([4, 4, 4], &[0, 1, 5], DeviceType::Cpu)?;
        let c = Tensor::zeros(DataType::ComplexDouble, DeviceType::Cpu, &[3, 2])?;
        assert!(plan
            .to_grid(&Tensor::zeros(
                DataType::ComplexDouble,
                DeviceType::Cpu,
                &[4, 2]
            )?)
            .is_err());
        assert!(plan
            .to_grid(&Tensor::zeros(DataType::Double, DeviceType::Cpu, &[3, 2])?)
            .is_err());
        assert!(plan
            .from_grid(&Tensor::zeros(
                DataType::ComplexDouble,
                DeviceType::Cpu,
                &[2, 4, 4, 5]
            )?)
            .is_err());
        assert!(plan
            .apply_potential(
                &Tensor::zeros(DataType::Double, DeviceType::Cpu, &[4, 4])?,
                &c
            )
            .is_err());
        assert!(plan
            .apply_potential(
                &Tensor::zeros(DataType::ComplexDouble, DeviceType::Cpu, &[4, 4, 4])?,
                &c
            )
            .is_err());
        let e = plan.density(&c, &[1.0]).err().unwrap();
        assert!(e.to_string().contains("2 weights"), "{e}");
        assert!(SphereFft::new([4, 4, 4], &[64], DeviceType::Cpu).is_err());
        Ok(())
    }
}
