//! The memory behind a tensor: owned or borrowed from a foreign owner, shared through
//! `Arc`, with a run-time borrow state that keeps the safe API sound when tensors share it.

use std::any::Any;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use ctensor_base::alloc::Allocation;
use ctensor_base::fence::{settle_before_release, Fence};
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
    /// `true` while `in_flight` may hold entries: the one load a borrow pays when no
    /// asynchronous work was ever queued on the memory.
    pending: AtomicBool,
    /// Queued device work that reads or writes the memory and may not have finished.
    in_flight: Mutex<Vec<InFlight>>,
}

/// Device work that uses a buffer's memory: its fence, and whether it writes the memory
/// (an asynchronous copy into it) or only reads it (a copy from it).
#[derive(Debug, Clone)]
pub(crate) struct InFlight {
    pub(crate) fence: Arc<dyn Fence>,
    pub(crate) writes: bool,
}

/// Settles the in-flight work of a buffer before a borrow (`write`: a mutable one).
/// Finished work is forgotten. On the GPU, unfinished work is ordered before everything
/// ctensor queues from now on (its default stream waits for the fence, the host does
/// not), and forgotten. On the host, unfinished work that writes the memory, or any
/// unfinished work when the borrow is mutable, is a conflict: the description of the
/// first such work is returned and the entry kept; unfinished reads are kept and do not
/// stop a shared borrow. A fault reported by a fence is the error.
pub(crate) fn settle(
    list: &mut Vec<InFlight>,
    on_gpu: bool,
    write: bool,
) -> Result<Option<String>> {
    let mut conflict = None;
    let mut i = 0;
    while i < list.len() {
        let f = &list[i];
        let done = f.fence.is_complete()?;
        if done {
            list.swap_remove(i);
            continue;
        }
        if on_gpu {
            f.fence.order_default_stream()?;
            list.swap_remove(i);
            continue;
        }
        if (f.writes || write) && conflict.is_none() {
            conflict = Some(format!(
                "by {} that {} this memory and has not finished (wait for it with \
                 Tensor::synchronize, Stream::synchronize or Event::synchronize)",
                f.fence.describe(),
                if f.writes { "writes" } else { "reads" }
            ));
        }
        i += 1;
    }
    Ok(conflict)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
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
            pending: AtomicBool::new(false),
            in_flight: Mutex::new(Vec::new()),
        })
    }

    /// A new zeroed buffer of `bytes` bytes of pinned host memory
    /// ([`Allocation::pinned`]).
    pub(crate) fn allocate_pinned(bytes: usize) -> Result<Arc<TensorBuffer>> {
        Ok(TensorBuffer::owning(Allocation::pinned(bytes)?))
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
            pending: AtomicBool::new(false),
            in_flight: Mutex::new(Vec::new()),
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

    /// `true` for pinned host memory ([`Tensor::pinned`](crate::Tensor::pinned)).
    pub fn is_pinned(&self) -> bool {
        matches!(&self.owner, Owner::Owned(a) if a.is_pinned())
    }

    /// Records device work that uses the memory and may not have finished: until its
    /// fence completes, host borrows that would race with it are refused (see
    /// [`read`](Self::read)), the memory of a GPU buffer is used by later ctensor work
    /// only after it, and the memory is not freed before it.
    ///
    /// Call it while holding a borrow of the buffer that covers the work (a write
    /// guard for work that writes), taken before the work was queued: borrows taken
    /// after that guard is released then see the fence.
    pub fn record_fence(&self, fence: Arc<dyn Fence>, writes: bool) {
        let mut list = lock(&self.in_flight);
        list.push(InFlight { fence, writes });
        self.pending.store(true, Ordering::Release);
    }

    /// Blocks until every recorded fence has completed, then forgets them.
    pub fn synchronize(&self) -> Result<()> {
        if !self.pending.load(Ordering::Acquire) {
            return Ok(());
        }
        let mut list = lock(&self.in_flight);
        while let Some(f) = list.last() {
            f.fence.wait()?;
            list.pop();
        }
        self.pending.store(false, Ordering::Release);
        Ok(())
    }

    /// `guard` once the recorded fences are settled; on a conflict the guard is
    /// released and the conflict returned.
    #[inline]
    fn settled<G>(&self, guard: G, op: &'static str, write: bool) -> Result<G> {
        if self.pending.load(Ordering::Acquire) {
            self.settle_in_flight(op, write)?;
        }
        Ok(guard)
    }

    /// Settles recorded fences before a borrow; a conflict with unfinished host-side
    /// work is a `BorrowConflict`.
    #[cold]
    fn settle_in_flight(&self, op: &'static str, write: bool) -> Result<()> {
        let mut list = lock(&self.in_flight);
        let conflict = settle(&mut list, self.device == DeviceType::Gpu, write);
        self.pending.store(!list.is_empty(), Ordering::Release);
        match conflict? {
            None => Ok(()),
            Some(held) => Err(Error::BorrowConflict {
                op,
                requested: if write { "mutably" } else { "immutably" },
                held,
            }),
        }
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
    ///
    /// Asynchronous work recorded on the buffer ([`record_fence`](Self::record_fence))
    /// is settled first: on host memory, a borrow while unfinished work writes it is a
    /// `BorrowConflict`; on GPU memory, ctensor's later work is ordered after it.
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
                // Fences are looked at once the borrow is held: whoever records one
                // holds a borrow while doing so, so this sees it.
                Ok(_) => return self.settled(ReadGuard { buf: self }, op, false),
                Err(now) => cur = now,
            }
        }
    }

    /// Takes the exclusive borrow, or `Error::BorrowConflict` while anyone else holds it.
    ///
    /// As [`read`](Self::read), with unfinished asynchronous work that only reads host
    /// memory a conflict too.
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
            Ok(_) => self.settled(WriteGuard { buf: self }, op, true),
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

impl Drop for TensorBuffer {
    /// The memory is not released while device work may still use it: memory ctensor
    /// allocated goes back to its pool to be reused only once the work's fences have
    /// completed ([`Allocation::free_after`]: no wait for GPU and pinned memory).
    /// Foreign memory goes back to an owner that may reuse it at once (a DLPack deleter
    /// hands a block to PyTorch's allocator): the host waits for the work's fences first
    /// and, for GPU memory, for ctensor's stream, on which kernels that use the memory
    /// may still be queued without any fence (they record none).
    fn drop(&mut self) {
        let foreign_gpu = self.device == DeviceType::Gpu
            && self.bytes > 0
            && matches!(self.owner, Owner::Foreign(_));
        if !*self.pending.get_mut() && !foreign_gpu {
            return;
        }
        let fences: Vec<Arc<dyn Fence>> = self
            .in_flight
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .drain(..)
            .map(|f| f.fence)
            .collect();
        match std::mem::replace(&mut self.owner, Owner::Foreign(None)) {
            Owner::Owned(alloc) => alloc.free_after(fences),
            Owner::Foreign(keep) => {
                // Its owner may reuse foreign memory at once: the work goes first, as
                // the owner sees it (the host waits; ordering ctensor's stream is not
                // enough, the owner's next use is on its own streams).
                settle_before_release(fences, false);
                if foreign_gpu {
                    // A fault there was the kernels' to report; the memory is free either way.
                    let _ = ctensor_base::gpu::synchronize();
                }
                drop(keep);
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
    use std::sync::atomic::AtomicU32;

    /// A fence the test completes, counting what is asked of it.
    #[derive(Debug, Default)]
    struct Fake {
        done: AtomicBool,
        fault: bool,
        ordered: AtomicU32,
        order_fails: bool,
    }

    impl Fence for Fake {
        fn is_complete(&self) -> Result<bool> {
            if self.fault {
                return Err(Error::Cuda {
                    library: "test",
                    call: "query".into(),
                    detail: "a fault".into(),
                });
            }
            Ok(self.done.load(Ordering::SeqCst))
        }
        fn wait(&self) -> Result<()> {
            self.done.store(true, Ordering::SeqCst);
            Ok(())
        }
        fn order_default_stream(&self) -> Result<()> {
            if self.order_fails {
                return Err(Error::Cuda {
                    library: "test",
                    call: "wait_event".into(),
                    detail: "refused".into(),
                });
            }
            self.ordered.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }
        fn describe(&self) -> String {
            "a test copy".into()
        }
    }

    fn entry(f: &Arc<Fake>, writes: bool) -> InFlight {
        InFlight {
            fence: f.clone(),
            writes,
        }
    }

    /// Every combination of finished or not, reading or writing work, shared or mutable
    /// borrow, host or GPU memory, against the rule written out longhand.
    #[test]
    fn settle_follows_the_rule_for_every_combination() {
        for on_gpu in [false, true] {
            for write in [false, true] {
                for done in [false, true] {
                    for writes in [false, true] {
                        let f = Arc::new(Fake::default());
                        f.done.store(done, Ordering::SeqCst);
                        let mut list = vec![entry(&f, writes)];
                        let got = settle(&mut list, on_gpu, write).unwrap();
                        let case =
                            format!("gpu {on_gpu} write {write} done {done} writes {writes}");
                        let conflict = !done && !on_gpu && (writes || write);
                        assert_eq!(got.is_some(), conflict, "{case}");
                        if let Some(m) = got {
                            assert!(m.contains("a test copy"), "{m}");
                            assert!(m.contains(if writes { "writes" } else { "reads" }), "{m}");
                        }
                        // Kept only while unfinished host work remains.
                        assert_eq!(list.len(), usize::from(!done && !on_gpu), "{case}");
                        // The GPU's default stream is ordered after unfinished work only.
                        let ordered = f.ordered.load(Ordering::SeqCst);
                        assert_eq!(ordered, u32::from(!done && on_gpu), "{case}");
                    }
                }
            }
        }
    }

    #[test]
    fn settle_reports_faults_and_refused_ordering() {
        let f = Arc::new(Fake {
            fault: true,
            ..Fake::default()
        });
        let mut list = vec![entry(&f, false)];
        assert!(matches!(
            settle(&mut list, false, false),
            Err(Error::Cuda { .. })
        ));
        let g = Arc::new(Fake {
            order_fails: true,
            ..Fake::default()
        });
        let mut list = vec![entry(&g, true)];
        assert!(matches!(
            settle(&mut list, true, false),
            Err(Error::Cuda { .. })
        ));
        assert_eq!(list.len(), 1, "work not ordered is not forgotten");
    }

    #[test]
    fn several_fences_settle_independently() {
        let a = Arc::new(Fake::default());
        let b = Arc::new(Fake::default());
        let c = Arc::new(Fake::default());
        let mut list = vec![entry(&a, false), entry(&b, false), entry(&c, true)];
        b.done.store(true, Ordering::SeqCst);
        // Two reads in flight and a write: a shared borrow conflicts with the write only.
        let m = settle(&mut list, false, false).unwrap().unwrap();
        assert!(m.contains("writes"), "{m}");
        assert_eq!(list.len(), 2);
        c.done.store(true, Ordering::SeqCst);
        assert_eq!(settle(&mut list, false, false).unwrap(), None);
        assert_eq!(list.len(), 1);
        assert!(settle(&mut list, false, true).unwrap().is_some());
        a.done.store(true, Ordering::SeqCst);
        assert_eq!(settle(&mut list, false, true).unwrap(), None);
        assert!(list.is_empty());
    }

    #[test]
    fn a_host_buffer_waits_for_its_fences_before_it_is_freed() {
        let f = Arc::new(Fake::default());
        let b = TensorBuffer::allocate(DeviceType::Cpu, 64).unwrap();
        {
            let _w = b.write("t").unwrap();
            b.record_fence(f.clone(), true);
        }
        assert!(b.read("r").is_err());
        drop(b);
        assert!(
            f.done.load(Ordering::SeqCst),
            "the drop waited for the fence"
        );
        assert_eq!(Arc::strong_count(&f), 1, "and let go of it");
    }

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
