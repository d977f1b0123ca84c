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
    if raw_layout(size).is_none() {
        return Err(fail(
            "the size exceeds isize::MAX once rounded up to the alignment",
        ));
    }
    // With huge pages the block is advised before its zero fill touches the pages, so
    // it is allocated plainly and zeroed here; otherwise the allocator zeroes (with
    // `calloc` for a padded block, which skips the pages the kernel has just mapped:
    // they are zero already).
    let fill = zeroed && size >= HUGE_PAGE && huge_pages_wanted();
    // SAFETY: `size` is non-zero and valid for a layout (checked above); a non-null
    // block is valid for `size` writes.
    let ptr = unsafe {
        let get = || raw_alloc(size, zeroed && !fill);
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

/// The bytes a padded block (see [`padded`]) is given in front of it: room to align it
/// to [`CPU_ALIGN`] and to keep the allocation's own pointer just before it.
const FRONT: usize = CPU_ALIGN;

/// The alignment a padded block is asked for: 16, which every global allocator in
/// practice gives for free (the system allocator's `malloc` does on 64-bit targets).
const PAD_ALIGN: usize = 16;

/// Whether a block of `size` bytes is padded: allocated at [`PAD_ALIGN`] with [`FRONT`]
/// bytes more and aligned inside, rather than allocated at its alignment. Every block
/// but the huge-page-aligned ones is. This is for the zeroed ones: Rust's system
/// allocator zeroes a block of alignment up to 16 with `calloc`, which leaves freshly
/// mapped pages alone (the kernel hands them out zeroed) and clears only memory it
/// hands out again, but one of alignment 64 with `posix_memalign` and a `memset` of the
/// whole block, so every zeroed tensor was written once before its first use (3.8 % of
/// an 8-atom Kohn–Sham run). The request still goes through the global allocator, so a
/// program's own (`#[global_allocator]`) sees and accounts for every tensor.
fn padded(size: usize) -> bool {
    align_for(size) == CPU_ALIGN
}

/// The layout a host block of `size` bytes (a [`host_cache::block_size`]) is allocated
/// with, or `None` when it exceeds `isize::MAX` (with the room a padded block has in
/// front).
fn raw_layout(size: usize) -> Option<Layout> {
    if padded(size) {
        Layout::from_size_align(size.checked_add(FRONT)?, PAD_ALIGN).ok()
    } else {
        Layout::from_size_align(size, align_for(size)).ok()
    }
}

/// A host block of `size` bytes aligned to [`align_for`]`(size)`, zeroed when `zeroed`
/// asks for it; null when the system is out of memory. Freed by [`raw_free`].
///
/// # Safety
/// `size` is non-zero and [`raw_layout`]`(size)` is `Some`.
unsafe fn raw_alloc(size: usize, zeroed: bool) -> *mut u8 {
    let Some(layout) = raw_layout(size) else {
        return std::ptr::null_mut();
    };
    // SAFETY: a non-zero size (the caller's contract).
    let raw = unsafe {
        if zeroed {
            alloc::alloc_zeroed(layout)
        } else {
            alloc::alloc(layout)
        }
    };
    if raw.is_null() || !padded(size) {
        return raw;
    }
    // The first multiple of CPU_ALIGN above `raw`: 16 to 64 bytes in (`raw` is 16-byte
    // aligned), so the block's `size` bytes end within the allocation and the 8 bytes
    // before it hold `raw`.
    let front = CPU_ALIGN - (raw as usize % CPU_ALIGN);
    // SAFETY: `front <= FRONT`, so `p .. p + size` lies in the `size + FRONT` bytes at
    // `raw`; `front >= 16` and `p` is 64-byte aligned, so `p - 8` is an aligned
    // pointer-sized slot inside the allocation, in front of the block.
    unsafe {
        let p = raw.add(front);
        p.cast::<*mut u8>().sub(1).write(raw);
        p
    }
}

/// Frees what [`raw_alloc`] returned for the same `size`.
///
/// # Safety
/// `ptr` came from `raw_alloc(size, _)` and is freed once.
unsafe fn raw_free(ptr: *mut u8, size: usize) {
    // SAFETY: `raw_alloc` allocated with this layout, so it was valid then.
    let layout = unsafe { raw_layout(size).unwrap_unchecked() };
    let raw = if padded(size) {
        // SAFETY: `raw_alloc` kept the allocation's pointer in the 8 bytes before `ptr`.
        unsafe { ptr.cast::<*mut u8>().sub(1).read() }
    } else {
        ptr
    };
    // SAFETY: the allocation and layout of `raw_alloc`, freed once (the caller's
    // contract).
    unsafe { alloc::dealloc(raw, layout) }
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
    // SAFETY: the caller's contract; `alloc_host` got the block from `raw_alloc(size, _)`.
    unsafe { raw_free(ptr, size) }
}
