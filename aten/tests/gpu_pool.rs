//! The caching allocator on the device, alone in its test binary so that no other test
//! allocates while the counters are read: a freed tensor's block is reused by the next of
//! the same size without reserving, the counters follow, reused memory is zeroed, and
//! `empty_cache` returns what no tensor uses. Without a GPU: one SKIP line.
#![deny(unused_must_use)]

mod common;

use ctensor_aten::{DataType, DeviceType, Tensor};

gpu_test!(the_caching_allocator_reuses_freed_blocks, -> Result {
    if std::env::var(ctensor_base::gpu::ALLOC_ENV).is_ok_and(|v| v.trim() == "direct") {
        println!("SKIP: CTENSOR_ALLOC=direct");
        return Ok(());
    }
    ctensor_aten::empty_cache()?;
    let before = ctensor_aten::memory_stats()?;
    let mut t = Tensor::zeros(DataType::Double, DeviceType::Gpu, &[1000, 1000])?;
    let with = ctensor_aten::memory_stats()?;
    // 8 000 000 bytes take a fresh 8 MiB segment whole (the 379 KiB rest is not split).
    assert_eq!(with.allocated - before.allocated, 8 << 20);
    assert_eq!(with.reserved - before.reserved, 8 << 20);
    assert_eq!(with.segments_reserved, before.segments_reserved + 1);
    t.fill(3.0)?;
    drop(t);
    let after = ctensor_aten::memory_stats()?;
    assert_eq!(after.allocated, before.allocated);
    assert_eq!(after.reserved, with.reserved, "freed memory stays cached");
    let u = Tensor::zeros(DataType::Double, DeviceType::Gpu, &[999, 1000])?;
    let again = ctensor_aten::memory_stats()?;
    assert_eq!(
        again.cache_hits,
        after.cache_hits + 1,
        "the cached block was reused"
    );
    assert_eq!(again.segments_reserved, after.segments_reserved);
    let v = u.to_vec::<f64>()?;
    assert!(v.iter().all(|&x| x == 0.0), "reused memory is zeroed again");
    drop(u);
    ctensor_aten::empty_cache()?;
    assert_eq!(
        ctensor_aten::memory_stats()?.reserved,
        before.reserved
    );
    Ok(())
});
