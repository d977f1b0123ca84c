//! Reductions: `sum`, `mean`, `max`, `min` over all or chosen axes, `argmax`/`argmin`,
//! the running sum `cumsum`, the Euclidean (Frobenius) `norm`, and `dot` / `vdot`.

use ctensor_base::{DataType, Error, Result, Scalar};
use ctensor_kernels::blas::{BlasDot, BlasNrm2};
use ctensor_kernels::reduce::{ArgExtreme, CumSum, Reduce, ReduceExtreme};

use crate::core::dispatch::{dispatch, dispatch_blas};
use crate::core::tensor::Tensor;

/// Which reduction a row kernel computes.
#[derive(Clone, Copy)]
enum Rows {
    Sum,
    Max,
    Min,
}

impl Tensor {
    /// Moves `axes` last and returns the dense result with `(kept dims, reduced count)`.
    fn axes_last(&self, op: &'static str, axes: &[usize]) -> Result<(Tensor, Vec<usize>, usize)> {
        let nd = self.ndim();
        let mut seen = vec![false; nd];
        for &a in axes {
            if a >= nd || std::mem::replace(&mut seen[a], true) {
                return Err(Error::OutOfRange {
                    op,
                    what: "axis".into(),
                    given: a as i64,
                    valid: format!("distinct axes in 0..{nd}, got {axes:?}"),
                });
            }
        }
        let kept: Vec<usize> = (0..nd).filter(|&d| !seen[d]).collect();
        let perm: Vec<usize> = kept.iter().chain(axes.iter()).copied().collect();
        let x = self.permute(&perm)?.dense()?;
        let kept_dims: Vec<usize> = kept.iter().map(|&d| self.dims()[d]).collect();
        let inner = axes.iter().map(|&d| self.dims()[d]).product();
        Ok((x, kept_dims, inner))
    }

    fn reduce_rows(&self, op: &'static str, kind: Rows, axes: &[usize]) -> Result<Tensor> {
        let (x, kept, inner) = self.axes_last(op, axes)?;
        let out = Tensor::new(self.dtype(), self.device(), &kept)?;
        let rows = out.numel();
        let _w = out.buffer.write(op)?;
        let _r = x.buffer.read(op)?;
        dispatch!(self.dtype(), self.device(), T, D => {
            let (src, dst) = (x.typed_ptr::<T>(), out.typed_ptr::<T>());
            // SAFETY: `x` is dense with rows·inner elements, `out` with rows; different
            // buffers held by the guards.
            unsafe {
                match kind {
                    Rows::Sum => <D as Reduce<T>>::reduce(rows, inner, src, dst),
                    Rows::Max => <D as ReduceExtreme<T>>::reduce_extreme(true, rows, inner, src, dst),
                    Rows::Min => <D as ReduceExtreme<T>>::reduce_extreme(false, rows, inner, src, dst),
                }
            }
        })?;
        drop((_w, _r));
        Ok(out)
    }

    /// Sum over `axes` (removed from the shape); `&[]` returns a copy. Half types
    /// accumulate in `f32`, integers wrap.
    pub fn sum(&self, axes: &[usize]) -> Result<Tensor> {
        self.reduce_rows("sum", Rows::Sum, axes)
    }

    /// Sum of all elements, as a rank-0 tensor.
    pub fn sum_all(&self) -> Result<Tensor> {
        let all: Vec<usize> = (0..self.ndim()).collect();
        self.sum(&all)
    }

    /// Mean over `axes`; for floating and complex types (cast integers first).
    pub fn mean(&self, axes: &[usize]) -> Result<Tensor> {
        if self.dtype().is_integer() {
            return Err(Error::UnsupportedDType {
                op: "mean",
                dtype: self.dtype(),
                supported: "f32, f64, c32, c64, f16, bf16 (cast integers to a float type first)",
            });
        }
        let count: usize = axes.iter().filter_map(|&a| self.dims().get(a)).product();
        let s = self.sum(axes)?;
        s.mul_scalar(1.0 / count as f64)
    }

    /// Largest element over `axes` (NaN wins); not for complex types or empty axes.
    pub fn max(&self, axes: &[usize]) -> Result<Tensor> {
        self.reduce_rows("max", Rows::Max, axes)
    }

    /// Smallest element over `axes` (NaN wins); not for complex types or empty axes.
    pub fn min(&self, axes: &[usize]) -> Result<Tensor> {
        self.reduce_rows("min", Rows::Min, axes)
    }

    /// The index (`i64`) of the largest element along `axis`, which is removed from the
    /// shape: the first of equal maxima, and the first NaN where there is one (NumPy's
    /// `argmax`). Not for complex types or an empty axis.
    ///
    /// ```
    /// use ctensor_aten::Tensor;
    /// let r = Tensor::from_slice(&[3.0f64, 9.0, 9.0, 1.0, 0.0, 2.0], &[2, 3])?;
    /// assert_eq!(r.argmax(1)?.to_vec::<i64>()?, [1, 2]);
    /// assert_eq!(r.argmin(0)?.to_vec::<i64>()?, [1, 1, 1]);
    /// # Ok::<(), ctensor_aten::Error>(())
    /// ```
    pub fn argmax(&self, axis: usize) -> Result<Tensor> {
        self.arg_extreme("argmax", true, axis)
    }

    /// The index (`i64`) of the smallest element along `axis` (first of equal minima,
    /// first NaN); see [`argmax`](Self::argmax).
    pub fn argmin(&self, axis: usize) -> Result<Tensor> {
        self.arg_extreme("argmin", false, axis)
    }

    /// The flat (row-major) index of the largest element of the whole tensor, on the host
    /// (NumPy's `argmax()` without an axis).
    pub fn argmax_all(&self) -> Result<usize> {
        self.arg_extreme_all("argmax_all", true)
    }

    /// The flat (row-major) index of the smallest element of the whole tensor.
    pub fn argmin_all(&self) -> Result<usize> {
        self.arg_extreme_all("argmin_all", false)
    }

    fn arg_extreme_all(&self, op: &'static str, max: bool) -> Result<usize> {
        let flat = self.dense()?.reshape(&[self.numel() as i64])?;
        let k = flat.arg_extreme(op, max, 0)?.item::<i64>()?;
        Ok(k as usize)
    }

    fn arg_extreme(&self, op: &'static str, max: bool, axis: usize) -> Result<Tensor> {
        let (x, kept, inner) = self.axes_last(op, &[axis])?;
        let out = Tensor::new(DataType::Int64, self.device(), &kept)?;
        let rows = out.numel();
        let _w = out.buffer.write(op)?;
        let _r = x.buffer.read(op)?;
        dispatch!(x.dtype(), x.device(), T, D => {
            // SAFETY: `x` is dense with rows·inner elements of T, `out` holds rows i64s;
            // different buffers held by the guards.
            unsafe { <D as ArgExtreme<T>>::arg_extreme(max, rows, inner, x.typed_ptr::<T>(), out.typed_ptr::<i64>()) }
        })
        .map_err(|e| e.in_op(op))?;
        drop((_w, _r));
        Ok(out)
    }

    /// Running sums along `axis` (same shape): `y[.., j, ..] = Σ_{k ≤ j} x[.., k, ..]`.
    /// `i32` sums in `i64` (as NumPy and PyTorch); other types keep theirs (`f16`/`bf16`
    /// accumulate in `f32`, integers wrap).
    ///
    /// ```
    /// use ctensor_aten::Tensor;
    /// let counts = Tensor::from_slice(&[3i32, 0, 2, 5], &[4])?;
    /// assert_eq!(counts.cumsum(0)?.to_vec::<i64>()?, [3, 3, 5, 10]);
    /// # Ok::<(), ctensor_aten::Error>(())
    /// ```
    pub fn cumsum(&self, axis: usize) -> Result<Tensor> {
        let op = "cumsum";
        let src = if self.dtype() == DataType::Int {
            self.cast(DataType::Int64)?
        } else {
            self.share()
        };
        let (x, kept, inner) = src.axes_last(op, &[axis])?;
        let out = Tensor::new(x.dtype(), x.device(), x.dims())?;
        let rows: usize = kept.iter().product();
        {
            let _w = out.buffer.write(op)?;
            let _r = x.buffer.read(op)?;
            dispatch!(x.dtype(), x.device(), T, D => {
                // SAFETY: `x` and `out` are dense with rows·inner elements of T, different
                // buffers held by the guards.
                unsafe { <D as CumSum<T>>::cumsum(rows, inner, x.typed_ptr::<T>(), out.typed_ptr::<T>()) }
            })?;
        }
        // `out` has `axis` last; put it back.
        let nd = self.ndim();
        let mut back: Vec<usize> = (0..nd - 1).collect();
        back.insert(axis, nd - 1);
        out.permute(&back)?.dense()
    }

    /// The Euclidean norm of all elements, `sqrt(Σ |x|²)` (the Frobenius norm of a
    /// matrix), computed without overflow as BLAS `nrm2` does.
    pub fn norm(&self) -> Result<f64> {
        // BLAS types go as they are; integers and half types via f64.
        let x = if self.dtype().is_blas() {
            self.dense()?
        } else {
            self.cast(ctensor_base::DataType::Double)?
        };
        let _r = x.buffer.read("norm")?;
        dispatch_blas!(x.dtype(), x.device(), "norm", T, D => {
            // SAFETY: `x` is dense with `numel` elements of T, held by the guard.
            let v = unsafe { <D as BlasNrm2<T>>::nrm2(x.numel(), x.typed_ptr::<T>(), 1) }?;
            Ok(v.to_c64().re)
        })
    }

    /// `Σ self[i] · other[i]` over all elements (same shape), unconjugated, as a rank-0
    /// tensor of the operands' promoted type. BLAS `dotu` for the BLAS types.
    pub fn dot(&self, other: &Tensor) -> Result<Tensor> {
        self.dot_impl("dot", other, false)
    }

    /// `Σ conj(self[i]) · other[i]` over all elements (same shape): the inner product
    /// that conjugates its first argument (NumPy `vdot`, BLAS `dotc`).
    pub fn vdot(&self, other: &Tensor) -> Result<Tensor> {
        self.dot_impl("vdot", other, true)
    }

    /// `Σ conj(self) · other` along `axes` (the other axes kept, broadcasting and
    /// promoting): the per-band inner products of two blocks of bands stored as columns
    /// are `x.vdot_along(&y, &[0])`. Real types do not conjugate.
    pub fn vdot_along(&self, other: &Tensor, axes: &[usize]) -> Result<Tensor> {
        let x = if self.dtype().is_complex() {
            self.conj()?
        } else {
            self.share()
        };
        x.mul(other).map_err(|e| e.in_op("vdot_along"))?.sum(axes)
    }

    fn dot_impl(&self, op: &'static str, other: &Tensor, conj: bool) -> Result<Tensor> {
        if self.dims() != other.dims() {
            return Err(Error::ShapeMismatch {
                op,
                expected: format!("two tensors of one shape ({:?})", self.dims()),
                got: vec![other.dims().to_vec()],
            });
        }
        let promoted = super::promote(op, &[self, other])?;
        let (this, other) = (&promoted[0], &promoted[1]);
        if !this.dtype().is_blas() {
            // No BLAS for these types: the product kernel, then a sum.
            let x = if conj { this.conj()? } else { this.share() };
            return x.mul(other)?.sum_all();
        }
        let (x, y) = (this.dense()?, other.dense()?);
        let _r = (x.buffer.read(op)?, y.buffer.read(op)?);
        let n = x.numel();
        dispatch_blas!(x.dtype(), x.device(), op, T, D => {
            // SAFETY: both dense with `n` elements of T, held by the guards.
            let v = unsafe {
                if conj {
                    <D as BlasDot<T>>::dot(n, x.typed_ptr::<T>(), 1, y.typed_ptr::<T>(), 1)
                } else {
                    <D as BlasDot<T>>::dotu(n, x.typed_ptr::<T>(), 1, y.typed_ptr::<T>(), 1)
                }
            }?;
            Tensor::scalar(v)?.to_device(x.device())
        })
    }
}
