//! Tensors over a caller's slice for the length of a closure, without `unsafe`:
//! [`Tensor::with_slice`] (read-only) and [`Tensor::with_slice_mut`].
//!
//! Soundness rests on the scope, not on a destructor (a destructor can be skipped with
//! `mem::forget`, which is safe): when the closure returns or unwinds, the buffer over the
//! slice is revoked — it waits for operations still running on it (on other threads),
//! then refuses every later borrow. A tensor that shares the buffer and outlives the
//! scope (a `share()`, a view, or the tensor itself moved out with `mem::swap`) keeps its
//! shape but every read or write of its elements is [`Error::BorrowConflict`]; it never
//! reaches the slice after the caller has it back. Every element access of the safe API
//! goes through the buffer's borrow state, so that check covers them all.
//!
//! A borrow guard ([`Tensor::data`], an accessor) taken from such a tensor and kept past
//! the end of the scope makes the scope's end wait until it is dropped, as joining a
//! thread waits for it.

use std::sync::Arc;

use ctensor_base::{DeviceType, Error, Result, Scalar};

use super::buffer::TensorBuffer;
use super::shape::{Order, TensorShape};
use super::tensor::Tensor;

/// Revokes the buffer when dropped: at the end of the scope, returning or unwinding.
struct Revoke(Arc<TensorBuffer>);

impl Drop for Revoke {
    fn drop(&mut self) {
        self.0.revoke();
    }
}

/// A CPU tensor of `shape` in `order` over `len` elements at `ptr`, and the guard that
/// revokes its buffer.
///
/// # Safety
/// `ptr` is valid for reads (and writes, if the tensor will be written) of `len`
/// elements of `T` until the returned guard is dropped, and nothing else accesses them
/// meanwhile except through this tensor's buffer (shared reads when read-only).
unsafe fn lend<T: Scalar>(
    op: &'static str,
    ptr: *mut T,
    len: usize,
    shape: &[usize],
    order: Order,
) -> Result<(Tensor, Revoke)> {
    let numel = shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d));
    if numel != Some(len) {
        return Err(Error::ShapeMismatch {
            op,
            expected: format!(
                "a shape holding the slice's {len} elements, not {}",
                numel.map_or("more than usize::MAX".into(), |n| n.to_string())
            ),
            got: vec![shape.to_vec()],
        });
    }
    let bytes = len * std::mem::size_of::<T>(); // no overflow: the slice exists
                                                // SAFETY: `bytes` bytes of a live slice, valid for as long as the caller promises;
                                                // the guard ends all access before that.
    let buffer = unsafe {
        TensorBuffer::foreign_with(ptr.cast(), bytes, DeviceType::Cpu, None, false, true)
    };
    let tensor = Tensor {
        dtype: T::DTYPE,
        device: DeviceType::Cpu,
        shape: TensorShape::new(shape),
        strides: order.strides(shape),
        offset: 0,
        buffer: buffer.clone(),
    };
    Ok((tensor, Revoke(buffer)))
}

impl Tensor {
    /// Runs `f` on a read-only CPU tensor of `shape` (in `order`) over `data`, without
    /// copying it: NumPy's `frombuffer` or PyTorch's `from_blob`, checked by the borrow
    /// checker. Writes through the tensor or its views are `Error::BorrowConflict`;
    /// results of operations are ordinary tensors and may leave the scope. Tensors that
    /// share `data`'s memory lose access to it when `f` returns (see the
    /// [module documentation](crate::core::borrowed)).
    ///
    /// Errors: `ShapeMismatch` when `shape` does not hold exactly `data.len()` elements.
    ///
    /// ```
    /// use ctensor_aten::{matmul, Order, Tensor};
    /// let h = vec![2.0f64, 1.0, 1.0, 3.0];
    /// let x = vec![1.0f64, -1.0];
    /// let y = Tensor::with_slice(&h, &[2, 2], Order::RowMajor, |h| {
    ///     Tensor::with_slice(&x, &[2, 1], Order::RowMajor, |x| matmul(h, x))
    /// })???;
    /// assert_eq!(y.to_vec::<f64>()?, [1.0, -2.0]);
    /// # Ok::<(), ctensor_aten::Error>(())
    /// ```
    pub fn with_slice<T: Scalar, R>(
        data: &[T],
        shape: &[usize],
        order: Order,
        f: impl FnOnce(&Tensor) -> R,
    ) -> Result<R> {
        // SAFETY: `data` is borrowed for this call and `_revoke` ends all access through
        // the buffer before it returns; the read guard held across `f` makes every write
        // a conflict, so the shared slice is only read.
        let (tensor, _revoke) = unsafe {
            lend(
                "with_slice",
                data.as_ptr() as *mut T,
                data.len(),
                shape,
                order,
            )?
        };
        let frozen = _revoke.0.read("with_slice")?;
        let r = f(&tensor);
        drop((frozen, tensor));
        Ok(r)
    }

    /// Runs `f` on a CPU tensor of `shape` (in `order`) over `data`, without copying it:
    /// everything `f` writes through the tensor or its views (`assign`, `sync`, the
    /// `_into` forms, in-place operators) lands in `data`. Tensors that share the memory
    /// lose access to it when `f` returns (see the
    /// [module documentation](crate::core::borrowed)).
    ///
    /// Errors: `ShapeMismatch` when `shape` does not hold exactly `data.len()` elements.
    ///
    /// ```
    /// use ctensor_aten::{Order, Tensor};
    /// let mut psi = vec![0.0f64; 6];
    /// Tensor::with_slice_mut(&mut psi, &[2, 3], Order::ColMajor, |t| {
    ///     t.narrow(1, 1, 1)?.assign(&Tensor::from_slice(&[7.0f64, 8.0], &[2, 1])?)
    /// })??;
    /// assert_eq!(psi, [0.0, 0.0, 7.0, 8.0, 0.0, 0.0]);
    /// # Ok::<(), ctensor_aten::Error>(())
    /// ```
    pub fn with_slice_mut<T: Scalar, R>(
        data: &mut [T],
        shape: &[usize],
        order: Order,
        f: impl FnOnce(&mut Tensor) -> R,
    ) -> Result<R> {
        // SAFETY: `data` is borrowed mutably for this call and `_revoke` ends all access
        // through the buffer before it returns.
        let (mut tensor, _revoke) = unsafe {
            lend(
                "with_slice_mut",
                data.as_mut_ptr(),
                data.len(),
                shape,
                order,
            )?
        };
        Ok(f(&mut tensor))
    }
}
