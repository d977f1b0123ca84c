//! Unit tests of `pool`.

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
