//! Sharing memory never makes the safe API unsound: conflicting borrows through tensors
//! that share a buffer are errors.
#![deny(unused_must_use)]

use ctensor_aten::{DataType, DeviceType, Error, Order, Tensor, TensorMap};

/// What a test returns: a failing step names its error.
type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

fn conflict(e: Error) -> bool {
    matches!(e, Error::BorrowConflict { .. })
}

#[test]
fn writes_through_a_twin_fail_while_data_is_borrowed() -> TestResult {
    let mut a = Tensor::ones(DataType::Double, DeviceType::Cpu, &[8])?;
    let mut twin = a.share();
    let mut view = a.narrow(0, 2, 3)?;
    {
        let data = a.data::<f64>()?;
        assert!(conflict(twin.zero().unwrap_err()));
        assert!(conflict(view.set_value(2.0f64).unwrap_err()));
        assert!(conflict(twin.data_mut::<f64>().map(|_| ()).unwrap_err()));
        assert!(conflict(
            twin.accessor_mut::<f64, 1>().map(|_| ()).unwrap_err()
        ));
        // Reading alongside is fine.
        assert_eq!(twin.to_vec::<f64>()?, [1.0; 8]);
        assert_eq!(data[3], 1.0);
    }
    twin.zero()?;
    {
        let mut w = a.data_mut::<f64>()?;
        w[0] = 5.0;
        let e = twin.to_vec::<f64>().unwrap_err();
        assert!(
            matches!(
                e,
                Error::BorrowConflict {
                    op: "to_vec",
                    requested: "immutably",
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("mutably"));
        assert!(conflict(view.try_clone().unwrap_err()));
        assert!(conflict(twin.accessor::<f64, 1>().map(|_| ()).unwrap_err()));
        assert!(conflict(twin.get_value::<f64>(&[0]).unwrap_err()));
        assert!(conflict(twin.cast(DataType::Float).unwrap_err()));
        assert!(twin.to_string().contains("values unavailable"));
        assert!(
            twin != twin.share(),
            "an unreadable tensor compares unequal"
        );
    }
    assert_eq!(twin.get_value::<f64>(&[0])?, 5.0);
    Ok(())
}

#[test]
fn sync_into_a_buffer_being_read_is_a_conflict() -> TestResult {
    let src = Tensor::ones(DataType::Float, DeviceType::Cpu, &[4])?;
    let mut dst = Tensor::zeros(DataType::Float, DeviceType::Cpu, &[4])?;
    let reader = dst.share();
    let guard = reader.data::<f32>()?;
    assert!(conflict(dst.sync(&src).unwrap_err()));
    drop(guard);
    dst.sync(&src)?;
    assert_eq!(reader.to_vec::<f32>()?, [1.0; 4]);
    Ok(())
}

#[test]
fn maps_track_borrows_across_their_views() -> TestResult {
    let mut v = vec![0i64; 6];
    // SAFETY: `v` outlives the map and is only accessed through it.
    let map = unsafe { TensorMap::new(v.as_mut_ptr(), DeviceType::Cpu, &[2, 3], Order::RowMajor) }?;
    let mut row = map.index(1)?;
    let acc = map.accessor::<i64, 2>()?;
    assert!(conflict(row.set_value(3i64).unwrap_err()));
    drop(acc);
    row.set_value(3i64)?;
    drop((map, row));
    assert_eq!(v, [0, 0, 0, 3, 3, 3]);
    Ok(())
}

// ---- tensors over a caller's slice for a scope (`with_slice`, `with_slice_mut`) ----

#[test]
fn a_borrowed_slice_is_read_in_place_in_either_order() -> TestResult {
    let h: Vec<f64> = (0..12).map(|k| k as f64 * 0.5 - 2.0).collect();
    for order in [Order::RowMajor, Order::ColMajor] {
        // Element (i, j) in the row-major listing `to_vec` gives.
        let want: Vec<f64> = (0..12)
            .map(|k| {
                let (i, j) = (k / 4, k % 4);
                h[if order == Order::RowMajor {
                    i * 4 + j
                } else {
                    i + 3 * j
                }]
            })
            .collect();
        let got = Tensor::with_slice(&h, &[3, 4], order, |t| {
            // No copy: the tensor's first element is the slice's.
            assert_eq!(t.data_ptr() as *const f64, h.as_ptr());
            t.try_clone()
        })??;
        assert_eq!(got.to_vec::<f64>()?, want, "{order:?}");
    }
    // Results of operations are ordinary tensors and leave the scope.
    let x = [1.0f64, -1.0];
    let y = Tensor::with_slice(&h[..4], &[2, 2], Order::RowMajor, |a| {
        Tensor::with_slice(&x, &[2, 1], Order::RowMajor, |x| ctensor_aten::matmul(a, x))
    })???;
    assert_eq!(y.to_vec::<f64>()?, [h[0] - h[1], h[2] - h[3]]);
    Ok(())
}

#[test]
fn a_read_only_borrow_refuses_writes() -> TestResult {
    let v = vec![1.0f64; 6];
    let r = Tensor::with_slice(&v, &[2, 3], Order::RowMajor, |t| -> TestResult {
        let src = Tensor::zeros(DataType::Double, DeviceType::Cpu, &[3])?;
        let e = t.narrow(0, 1, 1)?.assign(&src).unwrap_err();
        assert!(conflict(e.clone()), "{e}");
        let mut twin = t.share();
        assert!(conflict(twin.data_mut::<f64>().map(|_| ()).unwrap_err()));
        Ok(())
    });
    r??;
    assert_eq!(v, [1.0; 6], "the shared slice was written");
    Ok(())
}

#[test]
fn writes_through_a_mutable_borrow_land_in_the_slice() -> TestResult {
    let mut psi = vec![0.0f64; 6];
    Tensor::with_slice_mut(&mut psi, &[2, 3], Order::ColMajor, |t| -> TestResult {
        t.narrow(1, 1, 1)?
            .assign(&Tensor::from_slice(&[7.0f64, 8.0], &[2, 1])?)?;
        let twice = t.mul_scalar(2.0)?;
        t.narrow(1, 2, 1)?.assign(&twice.narrow(1, 1, 1)?)?;
        Ok(())
    })??;
    assert_eq!(psi, [0.0, 0.0, 7.0, 8.0, 14.0, 16.0]);
    Ok(())
}

#[test]
fn tensors_that_escape_the_scope_lose_access() -> TestResult {
    let mut v = vec![3.0f64; 4];
    let escaped = Tensor::with_slice(&v, &[4], Order::RowMajor, |t| {
        t.narrow(0, 1, 2).map(|part| (t.share(), part))
    })??;
    let (whole, part) = escaped;
    for t in [&whole, &part] {
        assert!(conflict(t.to_vec::<f64>().unwrap_err()));
        assert!(conflict(t.try_clone().unwrap_err()));
        assert!(conflict(t.sum_all().unwrap_err()));
    }
    let e = whole.to_vec::<f64>().unwrap_err().to_string();
    assert!(e.contains("with_slice") && e.contains("try_clone"), "{e}");
    assert_eq!(whole.dims(), [4], "the shape survives");
    // The tensor itself, moved out of a mutable scope: no write reaches the slice.
    let mut stolen = Tensor::zeros(DataType::Double, DeviceType::Cpu, &[1])?;
    Tensor::with_slice_mut(&mut v, &[4], Order::RowMajor, |t| {
        std::mem::swap(t, &mut stolen)
    })?;
    assert_eq!(stolen.dims(), [4]);
    let ones = Tensor::ones(DataType::Double, DeviceType::Cpu, &[4])?;
    assert!(conflict(stolen.assign(&ones).unwrap_err()));
    assert!(conflict(stolen.sync(&ones).unwrap_err()));
    v[0] = 5.0; // the caller has its slice back
    assert_eq!(v, [5.0, 3.0, 3.0, 3.0]);
    Ok(())
}

#[test]
fn the_scope_waits_for_an_escaped_reader_on_another_thread() -> TestResult {
    use std::sync::{mpsc, Barrier};
    let v: Vec<f64> = (0..1000).map(f64::from).collect();
    let started = Barrier::new(2);
    let (tx, rx) = mpsc::channel::<Tensor>();
    std::thread::scope(|s| {
        let started = &started;
        let reader = s.spawn(move || {
            let t = rx.recv().unwrap();
            let data = t.data::<f64>().unwrap();
            started.wait();
            // Hold the borrow a while: the scope's end must wait for it.
            std::thread::sleep(std::time::Duration::from_millis(200));
            let sum: f64 = data.iter().sum();
            drop(data);
            (sum, t)
        });
        let begun = std::time::Instant::now();
        Tensor::with_slice(&v, &[1000], Order::RowMajor, |t| {
            tx.send(t.share()).unwrap();
            started.wait();
        })
        .unwrap();
        assert!(
            begun.elapsed() >= std::time::Duration::from_millis(150),
            "did not wait"
        );
        let (sum, t) = reader.join().unwrap();
        assert_eq!(sum, 999.0 * 1000.0 / 2.0);
        assert!(conflict(t.to_vec::<f64>().unwrap_err()));
    });
    Ok(())
}

#[test]
fn a_panic_in_the_scope_still_revokes() -> TestResult {
    let v = vec![1i32, 2, 3];
    let escaped = std::sync::Mutex::new(None);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = Tensor::with_slice(&v, &[3], Order::RowMajor, |t| {
            *escaped.lock().unwrap() = Some(t.share());
            panic!("inside the scope");
        });
    }));
    assert!(r.is_err());
    let t = escaped.lock().unwrap().take().unwrap();
    assert!(conflict(t.to_vec::<i32>().unwrap_err()));
    Ok(())
}

#[test]
fn borrowed_shapes_must_match_the_slice() -> TestResult {
    let v = vec![0.0f32; 6];
    let e = Tensor::with_slice(&v, &[4, 2], Order::RowMajor, |_| ()).unwrap_err();
    assert!(
        matches!(
            e,
            Error::ShapeMismatch {
                op: "with_slice",
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("6 elements"), "{e}");
    // A product that overflows usize is an error, not a wrap-around.
    let e = Tensor::with_slice(&v, &[1 << 40, 1 << 40], Order::RowMajor, |_| ()).unwrap_err();
    assert!(e.to_string().contains("more than usize::MAX"), "{e}");
    // Empty slices with a huge other dimension work.
    let empty: Vec<f32> = Vec::new();
    let dims = Tensor::with_slice(&empty, &[0, 1 << 40], Order::ColMajor, |t| {
        t.dims().to_vec()
    })?;
    assert_eq!(dims, [0, 1 << 40]);
    let mut empty_mut: Vec<f32> = Vec::new();
    let n = Tensor::with_slice_mut(&mut empty_mut, &[1 << 40, 0], Order::RowMajor, |t| {
        t.sum_all()?.item::<f32>()
    })??;
    assert_eq!(n, 0.0);
    Ok(())
}
