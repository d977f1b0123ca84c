//! The GPU runtime: is a GPU usable, the process-wide context, its stream and library
//! handles, device memory, transfers, and the cache of compiled custom kernels.
//!
//! Everything here is reached lazily. The first call that needs the GPU looks for the
//! CUDA driver library (`libcuda.so`) without panicking, initialises the driver, and
//! creates one context for the selected device: device 0, or the ordinal in the
//! environment variable `CTENSOR_GPU_DEVICE`. Without a usable GPU, or in a build
//! without the `cuda` feature, every request returns [`Error::DeviceUnavailable`] with
//! the reason, and [`gpu_available`] answers `false`.
//!
//! All ctensor work on the GPU is queued on the context's one stream, in the order it
//! is issued, so a kernel may read what the previous one wrote without waiting. Copies to
//! the host wait for the stream before they return; [`synchronize`] waits for everything
//! queued so far, which a caller needs before it reads device memory by other means (a
//! a `TensorMap` over a buffer that its own kernels use, say).
//!
//! ```
//! // Works with or without a GPU: without one, the reason is an error, not a panic.
//! if ctensor_base::gpu::gpu_available() {
//!     ctensor_base::gpu::synchronize()?;
//! } else {
//!     println!("no GPU: {}", ctensor_base::gpu::unavailable_reason().unwrap_or_default());
//! }
//! # Ok::<(), ctensor_base::Error>(())
//! ```

#[cfg(feature = "cuda")]
pub(crate) mod blocks;
#[cfg(feature = "cuda")]
mod context;
mod memory;
mod nvrtc;
#[cfg(feature = "cuda")]
mod stream;
#[cfg(not(feature = "cuda"))]
mod stream_stub;

#[cfg(feature = "cuda")]
pub use context::{context, FftPlanKey, GpuContext};
#[cfg(feature = "cuda")]
pub(crate) use memory::{alloc_zeroed as memory_alloc_zeroed, free as memory_free};
#[cfg(feature = "cuda")]
pub use memory::{copy_d2d, copy_d2h, copy_h2d, is_cuda_pointer, STAGING_CHUNK};
#[cfg(feature = "cuda")]
pub(crate) use memory::{free_after as memory_free_after, pinned_alloc, pinned_free};
pub use nvrtc::{is_unknown_arch, KernelName, KernelSource};
#[cfg(feature = "cuda")]
pub use stream::{Event, Stream};
#[cfg(not(feature = "cuda"))]
pub use stream_stub::{Event, Stream};

pub use crate::pool::MemoryStats;

use crate::device::DeviceType;
use crate::error::{Error, Result};

/// The environment variable that turns the caching allocators (device and pinned) off:
/// `CTENSOR_ALLOC=direct`.
pub const ALLOC_ENV: &str = "CTENSOR_ALLOC";

/// The environment variable that selects the GPU (a device ordinal, default 0).
pub const DEVICE_ENV: &str = "CTENSOR_GPU_DEVICE";

/// `true` when a GPU can be used: the driver library loads, it finds the selected
/// device, and a context could be created on it. The first call does that work (tens of
/// milliseconds with a GPU); later calls return the remembered answer.
pub fn gpu_available() -> bool {
    unavailable_reason().is_none()
}

/// Why the GPU cannot be used, or `None` when it can.
pub fn unavailable_reason() -> Option<String> {
    #[cfg(feature = "cuda")]
    {
        context().err().map(|e| match e {
            Error::DeviceUnavailable { reason, .. } => reason,
            other => other.to_string(),
        })
    }
    #[cfg(not(feature = "cuda"))]
    {
        Some(NOT_BUILT.to_string())
    }
}

/// The CUDA stream ctensor queues all its GPU work on (`CUstream`, as an integer): what
/// a DLPack consumer passes as `stream=` to a producer's `__dlpack__`, so that the
/// producer orders its pending work before ctensor's (Python array API). Errors:
/// `DeviceUnavailable` without a usable GPU.
pub fn stream_handle() -> Result<usize> {
    #[cfg(feature = "cuda")]
    {
        Ok(context()?.stream() as usize)
    }
    #[cfg(not(feature = "cuda"))]
    {
        Err(unavailable(NOT_BUILT.to_string()))
    }
}

/// Waits until every operation queued on the GPU by ctensor has finished, and reports a
/// failure of any of them (an asynchronous kernel fault surfaces here).
pub fn synchronize() -> Result<()> {
    #[cfg(feature = "cuda")]
    {
        context()?.synchronize()
    }
    #[cfg(not(feature = "cuda"))]
    {
        Err(unavailable(NOT_BUILT.to_string()))
    }
}

/// The counters of the GPU's caching allocator: bytes allocated and reserved (now and
/// at their peaks), live blocks, allocations, cache hits, segments, out-of-memory
/// retries. Device memory goes through the cache unless `CTENSOR_ALLOC=direct` (then
/// the counters stay zero). See [`crate::pool`].
pub fn memory_stats() -> Result<MemoryStats> {
    #[cfg(feature = "cuda")]
    {
        memory::memory_stats()
    }
    #[cfg(not(feature = "cuda"))]
    {
        Err(unavailable(NOT_BUILT.to_string()))
    }
}

/// Waits for the GPU, then returns the memory the caching allocator holds but no tensor
/// uses to the driver (for another process, or before measuring memory).
pub fn empty_cache() -> Result<()> {
    #[cfg(feature = "cuda")]
    {
        memory::empty_cache()
    }
    #[cfg(not(feature = "cuda"))]
    {
        Err(unavailable(NOT_BUILT.to_string()))
    }
}

/// The direction of an asynchronous copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyKind {
    /// Host memory to device memory.
    HostToDevice,
    /// Device memory to host memory.
    DeviceToHost,
    /// Device memory to device memory.
    DeviceToDevice,
}

/// Queues a copy of `bytes` bytes from `src` to `dst` on `stream` (device memory by
/// address). Host memory that is pinned (`host_pinned`) is read or written by the copy
/// engine while the host goes on: the call returns at once. Pageable host memory goes
/// through the staging buffers: a host-to-device copy returns once `src` has been read
/// (the device side may still be in flight), a device-to-host copy once `dst` holds the
/// data. Device-to-device copies never block. The ranges must not overlap.
///
/// # Safety
/// `dst` and `src` are valid for `bytes` bytes on the sides `kind` names (device memory
/// of the selected GPU), and stay valid (and, for host memory, unread and unwritten by
/// the host where the copy writes it, unwritten where it reads it) until the work queued
/// on `stream` so far has finished.
pub unsafe fn copy_async(
    kind: CopyKind,
    dst: u64,
    src: u64,
    bytes: usize,
    host_pinned: bool,
    stream: &Stream,
) -> Result<()> {
    #[cfg(feature = "cuda")]
    {
        // SAFETY: the caller's contract.
        unsafe { memory::copy_async(kind, dst, src, bytes, host_pinned, stream) }
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = (kind, dst, src, bytes, host_pinned, stream);
        Err(unavailable(NOT_BUILT.to_string()))
    }
}

/// The counters of the pinned host memory pool (see [`memory_stats`]): the memory
/// behind pinned tensors (`Tensor::pinned`) and asynchronous copies to the host.
pub fn pinned_memory_stats() -> Result<MemoryStats> {
    #[cfg(feature = "cuda")]
    {
        memory::pinned_memory_stats()
    }
    #[cfg(not(feature = "cuda"))]
    {
        Err(unavailable(NOT_BUILT.to_string()))
    }
}

/// Returns the pinned host memory that the pinned pool holds but no tensor uses to the
/// operating system.
pub fn empty_pinned_cache() -> Result<()> {
    #[cfg(feature = "cuda")]
    {
        memory::empty_pinned_cache()
    }
    #[cfg(not(feature = "cuda"))]
    {
        Err(unavailable(NOT_BUILT.to_string()))
    }
}

#[cfg(not(feature = "cuda"))]
pub(crate) const NOT_BUILT: &str =
    "this build of ctensor has no GPU backend (built without the `cuda` feature)";

/// The `Error::DeviceUnavailable` for the GPU with `reason`.
pub(crate) fn unavailable(reason: String) -> Error {
    Error::DeviceUnavailable {
        device: DeviceType::Gpu,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On a machine without a GPU (CI, this workspace's builders) every entry point
    /// answers with the reason; with a GPU they succeed. Either way nothing panics.
    #[test]
    fn availability_is_answered_without_panicking() {
        match unavailable_reason() {
            None => {
                assert!(gpu_available());
                synchronize().unwrap();
                memory_stats().unwrap();
                empty_cache().unwrap();
                pinned_memory_stats().unwrap();
                empty_pinned_cache().unwrap();
                let s = Stream::new().unwrap();
                assert!(!s.is_default());
                assert!(Stream::default_stream().unwrap().is_default());
                let e = s.record().unwrap();
                s.synchronize().unwrap();
                assert!(e.query().unwrap());
            }
            Some(reason) => {
                println!("SKIP: no GPU: {reason}");
                assert!(!reason.is_empty());
                assert!(!gpu_available());
                assert!(matches!(
                    memory_stats(),
                    Err(Error::DeviceUnavailable { .. })
                ));
                assert!(matches!(
                    empty_cache(),
                    Err(Error::DeviceUnavailable { .. })
                ));
                for r in [pinned_memory_stats().map(drop), empty_pinned_cache()] {
                    assert!(matches!(r, Err(Error::DeviceUnavailable { .. })), "{r:?}");
                }
                for r in [Stream::new().map(drop), Stream::default_stream().map(drop)] {
                    assert!(matches!(r, Err(Error::DeviceUnavailable { .. })), "{r:?}");
                }
                match synchronize() {
                    Err(Error::DeviceUnavailable { device, reason: r }) => {
                        assert_eq!(device, DeviceType::Gpu);
                        assert_eq!(r, reason);
                    }
                    other => panic!("expected DeviceUnavailable, got {other:?}"),
                }
            }
        }
    }
}
