//! [`TensorMap`]: a tensor over memory that someone else owns (a C array, a Fortran
//! array, a `Vec`), which ctensor never frees.

use std::any::Any;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use ctensor_base::{DataType, DeviceType, Error, Result, Scalar};

use super::buffer::TensorBuffer;
use super::shape::{Order, TensorShape};
use super::tensor::Tensor;

/// A [`Tensor`] over foreign memory. It dereferences to `Tensor`, so every tensor method
/// works on it — [`sync`](Tensor::sync) into it writes the caller's array — and dropping it
/// (or any view or shallow copy of it) never frees the memory.
///
/// Column-major (Fortran) arrays map with [`Order::ColMajor`]: the logical shape is the
/// Fortran shape, e.g. `A(m, n)` maps as `[m, n]` with strides `[1, m]`.
pub struct TensorMap {
    tensor: Tensor,
}

/// Checks that a foreign pointer given as GPU memory can be: the GPU is usable, and the
/// CUDA driver knows the address (a host pointer passed as device memory would make the
/// first kernel fault, long after the mistake).
fn check_gpu_pointer(ptr: *mut std::ffi::c_void) -> Result<()> {
    #[cfg(feature = "cuda")]
    {
        if ptr.is_null() {
            // An empty view: nothing to look up, but the GPU must still be usable.
            ctensor_base::gpu::context()?;
        } else if !ctensor_base::gpu::is_cuda_pointer(ptr as u64)? {
            return Err(Error::InvalidArgument {
                op: "TensorMap",
                expected: "a device pointer the CUDA driver knows (device, managed or \
                           registered host memory)"
                    .into(),
                given: format!("{ptr:p}, which the driver does not know (host memory?)"),
            });
        }
        Ok(())
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = ptr;
        Err(ctensor_base::alloc::gpu_unavailable())
    }
}

/// Layouts up to this many elements that fail the sorted-stride rule are checked exactly
/// by listing their offsets (32 MiB of offsets at most).
const EXACT_OVERLAP_LIMIT: usize = 1 << 22;

/// Checks a foreign view's strides: one per dimension, no two multi-indices on one
/// element (so writes through the map are well defined), and returns the number of
/// elements the view spans from its first element.
///
/// Every layout whose strides, sorted, each reach past the span of the smaller ones is
/// accepted at once (dense, padded, permuted layouts); any other layout of at most
/// [`EXACT_OVERLAP_LIMIT`] elements is accepted exactly when no two of its offsets
/// coincide (shape `[3, 3]` with strides `[3, 2]` is such a layout).
pub(crate) fn span_of(shape: &[usize], strides: &[usize]) -> Result<usize> {
    if strides.len() != shape.len() {
        return Err(Error::InvalidArgument {
            op: "TensorMap",
            expected: format!("{} strides (one per dimension of {shape:?})", shape.len()),
            given: format!("{} strides {strides:?}", strides.len()),
        });
    }
    let numel = ctensor_kernels::args::numel("TensorMap", shape)?;
    if numel == 0 {
        return Ok(0);
    }
    let dims = ctensor_kernels::strides::sorted_dims(shape, strides);
    let overflow = || Error::Overflow {
        op: "TensorMap",
        what: format!(
            "the memory spanned by shape {shape:?} with strides {strides:?} exceeds usize"
        ),
    };
    // The span: one past the largest offset.
    let mut span = 1usize;
    for &(stride, size) in &dims {
        span = (size - 1)
            .checked_mul(stride)
            .and_then(|x| x.checked_add(span))
            .ok_or_else(overflow)?;
    }
    if ctensor_kernels::strides::reach_past_smaller(shape, strides) {
        return Ok(span);
    }
    let refuse = |given: String| Error::InvalidArgument {
        op: "TensorMap",
        expected: "strides that never reach one element twice".into(),
        given,
    };
    if numel > EXACT_OVERLAP_LIMIT {
        return Err(refuse(format!(
            "shape {shape:?} with strides {strides:?}: too large ({numel} elements) to check \
             exactly, and its strides, sorted, do not each reach past the span of the smaller \
             ones (the rule for layouts over {EXACT_OVERLAP_LIMIT} elements)"
        )));
    }
    let mut offsets = vec![0usize];
    for &(stride, size) in &dims {
        let base = offsets.clone();
        for k in 1..size {
            offsets.extend(base.iter().map(|o| o + k * stride));
        }
    }
    offsets.sort_unstable();
    if let Some(w) = offsets.windows(2).find(|w| w[0] == w[1]) {
        return Err(refuse(format!(
            "shape {shape:?} with strides {strides:?}, which reach offset {} twice",
            w[0]
        )));
    }
    Ok(span)
}

impl TensorMap {
    /// Maps `ptr` as a dense tensor of shape `shape` in `order`.
    ///
    /// # Safety
    /// - `ptr` points to `shape`'s element count of initialised `T` on `device`, valid for
    ///   reads and writes;
    /// - that memory stays valid as long as the map and every tensor that shares its
    ///   buffer (views and shallow copies made from it) live;
    /// - meanwhile nothing accesses it except through those tensors or through other
    ///   maps of the same memory, and never from two threads at once through two maps:
    ///   the run-time borrow checks cover the tensors that share one buffer, not other
    ///   maps or references to the same memory.
    ///
    /// Two maps of one memory (or a map and a DLPack import of it) may be used together
    /// on one thread: an op that writes through one and reads through the other finds
    /// the overlap by address ([`Tensor::shares_memory_with`]) and reads a copy.
    pub unsafe fn new<T: Scalar>(
        ptr: *mut T,
        device: DeviceType,
        shape: &[usize],
        order: Order,
    ) -> Result<TensorMap> {
        let strides = order.strides(shape);
        // SAFETY: forwarded from the caller.
        unsafe { TensorMap::from_raw(ptr.cast(), T::DTYPE, device, shape, &strides, None) }
    }

    /// As [`new`](Self::new), with a handle that is dropped when the last tensor sharing the
    /// map's buffer is dropped — for instance the `Arc` that owns the array, so the memory
    /// is guaranteed to outlive every view.
    ///
    /// # Safety
    /// As [`new`](Self::new), except that the memory need only live as long as `keep_alive`.
    pub unsafe fn with_keep_alive<T: Scalar>(
        ptr: *mut T,
        device: DeviceType,
        shape: &[usize],
        order: Order,
        keep_alive: Arc<dyn Any + Send + Sync>,
    ) -> Result<TensorMap> {
        let strides = order.strides(shape);
        // SAFETY: forwarded from the caller.
        unsafe {
            TensorMap::from_raw(
                ptr.cast(),
                T::DTYPE,
                device,
                shape,
                &strides,
                Some(keep_alive),
            )
        }
    }

    /// Maps `ptr` as a strided tensor of run-time `dtype` (strides in elements), e.g. a
    /// column-major block with leading dimension `lda` as strides `[1, lda]`.
    ///
    /// Errors: a null `ptr` for a non-empty view, a `ptr` not aligned for `dtype`, strides
    /// of the wrong count or that reach one element twice, a size that overflows, and
    /// `DeviceUnavailable` for a device this build cannot use.
    ///
    /// # Safety
    /// As [`new`](Self::new), for every element the strided view reaches; the memory need
    /// only live as long as `keep_alive` when one is given.
    pub unsafe fn from_raw(
        ptr: *mut std::ffi::c_void,
        dtype: DataType,
        device: DeviceType,
        shape: &[usize],
        strides: &[usize],
        keep_alive: Option<Arc<dyn Any + Send + Sync>>,
    ) -> Result<TensorMap> {
        // SAFETY: forwarded from the caller.
        unsafe { TensorMap::from_raw_with(ptr, dtype, device, shape, strides, keep_alive, false) }
    }

    /// [`from_raw`](Self::from_raw), read-only when `read_only`: every write through the
    /// map or a tensor sharing its memory is refused.
    ///
    /// # Safety
    /// As [`from_raw`](Self::from_raw); with `read_only`, the memory need only be valid
    /// for reads.
    pub(crate) unsafe fn from_raw_with(
        ptr: *mut std::ffi::c_void,
        dtype: DataType,
        device: DeviceType,
        shape: &[usize],
        strides: &[usize],
        keep_alive: Option<Arc<dyn Any + Send + Sync>>,
        read_only: bool,
    ) -> Result<TensorMap> {
        if device == DeviceType::Gpu {
            check_gpu_pointer(ptr)?;
        }
        let span = span_of(shape, strides)?;
        if span > 0 && ptr.is_null() {
            return Err(Error::InvalidArgument {
                op: "TensorMap",
                expected: format!("a non-null pointer to {span} elements of {dtype}"),
                given: "a null pointer".into(),
            });
        }
        if !(ptr as usize).is_multiple_of(dtype.align_of()) {
            return Err(Error::InvalidArgument {
                op: "TensorMap",
                expected: format!(
                    "a pointer aligned to {} bytes for {dtype}",
                    dtype.align_of()
                ),
                given: format!("{ptr:p}"),
            });
        }
        let bytes = span
            .checked_mul(dtype.size_of())
            .ok_or_else(|| Error::Overflow {
                op: "TensorMap",
                what: format!("{span} elements of {dtype} exceed usize bytes"),
            })?;
        if (ptr as usize).checked_add(bytes).is_none() {
            return Err(Error::Overflow {
                op: "TensorMap",
                what: format!("{bytes} bytes from {ptr:p} wrap around the address space"),
            });
        }
        // SAFETY: the caller vouches for the memory and its lifetime (see `# Safety`).
        let buffer = unsafe {
            TensorBuffer::foreign_with(ptr.cast(), bytes, device, keep_alive, read_only, false)
        };
        Ok(TensorMap {
            tensor: Tensor {
                dtype,
                device,
                shape: TensorShape::new(shape),
                strides: strides.to_vec(),
                offset: 0,
                buffer,
            },
        })
    }

    /// The map as a plain [`Tensor`] (still over the foreign memory).
    pub fn into_tensor(self) -> Tensor {
        self.tensor
    }
}

impl Deref for TensorMap {
    type Target = Tensor;
    fn deref(&self) -> &Tensor {
        &self.tensor
    }
}

impl DerefMut for TensorMap {
    fn deref_mut(&mut self) -> &mut Tensor {
        &mut self.tensor
    }
}

impl fmt::Display for TensorMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.tensor, f)
    }
}

impl fmt::Debug for TensorMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("TensorMap").field(&self.tensor).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn span_of_dense_and_padded_layouts() {
        assert_eq!(span_of(&[3, 4], &[4, 1]).unwrap(), 12);
        assert_eq!(span_of(&[3, 4], &[1, 5]).unwrap(), 3 + 3 * 5);
        assert_eq!(span_of(&[0, 4], &[4, 1]).unwrap(), 0);
        assert_eq!(span_of(&[], &[]).unwrap(), 1);
        assert_eq!(span_of(&[1, 5], &[0, 1]).unwrap(), 5);
    }

    #[test]
    fn span_of_accepts_every_layout_that_never_overlaps() {
        // Interleaved layouts that fail the sorted-stride rule but never overlap.
        assert_eq!(span_of(&[3, 3], &[3, 2]).unwrap(), 11);
        assert_eq!(span_of(&[3, 2, 2], &[3, 5, 7]).unwrap(), 19);
        assert_eq!(span_of(&[3, 2], &[2, 3]).unwrap(), 8);
        // And a brute-force cross-check over small shapes and strides.
        for d0 in 1..4usize {
            for d1 in 1..4usize {
                for s0 in 0..5usize {
                    for s1 in 0..5usize {
                        let mut offs: Vec<usize> = (0..d0)
                            .flat_map(|i| (0..d1).map(move |j| i * s0 + j * s1))
                            .collect();
                        offs.sort_unstable();
                        let distinct = offs.windows(2).all(|w| w[0] != w[1]);
                        let r = span_of(&[d0, d1], &[s0, s1]);
                        assert_eq!(r.is_ok(), distinct, "[{d0}, {d1}] strides [{s0}, {s1}]");
                        if let Ok(span) = r {
                            assert_eq!(span, offs.last().unwrap() + 1);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn span_of_rejects_overlapping_strides() {
        for (shape, strides) in [
            (&[3usize, 4][..], &[2usize, 1][..]),
            (&[2, 2], &[0, 1]),
            (&[5], &[0]),
        ] {
            assert!(
                matches!(
                    span_of(shape, strides),
                    Err(Error::InvalidArgument {
                        op: "TensorMap",
                        ..
                    })
                ),
                "{shape:?} {strides:?}"
            );
        }
    }
}
