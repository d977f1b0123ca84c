//! The cache of large freed host blocks: size classes, reuse, zeroing of reused blocks,
//! the limit, and random sequences checked against a model (no two live blocks overlap,
//! no block's bytes change while it is live, the cache stays within its limit). One test
//! in its own binary: the cache is process-wide, so no other test may allocate while its
//! counters are read.
#![deny(unused_must_use)]

mod common;

use common::{all, fill, TestResult};
use ctensor_base::alloc::host_cache::{self, class_of, MIN_BLOCK};
use ctensor_base::alloc::Allocation;
use ctensor_base::DeviceType;
use rand::{Rng, SeedableRng};

#[test]
fn large_host_blocks_are_cached_by_size_class_within_the_limit() -> TestResult {
    if std::env::var("CTENSOR_ALLOC").is_ok_and(|v| v.trim() == "direct") {
        println!("SKIP: CTENSOR_ALLOC=direct turns the host cache off");
        return Ok(());
    }
    // Size classes: at least the request, at most 1/16 of its power of two above it.
    for bytes in [MIN_BLOCK, MIN_BLOCK + 1, 3 << 20, 80_000_000, (1 << 30) + 7] {
        let c = class_of(bytes).unwrap();
        let step = bytes.next_power_of_two() / 16;
        assert!(
            c >= bytes && c - bytes < step && c.is_multiple_of(step),
            "{bytes} -> {c}"
        );
    }
    assert_eq!(class_of(usize::MAX), None);

    host_cache::set_limit(64 << 20);
    host_cache::empty();
    let s0 = host_cache::stats();
    assert_eq!(
        (s0.cached_bytes, s0.cached_blocks, s0.limit),
        (0, 0, 64 << 20)
    );

    // A freed block is reused by the next request of its class, which may be a
    // different size; a zeroed request gets zeros even though the block held data.
    let a = Allocation::uninit(DeviceType::Cpu, 5_000_000)?;
    let addr = a.as_ptr();
    fill(&a, 0xAB);
    drop(a);
    assert_eq!(host_cache::stats().cached_blocks, 1);
    let b = Allocation::zeroed(DeviceType::Cpu, 4_999_000)?;
    assert_eq!(b.as_ptr(), addr, "same class, same block");
    assert!(all(&b, 0), "a reused block is zeroed for a zeroed request");
    let s1 = host_cache::stats();
    assert_eq!(s1.hits, s0.hits + 1);
    assert_eq!(s1.cached_blocks, 0);
    // Another class does not take it; small blocks are never cached.
    drop(b);
    let c = Allocation::uninit(DeviceType::Cpu, 9_000_000)?;
    assert_ne!(c.as_ptr(), addr);
    let small = Allocation::uninit(DeviceType::Cpu, MIN_BLOCK - 1)?;
    drop(small);
    assert_eq!(
        host_cache::stats().cached_blocks,
        1,
        "the small block went back"
    );
    drop(c);
    assert_eq!(host_cache::stats().cached_blocks, 2);

    // The limit: blocks beyond it go back to the system; lowering it trims the cache.
    let big: Vec<Allocation> = (0..5)
        .map(|_| Allocation::uninit(DeviceType::Cpu, 20 << 20).unwrap())
        .collect();
    drop(big);
    let s2 = host_cache::stats();
    assert!(s2.cached_bytes <= 64 << 20, "{s2:?}");
    assert!(s2.released >= 2, "{s2:?}");
    host_cache::set_limit(8 << 20);
    assert!(host_cache::stats().cached_bytes <= 8 << 20);
    host_cache::set_limit(0);
    assert_eq!(host_cache::stats().cached_bytes, 0);
    let d = Allocation::uninit(DeviceType::Cpu, 5_000_000)?;
    drop(d);
    assert_eq!(
        host_cache::stats().cached_blocks,
        0,
        "a zero limit caches nothing"
    );

    // Out of memory while blocks are cached: the cache is given back before the error.
    host_cache::set_limit(64 << 20);
    drop(Allocation::uninit(DeviceType::Cpu, 5_000_000)?);
    assert_eq!(host_cache::stats().cached_blocks, 1);
    assert!(Allocation::uninit(DeviceType::Cpu, 1 << 62).is_err());
    assert_eq!(host_cache::stats().cached_bytes, 0, "emptied to retry");

    // Random sequences against a model: live blocks never overlap and keep their
    // bytes; the cache never holds more than its limit.
    host_cache::set_limit(48 << 20);
    let mut rng = rand::rngs::StdRng::seed_from_u64(17);
    let mut live: Vec<(Allocation, u8)> = Vec::new();
    for step in 0..400 {
        if live.is_empty() || rng.gen_bool(0.55) {
            let bytes = match rng.gen_range(0..4) {
                0 => rng.gen_range(1..MIN_BLOCK),
                _ => rng.gen_range(MIN_BLOCK..(12 << 20)),
            };
            let a = if rng.gen_bool(0.5) {
                let a = Allocation::zeroed(DeviceType::Cpu, bytes)?;
                assert!(all(&a, 0), "step {step}: a zeroed block of {bytes} bytes");
                a
            } else {
                Allocation::uninit(DeviceType::Cpu, bytes)?
            };
            let tag = (step % 251) as u8 + 1;
            fill(&a, tag);
            let (lo, hi) = (a.as_ptr() as usize, a.as_ptr() as usize + bytes);
            for (b, _) in &live {
                let (blo, bhi) = (b.as_ptr() as usize, b.as_ptr() as usize + b.bytes());
                assert!(hi <= blo || bhi <= lo, "step {step}: live blocks overlap");
            }
            live.push((a, tag));
        } else {
            let (a, tag) = live.swap_remove(rng.gen_range(0..live.len()));
            assert!(all(&a, tag), "step {step}: a live block's bytes changed");
        }
        assert!(host_cache::stats().cached_bytes <= 48 << 20);
    }
    for (a, tag) in &live {
        assert!(all(a, *tag));
    }
    drop(live);
    let s = host_cache::stats();
    assert!(s.hits > s1.hits, "the random sequence reused blocks: {s:?}");
    host_cache::empty();
    assert_eq!(host_cache::stats().cached_bytes, 0);
    Ok(())
}
