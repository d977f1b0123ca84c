//! Sharing memory never makes the safe API unsound: conflicting borrows through tensors
//! that share a buffer are errors.

use ctensor_aten::{DataType, DeviceType, Error, Order, Tensor, TensorMap};

fn conflict(e: Error) -> bool {
    matches!(e, Error::BorrowConflict { .. })
}

#[test]
fn writes_through_a_twin_fail_while_data_is_borrowed() {
    let mut a = Tensor::ones(DataType::Double, DeviceType::Cpu, &[8]).unwrap();
    let mut twin = a.share();
    let mut view = a.narrow(0, 2, 3).unwrap();
    {
        let data = a.data::<f64>().unwrap();
        assert!(conflict(twin.zero().unwrap_err()));
        assert!(conflict(view.set_value(2.0f64).unwrap_err()));
        assert!(conflict(twin.data_mut::<f64>().map(|_| ()).unwrap_err()));
        assert!(conflict(
            twin.accessor_mut::<f64, 1>().map(|_| ()).unwrap_err()
        ));
        // Reading alongside is fine.
        assert_eq!(twin.to_vec::<f64>().unwrap(), [1.0; 8]);
        assert_eq!(data[3], 1.0);
    }
    twin.zero().unwrap();
    {
        let mut w = a.data_mut::<f64>().unwrap();
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
    assert_eq!(twin.get_value::<f64>(&[0]).unwrap(), 5.0);
}

#[test]
fn sync_into_a_buffer_being_read_is_a_conflict() {
    let src = Tensor::ones(DataType::Float, DeviceType::Cpu, &[4]).unwrap();
    let mut dst = Tensor::zeros(DataType::Float, DeviceType::Cpu, &[4]).unwrap();
    let reader = dst.share();
    let guard = reader.data::<f32>().unwrap();
    assert!(conflict(dst.sync(&src).unwrap_err()));
    drop(guard);
    dst.sync(&src).unwrap();
    assert_eq!(reader.to_vec::<f32>().unwrap(), [1.0; 4]);
}

#[test]
fn maps_track_borrows_across_their_views() {
    let mut v = vec![0i64; 6];
    // SAFETY: `v` outlives the map and is only accessed through it.
    let map = unsafe { TensorMap::new(v.as_mut_ptr(), DeviceType::Cpu, &[2, 3], Order::RowMajor) }
        .unwrap();
    let mut row = map.index(1).unwrap();
    let acc = map.accessor::<i64, 2>().unwrap();
    assert!(conflict(row.set_value(3i64).unwrap_err()));
    drop(acc);
    row.set_value(3i64).unwrap();
    drop((map, row));
    assert_eq!(v, [0, 0, 0, 3, 3, 3]);
}
