//! Device memory allocation: one owning [`Allocation`] type whose constructor and
//! destructor dispatch on the device.

mod cpu;
pub mod host_cache;

pub use crate::gpu::blocks::gpu_unavailable;
/// The caching pool, under its former path (it now lives at [`crate::pool`]).
pub use crate::pool;
pub use cpu::CPU_ALIGN;

use crate::gpu::blocks as gpu;

use std::ptr::NonNull;
use std::sync::Arc;

use crate::device::DeviceType;
use crate::error::Result;
use crate::fence::Fence;

/// A block of memory on one device, freed on drop: zero-initialised
/// ([`zeroed`](Allocation::zeroed)) or about to be overwritten
/// ([`uninit`](Allocation::uninit)).
///
/// A zero-byte allocation allocates nothing and holds a dangling pointer aligned to
/// [`CPU_ALIGN`], so zero-size tensors need no special case.
#[derive(Debug)]
pub struct Allocation {
    ptr: NonNull<u8>,
    bytes: usize,
    device: DeviceType,
    /// Page-locked host memory from the pinned pool.
    pinned: bool,
}

// SAFETY: an `Allocation` exclusively owns its block; the block holds plain bytes with no
// thread affinity, so moving or sharing the owner between threads is sound. Who may
// read or write the bytes is governed by the tensor buffer that holds the allocation.
unsafe impl Send for Allocation {}
// SAFETY: see `Send`; `&Allocation` only hands out the raw pointer.
unsafe impl Sync for Allocation {}

impl Allocation {
    /// Allocates `bytes` zeroed bytes on `device`, aligned to at least [`CPU_ALIGN`].
    ///
    /// Errors: [`Error::Alloc`](crate::Error::Alloc) when the allocator fails or the
    /// size is too large for the address space; [`Error::DeviceUnavailable`](crate::Error::DeviceUnavailable)
    /// for a device this build cannot use.
    pub fn zeroed(device: DeviceType, bytes: usize) -> Result<Allocation> {
        let ptr = match device {
            DeviceType::Cpu => cpu::alloc_zeroed(bytes)?,
            DeviceType::Gpu => gpu::alloc_zeroed(bytes)?,
        };
        Ok(Allocation {
            ptr,
            bytes,
            device,
            pinned: false,
        })
    }

    /// Allocates `bytes` bytes on `device` whose contents are unspecified, for memory
    /// that is about to be overwritten whole: on the host the pages are then first
    /// touched by the code that writes them (a threaded kernel) instead of by a
    /// single-threaded zero fill. GPU memory is zeroed all the same (the fill is a
    /// fraction of any kernel's cost there). Reading the bytes before they are written
    /// is undefined behaviour; this type only hands out the raw pointer, so that is
    /// for its user's `unsafe` code to ensure.
    ///
    /// Errors: as [`zeroed`](Self::zeroed).
    pub fn uninit(device: DeviceType, bytes: usize) -> Result<Allocation> {
        let ptr = match device {
            DeviceType::Cpu => cpu::alloc_uninit(bytes)?,
            DeviceType::Gpu => gpu::alloc_zeroed(bytes)?,
        };
        Ok(Allocation {
            ptr,
            bytes,
            device,
            pinned: false,
        })
    }

    /// Allocates `bytes` zeroed bytes of pinned (page-locked) host memory: host memory
    /// like any other, which the GPU's copy engine reads and writes directly, so copies
    /// between it and the GPU can run while the host goes on
    /// (`Tensor::to_device_async`). It comes from a caching pool of its own
    /// ([`gpu::pinned_memory_stats`](crate::gpu::pinned_memory_stats)).
    ///
    /// Errors: `DeviceUnavailable` without a usable GPU (pinning is the CUDA driver's
    /// service); `Error::Alloc` when the memory cannot be pinned.
    pub fn pinned(bytes: usize) -> Result<Allocation> {
        let ptr = gpu::pinned_alloc(bytes)?;
        // SAFETY: a fresh host block of `bytes` bytes that no one else holds.
        unsafe { std::ptr::write_bytes(ptr.as_ptr(), 0, bytes) };
        Ok(Allocation {
            ptr,
            bytes,
            device: DeviceType::Cpu,
            pinned: true,
        })
    }

    /// `true` for pinned host memory ([`pinned`](Self::pinned)).
    pub fn is_pinned(&self) -> bool {
        self.pinned
    }

    /// Frees the block once every fence in `fences` has completed: the fences of device
    /// work that may still read or write it (an asynchronous copy on another stream).
    /// GPU and pinned blocks go back to their pool at once and are reused only after
    /// the fences, without blocking (see
    /// [`Pool::free_after`](crate::alloc::pool::Pool::free_after)). Without the pools
    /// (`CTENSOR_ALLOC=direct`), GPU memory is freed after ctensor's default stream is
    /// made to wait for the fences; ordinary host memory waits for them.
    pub fn free_after(self, fences: Vec<Arc<dyn Fence>>) {
        let fences: Vec<Arc<dyn Fence>> = fences
            .into_iter()
            // A fence that reports a fault has no work left to wait for.
            .filter(|f| !f.is_complete().unwrap_or(true))
            .collect();
        if fences.is_empty() {
            return;
        }
        let fences = if self.device == DeviceType::Gpu || self.pinned {
            // SAFETY: `ptr` and `bytes` are what the allocator returned; when the pool
            // takes the block (`None` back), `self` must not free it again: forgotten.
            match unsafe { gpu::free_after(self.ptr, self.bytes, self.pinned, fences) } {
                None => return std::mem::forget(self),
                Some(back) => back,
            }
        } else {
            fences
        };
        crate::fence::settle_before_release(fences, self.device == DeviceType::Gpu);
    }

    /// The start of the block.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Its size in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The device it is on.
    pub fn device(&self) -> DeviceType {
        self.device
    }
}

impl Drop for Allocation {
    fn drop(&mut self) {
        // SAFETY: `ptr` and `bytes` are exactly what the matching allocator returned in
        // `zeroed`, `uninit` or `pinned`, and the block is freed once, here.
        unsafe {
            match self.device {
                DeviceType::Cpu if self.pinned => gpu::pinned_dealloc(self.ptr, self.bytes),
                DeviceType::Cpu => cpu::dealloc(self.ptr, self.bytes),
                DeviceType::Gpu => gpu::dealloc(self.ptr, self.bytes),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn cpu_allocations_are_aligned_and_zeroed() {
        for bytes in [1usize, 3, 64, 1000, 1 << 20] {
            let a = Allocation::zeroed(DeviceType::Cpu, bytes).unwrap();
            assert_eq!(a.as_ptr() as usize % CPU_ALIGN, 0);
            assert_eq!(a.bytes(), bytes);
            // SAFETY: the block holds `bytes` initialised (zero) bytes and is not shared.
            let s = unsafe { std::slice::from_raw_parts(a.as_ptr(), bytes) };
            assert!(s.iter().all(|&b| b == 0));
        }
    }

    #[test]
    fn uninit_allocations_are_aligned_and_writable() {
        for bytes in [0usize, 1, 3, 64, 1000, 1 << 20] {
            let a = Allocation::uninit(DeviceType::Cpu, bytes).unwrap();
            assert_eq!(a.as_ptr() as usize % CPU_ALIGN, 0);
            assert_eq!(a.bytes(), bytes);
            // SAFETY: the block is valid for `bytes` writes and not shared; it is read
            // only after being written whole.
            let s = unsafe {
                std::ptr::write_bytes(a.as_ptr(), 0xA5, bytes);
                std::slice::from_raw_parts(a.as_ptr(), bytes)
            };
            assert!(s.iter().all(|&b| b == 0xA5));
        }
        assert!(matches!(
            Allocation::uninit(DeviceType::Cpu, usize::MAX),
            Err(Error::Alloc { .. })
        ));
    }

    #[test]
    fn zero_byte_allocation_is_aligned_and_not_null() {
        let a = Allocation::zeroed(DeviceType::Cpu, 0).unwrap();
        assert_eq!(a.bytes(), 0);
        assert_eq!(a.as_ptr() as usize % CPU_ALIGN, 0);
    }

    #[test]
    fn impossible_allocation_is_an_alloc_error_not_an_abort() {
        // 2^62 bytes is beyond any machine's address space; isize::MAX - 1 fails the layout.
        for bytes in [1usize << 62, isize::MAX as usize - 1, usize::MAX] {
            match Allocation::zeroed(DeviceType::Cpu, bytes) {
                Err(Error::Alloc {
                    bytes: b, device, ..
                }) => {
                    assert_eq!(b, bytes);
                    assert_eq!(device, DeviceType::Cpu);
                }
                other => panic!("expected Error::Alloc for {bytes} bytes, got {other:?}"),
            }
        }
    }

    #[test]
    fn pinned_allocation_is_zeroed_host_memory_or_reports_device_unavailable() {
        if crate::gpu::gpu_available() {
            for bytes in [0usize, 1, 1000, 3 << 20] {
                let a = Allocation::pinned(bytes).unwrap();
                assert!(a.is_pinned());
                assert_eq!(a.device(), DeviceType::Cpu);
                assert_eq!(a.as_ptr() as usize % CPU_ALIGN, 0);
                // SAFETY: the block holds `bytes` zeroed host bytes and is not shared.
                let s = unsafe { std::slice::from_raw_parts(a.as_ptr(), bytes) };
                assert!(s.iter().all(|&b| b == 0));
            }
            return;
        }
        match Allocation::pinned(16) {
            Err(Error::DeviceUnavailable { device, reason }) => {
                println!("SKIP: no GPU to pin memory with: {reason}");
                assert_eq!(device, DeviceType::Gpu);
            }
            other => panic!("expected DeviceUnavailable, got {other:?}"),
        }
        assert!(!Allocation::zeroed(DeviceType::Cpu, 16).unwrap().is_pinned());
    }

    #[test]
    fn gpu_allocation_works_or_reports_device_unavailable() {
        if crate::gpu::gpu_available() {
            for bytes in [0usize, 1, 1 << 20] {
                let a = Allocation::zeroed(DeviceType::Gpu, bytes).unwrap();
                assert_eq!(a.bytes(), bytes);
                assert_eq!(a.device(), DeviceType::Gpu);
            }
            return;
        }
        match Allocation::zeroed(DeviceType::Gpu, 16) {
            Err(Error::DeviceUnavailable { device, reason }) => {
                println!("SKIP: no GPU: {reason}");
                assert_eq!(device, DeviceType::Gpu);
                assert!(!reason.is_empty());
            }
            other => panic!("expected DeviceUnavailable, got {other:?}"),
        }
    }
}
