//! Device memory and copies between host and device.
//!
//! Allocation goes through the stream (the driver's memory pool where the device has
//! one), so freeing is ordered after the work that uses the memory. Copies from and to
//! ordinary (pageable) host memory pass through two pinned staging buffers of
//! [`STAGING_CHUNK`] bytes, so the host-side `memcpy` of one chunk overlaps the DMA of
//! the other.

use std::ffi::c_void;

use cudarc::driver::result as drv;
use cudarc::driver::sys;

use super::context::{context, driver_err, lock, GpuContext};
use super::{CopyKind, ALLOC_ENV};
use crate::device::DeviceType;
use crate::error::{Error, Result};
use crate::pool::{Backend, MemoryStats, Pool};

/// Bytes per pinned staging buffer.
pub const STAGING_CHUNK: usize = 4 << 20;

/// Two pinned host buffers and the events that say when the device is done with each.
pub(crate) struct Staging {
    bufs: [*mut u8; 2],
    events: [sys::CUevent; 2],
    pending: [bool; 2],
}

// SAFETY: the buffers and events are only touched while the context's staging mutex is held.
unsafe impl Send for Staging {}

impl Staging {
    fn new(ctx: &GpuContext) -> Result<Staging> {
        ctx.bind()?;
        let mut bufs = [std::ptr::null_mut(); 2];
        let mut events = [std::ptr::null_mut(); 2];
        for k in 0..2 {
            // SAFETY: a plain pinned allocation, owned by the context for the process's life.
            bufs[k] = unsafe { drv::malloc_host(STAGING_CHUNK, 0) }
                .map_err(driver_err("cuMemHostAlloc"))? as *mut u8;
            events[k] = drv::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)
                .map_err(driver_err("cuEventCreate"))?;
        }
        Ok(Staging {
            bufs,
            events,
            pending: [false; 2],
        })
    }

    /// Waits until the device no longer reads or writes buffer `k`.
    fn wait(&mut self, k: usize) -> Result<()> {
        if self.pending[k] {
            // SAFETY: a live event of this context.
            unsafe { drv::event::synchronize(self.events[k]) }
                .map_err(driver_err("cuEventSynchronize"))?;
            self.pending[k] = false;
        }
        Ok(())
    }

    fn record(&mut self, k: usize, stream: sys::CUstream) -> Result<()> {
        // SAFETY: a live event and stream of this context.
        unsafe { drv::event::record(self.events[k], stream) }
            .map_err(driver_err("cuEventRecord"))?;
        self.pending[k] = true;
        Ok(())
    }
}

/// Whether device memory goes through the caching pool (`CTENSOR_ALLOC` is not
/// `direct`), read once.
fn caching() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var(ALLOC_ENV).map_or(true, |v| v.trim() != "direct"))
}

/// The pool's segments: plain `cuMemAlloc`/`cuMemFree` on the selected GPU.
#[derive(Debug)]
struct Driver;

impl Backend for Driver {
    fn reserve(&mut self, bytes: usize) -> std::result::Result<u64, String> {
        let ctx = context().map_err(|e| e.to_string())?;
        ctx.bind().map_err(|e| e.to_string())?;
        // SAFETY: a plain device allocation on the bound context.
        unsafe { drv::malloc_sync(bytes) }.map_err(|e| format!("cuMemAlloc: {:?}", e.0))
    }

    fn release(&mut self, addr: u64, _bytes: usize) {
        on_context(|_| {
            // SAFETY: a segment from `reserve`, released once; cuMemFree waits for the
            // work that may still use it. A failure at exit leaves nothing to do.
            let _ = unsafe { drv::free_sync(addr) };
        });
    }

    fn quiesce(&mut self) {
        // A fault there is the kernels' to report at the next synchronization.
        on_context(|ctx| {
            let _ = ctx.synchronize();
        });
    }
}

/// Runs `f` with the selected context bound, when there is one: for releases, where a
/// context already torn down at exit leaves nothing to do.
fn on_context(f: impl FnOnce(&GpuContext)) {
    if let Ok(ctx) = context() {
        if ctx.bind().is_ok() {
            f(ctx);
        }
    }
}

/// The caching pool of the selected GPU.
fn pool() -> std::sync::MutexGuard<'static, Pool<Driver>> {
    static POOL: std::sync::OnceLock<std::sync::Mutex<Pool<Driver>>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| std::sync::Mutex::new(Pool::new(Driver, DeviceType::Gpu)))
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

/// See [`super::memory_stats`].
pub(crate) fn memory_stats() -> Result<MemoryStats> {
    context()?;
    Ok(pool().stats())
}

/// See [`super::empty_cache`].
pub(crate) fn empty_cache() -> Result<()> {
    context()?.synchronize()?;
    pool().empty_cache();
    Ok(())
}

/// `bytes` bytes of device memory, zeroed, on the selected GPU; `None` for zero bytes.
pub(crate) fn alloc_zeroed(bytes: usize) -> Result<u64> {
    let ctx = context()?;
    ctx.bind()?;
    let stream = ctx.stream();
    if caching() {
        // Blocks are reused in stream order: work queued before a block's free finishes
        // before work queued after its next allocation starts.
        let (ptr, _) = pool().allocate(bytes, stream as u64)?;
        // SAFETY: `ptr` is a block of at least `bytes` bytes that no one else holds.
        unsafe { drv::memset_d8_async(ptr, 0, bytes, stream) }
            .map_err(driver_err("cuMemsetD8Async"))?;
        return Ok(ptr);
    }
    // SAFETY: a fresh allocation on this context's stream, zeroed on the same stream
    // before any other use can be queued.
    let ptr = unsafe {
        if ctx.uses_memory_pool() {
            drv::malloc_async(stream, bytes)
        } else {
            drv::malloc_sync(bytes)
        }
    }
    .map_err(|e| Error::Alloc {
        device: DeviceType::Gpu,
        bytes,
        align: 256,
        reason: format!("{:?}", e.0),
    })?;
    // SAFETY: `ptr` is valid for `bytes` bytes.
    unsafe { drv::memset_d8_async(ptr, 0, bytes, stream) }
        .map_err(driver_err("cuMemsetD8Async"))?;
    Ok(ptr)
}

/// Frees memory from [`alloc_zeroed`] once the work queued before it is done.
///
/// # Safety
/// `ptr` came from `alloc_zeroed` and is freed once.
pub(crate) unsafe fn free(ptr: u64) {
    if caching() {
        // An error here would be a double free, which `Allocation` rules out.
        let _ = pool().free(ptr);
        return;
    }
    on_context(|ctx| {
        // SAFETY: the caller's contract. A failure here (the context is being torn down
        // at exit) leaves nothing to do.
        let _ = unsafe {
            if ctx.uses_memory_pool() {
                drv::free_async(ptr, ctx.stream())
            } else {
                drv::free_sync(ptr)
            }
        };
    });
}

/// Frees a block of the device pool (or, with `pinned`, of the pinned pool) once
/// `fences` have completed (see [`Pool::free_after`]): `None` when the pool took it, the
/// fences back when the pools are off (`CTENSOR_ALLOC=direct`) and the caller must free
/// the block itself.
///
/// # Safety
/// `ptr` came from `alloc_zeroed` (or `pinned_alloc`) and is freed once.
pub(crate) unsafe fn free_after(
    ptr: u64,
    pinned: bool,
    fences: Vec<std::sync::Arc<dyn crate::fence::Fence>>,
) -> Option<Vec<std::sync::Arc<dyn crate::fence::Fence>>> {
    if !caching() {
        return Some(fences);
    }
    // An error here would be a double free, which `Allocation` rules out.
    let _ = if pinned {
        pinned_pool().free_after(ptr, fences)
    } else {
        pool().free_after(ptr, fences)
    };
    None
}

/// Copies `bytes` bytes from host memory `src` to device memory `dst`, through the
/// pinned staging buffers. Returns once `src` has been read (the device side may still
/// be in flight; later work on the stream sees the data).
///
/// # Safety
/// `src` is valid for reads of `bytes` bytes; `dst` is device memory of the selected GPU
/// valid for writes of `bytes` bytes.
pub unsafe fn copy_h2d(dst: u64, src: *const u8, bytes: usize) -> Result<()> {
    let stream = context()?.stream();
    // SAFETY: the caller's contract.
    unsafe { staged_h2d(dst, src, bytes, stream) }
}

/// [`copy_h2d`] queued on `stream`.
///
/// # Safety
/// As [`copy_h2d`]; `stream` is a live stream of the selected GPU.
unsafe fn staged_h2d(dst: u64, src: *const u8, bytes: usize, stream: sys::CUstream) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    with_staging(|_ctx, st| {
        for k in 0..bytes.div_ceil(STAGING_CHUNK) {
            let (b, off, len) = chunk(k, bytes);
            st.wait(b)?;
            // SAFETY: `src + off .. + len` lies in the caller's range; the staging buffer
            // holds STAGING_CHUNK bytes and the device no longer reads it (waited above).
            unsafe {
                std::ptr::copy_nonoverlapping(src.add(off), st.bufs[b], len);
                sys::cuMemcpyHtoDAsync_v2(
                    dst + off as u64,
                    st.bufs[b] as *const c_void,
                    len,
                    stream,
                )
                .result()
                .map_err(driver_err("cuMemcpyHtoDAsync"))?;
            }
            st.record(b, stream)?;
        }
        Ok(())
    })
}

/// Copies `bytes` bytes from device memory `src` to host memory `dst`, through the
/// pinned staging buffers, after the work queued before it; returns when `dst` holds them.
///
/// # Safety
/// `dst` is valid for writes of `bytes` bytes; `src` is device memory of the selected
/// GPU valid for reads of `bytes` bytes.
pub unsafe fn copy_d2h(dst: *mut u8, src: u64, bytes: usize) -> Result<()> {
    let stream = context()?.stream();
    // SAFETY: the caller's contract.
    unsafe { staged_d2h(dst, src, bytes, stream) }
}

/// [`copy_d2h`] queued on `stream`.
///
/// # Safety
/// As [`copy_d2h`]; `stream` is a live stream of the selected GPU.
unsafe fn staged_d2h(dst: *mut u8, src: u64, bytes: usize, stream: sys::CUstream) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    with_staging(|_ctx, st| {
        let chunks = bytes.div_ceil(STAGING_CHUNK);
        // Queue chunk k's DMA, then drain chunk k-1 while it runs.
        for k in 0..=chunks {
            if k < chunks {
                let (b, off, len) = chunk(k, bytes);
                st.wait(b)?;
                // SAFETY: `src + off .. + len` is in the caller's device range; the
                // staging buffer is free (waited above) and holds STAGING_CHUNK bytes.
                unsafe {
                    sys::cuMemcpyDtoHAsync_v2(
                        st.bufs[b] as *mut c_void,
                        src + off as u64,
                        len,
                        stream,
                    )
                    .result()
                    .map_err(driver_err("cuMemcpyDtoHAsync"))?;
                }
                st.record(b, stream)?;
            }
            if k > 0 {
                let (b, off, len) = chunk(k - 1, bytes);
                st.wait(b)?;
                // SAFETY: the chunk has arrived in the staging buffer (waited above);
                // `dst + off .. + len` is in the caller's range.
                unsafe { std::ptr::copy_nonoverlapping(st.bufs[b], dst.add(off), len) };
            }
        }
        Ok(())
    })
}

/// Chunk `k` of a `bytes`-byte transfer: its staging buffer, offset and length.
fn chunk(k: usize, bytes: usize) -> (usize, usize, usize) {
    let off = k * STAGING_CHUNK;
    (k % 2, off, STAGING_CHUNK.min(bytes - off))
}

/// Runs `body` with the selected context and its staging buffers (created on first
/// use), held for the whole transfer.
fn with_staging(body: impl FnOnce(&GpuContext, &mut Staging) -> Result<()>) -> Result<()> {
    let ctx = context()?;
    let mut guard = lock(&ctx.staging);
    let st = match &mut *guard {
        Some(st) => st,
        empty => empty.insert(Staging::new(ctx)?),
    };
    ctx.bind()?;
    body(ctx, st)
}

/// See [`super::copy_async`].
///
/// # Safety
/// As [`super::copy_async`].
pub(crate) unsafe fn copy_async(
    kind: CopyKind,
    dst: u64,
    src: u64,
    bytes: usize,
    host_pinned: bool,
    stream: &super::Stream,
) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    let ctx = context()?;
    ctx.bind()?;
    let raw = stream.raw();
    match (kind, host_pinned) {
        // SAFETY: the caller's contract on the ranges and the stream.
        (CopyKind::HostToDevice, true) => unsafe {
            sys::cuMemcpyHtoDAsync_v2(dst, src as *const c_void, bytes, raw)
                .result()
                .map_err(driver_err("cuMemcpyHtoDAsync"))
        },
        // SAFETY: the caller's contract on the ranges and the stream.
        (CopyKind::HostToDevice, false) => unsafe { staged_h2d(dst, src as *const u8, bytes, raw) },
        // SAFETY: the caller's contract on the ranges and the stream.
        (CopyKind::DeviceToHost, true) => unsafe {
            sys::cuMemcpyDtoHAsync_v2(dst as *mut c_void, src, bytes, raw)
                .result()
                .map_err(driver_err("cuMemcpyDtoHAsync"))
        },
        // SAFETY: the caller's contract on the ranges and the stream.
        (CopyKind::DeviceToHost, false) => unsafe { staged_d2h(dst as *mut u8, src, bytes, raw) },
        // SAFETY: the caller's contract on the ranges and the stream.
        (CopyKind::DeviceToDevice, _) => unsafe {
            sys::cuMemcpyDtoDAsync_v2(dst, src, bytes, raw)
                .result()
                .map_err(driver_err("cuMemcpyDtoDAsync"))
        },
    }
}

/// The pinned pool's segments: page-locked host memory from `cuMemHostAlloc`.
#[derive(Debug)]
struct PinnedDriver;

impl Backend for PinnedDriver {
    fn reserve(&mut self, bytes: usize) -> std::result::Result<u64, String> {
        let ctx = context().map_err(|e| e.to_string())?;
        ctx.bind().map_err(|e| e.to_string())?;
        // SAFETY: a plain pinned allocation on the bound context.
        unsafe { drv::malloc_host(bytes, 0) }
            .map(|p| p as u64)
            .map_err(|e| format!("cuMemHostAlloc: {:?}", e.0))
    }

    fn release(&mut self, addr: u64, _bytes: usize) {
        on_context(|_| {
            // SAFETY: a segment from `reserve`, released once. A failure at exit leaves
            // nothing to do.
            let _ = unsafe { drv::free_host(addr as *mut c_void) };
        });
    }

    fn quiesce(&mut self) {
        // Pinned blocks serve asynchronous copies queued on ctensor's stream.
        on_context(|ctx| {
            let _ = ctx.synchronize();
        });
    }
}

/// The caching pool of pinned host memory.
fn pinned_pool() -> std::sync::MutexGuard<'static, Pool<PinnedDriver>> {
    static POOL: std::sync::OnceLock<std::sync::Mutex<Pool<PinnedDriver>>> =
        std::sync::OnceLock::new();
    POOL.get_or_init(|| std::sync::Mutex::new(Pool::new(PinnedDriver, DeviceType::Cpu)))
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

/// `bytes` bytes of pinned (page-locked) host memory, not initialised, from the pinned
/// pool (or straight from the driver with `CTENSOR_ALLOC=direct`). The host uses it like
/// any memory; the GPU's DMA engine reads and writes it without staging.
pub(crate) fn pinned_alloc(bytes: usize) -> Result<u64> {
    let ctx = context()?;
    ctx.bind()?;
    if caching() {
        // Pinned blocks are freed only once no copy uses them (the tensor buffer waits
        // for its fences first), so one stream tag serves every block.
        return Ok(pinned_pool().allocate(bytes, 0)?.0);
    }
    // SAFETY: a plain pinned allocation on the bound context.
    unsafe { drv::malloc_host(bytes, 0) }
        .map(|p| p as u64)
        .map_err(|e| Error::Alloc {
            device: DeviceType::Cpu,
            bytes,
            align: 4096,
            reason: format!("cuMemHostAlloc (pinned host memory): {:?}", e.0),
        })
}

/// Frees memory from [`pinned_alloc`].
///
/// # Safety
/// `ptr` came from `pinned_alloc`, is freed once, and no queued copy uses it any more.
pub(crate) unsafe fn pinned_free(ptr: u64) {
    if caching() {
        let _ = pinned_pool().free(ptr);
        return;
    }
    on_context(|_| {
        // SAFETY: the caller's contract.
        let _ = unsafe { drv::free_host(ptr as *mut c_void) };
    });
}

/// See [`super::pinned_memory_stats`].
pub(crate) fn pinned_memory_stats() -> Result<MemoryStats> {
    context()?;
    Ok(pinned_pool().stats())
}

/// See [`super::empty_pinned_cache`].
pub(crate) fn empty_pinned_cache() -> Result<()> {
    context()?;
    pinned_pool().empty_cache();
    Ok(())
}

/// Copies `bytes` bytes between device buffers, after the work queued before it. The
/// ranges may overlap (the copy then goes through a temporary).
///
/// # Safety
/// Both are device memory of the selected GPU, valid for `bytes` bytes.
pub unsafe fn copy_d2d(dst: u64, src: u64, bytes: usize) -> Result<()> {
    if bytes == 0 || dst == src {
        return Ok(());
    }
    let ctx = context()?;
    ctx.bind()?;
    let b = bytes as u64;
    let overlap = dst < src + b && src < dst + b;
    let copy = |d: u64, s: u64| {
        // SAFETY: both ranges are valid device memory (caller, or the temporary).
        unsafe { sys::cuMemcpyDtoDAsync_v2(d, s, bytes, ctx.stream()) }
            .result()
            .map_err(driver_err("cuMemcpyDtoDAsync"))
    };
    if overlap {
        let tmp = super::blocks::DeviceBlock::zeroed(bytes)?;
        copy(tmp.addr(), src)?;
        copy(dst, tmp.addr())
    } else {
        copy(dst, src)
    }
}

/// `true` when the CUDA driver knows `ptr` as memory it manages (device, managed, or
/// registered/pinned host memory), which the kernels can address; `false` for an
/// ordinary host pointer. A check for foreign pointers handed to ctensor as GPU memory.
pub fn is_cuda_pointer(ptr: u64) -> Result<bool> {
    let ctx = context()?;
    ctx.bind()?;
    let mut kind: u32 = 0;
    // SAFETY: a query; `kind` has room for the attribute (an unsigned int).
    let r = unsafe {
        sys::cuPointerGetAttribute(
            &mut kind as *mut u32 as *mut c_void,
            sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
            ptr,
        )
    };
    pointer_kind(r, kind)
}

/// The answer for one `cuPointerGetAttribute(MEMORY_TYPE)` result: device (or managed)
/// memory is GPU memory; a pointer the driver does not know (`CUDA_ERROR_INVALID_VALUE`)
/// is not; any other status (a sticky fault from earlier work, a lost device) is the
/// driver's error, never "not GPU memory".
pub(crate) fn pointer_kind(r: sys::CUresult, kind: u32) -> Result<bool> {
    match r {
        sys::CUresult::CUDA_SUCCESS => Ok(kind == sys::CUmemorytype::CU_MEMORYTYPE_DEVICE as u32
            || kind == sys::CUmemorytype::CU_MEMORYTYPE_UNIFIED as u32),
        sys::CUresult::CUDA_ERROR_INVALID_VALUE => Ok(false),
        other => Err(Error::Cuda {
            library: "CUDA driver",
            call: "cuPointerGetAttribute(MEMORY_TYPE)".into(),
            detail: format!("{other:?}"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointer_queries_separate_unknown_pointers_from_driver_faults() {
        use sys::CUresult as R;
        let dev = sys::CUmemorytype::CU_MEMORYTYPE_DEVICE as u32;
        let host = sys::CUmemorytype::CU_MEMORYTYPE_HOST as u32;
        assert_eq!(pointer_kind(R::CUDA_SUCCESS, dev), Ok(true));
        assert_eq!(pointer_kind(R::CUDA_SUCCESS, host), Ok(false));
        assert_eq!(pointer_kind(R::CUDA_ERROR_INVALID_VALUE, 0), Ok(false));
        for fault in [
            R::CUDA_ERROR_ILLEGAL_ADDRESS,
            R::CUDA_ERROR_LAUNCH_FAILED,
            R::CUDA_ERROR_DEINITIALIZED,
        ] {
            match pointer_kind(fault, 0) {
                Err(Error::Cuda { detail, .. }) => assert!(detail.contains(&format!("{fault:?}"))),
                other => panic!("{fault:?}: expected the driver's error, got {other:?}"),
            }
        }
    }
}
