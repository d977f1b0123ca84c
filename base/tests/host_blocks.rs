//! Host blocks straight from the global allocator (the host cache at a limit of 0, so
//! every block is allocated and freed there, padded and aligned inside): every size is
//! aligned to `CPU_ALIGN`, a zeroed block is zero even where the memory just held other
//! data (the allocator's reuse of freed chunks, which `calloc` must clear), and random
//! sequences of live blocks never overlap and keep their bytes until freed. One test in
//! its own binary: the host cache's limit is process-wide.
#![deny(unused_must_use)]

mod common;

use common::{all, fill, TestResult};
use ctensor_base::alloc::host_cache;
use ctensor_base::alloc::Allocation;
use ctensor_base::device::CPU_ALIGN;
use ctensor_base::DeviceType;
use rand::{Rng, SeedableRng};

#[test]
fn blocks_from_the_system_are_aligned_zeroed_and_kept_apart() -> TestResult {
    host_cache::set_limit(0);
    host_cache::empty();
    let sizes = [
        1usize,
        7,
        8,
        15,
        16,
        63,
        64,
        65,
        127,
        4095,
        4096,
        4097,
        100_001,
        (1 << 20) + 3,
        (4 << 20) - 1,
        40_000_000,
    ];
    for &bytes in &sizes {
        // Dirty memory of this size, then free it: the next blocks of the size are
        // likely the same chunk (a zeroed one must be cleared) or fresh pages.
        for round in 0..3 {
            let dirty = Allocation::uninit(DeviceType::Cpu, bytes)?;
            assert_eq!(dirty.as_ptr() as usize % CPU_ALIGN, 0, "{bytes} bytes");
            fill(&dirty, 0xCD);
            drop(dirty);
            let z = Allocation::zeroed(DeviceType::Cpu, bytes)?;
            assert_eq!(z.as_ptr() as usize % CPU_ALIGN, 0, "{bytes} bytes");
            assert!(all(&z, 0), "{bytes} bytes, round {round}: not zero");
            fill(&z, 0x5A);
        }
    }
    assert_eq!(host_cache::stats().cached_blocks, 0, "nothing was cached");

    // Random live sets: each block filled with its own byte, checked when freed, and no
    // two live blocks overlap.
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x0a11_0c8d);
    let mut live: Vec<(Allocation, u8)> = Vec::new();
    for step in 0..3000 {
        if live.len() > 40 || (!live.is_empty() && rng.gen_bool(0.45)) {
            let (a, byte) = live.swap_remove(rng.gen_range(0..live.len()));
            assert!(all(&a, byte), "step {step}: a live block changed");
            continue;
        }
        let bytes = match rng.gen_range(0..4) {
            0 => rng.gen_range(1..=256),
            1 => rng.gen_range(1..=70_000),
            2 => rng.gen_range(100_000..=600_000),
            _ => rng.gen_range(1..=3) << 20,
        };
        let zeroed = rng.gen_bool(0.5);
        let a = if zeroed {
            Allocation::zeroed(DeviceType::Cpu, bytes)?
        } else {
            Allocation::uninit(DeviceType::Cpu, bytes)?
        };
        assert_eq!(a.as_ptr() as usize % CPU_ALIGN, 0, "step {step}");
        if zeroed {
            assert!(all(&a, 0), "step {step}: a zeroed block of {bytes} bytes");
        }
        let (start, end) = (a.as_ptr() as usize, a.as_ptr() as usize + bytes);
        for (b, _) in &live {
            let (s, e) = (b.as_ptr() as usize, b.as_ptr() as usize + b.bytes());
            assert!(end <= s || e <= start, "step {step}: blocks overlap");
        }
        let byte = (step % 251) as u8 + 1;
        fill(&a, byte);
        live.push((a, byte));
    }
    for (a, byte) in live {
        assert!(all(&a, byte));
    }
    Ok(())
}
