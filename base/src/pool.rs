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
mod tests;
