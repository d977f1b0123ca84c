//! Shallow versus deep copies, sync (plain and padded), allocate_from, resize; on the D::TYPE
//! and, through `device_test!`, on the GPU (one `SKIP` line per test without one).

mod common;

use common::{fortran_map, on, random_on, rng};
use ctensor_aten::{c32, DataType, Device, Error, Order, Tensor};

device_test!(copy_from_twin_shares_writes_and_clone_does_not, D => {
    let (a, v) = random_on::<D, f64>(&mut rng(21), &[3, 4]);
    let mut twin = Tensor::zeros(DataType::Int, D::TYPE, &[1]).unwrap();
    twin.copy_from(&a);
    assert!(twin.shares_memory_with(&a));
    let deep = a.clone();
    let deep2 = a.try_clone().unwrap();
    twin.set_at(&[1, 2], 99.0f64).unwrap();
    assert_eq!(
        a.get_value::<f64>(&[1, 2]).unwrap(),
        99.0,
        "the write is visible in the original"
    );
    assert_eq!(
        deep.get_value::<f64>(&[1, 2]).unwrap(),
        v[6],
        "the clone is independent"
    );
    assert_eq!(deep2.to_vec::<f64>().unwrap(), v);
    let mut r = Tensor::zeros(DataType::Int, D::TYPE, &[1]).unwrap();
    r.copy_from_reshaped(&a, &[-1]).unwrap();
    assert_eq!(r.dims(), [12]);
    assert_eq!(r.get_value::<f64>(&[6]).unwrap(), 99.0);
    assert!(matches!(
        r.copy_from_reshaped(&a, &[5]),
        Err(Error::ShapeMismatch { .. })
    ));
    let e = r.copy_from_reshaped(&a.t().unwrap(), &[12]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::NotContiguous {
                op: "copy_from_reshaped",
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(r.dims(), [12], "unchanged on error");
});

device_test!(clone_keeps_column_major_and_compacts_views, D => {
    let f = Tensor::new_in_order(DataType::Float, D::TYPE, &[3, 5], Order::ColMajor).unwrap();
    assert!(f.clone().is_fortran_contiguous());
    let (a, _) = random_on::<D, f32>(&mut rng(22), &[6, 6]);
    let view = a.narrow(0, 1, 3).unwrap().narrow(1, 2, 2).unwrap();
    let c = view.clone();
    assert!(c.is_contiguous() && c.numel() == 6 && c == view);
});

device_test!(sync_same_shape_any_layout, D => {
    let (src, _) = random_on::<D, c32>(&mut rng(23), &[4, 7]);
    let mut dst =
        Tensor::new_in_order(DataType::ComplexFloat, D::TYPE, &[4, 7], Order::ColMajor).unwrap();
    dst.sync(&src).unwrap();
    assert!(dst == src);
    // Overlapping views of one buffer: shift rows down by one.
    let (t, v) = random_on::<D, f64>(&mut rng(24), &[5, 3]);
    let mut lower = t.narrow(0, 1, 4).unwrap();
    lower.sync(&t.narrow(0, 0, 4).unwrap()).unwrap();
    let got = t.to_vec::<f64>().unwrap();
    assert_eq!(&got[..3], &v[..3]);
    assert_eq!(&got[3..], &v[..12]);
});

device_test!(sync_padded_form_fills_top_left_block, D => {
    let (src, v) = random_on::<D, f64>(&mut rng(25), &[2, 3]);
    let mut dst = Tensor::full(-1.0f64, D::TYPE, &[4, 5]).unwrap();
    dst.sync(&src).unwrap();
    let got = dst.to_vec::<f64>().unwrap();
    for i in 0..4 {
        for j in 0..5 {
            let want = if i < 2 && j < 3 { v[i * 3 + j] } else { -1.0 };
            assert_eq!(got[i * 5 + j], want, "({i},{j})");
        }
    }
    let mut d1 = Tensor::zeros(DataType::Int, D::TYPE, &[5]).unwrap();
    d1.sync(&on::<D>(Tensor::from_slice(&[7i32, 8], &[2]).unwrap()))
        .unwrap();
    assert_eq!(d1.to_vec::<i32>().unwrap(), [7, 8, 0, 0, 0]);
    // Errors: larger source, different rank, rank > 2, different dtype.
    let e = src.clone().sync(&dst).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { op: "sync", .. }), "{e}");
    assert!(matches!(
        d1.sync(&Tensor::zeros(DataType::Int, D::TYPE, &[1, 1]).unwrap()),
        Err(Error::ShapeMismatch { .. })
    ));
    let mut cube = Tensor::zeros(DataType::Double, D::TYPE, &[2, 2, 2]).unwrap();
    assert!(matches!(
        cube.sync(&Tensor::zeros(DataType::Double, D::TYPE, &[1, 1, 1]).unwrap()),
        Err(Error::ShapeMismatch { .. })
    ));
    let e = dst
        .sync(&Tensor::zeros(DataType::Float, D::TYPE, &[4, 5]).unwrap())
        .unwrap_err();
    assert!(matches!(
        e,
        Error::DTypeMismatch {
            op: "sync",
            expected: DataType::Double,
            got: DataType::Float
        }
    ));
});

device_test!(sync_into_a_map_changes_the_foreign_vec, D => {
    let (fortran, mut map) = fortran_map::<D, f64>(&[0.0; 6], &[2, 3]);
    let src = on::<D>(Tensor::from_slice(&[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap());
    map.sync(&src).unwrap();
    assert!(!map.owns_memory());
    drop(map);
    assert_eq!(
        fortran.to_vec::<f64>().unwrap(),
        [1.0, 4.0, 2.0, 5.0, 3.0, 6.0],
        "column-major order"
    );
});

device_test!(allocate_from_and_resize, D => {
    let other = Tensor::ones(DataType::ComplexDouble, D::TYPE, &[2]).unwrap();
    let mut t = Tensor::ones(DataType::Int, D::TYPE, &[3]).unwrap();
    let keep = t.share();
    t.allocate_from(&other, &[4, 4]).unwrap();
    assert_eq!(
        (t.dtype(), t.dims()),
        (DataType::ComplexDouble, &[4usize, 4][..])
    );
    assert!(t == Tensor::zeros(DataType::ComplexDouble, D::TYPE, &[4, 4]).unwrap());
    assert_eq!(
        keep.to_vec::<i32>().unwrap(),
        [1, 1, 1],
        "old sharers keep the old memory"
    );

    let mut r = Tensor::ones(DataType::Double, D::TYPE, &[2, 3]).unwrap();
    r.resize(&[2, 3]).unwrap();
    assert_eq!(
        r.to_vec::<f64>().unwrap(),
        [1.0; 6],
        "same shape keeps the values"
    );
    r.resize(&[3, 3]).unwrap();
    assert_eq!(
        r.to_vec::<f64>().unwrap(),
        [0.0; 9],
        "new shape gets fresh zeroed memory"
    );
    let (_owner, mut map) = fortran_map::<D, f32>(&[1.0; 4], &[4]);
    let e = map.resize(&[8]).unwrap_err();
    assert!(
        matches!(e, Error::InvalidArgument { op: "resize", .. }),
        "{e}"
    );
});
