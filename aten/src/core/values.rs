//! Reading, writing, converting and comparing element values.

use ctensor_base::{c64, DataType, Error, Result, Scalar};
use ctensor_kernels::elementwise::Conj;
use ctensor_kernels::memory::{CastMemory, SyncMemory, SyncMemoryStrided};

use super::dispatch::{dispatch, with_device, with_dtype};
use super::shape::Order;
use super::tensor::Tensor;

impl Tensor {
    /// Sets every element to zero.
    pub fn zero(&mut self) -> Result<()> {
        dispatch!(self.dtype, self.device, T, D => self.fill_with::<T, D>(T::zero()))
    }

    /// Sets every element of this view to `value`; `T` must be the tensor's data type.
    pub fn set_value<T: Scalar>(&mut self, value: T) -> Result<()> {
        self.check_dtype::<T>("set_value")?;
        with_device!(self.device, D => self.fill_with::<T, D>(value))
    }

    /// Sets every element of this view to `value` cast to the tensor's data type (by the
    /// rules of [`CastFrom`](ctensor_base::CastFrom): real types take the real part).
    pub fn fill(&mut self, value: impl Into<ctensor_base::c64>) -> Result<()> {
        let v = value.into();
        crate::core::dispatch::with_dtype!(self.dtype, T => self.set_value(<T as ctensor_base::CastFrom<ctensor_base::c64>>::cast_from(v)))
    }

    /// The element offset (from the buffer start) of a multi-index, bounds-checked.
    fn offset_of(&self, op: &'static str, index: &[usize]) -> Result<usize> {
        if index.len() != self.ndim() {
            return Err(Error::ShapeMismatch {
                op,
                expected: format!("{} indices for a rank-{} tensor", self.ndim(), self.ndim()),
                got: vec![index.to_vec()],
            });
        }
        let mut off = self.offset;
        for (dim, ((&i, &size), &stride)) in
            index.iter().zip(self.dims()).zip(&self.strides).enumerate()
        {
            if i >= size {
                return Err(Error::OutOfRange {
                    op,
                    what: format!("index along dimension {dim}"),
                    given: i as i64,
                    valid: format!("0..{size}"),
                });
            }
            off += i * stride;
        }
        Ok(off)
    }

    /// The element at `index` (one entry per dimension), from any device.
    ///
    /// Errors: `DTypeMismatch` when `T` is not the dtype, `ShapeMismatch` for the wrong
    /// number of indices, `OutOfRange` for an index beyond its dimension.
    pub fn get_value<T: Scalar>(&self, index: &[usize]) -> Result<T> {
        self.check_dtype::<T>("get_value")?;
        let off = self.offset_of("get_value", index)?;
        let mut out = T::zero();
        let _r = self.buffer.read("get_value")?;
        with_device!(self.device, D => {
            // SAFETY: `off` is inside the buffer (bounds-checked) and of dtype T; the read
            // guard excludes writers; `out` is one host element.
            unsafe {
                <ctensor_base::CpuDevice as SyncMemory<T, D>>::sync(
                    &mut out, self.buffer.as_ptr().cast::<T>().wrapping_add(off), 1)
            }
        })?;
        Ok(out)
    }

    /// The value of a tensor with exactly one element (rank 0, or any rank with every
    /// size 1), from any device: PyTorch's `item()`, e.g. `a.vdot(&b)?.item::<c64>()?`.
    ///
    /// Errors: `DTypeMismatch` when `T` is not the dtype (cast first), `ShapeMismatch`
    /// for any other number of elements.
    pub fn item<T: Scalar>(&self) -> Result<T> {
        if self.numel() != 1 {
            return Err(Error::ShapeMismatch {
                op: "item",
                expected: "a tensor of one element".into(),
                got: vec![self.dims().to_vec()],
            });
        }
        self.get_value::<T>(&vec![0; self.ndim()])
            .map_err(|e| e.in_op("item"))
    }

    /// Writes `value` at `index`. Errors as [`get_value`](Self::get_value), plus
    /// `BorrowConflict`.
    pub fn set_at<T: Scalar>(&mut self, index: &[usize], value: T) -> Result<()> {
        self.check_dtype::<T>("set_at")?;
        let off = self.offset_of("set_at", index)?;
        let _w = self.buffer.write("set_at")?;
        with_device!(self.device, D => {
            // SAFETY: as in `get_value`, with the exclusive borrow held.
            unsafe {
                <D as SyncMemory<T, ctensor_base::CpuDevice>>::sync(
                    self.buffer.as_ptr().cast::<T>().wrapping_add(off), &value, 1)
            }
        })
    }

    /// All elements in row-major (logical) order, copied to the host from any layout.
    pub fn to_vec<T: Scalar>(&self) -> Result<Vec<T>> {
        self.check_dtype::<T>("to_vec")?;
        let n = self.numel();
        let mut out = vec![T::zero(); n];
        let _r = self.buffer.read("to_vec")?;
        let dst_strides = Order::RowMajor.strides(self.dims());
        with_device!(self.device, D => {
            // SAFETY: `out` holds the n elements of the dense row-major destination; the
            // source view lies inside its buffer; the read guard excludes writers.
            unsafe {
                <ctensor_base::CpuDevice as SyncMemoryStrided<T, D>>::sync_strided(
                    out.as_mut_ptr(), &dst_strides, self.typed_ptr::<T>(), &self.strides, self.dims())
            }
        })?;
        Ok(out)
    }

    /// A copy converted to `dtype`, by the rules of [`ctensor_base::cast`] (for all 64
    /// pairs, real <-> complex included). Keeps a column-major dense layout; any other
    /// layout becomes row-major.
    pub fn cast(&self, dtype: DataType) -> Result<Tensor> {
        let (src, order) = match self.dense_order() {
            Some(order) => (self.share(), order),
            None => (self.copy_in_order(Order::RowMajor)?, Order::RowMajor),
        };
        // SAFETY: the cast below writes all `n` elements of `out`; it is dropped unread
        // on error.
        let out = unsafe { Tensor::uninit_in_order(dtype, self.device, self.dims(), order)? };
        let n = self.numel();
        let _r = src.buffer.read("cast")?;
        with_device!(self.device, D => with_dtype!(src.dtype, S => with_dtype!(dtype, U => {
            // SAFETY: both tensors are dense in the same order with n elements of the
            // dispatched types; `out` is fresh, so the ranges do not overlap.
            unsafe { <D as CastMemory<U, S>>::cast(out.typed_ptr::<U>(), src.typed_ptr::<S>(), n) }
        })))?;
        Ok(out)
    }

    /// A copy with every element conjugated (a plain copy for real types).
    pub fn conj(&self) -> Result<Tensor> {
        let out = self.try_clone()?;
        if self.dtype.is_complex() {
            let n = out.numel();
            dispatch!(out.dtype, out.device, T, D => {
                // SAFETY: `out` is fresh and dense with n elements of T; in place is allowed.
                unsafe { <D as Conj<T>>::conj(out.typed_ptr::<T>(), out.typed_ptr::<T>(), n) }
            })?;
        }
        Ok(out)
    }

    /// The view of every element's part at `part` (0 real, 1 imaginary) of a complex tensor.
    fn part_view(&self, part: usize) -> Tensor {
        let mut out = self.share();
        out.dtype = self.dtype.real_type();
        out.strides = self.strides.iter().map(|s| 2 * s).collect();
        out.offset = 2 * self.offset + part;
        out
    }

    /// The real parts. For a complex tensor a zero-copy view of real dtype (writing to it
    /// changes the real parts of `self`); for a real tensor a shallow copy of `self`.
    pub fn real(&self) -> Result<Tensor> {
        Ok(if self.dtype.is_complex() {
            self.part_view(0)
        } else {
            self.share()
        })
    }

    /// The imaginary parts. For a complex tensor a zero-copy view of real dtype (writing to
    /// it changes the imaginary parts of `self`); for a real tensor a new tensor of zeros.
    pub fn imag(&self) -> Result<Tensor> {
        if self.dtype.is_complex() {
            Ok(self.part_view(1))
        } else {
            Tensor::new(self.dtype, self.device, self.dims())
        }
    }

    /// All elements as complex doubles, row-major.
    fn to_c64_vec(&self) -> Result<Vec<c64>> {
        with_dtype!(self.dtype, T => Ok(self.to_vec::<T>()?.into_iter().map(Scalar::to_c64).collect()))
    }

    /// `true` when `|a - b| <= atol + rtol * |b|` for every pair of elements (NumPy's
    /// `allclose` with `equal_nan = false`; equal infinities are close). The data types
    /// may differ: values are compared as complex doubles, and two integer tensors exactly.
    ///
    /// Errors: `ShapeMismatch`, `InvalidArgument` for a negative or non-finite tolerance.
    pub fn allclose(&self, other: &Tensor, rtol: f64, atol: f64) -> Result<bool> {
        if self.dims() != other.dims() {
            return Err(Error::ShapeMismatch {
                op: "allclose",
                expected: format!("the first operand's shape {:?}", self.dims()),
                got: vec![other.dims().to_vec()],
            });
        }
        if !(rtol >= 0.0 && atol >= 0.0 && rtol.is_finite() && atol.is_finite()) {
            return Err(Error::InvalidArgument {
                op: "allclose",
                expected: "finite tolerances rtol >= 0 and atol >= 0".into(),
                given: format!("rtol {rtol}, atol {atol}"),
            });
        }
        if self.dtype.is_integer() && other.dtype.is_integer() {
            let (a, b) = (self.cast(DataType::Int64)?, other.cast(DataType::Int64)?);
            let (a, b) = (a.to_vec::<i64>()?, b.to_vec::<i64>()?);
            return Ok(a.iter().zip(&b).all(|(&x, &y)| {
                ((x as i128 - y as i128).unsigned_abs() as f64) <= atol + rtol * (y as f64).abs()
            }));
        }
        let (a, b) = (self.to_c64_vec()?, other.to_c64_vec()?);
        Ok(a.iter()
            .zip(&b)
            .all(|(x, y)| x == y || (x - y).norm() <= atol + rtol * y.norm()))
    }
}

impl PartialEq for Tensor {
    /// Exact equality: same data type, same shape and equal elements (IEEE rules: `NaN` is
    /// not equal to itself). Layout and device do not matter. A tensor that cannot be read
    /// right now (borrowed mutably) compares unequal.
    fn eq(&self, other: &Tensor) -> bool {
        if self.dtype != other.dtype || self.dims() != other.dims() {
            return false;
        }
        with_dtype!(self.dtype, T => match (self.to_vec::<T>(), other.to_vec::<T>()) {
            (Ok(a), Ok(b)) => a.iter().zip(&b).all(|(x, y)| x.same_value(*y)),
            _ => false,
        })
    }
}
