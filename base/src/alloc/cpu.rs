//! Aligned host memory.

use std::alloc::{self, Layout};
use std::ptr::NonNull;

use super::host_cache;
use crate::device::DeviceType;
use crate::error::{Error, Result};

pub use crate::device::CPU_ALIGN;

/// The size of a transparent huge page on x86-64 and aarch64 Linux (2 MiB). Blocks of at
/// least this size are, with `CTENSOR_HUGE_PAGES=1`, aligned to it and offered to the
/// kernel for huge pages (`madvise(MADV_HUGEPAGE)`, honoured when transparent huge pages
/// are in `madvise` or `always` mode): a fresh 80 MB result then faults in 40 pages
/// instead of 20 000.
///
/// It is off by default because measured here (2 cores, THP in `madvise` mode, whose
/// faults then compact memory synchronously) it made a fresh `&x + &y` of 10⁷ f64
/// bimodal: 9–18 ms when free huge pages were at hand, 43–60 ms when the kernel had to
/// compact for them, a median of about 43 ms over 14 runs against 30–33 ms without the
/// advice (see the README's performance section).
const HUGE_PAGE: usize = 2 << 20;

/// Whether `CTENSOR_HUGE_PAGES=1` asked for huge-page advice (read once).
fn huge_pages_wanted() -> bool {
    static WANTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WANTED.get_or_init(|| std::env::var("CTENSOR_HUGE_PAGES").is_ok_and(|v| v == "1"))
}

/// The alignment of a host block of `bytes` bytes: whole huge pages for a large block
/// when they are asked for, else [`CPU_ALIGN`]. (Fixed for the process: the flag is read
/// once, so a block is freed with the layout it was allocated with.)
fn align_for(bytes: usize) -> usize {
    if bytes >= HUGE_PAGE && huge_pages_wanted() {
        HUGE_PAGE
    } else {
        CPU_ALIGN
    }
}

/// Asks the kernel for huge pages behind a large block; a refusal changes nothing.
fn advise_huge(ptr: *mut u8, bytes: usize) {
    #[cfg(target_os = "linux")]
    if bytes >= HUGE_PAGE && huge_pages_wanted() {
        // SAFETY: `ptr` starts a live block of `bytes` bytes aligned to HUGE_PAGE (a
        // multiple of the page size); madvise only changes how it is backed.
        unsafe { libc::madvise(ptr.cast(), bytes, libc::MADV_HUGEPAGE) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, bytes);
}

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
    // Large blocks come in size classes and may come from the cache of freed ones.
    let size = host_cache::block_size(bytes);
    if let Some(p) = host_cache::take(size) {
        if zeroed {
            // SAFETY: a cached block of `size` >= `bytes` bytes that no one else holds.
            unsafe { std::ptr::write_bytes(p, 0, bytes) };
        }
        return NonNull::new(p).ok_or_else(|| Error::Internal {
            op: "allocate",
            what: "a null block in the host cache".into(),
        });
    }
    let fail = |reason: &str| Error::Alloc {
        device: DeviceType::Cpu,
        bytes,
        align: align_for(size),
        reason: reason.to_string(),
    };
    let layout = layout_of(size)
        .ok_or_else(|| fail("the size exceeds isize::MAX once rounded up to the alignment"))?;
    // With huge pages the block is advised before its zero fill touches the pages, so
    // it is allocated plainly and zeroed here; otherwise the allocator zeroes.
    let fill = zeroed && size >= HUGE_PAGE && huge_pages_wanted();
    // SAFETY: the layout has a non-zero size (checked above); a non-null block is valid
    // for `size` writes.
    let ptr = unsafe {
        let get = || {
            if zeroed && !fill {
                alloc::alloc_zeroed(layout)
            } else {
                alloc::alloc(layout)
            }
        };
        let mut p = get();
        if p.is_null() && host_cache::stats().cached_bytes > 0 {
            // Out of memory while the cache holds some: give it back and retry once.
            host_cache::empty();
            p = get();
        }
        if !p.is_null() {
            advise_huge(p, size);
            if fill {
                std::ptr::write_bytes(p, 0, bytes);
            }
        }
        p
    };
    NonNull::new(ptr).ok_or_else(|| fail("the system allocator returned null (out of memory)"))
}

/// The layout of a host block of `size` bytes (a [`host_cache::block_size`]), or `None`
/// when it exceeds `isize::MAX`.
fn layout_of(size: usize) -> Option<Layout> {
    Layout::from_size_align(size, align_for(size)).ok()
}

/// Frees what [`alloc_zeroed`] or [`alloc_uninit`] returned; a large block goes to the
/// host cache when it has room.
///
/// # Safety
/// `ptr` and `bytes` are a pair returned by one call of [`alloc_zeroed`] or
/// [`alloc_uninit`], not yet freed.
pub(super) unsafe fn dealloc(ptr: NonNull<u8>, bytes: usize) {
    if bytes == 0 {
        return;
    }
    let size = host_cache::block_size(bytes);
    if host_cache::give(ptr.as_ptr(), size) {
        return;
    }
    // SAFETY: the caller's contract; `size` is the size the block was allocated with.
    unsafe { release(ptr.as_ptr(), size) }
}

/// Returns a host block of `size` bytes to the system allocator.
///
/// # Safety
/// `ptr` was allocated by [`alloc_host`] for a request whose block size is `size`, and is
/// freed once.
pub(super) unsafe fn release(ptr: *mut u8, size: usize) {
    // SAFETY: the same layout was valid when the block was allocated.
    let layout = unsafe { Layout::from_size_align_unchecked(size, align_for(size)) };
    // SAFETY: the caller's contract.
    unsafe { alloc::dealloc(ptr, layout) }
}
