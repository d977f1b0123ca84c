//! A cache of large freed host blocks, reused by the next request of the same size
//! class.
//!
//! A fresh host block of a megabyte or more comes from `mmap` (glibc's threshold caps at
//! 32 MiB, and at first it is 128 KiB), so every fresh large result pays for mapping
//! it, a page fault and a kernel zero fill per 4 KiB page on first touch, and unmapping
//! it when freed: for a fresh 80 MB `&x + &y` that is most of the time (the in-place
//! `add_` over the same data takes a fifth of it). A solver loop makes the same large
//! temporaries every iteration. This cache keeps freed blocks of at least
//! [`MIN_BLOCK`] bytes, up to a limit of bytes in all ([`set_limit`], default
//! [`DEFAULT_LIMIT`], `CTENSOR_HOST_CACHE_MB`, off with `CTENSOR_ALLOC=direct`), and
//! hands them out again by size class, already mapped. Small blocks stay with the
//! system allocator, which serves them from its own free lists (measured faster than a
//! pool's bookkeeping here).
//!
//! Size classes: a request is rounded up to a multiple of 1/16 of its power of two (at
//! most 6.25 % more), so blocks of nearly equal sizes share a class. When the system
//! allocator is out of memory while blocks are cached, the cache is given back and the
//! request retried once.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// Blocks smaller than this are not cached.
pub const MIN_BLOCK: usize = 1 << 20;

/// The default limit on the bytes the cache holds: 1 GiB.
pub const DEFAULT_LIMIT: usize = 1 << 30;

/// The environment variable that sets the limit, in MiB (0 turns the cache off).
pub const LIMIT_ENV: &str = "CTENSOR_HOST_CACHE_MB";

/// Counters of the host cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostCacheStats {
    /// Bytes held in cached blocks.
    pub cached_bytes: usize,
    /// Cached blocks.
    pub cached_blocks: usize,
    /// The limit on `cached_bytes`.
    pub limit: usize,
    /// Large requests served from the cache.
    pub hits: u64,
    /// Large requests that needed a fresh block.
    pub misses: u64,
    /// Freed large blocks returned to the system because the cache was full.
    pub released: u64,
}

#[derive(Debug, Default)]
struct Cache {
    /// Size class → addresses of cached blocks of that class.
    blocks: BTreeMap<usize, Vec<usize>>,
    stats: HostCacheStats,
}

fn cache() -> MutexGuard<'static, Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    CACHE
        .get_or_init(|| Mutex::new(Cache::default()))
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

/// The limit, read from the environment on first use.
fn limit_cell() -> &'static AtomicUsize {
    static LIMIT: OnceLock<AtomicUsize> = OnceLock::new();
    LIMIT.get_or_init(|| {
        let direct = std::env::var("CTENSOR_ALLOC").is_ok_and(|v| v.trim() == "direct");
        let limit = match std::env::var(LIMIT_ENV) {
            _ if direct => 0,
            Ok(v) => v
                .trim()
                .parse::<usize>()
                .map_or(DEFAULT_LIMIT, |mb| mb.saturating_mul(1 << 20)),
            Err(_) => DEFAULT_LIMIT,
        };
        AtomicUsize::new(limit)
    })
}

/// The size class of a large request of `bytes` bytes (at least [`MIN_BLOCK`]): a
/// multiple of 1/16 of the power of two at or above it; `None` on overflow.
pub fn class_of(bytes: usize) -> Option<usize> {
    let step = bytes.checked_next_power_of_two()? / 16;
    bytes.checked_next_multiple_of(step)
}

/// The bytes a host block of `bytes` bytes really has: its size class when it is large
/// enough to be cached, else `bytes`. Allocation and release both use this size.
pub(crate) fn block_size(bytes: usize) -> usize {
    if bytes >= MIN_BLOCK {
        class_of(bytes).unwrap_or(bytes)
    } else {
        bytes
    }
}

/// A cached block of `size` bytes (a size class), or `None`.
pub(crate) fn take(size: usize) -> Option<*mut u8> {
    if size < MIN_BLOCK {
        return None;
    }
    let mut c = cache();
    let hit = match c.blocks.entry(size) {
        std::collections::btree_map::Entry::Occupied(mut e) => {
            let p = e.get_mut().pop();
            if e.get().is_empty() {
                e.remove();
            }
            p
        }
        std::collections::btree_map::Entry::Vacant(_) => None,
    };
    match hit {
        Some(p) => {
            c.stats.hits += 1;
            c.stats.cached_bytes -= size;
            c.stats.cached_blocks -= 1;
            Some(p as *mut u8)
        }
        None => {
            c.stats.misses += 1;
            None
        }
    }
}

/// Offers a freed block of `size` bytes (a size class) to the cache: `true` when it was
/// kept, `false` when the caller must free it.
pub(crate) fn give(ptr: *mut u8, size: usize) -> bool {
    if size < MIN_BLOCK {
        return false;
    }
    let limit = limit_cell().load(Ordering::Relaxed);
    let mut c = cache();
    if c.stats.cached_bytes + size > limit {
        c.stats.released += 1;
        return false;
    }
    c.blocks.entry(size).or_default().push(ptr as usize);
    c.stats.cached_bytes += size;
    c.stats.cached_blocks += 1;
    true
}

/// The cache's counters.
pub fn stats() -> HostCacheStats {
    let mut s = cache().stats;
    s.limit = limit_cell().load(Ordering::Relaxed);
    s
}

/// Sets the limit on the bytes the cache holds (0 turns it off) and releases cached
/// blocks beyond it; returns the previous limit.
pub fn set_limit(bytes: usize) -> usize {
    let old = limit_cell().swap(bytes, Ordering::Relaxed);
    trim(bytes);
    old
}

/// Returns every cached block to the system.
pub fn empty() {
    trim(0);
}

/// Releases cached blocks, largest first, until at most `keep` bytes are cached.
fn trim(keep: usize) {
    let mut freed = Vec::new();
    {
        let mut c = cache();
        while c.stats.cached_bytes > keep {
            let Some(mut last) = c.blocks.last_entry() else {
                break;
            };
            let size = *last.key();
            let p = last
                .get_mut()
                .pop()
                .expect("classes in the map are not empty");
            if last.get().is_empty() {
                last.remove();
            }
            c.stats.cached_bytes -= size;
            c.stats.cached_blocks -= 1;
            freed.push((p, size));
        }
    }
    for (p, size) in freed {
        // SAFETY: a block the cache held: allocated by `cpu::alloc_host` with the size
        // `size` (freed by `cpu::release` with that size), given to the cache instead of
        // being freed, and removed from it above, so it is freed once.
        unsafe { super::cpu::release(p as *mut u8, size) };
    }
}
