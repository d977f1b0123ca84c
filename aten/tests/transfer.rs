//! Asynchronous copies and the fences that guard them.
//!
//! The borrow rules are device-independent: they are tested on any machine with fences
//! the test completes itself, recorded through `Tensor::record_fence` exactly as the
//! asynchronous copies record their events. The copies themselves (pinned memory,
//! streams, every direction, every dtype, sizes past the staging chunk) need a GPU and
//! print one SKIP line each without one.
#![deny(unused_must_use)]

#[macro_use]
mod common;

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use common::{random_tensor, rng, TestResult};
use ctensor_aten::{DataType, DeviceType, Error, Fence, Order, Result, Scalar, Stream, Tensor};

/// What a helper that can fail returns.
type Fallible<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// A fence the test completes, counting the waits.
#[derive(Debug, Default)]
struct Fake {
    done: AtomicBool,
    waits: AtomicU32,
}

impl Fence for Fake {
    fn is_complete(&self) -> Result<bool> {
        Ok(self.done.load(SeqCst))
    }
    fn wait(&self) -> Result<()> {
        self.waits.fetch_add(1, SeqCst);
        self.done.store(true, SeqCst);
        Ok(())
    }
    fn order_default_stream(&self) -> Result<()> {
        Ok(())
    }
    fn describe(&self) -> String {
        "a pretend copy".into()
    }
}

fn fence() -> Arc<Fake> {
    Arc::new(Fake::default())
}

fn is_conflict<T>(r: &Result<T>) -> bool {
    match r {
        Err(Error::BorrowConflict { held, .. }) => {
            assert!(held.contains("a pretend copy"), "{held}");
            true
        }
        _ => false,
    }
}

#[test]
fn unfinished_work_that_writes_host_memory_refuses_every_host_access() -> TestResult {
    let mut t = Tensor::from_slice(&[1.0f64, 2.0, 3.0, 4.0], &[2, 2])?;
    let f = fence();
    t.record_fence(f.clone(), true)?;
    // Every way in: element access, reductions, element-wise ops, copies, views and
    // shallow copies that share the memory.
    assert!(is_conflict(&t.data::<f64>()));
    assert!(is_conflict(&t.to_vec::<f64>()));
    assert!(is_conflict(&t.get_value::<f64>(&[0, 1])));
    assert!(is_conflict(&(&t + &t)));
    assert!(is_conflict(&t.try_clone()));
    assert!(is_conflict(&t.t()?.contiguous()));
    assert!(is_conflict(&t.narrow(0, 1, 1)?.to_vec::<f64>()));
    let shared = t.share();
    assert!(is_conflict(&shared.sum(&[0])));
    assert!(is_conflict(&t.data_mut::<f64>()));
    assert!(is_conflict(&t.fill(0.0)));
    let mut dst = Tensor::zeros(DataType::Double, DeviceType::Cpu, &[2, 2])?;
    assert!(is_conflict(&dst.sync(&t)));
    assert!(is_conflict(&t.sync(&dst)));
    // Memory that is not shared is not affected.
    assert_eq!(dst.to_vec::<f64>()?, vec![0.0; 4]);
    // Once the work is done, everything works and the values are the ones written.
    f.done.store(true, SeqCst);
    assert_eq!(shared.to_vec::<f64>()?, vec![1.0, 2.0, 3.0, 4.0]);
    t.fill(5.0)?;
    assert_eq!(t.to_vec::<f64>()?, vec![5.0; 4]);
    assert_eq!(Arc::strong_count(&f), 1, "a finished fence is let go of");
    assert_eq!(f.waits.load(SeqCst), 0, "no borrow blocked");
    Ok(())
}

#[test]
fn unfinished_work_that_reads_host_memory_allows_reads_and_refuses_writes() -> TestResult {
    let mut t = Tensor::from_slice(&[1i32, 2, 3], &[3])?;
    let f = fence();
    t.record_fence(f.clone(), false)?;
    assert_eq!(t.to_vec::<i32>()?, vec![1, 2, 3]);
    assert_eq!(t.data::<i32>()?[2], 3);
    let doubled = &t + &t;
    assert_eq!(doubled?.to_vec::<i32>()?, vec![2, 4, 6]);
    assert!(is_conflict(&t.data_mut::<i32>()));
    assert!(is_conflict(&t.set_value(7i32)));
    assert!(is_conflict(&t.share().add_(&doubled_again()?)));
    // A second reader in flight: reads still work, and work that writes cannot start.
    let g = fence();
    t.record_fence(g.clone(), false)?;
    assert!(t.data::<i32>().is_ok());
    assert!(is_conflict(&t.record_fence(fence(), true)));
    f.done.store(true, SeqCst);
    assert!(
        is_conflict(&t.data_mut::<i32>()),
        "the second reader is still in flight"
    );
    g.done.store(true, SeqCst);
    t.data_mut::<i32>()?[0] = 9;
    assert_eq!(t.to_vec::<i32>()?, vec![9, 2, 3]);
    Ok(())
}

fn doubled_again() -> Fallible<Tensor> {
    Ok(Tensor::from_slice(&[1i32, 1, 1], &[3])?)
}

#[test]
fn synchronize_waits_for_every_fence_and_clears_them() -> TestResult {
    let mut t = Tensor::zeros(DataType::ComplexFloat, DeviceType::Cpu, &[5])?;
    let (a, b) = (fence(), fence());
    t.record_fence(a.clone(), true)?;
    t.record_fence(b.clone(), false).unwrap_err(); // a writer in flight refuses a reader
    t.narrow(0, 0, 2)?.synchronize()?; // through a view of the buffer
    assert_eq!(a.waits.load(SeqCst), 1);
    t.record_fence(b.clone(), false)?;
    t.synchronize()?;
    assert_eq!(b.waits.load(SeqCst), 1);
    assert_eq!(Arc::strong_count(&a) + Arc::strong_count(&b), 2);
    t.fill(1.0)?;
    // Nothing in flight: synchronize is free and waits for nothing.
    t.synchronize()?;
    Ok(())
}

#[test]
fn recording_a_fence_respects_the_borrows_held() -> TestResult {
    let t = Tensor::zeros(DataType::Float, DeviceType::Cpu, &[4])?;
    let r = t.data::<f32>()?;
    // Work that writes cannot start while the host reads; work that reads can.
    assert!(matches!(
        t.record_fence(fence(), true),
        Err(Error::BorrowConflict { .. })
    ));
    t.record_fence(fence(), false)?;
    drop(r);
    Ok(())
}

#[test]
fn memory_in_use_by_unfinished_work_is_freed_only_after_it() -> TestResult {
    let f = fence();
    let t = Tensor::ones(DataType::Double, DeviceType::Cpu, &[1000])?;
    let view = t.narrow(0, 10, 5)?;
    t.record_fence(f.clone(), true)?;
    drop(t);
    assert_eq!(f.waits.load(SeqCst), 0, "a view still holds the memory");
    drop(view);
    assert_eq!(
        f.waits.load(SeqCst),
        1,
        "the last owner waited before freeing"
    );
    // Finished work is not waited for.
    let g = fence();
    let u = Tensor::ones(DataType::Double, DeviceType::Cpu, &[3])?;
    u.record_fence(g.clone(), false)?;
    g.done.store(true, SeqCst);
    drop(u);
    assert_eq!(g.waits.load(SeqCst), 0);
    Ok(())
}

#[test]
fn a_map_over_foreign_memory_waits_for_its_fences_before_it_lets_go() -> TestResult {
    let owner = Arc::new(std::sync::Mutex::new(vec![0.0f64; 16]));
    let ptr = owner.lock().unwrap().as_mut_ptr();
    let keep: Arc<dyn std::any::Any + Send + Sync> = owner.clone();
    // SAFETY: 16 f64 owned by `owner`, kept alive by the map.
    let map = unsafe {
        ctensor_aten::TensorMap::from_raw(
            ptr.cast(),
            DataType::Double,
            DeviceType::Cpu,
            &[16],
            &[1],
            Some(keep),
        )
    }?;
    let f = fence();
    map.record_fence(f.clone(), true)?;
    assert!(is_conflict(&map.to_vec::<f64>()));
    drop(map);
    assert_eq!(
        f.waits.load(SeqCst),
        1,
        "the owner gets its memory back only after the work"
    );
    assert_eq!(
        Arc::strong_count(&owner),
        1,
        "and the keep-alive handle is released"
    );
    Ok(())
}

/// A fence whose work faulted: every query reports the fault.
#[derive(Debug)]
struct Faulted;

impl Fence for Faulted {
    fn is_complete(&self) -> Result<bool> {
        Err(Error::Cuda {
            library: "test",
            call: "query".into(),
            detail: "an illegal address".into(),
        })
    }
    fn wait(&self) -> Result<()> {
        self.is_complete().map(drop)
    }
    fn order_default_stream(&self) -> Result<()> {
        self.is_complete().map(drop)
    }
    fn describe(&self) -> String {
        "a faulted copy".into()
    }
}

#[test]
fn a_fault_of_the_work_in_flight_is_an_error_not_a_panic_or_a_hang() -> TestResult {
    let t = Tensor::from_slice(&[1.0f64, 2.0, 3.0], &[3])?;
    t.record_fence(Arc::new(Faulted), true)?;
    for r in [
        t.to_vec::<f64>().map(drop),
        t.synchronize(),
        t.sum(&[0]).map(drop),
    ] {
        match r {
            Err(Error::Cuda { detail, .. }) => assert!(detail.contains("illegal"), "{detail}"),
            other => panic!("expected the fault, got {other:?}"),
        }
    }
    // Dropped with the faulted work still recorded: nothing left to wait for.
    drop(t);
    Ok(())
}

#[test]
fn a_dlpack_export_waits_for_the_work_in_flight() -> TestResult {
    let t = Tensor::from_slice(&[1.0f32, 2.0], &[2])?;
    let f = fence();
    t.record_fence(f.clone(), true)?;
    let m = t.to_dlpack()?;
    assert_eq!(
        f.waits.load(SeqCst),
        1,
        "the consumer cannot see the borrow rules"
    );
    // SAFETY: `m` is the export above; its deleter is called once.
    unsafe { ((*m).deleter.unwrap())(m) };
    let g = fence();
    t.record_fence(g.clone(), true)?;
    let l = t.to_dlpack_legacy()?;
    assert_eq!(g.waits.load(SeqCst), 1);
    // SAFETY: as above.
    unsafe { ((*l).deleter.unwrap())(l) };
    Ok(())
}

#[test]
fn another_thread_sees_the_memory_once_the_work_completes() -> TestResult {
    let t = Tensor::from_slice(&[3.0f32; 64], &[64])?;
    let f = fence();
    t.record_fence(f.clone(), true)?;
    let reader = t.share();
    let h = std::thread::spawn(move || {
        let mut refused = 0u32;
        loop {
            match reader.to_vec::<f32>() {
                Ok(v) => return (v, refused),
                Err(Error::BorrowConflict { .. }) => {
                    refused += 1;
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(e) => panic!("{e}"),
            }
        }
    });
    std::thread::sleep(Duration::from_millis(30));
    f.done.store(true, SeqCst);
    let (v, refused) = h.join().unwrap();
    assert_eq!(v, vec![3.0f32; 64]);
    assert!(refused > 0, "the reader was refused while the work ran");
    Ok(())
}

#[test]
fn async_copies_without_a_gpu_say_why() -> TestResult {
    if ctensor_aten::gpu_available() {
        return Ok(()); // the device tests below cover this machine
    }
    common::skip_gpu("async copies", "no GPU: checking the errors instead");
    for r in [
        Tensor::pinned(DataType::Double, &[4], Order::RowMajor).map(drop),
        Stream::new().map(drop),
        Stream::default_stream().map(drop),
        ctensor_aten::pinned_memory_stats().map(drop),
    ] {
        match r {
            Err(Error::DeviceUnavailable { device, reason }) => {
                assert_eq!(device, DeviceType::Gpu);
                assert!(!reason.is_empty());
            }
            other => panic!("expected DeviceUnavailable, got {other:?}"),
        }
    }
    let t = Tensor::zeros(DataType::Double, DeviceType::Cpu, &[2])?;
    assert!(!t.is_pinned());
    Ok(())
}

// ---- on a GPU ---------------------------------------------------------------------

/// Sizes: empty, one, odd, and more than one staging chunk (4 MiB) of f64.
const SIZES: [usize; 5] = [0, 1, 257, 1000, 600_001];

fn round_trip<T: Scalar>() -> TestResult {
    let mut g = rng(41);
    let stream = Stream::new()?;
    for &n in &SIZES {
        for order in [Order::RowMajor, Order::ColMajor] {
            let shape = [
                n.div_ceil(7).max(usize::from(n > 0)),
                if n == 0 { 0 } else { 7 },
            ];
            let (t, _) = random_tensor::<T>(&mut g, &shape);
            let pageable = t.to_device(DeviceType::Cpu)?; // a fresh copy
            let pageable = if order == Order::ColMajor {
                common::column_major(&pageable)
            } else {
                pageable
            };
            let want = pageable.to_vec::<T>()?;
            let mut pinned = Tensor::pinned(T::DTYPE, &shape, order)?;
            assert!(pinned.is_pinned());
            pinned.sync(&pageable)?;
            // Pinned and pageable sources, to the GPU and back into pinned memory.
            for src in [&pinned, &pageable] {
                let dev = src.to_device_async(DeviceType::Gpu, &stream)?;
                assert_eq!(dev.dense_order(), src.dense_order(), "n {n}");
                let back = dev.to_device_async(DeviceType::Cpu, &stream)?;
                assert!(back.is_pinned());
                stream.synchronize()?;
                assert_eq!(back.to_vec::<T>()?, want, "{} n {n}", T::DTYPE);
                // GPU to GPU on the stream, then an ordinary copy on the default
                // stream: it must see the data (the default stream waits).
                let dev2 = dev.to_device_async(DeviceType::Gpu, &stream)?;
                assert_eq!(dev2.to_vec::<T>()?, want);
            }
            // Into an existing pageable host tensor: staged, done on return.
            let dev = pageable.to_device(DeviceType::Gpu)?;
            let mut host = Tensor::new_in_order(T::DTYPE, DeviceType::Cpu, &shape, order)?;
            host.sync_async(&dev, &stream)?;
            assert_eq!(host.to_vec::<T>()?, want);
        }
    }
    Ok(())
}

gpu_test!(async_copies_round_trip_every_dtype_size_and_order, -> Result {
    for_all_dtypes!(round_trip);
    Ok(())
});

gpu_test!(a_pinned_destination_is_locked_until_its_copy_completes, -> Result {
    let stream = Stream::new()?;
    // 256 MiB take milliseconds to move; the host looks at once.
    let n = 32 << 20;
    let src = Tensor::full(1.5f64, DeviceType::Gpu, &[n])?;
    let mut dst = Tensor::pinned(DataType::Double, &[n], Order::RowMajor)?;
    dst.sync_async(&src, &stream)?;
    match dst.data::<f64>() {
        Err(Error::BorrowConflict { held, .. }) => assert!(held.contains("stream"), "{held}"),
        Err(e) => panic!("expected a conflict while the copy runs, got {e}"),
        Ok(_) => panic!("the destination was readable while its copy ran"),
    }
    dst.synchronize()?;
    assert!(dst.data::<f64>()?.iter().all(|&x| x == 1.5));
    // A pinned source can be read, not written, while it is copied.
    let dev = dst.to_device_async(DeviceType::Gpu, &stream)?;
    assert_eq!(dst.get_value::<f64>(&[7])?, 1.5);
    assert!(matches!(
        dst.data_mut::<f64>(),
        Err(Error::BorrowConflict { .. })
    ));
    stream.synchronize()?;
    dst.fill(0.0)?;
    assert_eq!(dev.get_value::<f64>(&[n - 1])?, 1.5);
    Ok(())
});

gpu_test!(dropping_tensors_with_copies_in_flight_is_safe, -> Result {
    let stream = Stream::new()?;
    for _ in 0..20 {
        let host = Tensor::pinned(DataType::Float, &[1 << 20], Order::RowMajor)?;
        let dev = host.to_device_async(DeviceType::Gpu, &stream)?;
        drop(host); // its pinned block is reused only after the copy
        let back = dev.to_device_async(DeviceType::Cpu, &stream)?;
        drop(dev); // ordered after the copy on the device
        stream.synchronize()?;
        assert!(back.data::<f32>()?.iter().all(|&x| x == 0.0));
    }
    let s = ctensor_aten::pinned_memory_stats()?;
    assert!(s.cache_hits > 0, "pinned blocks were reused: {s:?}");
    Ok(())
});

gpu_test!(async_copies_reject_what_they_cannot_do, -> Result {
    let stream = Stream::new()?;
    let host = Tensor::zeros(DataType::Double, DeviceType::Cpu, &[3, 4])?;
    let mut dev = Tensor::zeros(DataType::Double, DeviceType::Gpu, &[3, 4])?;
    let col =
        Tensor::new_in_order(DataType::Double, DeviceType::Cpu, &[3, 4], Order::ColMajor)?;
    assert!(matches!(
        dev.sync_async(&col, &stream),
        Err(Error::InvalidArgument { .. })
    ));
    let f32s = Tensor::zeros(DataType::Float, DeviceType::Cpu, &[3, 4])?;
    assert!(matches!(
        dev.sync_async(&f32s, &stream),
        Err(Error::DTypeMismatch { .. })
    ));
    let other = Tensor::zeros(DataType::Double, DeviceType::Cpu, &[4, 3])?;
    assert!(matches!(
        dev.sync_async(&other, &stream),
        Err(Error::ShapeMismatch { .. })
    ));
    assert!(matches!(
        host.t()
            ?
            .narrow(0, 0, 2)
            ?
            .to_device_async(DeviceType::Gpu, &stream),
        Err(Error::NotContiguous { .. })
    ));
    let whole = dev.share();
    assert!(matches!(
        dev.sync_async(&whole, &stream),
        Err(Error::InvalidArgument { .. })
    ));
    dev.sync_async(&host, &stream)?;
    Ok(())
});

gpu_test!(async_copies_of_empty_tensors_and_into_views_touch_nothing_else, -> Result {
        let stream = Stream::new()?;
        // Zero elements with a 2^40 dimension: nothing moves, nothing is allocated.
        for dims in [[0usize, 1 << 40], [1 << 40, 0]] {
            let host = Tensor::pinned(DataType::ComplexDouble, &dims, Order::RowMajor)?;
            let dev = host.to_device_async(DeviceType::Gpu, &stream)?;
            let back = dev.to_device_async(DeviceType::Cpu, &stream)?;
            stream.synchronize()?;
            assert_eq!((dev.dims(), back.dims()), (&dims[..], &dims[..]));
        }
        // Into rows 1..3 of a NaN-filled [4, 7] GPU tensor (a dense view at an offset): the
        // other rows keep their NaN.
        let mut pin = Tensor::pinned(DataType::Double, &[2, 7], Order::RowMajor)?;
        pin.fill(2.5)?;
        let dev = Tensor::full(f64::NAN, DeviceType::Gpu, &[4, 7])?;
        let mut rows = dev.narrow(0, 1, 2)?;
        rows.sync_async(&pin, &stream)?;
        let all = dev.to_vec::<f64>()?;
        for (i, x) in all.iter().enumerate() {
            if (7..21).contains(&i) {
                assert_eq!(*x, 2.5, "element {i}");
            } else {
                assert!(x.is_nan(), "element {i} outside the view was written");
            }
        }
        // And from a view at an offset into pinned memory inside NaN padding.
        let mut out = Tensor::pinned(DataType::Double, &[4, 7], Order::RowMajor)?;
        out.fill(f64::NAN)?;
        let mut mid = out.narrow(0, 2, 1)?;
        mid.sync_async(&dev.narrow(0, 1, 1)?, &stream)
            ?;
        out.synchronize()?;
        let v = out.to_vec::<f64>()?;
        assert!(v[14..21].iter().all(|&x| x == 2.5));
        assert!(v[..14].iter().chain(&v[21..]).all(|x| x.is_nan()));
        Ok(())
    }
);

gpu_test!(an_offload_set_keeps_its_budget_and_every_value, -> Result {
    use ctensor_aten::{MirroredTensor, OffloadSet};
    let (n, k) = (4096usize, 5usize); // five k-points of 64 KiB, room for two
    let bytes = n * 16;
    let stream = Stream::new()?;
    let mut psi = OffloadSet::new(DeviceType::Gpu, 2 * bytes);
    let mut want: Vec<f64> = Vec::new();
    for i in 0..k {
        psi.push(MirroredTensor::new(DataType::ComplexDouble, &[n])?)
            ?;
        psi.write_only(i, DeviceType::Cpu)
            ?
            .fill(i as f64)
            ?;
        want.push(i as f64);
    }
    // Two sweeps over the k-points, each solved on the GPU (here: scaled by 2) while
    // the next one is prefetched on a stream of its own.
    for sweep in 0..2 {
        for (i, w) in want.iter_mut().enumerate() {
            psi.write(i, DeviceType::Gpu)?.scale_(2.0)?;
            *w *= 2.0;
            assert!(psi.resident_bytes() <= 2 * bytes, "sweep {sweep} k {i}");
            if i + 1 < k {
                psi.prefetch(i + 1, DeviceType::Gpu, &stream)?;
            }
        }
    }
    assert!(
        psi.evictions() >= 8,
        "five k-points through room for two: {}",
        psi.evictions()
    );
    for (i, w) in want.iter().enumerate() {
        let v = psi
            .read(i, DeviceType::Cpu)
            ?
            .to_vec::<ctensor_aten::c64>()
            ?;
        assert!(
            v.iter().all(|z| z.re == *w && z.im == 0.0),
            "k {i}: {:?}",
            v[0]
        );
    }
    Ok(())
});
