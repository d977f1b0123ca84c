//! A caching allocator: device-independent bookkeeping over a [`Backend`] that reserves
//! and releases whole segments (`cuMemAlloc` on a GPU; anything in the tests).
//!
//! The design is PyTorch's CUDA caching allocator (its `CUDACachingAllocator.cpp`, read
//! for the ideas, not the code): requests round up to 512 bytes; requests up to 1 MiB
//! ("small") are cut from 2 MiB segments, larger ones from segments rounded up to 2 MiB;
//! a free block is found by best fit (the smallest free block that is large enough, of the
//! same pool and stream); a block larger than asked is split when the rest is worth
//! keeping (≥ 512 bytes for small blocks, > 1 MiB for large ones); a freed block merges
//! with free neighbours of its segment; a segment goes back to the backend only in
//! [`Pool::empty_cache`], which also runs once, with a retry, when the backend is out of
//! memory. Blocks carry the stream they were allocated on and are only reused by the
//! same stream, so work queued on one stream never finds its memory reused by another.
//! A block that work on *other* streams may still use is freed with
//! [`Pool::free_after`] and the fences of that work (PyTorch's `record_stream`): it is
//! reused only once every fence has completed, checked without blocking on each
//! allocation; on out-of-memory the pool waits for them before emptying the cache.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::device::DeviceType;
use crate::error::{Error, Result};
use crate::fence::Fence;

/// Every block size is a multiple of this.
pub const ROUND: usize = 512;
/// Requests up to this size come from the small pool.
pub const SMALL_SIZE: usize = 1 << 20;
/// The size of a small-pool segment.
pub const SMALL_SEGMENT: usize = 2 << 20;
/// Large-pool segments are multiples of this.
pub const LARGE_ROUND: usize = 2 << 20;

/// What reserves and releases whole segments.
pub trait Backend {
    /// Reserves a segment of `bytes` bytes (a multiple of [`ROUND`]) and returns its
    /// address, or the backend's reason for failing (out of memory, ...).
    fn reserve(&mut self, bytes: usize) -> std::result::Result<u64, String>;
    /// Releases a segment from [`reserve`](Self::reserve), with its size.
    fn release(&mut self, addr: u64, bytes: usize);
    /// Waits for the device work that may still use cached blocks (freed to the cache
    /// while kernels queued on their stream still read or write them) before segments
    /// are released in the middle of an allocation. Nothing to wait for by default.
    fn quiesce(&mut self) {}
}

/// Counters of a pool, in bytes where they are sizes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemoryStats {
    /// Bytes in blocks handed out and not yet freed (rounded sizes).
    pub allocated: usize,
    /// The most `allocated` has been.
    pub peak_allocated: usize,
    /// Bytes the pool holds from the backend (all segments).
    pub reserved: usize,
    /// The most `reserved` has been.
    pub peak_reserved: usize,
    /// Blocks handed out and not yet freed.
    pub live_blocks: usize,
    /// Allocations made, in all.
    pub allocations: u64,
    /// Allocations served from cached memory, without reserving a segment.
    pub cache_hits: u64,
    /// Segments reserved, in all.
    pub segments_reserved: u64,
    /// Times the backend was out of memory and the cache was emptied to retry.
    pub oom_retries: u64,
    /// Blocks freed with [`Pool::free_after`] whose fences have not all completed:
    /// still counted in `allocated` and `live_blocks`, not yet reusable.
    pub deferred_blocks: usize,
}

/// A block: part (or all) of one segment.
#[derive(Debug, Clone, Copy)]
struct Block {
    size: usize,
    /// The start of its segment.
    segment: u64,
    stream: u64,
    small: bool,
    free: bool,
    /// Freed by `free_after`, waiting for its fences.
    deferred: bool,
}

/// The key that orders free blocks for best fit: pool, stream, size, address.
type FreeKey = (bool, u64, usize, u64);

/// The caching allocator over `B`.
#[derive(Debug)]
pub struct Pool<B: Backend> {
    backend: B,
    device: DeviceType,
    /// Every block, free or not, by address.
    blocks: BTreeMap<u64, Block>,
    /// The free blocks, for best fit.
    free: BTreeSet<FreeKey>,
    /// Segment start → size.
    segments: BTreeMap<u64, usize>,
    /// Blocks freed by `free_after`, with the fences they wait for.
    deferred: Vec<(u64, Vec<Arc<dyn Fence>>)>,
    stats: MemoryStats,
}

fn key(addr: u64, b: &Block) -> FreeKey {
    (b.small, b.stream, b.size, addr)
}

impl<B: Backend> Pool<B> {
    /// An empty pool over `backend`, for memory on `device` (named in errors).
    pub fn new(backend: B, device: DeviceType) -> Self {
        Pool {
            backend,
            device,
            blocks: BTreeMap::new(),
            free: BTreeSet::new(),
            segments: BTreeMap::new(),
            deferred: Vec::new(),
            stats: MemoryStats::default(),
        }
    }

    /// The counters.
    pub fn stats(&self) -> MemoryStats {
        self.stats
    }

    /// The size a request of `bytes` is rounded to, or `None` when that overflows.
    pub fn rounded(bytes: usize) -> Option<usize> {
        bytes.max(1).checked_next_multiple_of(ROUND)
    }

    /// A block of at least `bytes` bytes for `stream`: its address and its (rounded)
    /// size. The memory is not initialised.
    ///
    /// Errors: `Error::Alloc` when the backend cannot reserve a segment even after the
    /// cache was emptied, with the pool's figures; `Error::Overflow` for a size that
    /// cannot be rounded.
    pub fn allocate(&mut self, bytes: usize, stream: u64) -> Result<(u64, usize)> {
        let size = Self::rounded(bytes).ok_or_else(|| Error::Overflow {
            op: "allocate",
            what: format!("{bytes} bytes rounded up to a multiple of {ROUND}"),
        })?;
        if !self.deferred.is_empty() {
            self.reclaim();
        }
        let small = size <= SMALL_SIZE;
        let hit = self
            .free
            .range((small, stream, size, 0)..)
            .next()
            .copied()
            .filter(|&(s, st, _, _)| s == small && st == stream);
        let addr = match hit {
            Some(k) => {
                self.free.remove(&k);
                self.stats.cache_hits += 1;
                k.3
            }
            None => self.new_segment(size, small, stream, bytes)?,
        };
        let block = self.blocks.get_mut(&addr).expect("a listed block exists");
        block.free = false;
        let rest = block.size - size;
        if (small && rest >= ROUND) || (!small && rest > SMALL_SIZE) {
            block.size = size;
            let tail = Block {
                size: rest,
                free: true,
                ..*block
            };
            let tail_addr = addr + size as u64;
            self.free.insert(key(tail_addr, &tail));
            self.blocks.insert(tail_addr, tail);
        }
        let size = self.blocks[&addr].size;
        self.stats.allocated += size;
        self.stats.peak_allocated = self.stats.peak_allocated.max(self.stats.allocated);
        self.stats.live_blocks += 1;
        self.stats.allocations += 1;
        Ok((addr, size))
    }

    /// Reserves a segment for a block of `size`, emptying the cache and retrying once when
    /// the backend is out of memory; the new segment is one free block, returned by
    /// address (not yet in the free set).
    fn new_segment(&mut self, size: usize, small: bool, stream: u64, asked: usize) -> Result<u64> {
        let seg = if small {
            SMALL_SEGMENT
        } else {
            size.checked_next_multiple_of(LARGE_ROUND)
                .ok_or_else(|| Error::Overflow {
                    op: "allocate",
                    what: format!("{size} bytes rounded up to a multiple of {LARGE_ROUND}"),
                })?
        };
        let addr = match self.backend.reserve(seg) {
            Ok(a) => a,
            Err(_) => {
                self.stats.oom_retries += 1;
                // Blocks that wait for other streams' work are worth waiting for now.
                for (_, fences) in &self.deferred {
                    for f in fences {
                        // A fault ends the work too; the block is reclaimed either way.
                        let _ = f.wait();
                    }
                }
                // Cached blocks were freed in stream order, not after their work:
                // releasing their segments needs that work done (as the public
                // empty_cache does by synchronizing first).
                self.backend.quiesce();
                self.empty_cache();
                self.backend.reserve(seg).map_err(|reason| Error::Alloc {
                    device: self.device,
                    bytes: asked,
                    align: ROUND,
                    reason: format!(
                        "{reason} (a segment of {seg} bytes, after releasing the cache; \
                         {} bytes allocated, {} reserved)",
                        self.stats.allocated, self.stats.reserved
                    ),
                })?
            }
        };
        self.segments.insert(addr, seg);
        self.blocks.insert(
            addr,
            Block {
                size: seg,
                segment: addr,
                stream,
                small,
                free: true,
                deferred: false,
            },
        );
        self.stats.reserved += seg;
        self.stats.peak_reserved = self.stats.peak_reserved.max(self.stats.reserved);
        self.stats.segments_reserved += 1;
        Ok(addr)
    }

    /// Returns the block at `addr` to the cache, merged with free neighbours in its
    /// segment.
    ///
    /// Errors: `Error::Internal` for an address that is not a live block (a double free
    /// or a foreign pointer: a bug in the caller).
    pub fn free(&mut self, addr: u64) -> Result<()> {
        let mut block = match self.blocks.get(&addr) {
            Some(b) if !b.free && !b.deferred => *b,
            _ => {
                return Err(Error::Internal {
                    op: "free",
                    what: format!("{addr:#x} is not a live block of the pool"),
                })
            }
        };
        self.stats.allocated -= block.size;
        self.stats.live_blocks -= 1;
        let mut start = addr;
        // The next block, when free and in the same segment.
        let next_addr = addr + block.size as u64;
        if let Some(next) = self.blocks.get(&next_addr).copied() {
            if next.free && next.segment == block.segment {
                self.free.remove(&key(next_addr, &next));
                self.blocks.remove(&next_addr);
                block.size += next.size;
            }
        }
        // The previous block, when free, adjacent and in the same segment.
        if let Some((&prev_addr, &prev)) = self.blocks.range(..addr).next_back() {
            if prev.free && prev.segment == block.segment && prev_addr + prev.size as u64 == addr {
                self.free.remove(&key(prev_addr, &prev));
                self.blocks.remove(&addr);
                block.size += prev.size;
                start = prev_addr;
            }
        }
        block.free = true;
        self.blocks.insert(start, block);
        self.free.insert(key(start, &block));
        Ok(())
    }

    /// Frees the block at `addr` once every fence in `fences` has completed: the fences
    /// of work on other streams that may still use it. Until then it stays allocated
    /// (and counted so) and is not reused; [`allocate`](Self::allocate) and
    /// [`empty_cache`](Self::empty_cache) reclaim it once its fences are complete,
    /// without blocking. With no fences this is [`free`](Self::free).
    ///
    /// Errors: as [`free`](Self::free).
    pub fn free_after(&mut self, addr: u64, fences: Vec<Arc<dyn Fence>>) -> Result<()> {
        if fences.is_empty() {
            return self.free(addr);
        }
        match self.blocks.get_mut(&addr) {
            Some(b) if !b.free && !b.deferred => b.deferred = true,
            _ => {
                return Err(Error::Internal {
                    op: "free_after",
                    what: format!("{addr:#x} is not a live block of the pool"),
                })
            }
        }
        self.deferred.push((addr, fences));
        self.stats.deferred_blocks += 1;
        Ok(())
    }

    /// Frees the deferred blocks whose fences have all completed (a fence that reports
    /// a fault counts as complete: its work is over).
    fn reclaim(&mut self) {
        let mut i = 0;
        while i < self.deferred.len() {
            let done = self.deferred[i]
                .1
                .iter()
                .all(|f| f.is_complete().unwrap_or(true));
            if !done {
                i += 1;
                continue;
            }
            let (addr, _) = self.deferred.swap_remove(i);
            self.blocks
                .get_mut(&addr)
                .expect("a deferred block is listed")
                .deferred = false;
            self.stats.deferred_blocks -= 1;
            self.free(addr).expect("a deferred block is live");
        }
    }

    /// Releases every segment that is entirely free back to the backend (after
    /// reclaiming the deferred blocks whose fences have completed).
    pub fn empty_cache(&mut self) {
        self.reclaim();
        let whole: Vec<(u64, usize)> = self
            .segments
            .iter()
            .filter(|(a, &s)| self.blocks.get(a).is_some_and(|b| b.free && b.size == s))
            .map(|(&a, &s)| (a, s))
            .collect();
        for (addr, size) in whole {
            let b = self.blocks.remove(&addr).expect("the segment's block");
            self.free.remove(&key(addr, &b));
            self.segments.remove(&addr);
            self.backend.release(addr, size);
            self.stats.reserved -= size;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use std::collections::HashMap;

    /// A fake device: hands out 2 MiB-aligned address ranges up to a capacity, and
    /// records what is outstanding.
    #[derive(Debug, Default)]
    struct Fake {
        next: u64,
        capacity: usize,
        outstanding: HashMap<u64, usize>,
        /// The backend calls in order: "reserve", "release", "quiesce".
        log: Vec<&'static str>,
    }

    impl Fake {
        fn with_capacity(capacity: usize) -> Self {
            Fake {
                next: 1 << 32,
                capacity,
                outstanding: HashMap::new(),
                log: Vec::new(),
            }
        }
        fn used(&self) -> usize {
            self.outstanding.values().sum()
        }
    }

    impl Backend for Fake {
        fn quiesce(&mut self) {
            self.log.push("quiesce");
        }
        fn reserve(&mut self, bytes: usize) -> std::result::Result<u64, String> {
            self.log.push("reserve");
            if self.used() + bytes > self.capacity {
                return Err(format!(
                    "out of memory ({} of {} used)",
                    self.used(),
                    self.capacity
                ));
            }
            let addr = self.next;
            self.next += bytes.next_multiple_of(LARGE_ROUND) as u64 + LARGE_ROUND as u64;
            self.outstanding.insert(addr, bytes);
            Ok(addr)
        }
        fn release(&mut self, addr: u64, bytes: usize) {
            self.log.push("release");
            assert_eq!(
                self.outstanding.remove(&addr),
                Some(bytes),
                "released what was reserved"
            );
        }
    }

    /// The invariants, checked against the model of live blocks (address → size).
    fn check(pool: &Pool<Fake>, live: &HashMap<u64, usize>) {
        // Blocks tile each segment exactly, in order, without overlap.
        for (&seg, &size) in &pool.segments {
            assert_eq!(pool.backend.outstanding.get(&seg), Some(&size));
            let mut at = seg;
            for (&a, b) in pool.blocks.range(seg..seg + size as u64) {
                assert_eq!(a, at, "a gap or an overlap in segment {seg:#x}");
                assert_eq!(b.segment, seg);
                assert_eq!(b.size % ROUND, 0);
                at += b.size as u64;
            }
            assert_eq!(at, seg + size as u64, "segment {seg:#x} not covered");
        }
        // No two free neighbours in one segment (they would have merged).
        let mut prev: Option<(u64, Block)> = None;
        for (&a, &b) in &pool.blocks {
            if let Some((pa, pb)) = prev {
                if pb.segment == b.segment && pa + pb.size as u64 == a {
                    assert!(
                        !(pb.free && b.free),
                        "free neighbours at {pa:#x} and {a:#x}"
                    );
                }
            }
            prev = Some((a, b));
        }
        // The live blocks are the model's, each at least the size asked.
        let live_in_pool: HashMap<u64, usize> = pool
            .blocks
            .iter()
            .filter(|(_, b)| !b.free)
            .map(|(&a, b)| (a, b.size))
            .collect();
        assert_eq!(live_in_pool.len(), live.len());
        for (a, want) in live {
            assert!(live_in_pool[a] >= *want);
        }
        // The free set lists exactly the free blocks.
        assert_eq!(
            pool.free.len(),
            pool.blocks.values().filter(|b| b.free).count()
        );
        let s = pool.stats();
        assert_eq!(s.allocated, live_in_pool.values().sum::<usize>());
        assert_eq!(s.reserved, pool.backend.used());
        assert_eq!(s.live_blocks, live.len());
    }

    #[test]
    fn random_sequences_keep_every_invariant_and_return_every_byte() {
        for seed in 0..200u64 {
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
            let mut pool = Pool::new(Fake::with_capacity(1 << 40), DeviceType::Gpu);
            let mut live: HashMap<u64, usize> = HashMap::new();
            let (mut peak, mut now) = (0usize, 0usize);
            for _ in 0..300 {
                if live.is_empty() || rng.gen_bool(0.55) {
                    // Sizes from 0 bytes to 8 MiB, most of them small.
                    let bytes = match rng.gen_range(0..10) {
                        0 => 0,
                        1..=6 => rng.gen_range(1..4096),
                        7 | 8 => rng.gen_range(4096..(1 << 20) + 10),
                        _ => rng.gen_range((1 << 20)..(8 << 20)),
                    };
                    let stream = rng.gen_range(0..2);
                    let (a, size) = pool.allocate(bytes, stream).unwrap();
                    assert!(size >= bytes.max(1) && size % ROUND == 0);
                    assert!(
                        live.insert(a, bytes.max(1)).is_none(),
                        "address handed out twice"
                    );
                    now += size;
                    peak = peak.max(now);
                } else {
                    let k = rng.gen_range(0..live.len());
                    let a = *live.keys().nth(k).unwrap();
                    now -= pool.blocks[&a].size;
                    live.remove(&a);
                    pool.free(a).unwrap();
                }
                check(&pool, &live);
            }
            assert_eq!(pool.stats().peak_allocated, peak, "seed {seed}");
            for a in live.keys().copied().collect::<Vec<_>>() {
                pool.free(a).unwrap();
                live.remove(&a);
                check(&pool, &live);
            }
            // Everything merged back: one free block per segment, all released.
            assert_eq!(pool.blocks.len(), pool.segments.len(), "seed {seed}");
            pool.empty_cache();
            assert!(
                pool.backend.outstanding.is_empty(),
                "seed {seed}: bytes not returned"
            );
            assert_eq!(pool.stats().reserved, 0);
        }
    }

    #[test]
    fn freed_blocks_are_reused_by_best_fit_on_the_same_stream_only() {
        let mut pool = Pool::new(Fake::with_capacity(1 << 30), DeviceType::Gpu);
        let (a, _) = pool.allocate(1000, 0).unwrap(); // 1024 bytes of a fresh small segment
        let (b, _) = pool.allocate(3000, 0).unwrap();
        let (c, _) = pool.allocate(500, 0).unwrap();
        assert_eq!(
            (b - a, c - b),
            (1024, 3072),
            "split from one segment, in order"
        );
        pool.free(a).unwrap();
        pool.free(b).unwrap(); // merges with a: 4096 free before c
        let s = pool.stats();
        let (d, size) = pool.allocate(4000, 0).unwrap();
        assert_eq!((d, size), (a, 4096), "the merged block is the best fit");
        assert_eq!(pool.stats().cache_hits, s.cache_hits + 1);
        assert_eq!(pool.stats().segments_reserved, 1);
        pool.free(d).unwrap();
        // Another stream does not take stream 0's cached memory.
        let (e, _) = pool.allocate(100, 1).unwrap();
        assert_ne!(pool.blocks[&e].segment, pool.blocks[&c].segment);
        assert_eq!(pool.stats().segments_reserved, 2);
        // A large request gets its own segment rounded to 2 MiB; a freed one is reused.
        // (Its 1 MiB rest is not split off: large rests are kept only above 1 MiB.)
        let (f, size) = pool.allocate(3 << 20, 0).unwrap();
        assert_eq!(size, 4 << 20);
        assert_eq!(pool.segments[&pool.blocks[&f].segment], 4 << 20);
        pool.free(f).unwrap();
        let (f, size) = pool.allocate(5 << 20, 0).unwrap(); // a 6 MiB segment, 1 MiB rest
        assert_eq!(
            (size, pool.segments[&pool.blocks[&f].segment]),
            (6 << 20, 6 << 20)
        );
        pool.free(f).unwrap();
        let (f, size) = pool.allocate(2 << 20, 0).unwrap(); // best fit: the 4 MiB block
        assert_eq!(size, 2 << 20, "a 2 MiB rest is split off");
        // Free now: 2 MiB (the rest of the 4 MiB segment) and 6 MiB. For 3 MiB only the
        // 6 MiB block is large enough; its 3 MiB rest is split off.
        let (g, size) = pool.allocate(3 << 20, 0).unwrap();
        assert_eq!(size, 3 << 20);
        assert_eq!(
            pool.blocks[&g].segment, g,
            "from the start of the 6 MiB segment"
        );
        assert_eq!(pool.stats().segments_reserved, 4, "no new segment");
        pool.free(f).unwrap();
        pool.free(g).unwrap();
        // Each large segment is one free block again.
        assert_eq!(
            pool.blocks.values().filter(|b| b.free && !b.small).count(),
            2
        );
    }

    #[test]
    fn out_of_memory_empties_the_cache_retries_once_then_reports_figures() {
        let mut pool = Pool::new(Fake::with_capacity(8 << 20), DeviceType::Gpu);
        // Fill the device with cached large blocks that the next request cannot use.
        let (a, _) = pool.allocate(3 << 20, 0).unwrap(); // a 4 MiB segment
        let (b, _) = pool.allocate(3 << 20, 1).unwrap(); // another, stream 1
        pool.free(a).unwrap();
        pool.free(b).unwrap();
        assert_eq!(pool.stats().reserved, 8 << 20);
        // 6 MiB needs a new segment: the backend is full until the cache is released.
        pool.backend.log.clear();
        let (c, _) = pool.allocate(6 << 20, 0).unwrap();
        assert_eq!(pool.stats().oom_retries, 1);
        // The work that may use the cached blocks is waited for before any is released.
        assert_eq!(
            pool.backend.log,
            ["reserve", "quiesce", "release", "release", "reserve"],
            "the retry's backend calls"
        );
        assert_eq!(pool.stats().reserved, 6 << 20);
        // More than the device holds: an error with the figures, not a panic.
        let e = pool.allocate(7 << 20, 0).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, Error::Alloc { .. }), "{msg}");
        assert!(
            msg.contains("6291456 bytes allocated, 6291456 reserved"),
            "{msg}"
        );
        assert_eq!(pool.stats().oom_retries, 2);
        pool.free(c).unwrap();
        assert!(pool
            .free(c)
            .unwrap_err()
            .to_string()
            .contains("not a live block"));
        assert!(pool.free(12345).is_err());
        assert!(pool.allocate(usize::MAX, 0).is_err());
    }

    /// A fence the test completes; counts the waits.
    #[derive(Debug, Default)]
    struct TestFence {
        done: std::sync::atomic::AtomicBool,
        waits: std::sync::atomic::AtomicU32,
    }

    impl Fence for TestFence {
        fn is_complete(&self) -> Result<bool> {
            Ok(self.done.load(std::sync::atomic::Ordering::SeqCst))
        }
        fn wait(&self) -> Result<()> {
            self.waits.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            self.complete();
            Ok(())
        }
        fn order_default_stream(&self) -> Result<()> {
            Ok(())
        }
        fn describe(&self) -> String {
            "a test fence".into()
        }
    }

    impl TestFence {
        fn complete(&self) {
            self.done.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        fn is_done(&self) -> bool {
            self.done.load(std::sync::atomic::Ordering::SeqCst)
        }
    }

    #[test]
    fn a_block_freed_after_fences_is_reused_only_once_they_complete() {
        let mut pool = Pool::new(Fake::with_capacity(1 << 30), DeviceType::Gpu);
        let (a, size) = pool.allocate(4096, 0).unwrap();
        let f = Arc::new(TestFence::default());
        let g = Arc::new(TestFence::default());
        pool.free_after(a, vec![f.clone(), g.clone()]).unwrap();
        let s = pool.stats();
        assert_eq!(
            (s.deferred_blocks, s.live_blocks, s.allocated),
            (1, 1, size)
        );
        // Freeing it again, either way, is the caller's bug.
        assert!(pool.free(a).is_err());
        assert!(pool.free_after(a, vec![f.clone()]).is_err());
        assert!(
            pool.free_after(12345, vec![f.clone()]).is_err(),
            "a foreign address"
        );
        // Not reused while either fence is pending.
        let (b, _) = pool.allocate(4096, 0).unwrap();
        assert_ne!(b, a);
        f.complete();
        let (c, _) = pool.allocate(4096, 0).unwrap();
        assert!(c != a && c != b, "one fence of two is not enough");
        g.complete();
        let (d, _) = pool.allocate(4096, 0).unwrap();
        assert_eq!(d, a, "reclaimed and reused");
        assert_eq!(pool.stats().deferred_blocks, 0);
        assert_eq!(
            f.waits.load(std::sync::atomic::Ordering::SeqCst),
            0,
            "never blocked"
        );
        // No fences: an ordinary free.
        pool.free_after(d, Vec::new()).unwrap();
        assert_eq!(pool.allocate(4096, 0).unwrap().0, a);
    }

    #[test]
    fn out_of_memory_waits_for_deferred_blocks_before_giving_up() {
        let mut pool = Pool::new(Fake::with_capacity(8 << 20), DeviceType::Gpu);
        let (a, _) = pool.allocate(7 << 20, 0).unwrap();
        let f = Arc::new(TestFence::default());
        pool.free_after(a, vec![f.clone()]).unwrap();
        // The device is full of a block other work still uses: waiting frees it.
        let (b, _) = pool.allocate(7 << 20, 0).unwrap();
        assert_eq!(f.waits.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert_eq!(pool.stats().oom_retries, 1);
        assert_eq!(pool.stats().deferred_blocks, 0);
        pool.free(b).unwrap();
        pool.empty_cache();
        assert!(pool.backend.outstanding.is_empty());
    }

    /// Random sequences of allocations, frees and deferred frees whose fences complete
    /// at random later steps, against a model: a deferred block is never handed out
    /// while a fence of it is pending, it is reclaimed at the first allocation after its
    /// fences complete, and the usual invariants hold throughout.
    #[test]
    fn deferred_frees_keep_blocks_until_their_fences_complete() {
        for seed in 0..100u64 {
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
            let mut pool = Pool::new(Fake::with_capacity(1 << 40), DeviceType::Gpu);
            // Live in the model: handed out, or deferred and not yet reclaimed.
            let mut live: HashMap<u64, usize> = HashMap::new();
            let mut held: Vec<u64> = Vec::new();
            let mut deferred: Vec<(u64, Vec<Arc<TestFence>>)> = Vec::new();
            for _ in 0..300 {
                match rng.gen_range(0..10) {
                    0..=4 => {
                        // The pool reclaims what has completed before it allocates.
                        deferred.retain(|(a, fs)| {
                            let done = fs.iter().all(|f| f.is_done());
                            if done {
                                live.remove(a);
                            }
                            !done
                        });
                        let bytes = match rng.gen_range(0..4) {
                            0 => rng.gen_range(0..4096),
                            1 | 2 => rng.gen_range(4096..(1 << 20)),
                            _ => rng.gen_range((1 << 20)..(6 << 20)),
                        };
                        let (a, _) = pool.allocate(bytes, 0).unwrap();
                        assert!(live.insert(a, bytes.max(1)).is_none(), "seed {seed}");
                        held.push(a);
                    }
                    5 | 6 if !held.is_empty() => {
                        let a = held.swap_remove(rng.gen_range(0..held.len()));
                        let fences: Vec<Arc<TestFence>> = (0..rng.gen_range(1..3))
                            .map(|_| Arc::new(TestFence::default()))
                            .collect();
                        let dyns = fences.iter().map(|f| f.clone() as Arc<dyn Fence>).collect();
                        pool.free_after(a, dyns).unwrap();
                        deferred.push((a, fences));
                    }
                    7 if !held.is_empty() => {
                        let a = held.swap_remove(rng.gen_range(0..held.len()));
                        pool.free(a).unwrap();
                        live.remove(&a);
                    }
                    _ => {
                        // Some pending work finishes.
                        for (_, fs) in &deferred {
                            for f in fs {
                                if rng.gen_bool(0.3) {
                                    f.complete();
                                }
                            }
                        }
                    }
                }
                check(&pool, &live);
                for (a, fs) in &deferred {
                    let b = pool.blocks[a];
                    assert!(!b.free && b.deferred, "seed {seed}: {a:#x} reclaimed early");
                    assert!(fs
                        .iter()
                        .all(|f| f.waits.load(std::sync::atomic::Ordering::SeqCst) == 0));
                }
                assert_eq!(pool.stats().deferred_blocks, deferred.len());
            }
            // Everything completes and is freed: all memory returns.
            for (_, fs) in &deferred {
                fs.iter().for_each(|f| f.complete());
            }
            for a in held {
                pool.free(a).unwrap();
            }
            pool.empty_cache();
            assert_eq!(pool.stats().deferred_blocks, 0, "seed {seed}");
            assert_eq!(pool.stats().allocated, 0, "seed {seed}");
            assert!(pool.backend.outstanding.is_empty(), "seed {seed}");
        }
    }
}
