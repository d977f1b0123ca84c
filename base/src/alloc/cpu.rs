//! Aligned host memory.

use std::alloc::{self, Layout};
use std::ptr::NonNull;

use crate::device::DeviceType;
use crate::error::{Error, Result};

/// Alignment of every host allocation, in bytes: a cache line, and enough for AVX-512
/// loads of any element type.
pub const CPU_ALIGN: usize = 64;

fn dangling() -> NonNull<u8> {
    // SAFETY-free: a non-zero address that is a multiple of CPU_ALIGN, never dereferenced.
    NonNull::<u8>::dangling().with_addr(std::num::NonZeroUsize::new(CPU_ALIGN).expect("non-zero"))
}

/// Zeroed host memory of `bytes` bytes aligned to [`CPU_ALIGN`]; no allocation for 0 bytes.
pub(super) fn alloc_zeroed(bytes: usize) -> Result<NonNull<u8>> {
    alloc_host(bytes, true)
}

/// Host memory of `bytes` bytes aligned to [`CPU_ALIGN`] with unspecified contents; no
/// allocation for 0 bytes. Freed by [`dealloc`] like [`alloc_zeroed`]'s.
pub(super) fn alloc_uninit(bytes: usize) -> Result<NonNull<u8>> {
    alloc_host(bytes, false)
}

fn alloc_host(bytes: usize, zeroed: bool) -> Result<NonNull<u8>> {
    if bytes == 0 {
        return Ok(dangling());
    }
    let fail = |reason: &str| Error::Alloc {
        device: DeviceType::Cpu,
        bytes,
        align: CPU_ALIGN,
        reason: reason.to_string(),
    };
    let layout = Layout::from_size_align(bytes, CPU_ALIGN)
        .map_err(|_| fail("the size exceeds isize::MAX once rounded up to the alignment"))?;
    // SAFETY: the layout has a non-zero size (checked above).
    let ptr = unsafe {
        if zeroed {
            alloc::alloc_zeroed(layout)
        } else {
            alloc::alloc(layout)
        }
    };
    NonNull::new(ptr).ok_or_else(|| fail("the system allocator returned null (out of memory)"))
}

/// Frees what [`alloc_zeroed`] returned.
///
/// # Safety
/// `ptr` and `bytes` are a pair returned by one call of [`alloc_zeroed`] or
/// [`alloc_uninit`], not yet freed.
pub(super) unsafe fn dealloc(ptr: NonNull<u8>, bytes: usize) {
    if bytes == 0 {
        return;
    }
    // SAFETY: the same layout was valid when the block was allocated.
    let layout = unsafe { Layout::from_size_align_unchecked(bytes, CPU_ALIGN) };
    // SAFETY: the caller promises `ptr` came from `alloc_zeroed` with this layout.
    unsafe { alloc::dealloc(ptr.as_ptr(), layout) }
}
