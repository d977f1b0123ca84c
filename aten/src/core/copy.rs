//! Copies, named exactly: shallow (`copy_from`, `copy_from_reshaped`), deep (`clone`,
//! `try_clone`), into existing memory (`sync`), and fresh memory (`allocate_from`,
//! `resize`, `to_device`).

use ctensor_base::{Error, Result};
use ctensor_kernels::memory::SyncMemoryStrided;
use ctensor_kernels::permute::Transpose;
use ctensor_kernels::strides::is_dense_from_inner;

use super::dispatch::{dispatch, with_device, with_dtype};
use super::shape::{Order, TensorShape};
use super::tensor::Tensor;

/// The axes of size > 1 of a view, outermost first in memory, when the view is a dense
/// block in that order (each stride the next one times its size, the last 1).
fn dense_axes(dims: &[usize], strides: &[usize]) -> Option<Vec<usize>> {
    let mut axes: Vec<usize> = (0..dims.len()).filter(|&a| dims[a] > 1).collect();
    axes.sort_by(|&a, &b| strides[b].cmp(&strides[a]));
    is_dense_from_inner(axes.iter().rev().map(|&a| (dims[a], strides[a]))).then_some(axes)
}

/// When a copy from `src` into `dst` (same dims, same device) moves the elements of one
/// dense block into another dense block laid out in a different axis order, the
/// transpose that does it: `src` as a row-major block of `shape` and the permutation
/// whose row-major result is `dst`'s memory. Such copies (`t().contiguous()`, a
/// column-major copy of a row-major tensor) then run in the tiled, threaded transpose
/// kernel instead of an element-by-element walk.
fn as_transpose(dst: &Tensor, src: &Tensor) -> Option<(Vec<usize>, Vec<usize>)> {
    if dst.device != src.device || dst.numel() == 0 {
        return None;
    }
    let from = dense_axes(src.dims(), &src.strides)?;
    let to = dense_axes(dst.dims(), &dst.strides)?;
    if from == to {
        return None;
    }
    let shape = from.iter().map(|&a| src.dims()[a]).collect();
    let perm = to
        .iter()
        .map(|a| from.iter().position(|f| f == a))
        .collect::<Option<Vec<usize>>>()?;
    Some((shape, perm))
}

impl Tensor {
    /// Copies the values of `src` into the view `dst`; same dtype and shape (checked by
    /// the callers), any two devices. Overlapping views of one buffer go through a
    /// temporary.
    pub(crate) fn copy_values(dst: &Tensor, src: &Tensor, op: &'static str) -> Result<()> {
        if dst.shares_memory_with(src) {
            let tmp = src.copy_in_order(Order::RowMajor)?;
            return Tensor::copy_values(dst, &tmp, op);
        }
        let _w = dst.buffer.write(op)?;
        let _r = src.buffer.read(op)?;
        if let Some((shape, perm)) = as_transpose(dst, src) {
            return dispatch!(dst.dtype, dst.device, T, D => {
                // SAFETY: `src` is a dense block of `shape` in row-major order and `dst`
                // the dense block of its axes permuted by `perm` (`as_transpose`), both
                // inside their buffers, on one device, in different buffers; the guards
                // exclude other access.
                unsafe {
                    <D as Transpose<T>>::transpose(&shape, &perm, src.typed_ptr::<T>(), dst.typed_ptr::<T>(), false)
                }
            });
        }
        with_device!(dst.device, D => with_device!(src.device, S => with_dtype!(dst.dtype, T => {
            // SAFETY: both views lie inside their buffers and have dtype T, each on its
            // tensor's device; they are in different buffers, so they do not overlap; the
            // guards exclude other access.
            unsafe {
                <D as SyncMemoryStrided<T, S>>::sync_strided(
                    dst.typed_ptr::<T>(),
                    &dst.strides,
                    src.typed_ptr::<T>(),
                    &src.strides,
                    dst.dims(),
                )
            }
        })))
    }

    /// A deep copy into fresh memory in `order`.
    pub(crate) fn copy_in_order(&self, order: Order) -> Result<Tensor> {
        self.copy_to(self.device, order, "copy")
    }

    /// A deep copy into fresh memory on `device` in `order`.
    fn copy_to(
        &self,
        device: ctensor_base::DeviceType,
        order: Order,
        op: &'static str,
    ) -> Result<Tensor> {
        // SAFETY: `copy_values` writes every element of `out` (same shape as `self`), and
        // `out` is dropped unread when it fails.
        let out = unsafe { Tensor::uninit_in_order(self.dtype, device, self.dims(), order)? };
        Tensor::copy_values(&out, self, op)?;
        Ok(out)
    }

    /// Makes `self` a shallow copy of `other`: afterwards both view the same memory, and a
    /// write through one is seen through the other (ABACUS `CopyFrom`).
    pub fn copy_from(&mut self, other: &Tensor) {
        *self = other.share();
    }

    /// Makes `self` a shallow copy of `other` with a new shape of the same element count
    /// (one `-1` is inferred). `other` must be row-major contiguous, since a shallow copy
    /// cannot reorder memory; `self` is unchanged on error.
    pub fn copy_from_reshaped(&mut self, other: &Tensor, shape: &[i64]) -> Result<()> {
        let dims = TensorShape::resolve(other.numel(), shape)?;
        *self = other.view_as("copy_from_reshaped", &dims)?;
        Ok(())
    }

    /// A deep copy into fresh memory (ABACUS's copy constructor). A column-major dense
    /// tensor stays column-major; every other layout becomes row-major contiguous.
    ///
    /// Errors: allocation failure, or `BorrowConflict` while the memory is borrowed
    /// mutably.
    pub fn try_clone(&self) -> Result<Tensor> {
        self.copy_in_order(self.dense_order().unwrap_or(Order::RowMajor))
    }

    /// Makes `self` a fresh zeroed tensor with `other`'s data type and device and the
    /// given shape (ABACUS `AllocateFrom`); `self`'s old memory is released.
    pub fn allocate_from(&mut self, other: &Tensor, shape: &[usize]) -> Result<()> {
        *self = Tensor::new(other.dtype, other.device, shape)?;
        Ok(())
    }

    /// Copies the values of `src` into this tensor's existing memory — also when it is a
    /// [`TensorMap`](crate::TensorMap), whose owner then sees the values.
    ///
    /// Same shape: every element, for any layouts of both. Different shapes of rank <= 2
    /// (ABACUS's padded form): `src` must be no larger than `self` in every dimension and
    /// its rows go into the top-left block of `self`; the rest of `self` is unchanged.
    /// Overlapping views of one buffer are handled correctly.
    ///
    /// Errors: `DTypeMismatch`, `ShapeMismatch` (ranks differ, rank > 2 with different
    /// shapes, or `src` larger than `self`), `BorrowConflict`.
    pub fn sync(&mut self, src: &Tensor) -> Result<()> {
        if src.dtype != self.dtype {
            return Err(Error::DTypeMismatch {
                op: "sync",
                expected: self.dtype,
                got: src.dtype,
            });
        }
        if src.dims() == self.dims() {
            return Tensor::copy_values(self, src, "sync");
        }
        let fits = src.ndim() == self.ndim()
            && src.ndim() <= 2
            && src.dims().iter().zip(self.dims()).all(|(s, d)| s <= d);
        if !fits {
            return Err(Error::ShapeMismatch {
                op: "sync",
                expected: format!(
                    "{} or, for rank <= 2, a shape no larger in any dimension",
                    self.shape
                ),
                got: vec![src.dims().to_vec()],
            });
        }
        let mut block = self.share();
        for (dim, &len) in src.dims().iter().enumerate() {
            block = block.narrow(dim, 0, len)?;
        }
        Tensor::copy_values(&block, src, "sync")
    }

    /// Gives the tensor the shape `shape`. When it already has that shape nothing happens
    /// and the values are kept; otherwise it gets fresh zeroed row-major memory (values are
    /// not kept) and other tensors that shared the old memory keep it.
    ///
    /// Errors: a [`TensorMap`](crate::TensorMap) cannot be resized (its memory is not
    /// ctensor's to reallocate); allocation failure.
    pub fn resize(&mut self, shape: &[usize]) -> Result<()> {
        if self.dims() == shape {
            return Ok(());
        }
        if !self.owns_memory() {
            return Err(Error::InvalidArgument {
                op: "resize",
                expected: "a tensor that owns its memory".into(),
                given: "a map over foreign memory".into(),
            });
        }
        *self = Tensor::new(self.dtype, self.device, shape)?;
        Ok(())
    }

    /// A deep copy on `device` (a copy also when the device is the same): host to GPU,
    /// GPU to host, or within one device. The layout is kept as in
    /// [`try_clone`](Self::try_clone).
    ///
    /// Errors: `DeviceUnavailable` when the GPU cannot be used, allocation failure,
    /// `BorrowConflict`.
    pub fn to_device(&self, device: ctensor_base::DeviceType) -> Result<Tensor> {
        let order = self.dense_order().unwrap_or(Order::RowMajor);
        self.copy_to(device, order, "to_device")
    }
}

impl Clone for Tensor {
    /// A deep copy; see [`Tensor::try_clone`].
    ///
    /// # Panics
    /// Only when memory cannot be allocated or the tensor is borrowed mutably right now,
    /// like `Vec::clone` on exhaustion; [`Tensor::try_clone`] returns those as errors.
    fn clone(&self) -> Tensor {
        match self.try_clone() {
            Ok(t) => t,
            Err(e) => panic!("Tensor::clone failed ({e}); use try_clone to handle this"),
        }
    }
}
