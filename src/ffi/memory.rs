//! The memory layer in C: the GPU caching allocator's counters and `empty_cache`,
//! mirrored tensors (`ct_mirrored*`: a versioned copy per device, copied only when stale),
//! pinned host tensors, streams (`ct_stream*`) and asynchronous copies.

use ctensor_aten::{MemoryStats, MirroredTensor, Stream, Tensor};

use super::status::{ct_status, guard, write_out, Fail, Handles};
use super::tensor::{ct_tensor, device_of, dims, dtype_of, give, handle, handle_mut, order_of};

/// The GPU caching allocator's counters (bytes where they are sizes).
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct ct_memory_stats {
    /// Bytes in blocks in use.
    pub allocated: u64,
    /// The most `allocated` has been.
    pub peak_allocated: u64,
    /// Bytes held from the driver.
    pub reserved: u64,
    /// The most `reserved` has been.
    pub peak_reserved: u64,
    /// Blocks in use.
    pub live_blocks: u64,
    /// Allocations made.
    pub allocations: u64,
    /// Allocations served from the cache.
    pub cache_hits: u64,
    /// Segments taken from the driver.
    pub segments_reserved: u64,
    /// Times the cache was emptied to retry an allocation.
    pub oom_retries: u64,
    /// Blocks freed while work on another stream may still use them, not yet reusable
    /// (counted in `allocated` and `live_blocks`).
    pub deferred_blocks: u64,
}

impl From<MemoryStats> for ct_memory_stats {
    fn from(s: MemoryStats) -> Self {
        ct_memory_stats {
            allocated: s.allocated as u64,
            peak_allocated: s.peak_allocated as u64,
            reserved: s.reserved as u64,
            peak_reserved: s.peak_reserved as u64,
            live_blocks: s.live_blocks as u64,
            allocations: s.allocations,
            cache_hits: s.cache_hits,
            segments_reserved: s.segments_reserved,
            oom_retries: s.oom_retries,
            deferred_blocks: s.deferred_blocks as u64,
        }
    }
}

/// The GPU caching allocator's counters (`CT_ERR_DEVICE` without a GPU).
///
/// # Safety
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_gpu_memory_stats(out: *mut ct_memory_stats) -> ct_status {
    guard("ct_gpu_memory_stats", || {
        let s = ctensor_aten::memory_stats()?;
        // SAFETY: the caller's promise on `out`.
        unsafe { write_out(out, "out", s.into()) }
    })
}

/// Returns the GPU memory the cache holds but no tensor uses to the driver.
#[no_mangle]
pub extern "C" fn ct_gpu_empty_cache() -> ct_status {
    guard("ct_gpu_empty_cache", || Ok(ctensor_aten::empty_cache()?))
}

/// An opaque mirrored-tensor handle, owned by the caller until `ct_mirrored_free`.
#[allow(non_camel_case_types)]
pub struct ct_mirrored {
    m: MirroredTensor,
}

static LIVE: Handles = Handles::new();

fn mirrored<'a>(p: *mut ct_mirrored, name: &'static str) -> Result<&'a mut MirroredTensor, Fail> {
    // SAFETY: LIVE holds only boxes of `ct_mirrored` from `give_mirrored`, freed only by
    // `ct_mirrored_free`; one handle is not used from two threads at once (header).
    Ok(unsafe { &mut LIVE.get(p, name, "ct_mirrored")?.m })
}

/// Writes a new mirrored handle through `out`.
///
/// # Safety
/// `out` is valid for a write.
unsafe fn give_mirrored(out: *mut *mut ct_mirrored, m: MirroredTensor) -> Result<(), Fail> {
    // SAFETY: the caller's promise on `out`.
    unsafe { LIVE.give(out, ct_mirrored { m }) }
}

/// A mirrored tensor of `dtype` and `ndim` sizes at `shape`, with no values yet (reading
/// it before a `ct_mirrored_write_only` is an error).
///
/// # Safety
/// `shape` is valid for `ndim` reads; `out` for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_mirrored_new(
    dtype: i32,
    ndim: usize,
    shape: *const usize,
    out: *mut *mut ct_mirrored,
) -> ct_status {
    guard("ct_mirrored_new", || {
        // SAFETY: the caller's promise on `shape`.
        let d = unsafe { dims(ndim, shape) }?;
        let m = MirroredTensor::new(dtype_of(dtype)?, d)?;
        // SAFETY: the caller's promise on `out`.
        unsafe { give_mirrored(out, m) }
    })
}

/// A mirrored tensor whose first, current copy holds a copy of `t`'s values, on `t`'s
/// device.
///
/// # Safety
/// `t` is a live handle (checked); `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_mirrored_from_tensor(
    t: *const super::tensor::ct_tensor,
    out: *mut *mut ct_mirrored,
) -> ct_status {
    guard("ct_mirrored_from_tensor", || {
        let m = MirroredTensor::from_tensor(handle(t, "t")?.try_clone()?)?;
        // SAFETY: the caller's promise on `out`.
        unsafe { give_mirrored(out, m) }
    })
}

/// What a `ct_mirrored_*` access asks for.
enum Access {
    Read,
    Write,
    WriteOnly,
}

fn access(
    name: &'static str,
    m: *mut ct_mirrored,
    device: i32,
    how: Access,
    out: *mut *mut super::tensor::ct_tensor,
) -> ct_status {
    guard(name, || {
        let m = mirrored(m, "m")?;
        let d = device_of(device)?;
        let t = match how {
            Access::Read => m.read(d)?.share(),
            Access::Write => m.write(d)?.share(),
            Access::WriteOnly => m.write_only(d)?.share(),
        };
        // SAFETY: the caller's promise on `out`.
        unsafe { give(out, t) }
    })
}

/// A new handle viewing the current copy on `device` (copied there first only if stale).
/// Free the view with `ct_tensor_free`; read it before the next `ct_mirrored_*` call.
///
/// # Safety
/// `m` is a live handle (checked); `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_mirrored_read(
    m: *mut ct_mirrored,
    device: i32,
    out: *mut *mut super::tensor::ct_tensor,
) -> ct_status {
    access("ct_mirrored_read", m, device, Access::Read, out)
}

/// A new handle viewing the copy on `device`, brought up to date, to modify; every other
/// copy becomes stale. Write through it before the next `ct_mirrored_*` call.
///
/// # Safety
/// As [`ct_mirrored_read`].
#[no_mangle]
pub unsafe extern "C" fn ct_mirrored_write(
    m: *mut ct_mirrored,
    device: i32,
    out: *mut *mut super::tensor::ct_tensor,
) -> ct_status {
    access("ct_mirrored_write", m, device, Access::Write, out)
}

/// As [`ct_mirrored_write`] without bringing the copy up to date (it is about to be
/// overwritten whole).
///
/// # Safety
/// As [`ct_mirrored_read`].
#[no_mangle]
pub unsafe extern "C" fn ct_mirrored_write_only(
    m: *mut ct_mirrored,
    device: i32,
    out: *mut *mut super::tensor::ct_tensor,
) -> ct_status {
    access("ct_mirrored_write_only", m, device, Access::WriteOnly, out)
}

/// The newest version (0 before the first write) and whether `device`'s copy has it.
///
/// # Safety
/// `m` is a live handle (checked); `version` and `current` are valid for writes.
#[no_mangle]
pub unsafe extern "C" fn ct_mirrored_version(
    m: *mut ct_mirrored,
    device: i32,
    version: *mut u64,
    current: *mut i32,
) -> ct_status {
    guard("ct_mirrored_version", || {
        let m = mirrored(m, "m")?;
        let d = device_of(device)?;
        // SAFETY: the caller's promises on the out-pointers.
        unsafe {
            write_out(version, "version", m.version())?;
            write_out(current, "current", i32::from(m.is_current(d)))
        }
    })
}

/// Frees a mirrored handle (views handed out keep their copy's memory alive).
///
/// # Safety
/// `m` is null, or a pointer that may be compared with the live handles.
#[no_mangle]
pub unsafe extern "C" fn ct_mirrored_free(m: *mut ct_mirrored) -> ct_status {
    // SAFETY: LIVE holds only boxes of `ct_mirrored` from `give_mirrored`.
    guard("ct_mirrored_free", || unsafe {
        LIVE.free(m, "m", "ct_mirrored")
    })
}

// ---- pinned memory, streams and asynchronous copies ------------------------------------

/// The pinned host memory pool's counters (`CT_ERR_DEVICE` without a GPU).
///
/// # Safety
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_pinned_memory_stats(out: *mut ct_memory_stats) -> ct_status {
    guard("ct_pinned_memory_stats", || {
        let s = ctensor_aten::pinned_memory_stats()?;
        // SAFETY: the caller's promise on `out`.
        unsafe { write_out(out, "out", s.into()) }
    })
}

/// Returns the pinned host memory the pinned pool holds but no tensor uses.
#[no_mangle]
pub extern "C" fn ct_pinned_empty_cache() -> ct_status {
    guard("ct_pinned_empty_cache", || {
        Ok(ctensor_aten::empty_pinned_cache()?)
    })
}

/// A zero-filled tensor of `dtype` and `ndim` sizes at `shape` in pinned (page-locked)
/// host memory, in `order` (`CT_ROW_MAJOR` or `CT_COL_MAJOR`); `CT_ERR_DEVICE` without
/// a GPU.
///
/// # Safety
/// `shape` is valid for `ndim` reads; `out` for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_tensor_pinned(
    dtype: i32,
    ndim: usize,
    shape: *const usize,
    order: i32,
    out: *mut *mut ct_tensor,
) -> ct_status {
    guard("ct_tensor_pinned", || {
        // SAFETY: the caller's promise on `shape`.
        let d = unsafe { dims(ndim, shape) }?;
        let t = Tensor::pinned(dtype_of(dtype)?, d, order_of(order)?)?;
        // SAFETY: the caller's promise on `out`.
        unsafe { give(out, t) }
    })
}

/// Writes 1 through `out` when `t`'s memory is pinned host memory, else 0.
///
/// # Safety
/// `t` is a live handle (checked); `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_tensor_is_pinned(t: *const ct_tensor, out: *mut i32) -> ct_status {
    guard("ct_tensor_is_pinned", || {
        let p = handle(t, "t")?.is_pinned();
        // SAFETY: the caller's promise on `out`.
        unsafe { write_out(out, "out", i32::from(p)) }
    })
}

/// Starts making `m`'s copy on `device` current on stream `s`, without waiting
/// (`MirroredTensor::prefetch`): later ctensor work on that copy waits for the copy.
///
/// # Safety
/// `m` and `s` are live handles (checked).
#[no_mangle]
pub unsafe extern "C" fn ct_mirrored_prefetch(
    m: *mut ct_mirrored,
    device: i32,
    s: *const ct_stream,
) -> ct_status {
    guard("ct_mirrored_prefetch", || {
        let m = mirrored(m, "m")?;
        Ok(m.prefetch(device_of(device)?, stream(s, "s")?)?)
    })
}

/// An opaque GPU stream handle, owned by the caller until `ct_stream_free`.
#[allow(non_camel_case_types)]
pub struct ct_stream {
    s: Stream,
}

static STREAMS: Handles = Handles::new();

fn stream<'a>(p: *const ct_stream, name: &'static str) -> Result<&'a Stream, Fail> {
    // SAFETY: STREAMS holds only boxes of `ct_stream` from `give_stream`, freed only by
    // `ct_stream_free`; a `Stream` is used through `&` only.
    Ok(unsafe { &STREAMS.get(p.cast_mut(), name, "ct_stream")?.s })
}

/// Writes a new stream handle through `out`.
///
/// # Safety
/// `out` is valid for a write.
unsafe fn give_stream(out: *mut *mut ct_stream, s: Stream) -> Result<(), Fail> {
    // SAFETY: the caller's promise on `out`.
    unsafe { STREAMS.give(out, ct_stream { s }) }
}

/// A new GPU stream that does not wait for the default one (`CT_ERR_DEVICE` without a
/// GPU). Free it with `ct_stream_free`.
///
/// # Safety
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_stream_new(out: *mut *mut ct_stream) -> ct_status {
    guard("ct_stream_new", || {
        let s = Stream::new()?;
        // SAFETY: the caller's promise on `out`.
        unsafe { give_stream(out, s) }
    })
}

/// A handle to the stream every ordinary ctensor GPU operation is queued on (freeing
/// the handle leaves the stream alone).
///
/// # Safety
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_stream_default(out: *mut *mut ct_stream) -> ct_status {
    guard("ct_stream_default", || {
        let s = Stream::default_stream()?;
        // SAFETY: the caller's promise on `out`.
        unsafe { give_stream(out, s) }
    })
}

/// Blocks until the work queued on `s` has finished.
///
/// # Safety
/// `s` is a live handle (checked).
#[no_mangle]
pub unsafe extern "C" fn ct_stream_synchronize(s: *const ct_stream) -> ct_status {
    guard("ct_stream_synchronize", || {
        Ok(stream(s, "s")?.synchronize()?)
    })
}

/// Frees a stream handle (the driver finishes the work queued on it first).
///
/// # Safety
/// `s` is null, or a pointer that may be compared with the live handles.
#[no_mangle]
pub unsafe extern "C" fn ct_stream_free(s: *mut ct_stream) -> ct_status {
    // SAFETY: STREAMS holds only boxes of `ct_stream` from `give_stream`.
    guard("ct_stream_free", || unsafe {
        STREAMS.free(s, "s", "ct_stream")
    })
}

/// A copy of `t` on `device` queued on `s` (`Tensor::to_device_async`): to the host it
/// lands in pinned memory. Until the copy has finished, host access to memory it writes
/// (and writes to memory it reads) fail with `CT_ERR_BORROW`; `ct_stream_synchronize` or
/// `ct_tensor_synchronize` waits for it.
///
/// # Safety
/// `t` and `s` are live handles (checked); `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_tensor_to_device_async(
    t: *const ct_tensor,
    device: i32,
    s: *const ct_stream,
    out: *mut *mut ct_tensor,
) -> ct_status {
    guard("ct_tensor_to_device_async", || {
        let c = handle(t, "t")?.to_device_async(device_of(device)?, stream(s, "s")?)?;
        // SAFETY: the caller's promise on `out`.
        unsafe { give(out, c) }
    })
}

/// Copies `src` into `dst`'s memory on `s` (`Tensor::sync_async`): same dtype and
/// shape, both dense in the same order.
///
/// # Safety
/// `dst`, `src` and `s` are live handles (checked).
#[no_mangle]
pub unsafe extern "C" fn ct_tensor_sync_async(
    dst: *mut ct_tensor,
    src: *const ct_tensor,
    s: *const ct_stream,
) -> ct_status {
    guard("ct_tensor_sync_async", || {
        let src = handle(src, "src")?.share();
        let s = stream(s, "s")?;
        Ok(handle_mut(dst, "dst")?.sync_async(&src, s)?)
    })
}

/// Blocks until every asynchronous copy that uses `t`'s memory has finished.
///
/// # Safety
/// `t` is a live handle (checked).
#[no_mangle]
pub unsafe extern "C" fn ct_tensor_synchronize(t: *const ct_tensor) -> ct_status {
    guard("ct_tensor_synchronize", || {
        Ok(handle(t, "t")?.synchronize()?)
    })
}
