//! Blocks of device and pinned memory for [`Allocation`](crate::alloc::Allocation): the
//! one place that asks the GPU runtime for them. In a build without
//! the `cuda` feature, or on a machine without a usable GPU, every request is answered
//! with [`Error::DeviceUnavailable`], never a silent no-op.

use std::ptr::NonNull;

#[cfg(feature = "cuda")]
use crate::device::CPU_ALIGN;

use crate::error::{Error, Result};

/// The `DeviceUnavailable` error for a GPU request that cannot be served, with the
/// reason (no driver, no device, a build without the `cuda` feature, ...).
pub fn gpu_unavailable() -> Error {
    crate::gpu::unavailable(
        crate::gpu::unavailable_reason()
            .unwrap_or_else(|| "the GPU could not be used for this request".into()),
    )
}

/// A dangling, aligned, non-null pointer: the address of every zero-byte allocation.
#[cfg(feature = "cuda")]
fn dangling() -> NonNull<u8> {
    NonNull::new(CPU_ALIGN as *mut u8).expect("CPU_ALIGN is not zero")
}

/// A block of `bytes` bytes from `alloc` (an address; 0 means none) as a pointer: the
/// dangling one for zero bytes (which still needs a usable GPU: a zero-size GPU or pinned
/// tensor should not appear to work on a machine where no other one can), `Error::Alloc`
/// for a null answer.
#[cfg(feature = "cuda")]
fn block(
    bytes: usize,
    device: crate::DeviceType,
    what: &str,
    alloc: impl FnOnce(usize) -> Result<u64>,
) -> Result<NonNull<u8>> {
    if bytes == 0 {
        crate::gpu::context()?;
        return Ok(dangling());
    }
    let ptr = alloc(bytes)?;
    NonNull::new(ptr as *mut u8).ok_or_else(|| Error::Alloc {
        device,
        bytes,
        align: CPU_ALIGN,
        reason: format!("the driver returned a null {what} pointer"),
    })
}

#[cfg(feature = "cuda")]
pub(crate) fn alloc_zeroed(bytes: usize) -> Result<NonNull<u8>> {
    block(
        bytes,
        crate::DeviceType::Gpu,
        "device",
        crate::gpu::memory_alloc_zeroed,
    )
}

/// # Safety
/// `ptr` and `bytes` are what `alloc_zeroed` returned and gave; freed once.
#[cfg(feature = "cuda")]
pub(crate) unsafe fn dealloc(ptr: NonNull<u8>, bytes: usize) {
    if bytes > 0 {
        // SAFETY: the caller's contract.
        unsafe { crate::gpu::memory_free(ptr.as_ptr() as u64) };
    }
}

#[cfg(not(feature = "cuda"))]
pub(crate) fn alloc_zeroed(_bytes: usize) -> Result<NonNull<u8>> {
    Err(gpu_unavailable())
}

/// # Safety
/// Never called: no GPU allocation can be made in this build.
#[cfg(not(feature = "cuda"))]
pub(crate) unsafe fn dealloc(_ptr: NonNull<u8>, _bytes: usize) {}

/// `bytes` bytes of pinned host memory (not initialised); a dangling aligned pointer for
/// zero bytes, once a GPU is known to be usable.
#[cfg(feature = "cuda")]
pub(crate) fn pinned_alloc(bytes: usize) -> Result<NonNull<u8>> {
    block(
        bytes,
        crate::DeviceType::Cpu,
        "pinned host",
        crate::gpu::pinned_alloc,
    )
}

/// # Safety
/// `ptr` and `bytes` are what `pinned_alloc` returned and gave; freed once, after every
/// copy that uses the memory has finished.
#[cfg(feature = "cuda")]
pub(crate) unsafe fn pinned_dealloc(ptr: NonNull<u8>, bytes: usize) {
    if bytes > 0 {
        // SAFETY: the caller's contract.
        unsafe { crate::gpu::pinned_free(ptr.as_ptr() as u64) };
    }
}

#[cfg(not(feature = "cuda"))]
pub(crate) fn pinned_alloc(_bytes: usize) -> Result<NonNull<u8>> {
    Err(gpu_unavailable())
}

/// # Safety
/// Never called: no pinned allocation can be made in this build.
#[cfg(not(feature = "cuda"))]
pub(crate) unsafe fn pinned_dealloc(_ptr: NonNull<u8>, _bytes: usize) {}

/// Hands a GPU or pinned block to its pool to free once `fences` complete: `None` when
/// the pool took it, the fences back when that cannot be done (no pools:
/// `CTENSOR_ALLOC=direct`, or a zero-byte block).
///
/// # Safety
/// `ptr` and `bytes` are what the matching allocator returned and gave; when this
/// returns `None` the block counts as freed.
#[cfg(feature = "cuda")]
pub(crate) unsafe fn free_after(
    ptr: NonNull<u8>,
    bytes: usize,
    pinned: bool,
    fences: Vec<std::sync::Arc<dyn crate::fence::Fence>>,
) -> Option<Vec<std::sync::Arc<dyn crate::fence::Fence>>> {
    if bytes == 0 {
        return Some(fences);
    }
    // SAFETY: the caller's contract.
    unsafe { crate::gpu::memory_free_after(ptr.as_ptr() as u64, pinned, fences) }
}

/// # Safety
/// Never called with a block: none can be made in this build.
#[cfg(not(feature = "cuda"))]
pub(crate) unsafe fn free_after(
    _ptr: NonNull<u8>,
    _bytes: usize,
    _pinned: bool,
    fences: Vec<std::sync::Arc<dyn crate::fence::Fence>>,
) -> Option<Vec<std::sync::Arc<dyn crate::fence::Fence>>> {
    Some(fences)
}

/// A temporary block of device memory of the runtime's own (an overlapping copy's
/// staging), freed when dropped.
#[cfg(feature = "cuda")]
pub(crate) struct DeviceBlock {
    ptr: NonNull<u8>,
    bytes: usize,
}

#[cfg(feature = "cuda")]
impl DeviceBlock {
    /// `bytes` zeroed bytes of device memory.
    pub(crate) fn zeroed(bytes: usize) -> Result<DeviceBlock> {
        Ok(DeviceBlock {
            ptr: alloc_zeroed(bytes)?,
            bytes,
        })
    }

    /// The block's device address.
    pub(crate) fn addr(&self) -> u64 {
        self.ptr.as_ptr() as u64
    }
}

#[cfg(feature = "cuda")]
impl Drop for DeviceBlock {
    fn drop(&mut self) {
        // SAFETY: `ptr` and `bytes` are what `alloc_zeroed` returned and was given, and
        // this is the only free.
        unsafe { dealloc(self.ptr, self.bytes) }
    }
}
