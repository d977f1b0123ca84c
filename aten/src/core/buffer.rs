//! The memory behind a tensor: owned or borrowed from a foreign owner, shared through
//! `Arc`, with a run-time borrow state that keeps the safe API sound when tensors share it.

use std::any::Any;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ctensor_base::alloc::Allocation;
use ctensor_base::{DeviceType, Error, Result};

/// Who frees the memory.
enum Owner {
    /// Allocated by ctensor, freed when the last tensor that shares it is dropped.
    Owned(#[allow(dead_code)] Allocation), // held for its Drop, which frees the memory
    /// Someone else's memory (a [`TensorMap`](crate::TensorMap)); never freed here. The
    /// optional handle is dropped with the buffer, which lets a caller tie the owner's
    /// lifetime to the map.
    Foreign(#[allow(dead_code)] Option<Arc<dyn Any + Send + Sync>>),
}

/// The borrow state value that means "one writer".
const WRITER: usize = usize::MAX;

/// The borrow state of memory lent for a scope that has ended
/// ([`Tensor::with_slice`](crate::Tensor::with_slice)): no borrow is ever granted again.
const REVOKED: usize = WRITER - 2;

/// A block of device memory shared by every tensor that views it.
///
/// The buffer tracks borrows of its memory at run time: any number of readers, or one
/// writer. Every safe tensor method that reads or writes element values takes the
/// matching borrow for as long as it touches the memory, so a conflicting access through
/// another tensor sharing the buffer is an [`Error::BorrowConflict`], never a data race.
pub struct TensorBuffer {
    ptr: *mut u8,
    bytes: usize,
    device: DeviceType,
    owner: Owner,
    state: AtomicUsize,
    /// Foreign memory its owner lent read-only (DLPack's READ_ONLY flag): every
    /// mutable borrow is refused.
    read_only: bool,
    /// Memory lent for a scope ([`Tensor::with_slice`](crate::Tensor::with_slice)):
    /// it cannot be handed to code that may keep it past the scope (a DLPack export).
    scoped: bool,
}

// SAFETY: the buffer only holds a pointer to plain bytes plus an owner that is Send + Sync;
// all access to the bytes through the safe API goes through the atomic borrow state.
unsafe impl Send for TensorBuffer {}
// SAFETY: see `Send`.
unsafe impl Sync for TensorBuffer {}

impl fmt::Debug for TensorBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TensorBuffer")
            .field("ptr", &self.ptr)
            .field("bytes", &self.bytes)
            .field("device", &self.device)
            .field("owns_memory", &self.owns_memory())
            .finish()
    }
}

impl TensorBuffer {
    /// A new zeroed buffer of `bytes` bytes on `device`.
    pub fn allocate(device: DeviceType, bytes: usize) -> Result<Arc<TensorBuffer>> {
        Ok(TensorBuffer::owning(Allocation::zeroed(device, bytes)?))
    }

    /// The buffer that owns `alloc`.
    fn owning(alloc: Allocation) -> Arc<TensorBuffer> {
        Arc::new(TensorBuffer {
            ptr: alloc.as_ptr(),
            bytes: alloc.bytes(),
            device: alloc.device(),
            owner: Owner::Owned(alloc),
            state: AtomicUsize::new(0),
            read_only: false,
            scoped: false,
        })
    }

    /// A new buffer of `bytes` bytes on `device` whose contents are unspecified (see
    /// [`Allocation::uninit`]).
    ///
    /// # Safety
    /// Every byte is written before any tensor over the buffer is read, or handed to
    /// code that may read it; a buffer dropped unread needs nothing.
    pub(crate) unsafe fn allocate_uninit(
        device: DeviceType,
        bytes: usize,
    ) -> Result<Arc<TensorBuffer>> {
        Ok(TensorBuffer::owning(Allocation::uninit(device, bytes)?))
    }

    /// A buffer over foreign memory, never freed by ctensor.
    ///
    /// # Safety
    /// `ptr` is valid for reads and writes of `bytes` bytes on `device` for as long as the
    /// returned buffer (and so every tensor that shares it) lives, and no one else
    /// accesses that memory meanwhile except through tensors sharing this buffer.
    pub unsafe fn foreign(
        ptr: *mut u8,
        bytes: usize,
        device: DeviceType,
        keep_alive: Option<Arc<dyn Any + Send + Sync>>,
    ) -> Arc<TensorBuffer> {
        // SAFETY: forwarded from the caller.
        unsafe { TensorBuffer::foreign_with(ptr, bytes, device, keep_alive, false, false) }
    }

    /// [`foreign`](Self::foreign) with the access flags: `read_only` refuses every
    /// mutable borrow, `scoped` marks memory lent for a scope.
    ///
    /// # Safety
    /// As [`foreign`](Self::foreign); with `read_only`, the memory need only be valid for
    /// reads.
    pub(crate) unsafe fn foreign_with(
        ptr: *mut u8,
        bytes: usize,
        device: DeviceType,
        keep_alive: Option<Arc<dyn Any + Send + Sync>>,
        read_only: bool,
        scoped: bool,
    ) -> Arc<TensorBuffer> {
        Arc::new(TensorBuffer {
            ptr,
            bytes,
            device,
            owner: Owner::Foreign(keep_alive),
            state: AtomicUsize::new(0),
            read_only,
            scoped,
        })
    }

    /// `true` for foreign memory lent read-only: writes are refused.
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// `true` for memory lent for a scope (`with_slice`).
    pub(crate) fn is_scoped(&self) -> bool {
        self.scoped
    }

    /// The start of the memory (null only for a foreign buffer of zero bytes).
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The device the memory is on.
    pub fn device(&self) -> DeviceType {
        self.device
    }

    /// `true` when ctensor allocated this memory and frees it.
    pub fn owns_memory(&self) -> bool {
        matches!(self.owner, Owner::Owned(_))
    }

    fn held(state: usize) -> String {
        match state {
            WRITER => "mutably".to_string(),
            REVOKED => "for good: it was a slice lent for a `with_slice` scope that has ended \
                        (inside the scope, `try_clone` makes a copy that outlives it)"
                .to_string(),
            n => format!("immutably ({n} reader{})", if n == 1 { "" } else { "s" }),
        }
    }

    /// Takes a shared borrow, or `Error::BorrowConflict` while a writer holds the memory.
    pub fn read(&self, op: &'static str) -> Result<ReadGuard<'_>> {
        let mut cur = self.state.load(Ordering::Relaxed);
        loop {
            if cur >= REVOKED {
                return Err(Error::BorrowConflict {
                    op,
                    requested: "immutably",
                    held: Self::held(cur),
                });
            }
            match self.state.compare_exchange_weak(
                cur,
                cur + 1,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Ok(ReadGuard { buf: self }),
                Err(now) => cur = now,
            }
        }
    }

    /// Takes the exclusive borrow, or `Error::BorrowConflict` while anyone else holds it.
    pub fn write(&self, op: &'static str) -> Result<WriteGuard<'_>> {
        if self.read_only {
            return Err(Error::BorrowConflict {
                op,
                requested: "mutably",
                held: "read-only for good: its owner lent it read-only (DLPack's READ_ONLY \
                       flag); try_clone makes a writable copy"
                    .to_string(),
            });
        }
        match self
            .state
            .compare_exchange(0, WRITER, Ordering::Acquire, Ordering::Relaxed)
        {
            Ok(_) => Ok(WriteGuard { buf: self }),
            Err(now) => Err(Error::BorrowConflict {
                op,
                requested: "mutably",
                held: Self::held(now),
            }),
        }
    }
}

impl TensorBuffer {
    /// Ends all access to the memory for good: waits until no borrow is held (an
    /// operation on another thread finishes), then refuses every later borrow. For
    /// memory lent for a scope, so that a tensor sharing it that outlives the scope can
    /// never reach it.
    pub(crate) fn revoke(&self) {
        let mut spins = 0u32;
        while self
            .state
            .compare_exchange(0, REVOKED, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            if self.state.load(Ordering::Relaxed) == REVOKED {
                return;
            }
            // Someone is still reading or writing: back off until they finish.
            spins = spins.saturating_add(1);
            if spins < 64 {
                std::hint::spin_loop();
            } else if spins < 1024 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
        }
    }
}

/// A shared borrow of a buffer's memory; released on drop.
#[derive(Debug)]
pub struct ReadGuard<'a> {
    buf: &'a TensorBuffer,
}

impl Drop for ReadGuard<'_> {
    fn drop(&mut self) {
        self.buf.state.fetch_sub(1, Ordering::Release);
    }
}

/// The exclusive borrow of a buffer's memory; released on drop.
#[derive(Debug)]
pub struct WriteGuard<'a> {
    buf: &'a TensorBuffer,
}

impl Drop for WriteGuard<'_> {
    fn drop(&mut self) {
        self.buf.state.store(0, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_share_writers_exclude() {
        let b = TensorBuffer::allocate(DeviceType::Cpu, 8).unwrap();
        let r1 = b.read("t").unwrap();
        let r2 = b.read("t").unwrap();
        let e = b.write("w").unwrap_err();
        assert!(matches!(
            e,
            Error::BorrowConflict {
                requested: "mutably",
                ..
            }
        ));
        assert!(e.to_string().contains("2 readers"), "{e}");
        drop((r1, r2));
        let w = b.write("w").unwrap();
        assert!(matches!(
            b.read("r"),
            Err(Error::BorrowConflict {
                requested: "immutably",
                ..
            })
        ));
        assert!(matches!(b.write("w2"), Err(Error::BorrowConflict { .. })));
        drop(w);
        assert!(b.read("r").is_ok());
    }
}
