//! Shallow versus deep copies, sync (plain and padded), allocate_from, resize; on the D::TYPE
//! and, through `device_test!`, on the GPU (one `SKIP` line per test without one).
#![deny(unused_must_use)]

mod common;

use common::{fortran_map, on, random_on, rng};
use ctensor_aten::{c32, DataType, Device, Error, Order, Tensor};

device_test!(copy_from_twin_shares_writes_and_clone_does_not, D -> Result {
    let (a, v) = random_on::<D, f64>(&mut rng(21), &[3, 4]);
    let mut twin = Tensor::zeros(DataType::Int, D::TYPE, &[1])?;
    twin.copy_from(&a);
    assert!(twin.shares_memory_with(&a));
    let deep = a.clone();
    let deep2 = a.try_clone()?;
    twin.set_at(&[1, 2], 99.0f64)?;
    assert_eq!(
        a.get_value::<f64>(&[1, 2])?,
        99.0,
        "the write is visible in the original"
    );
    assert_eq!(
        deep.get_value::<f64>(&[1, 2])?,
        v[6],
        "the clone is independent"
    );
    assert_eq!(deep2.to_vec::<f64>()?, v);
    let mut r = Tensor::zeros(DataType::Int, D::TYPE, &[1])?;
    r.copy_from_reshaped(&a, &[-1])?;
    assert_eq!(r.dims(), [12]);
    assert_eq!(r.get_value::<f64>(&[6])?, 99.0);
    assert!(matches!(
        r.copy_from_reshaped(&a, &[5]),
        Err(Error::ShapeMismatch { .. })
    ));
    let e = r.copy_from_reshaped(&a.t()?, &[12]).unwrap_err();
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
    Ok(())
});

device_test!(clone_keeps_column_major_and_compacts_views, D -> Result {
    let f = Tensor::new_in_order(DataType::Float, D::TYPE, &[3, 5], Order::ColMajor)?;
    assert!(f.clone().is_fortran_contiguous());
    let (a, _) = random_on::<D, f32>(&mut rng(22), &[6, 6]);
    let view = a.narrow(0, 1, 3)?.narrow(1, 2, 2)?;
    let c = view.clone();
    assert!(c.is_contiguous() && c.numel() == 6 && c == view);
    Ok(())
});

device_test!(sync_same_shape_any_layout, D -> Result {
    let (src, _) = random_on::<D, c32>(&mut rng(23), &[4, 7]);
    let mut dst =
        Tensor::new_in_order(DataType::ComplexFloat, D::TYPE, &[4, 7], Order::ColMajor)?;
    dst.sync(&src)?;
    assert!(dst == src);
    // Overlapping views of one buffer: shift rows down by one.
    let (t, v) = random_on::<D, f64>(&mut rng(24), &[5, 3]);
    let mut lower = t.narrow(0, 1, 4)?;
    lower.sync(&t.narrow(0, 0, 4)?)?;
    let got = t.to_vec::<f64>()?;
    assert_eq!(&got[..3], &v[..3]);
    assert_eq!(&got[3..], &v[..12]);
    Ok(())
});

device_test!(sync_padded_form_fills_top_left_block, D -> Result {
    let (src, v) = random_on::<D, f64>(&mut rng(25), &[2, 3]);
    let mut dst = Tensor::full(-1.0f64, D::TYPE, &[4, 5])?;
    dst.sync(&src)?;
    let got = dst.to_vec::<f64>()?;
    for i in 0..4 {
        for j in 0..5 {
            let want = if i < 2 && j < 3 { v[i * 3 + j] } else { -1.0 };
            assert_eq!(got[i * 5 + j], want, "({i},{j})");
        }
    }
    let mut d1 = Tensor::zeros(DataType::Int, D::TYPE, &[5])?;
    d1.sync(&on::<D>(Tensor::from_slice(&[7i32, 8], &[2])?))
        ?;
    assert_eq!(d1.to_vec::<i32>()?, [7, 8, 0, 0, 0]);
    // Errors: larger source, different rank, rank > 2, different dtype.
    let e = src.clone().sync(&dst).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { op: "sync", .. }), "{e}");
    assert!(matches!(
        d1.sync(&Tensor::zeros(DataType::Int, D::TYPE, &[1, 1])?),
        Err(Error::ShapeMismatch { .. })
    ));
    let mut cube = Tensor::zeros(DataType::Double, D::TYPE, &[2, 2, 2])?;
    assert!(matches!(
        cube.sync(&Tensor::zeros(DataType::Double, D::TYPE, &[1, 1, 1])?),
        Err(Error::ShapeMismatch { .. })
    ));
    let e = dst
        .sync(&Tensor::zeros(DataType::Float, D::TYPE, &[4, 5])?)
        .unwrap_err();
    assert!(matches!(
        e,
        Error::DTypeMismatch {
            op: "sync",
            expected: DataType::Double,
            got: DataType::Float
        }
    ));
    Ok(())
});

device_test!(sync_into_a_map_changes_the_foreign_vec, D -> Result {
    let (fortran, mut map) = fortran_map::<D, f64>(&[0.0; 6], &[2, 3]);
    let src = on::<D>(Tensor::from_slice(&[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?);
    map.sync(&src)?;
    assert!(!map.owns_memory());
    drop(map);
    assert_eq!(
        fortran.to_vec::<f64>()?,
        [1.0, 4.0, 2.0, 5.0, 3.0, 6.0],
        "column-major order"
    );
    Ok(())
});

device_test!(allocate_from_and_resize, D -> Result {
    let other = Tensor::ones(DataType::ComplexDouble, D::TYPE, &[2])?;
    let mut t = Tensor::ones(DataType::Int, D::TYPE, &[3])?;
    let keep = t.share();
    t.allocate_from(&other, &[4, 4])?;
    assert_eq!(
        (t.dtype(), t.dims()),
        (DataType::ComplexDouble, &[4usize, 4][..])
    );
    assert!(t == Tensor::zeros(DataType::ComplexDouble, D::TYPE, &[4, 4])?);
    assert_eq!(
        keep.to_vec::<i32>()?,
        [1, 1, 1],
        "old sharers keep the old memory"
    );

    let mut r = Tensor::ones(DataType::Double, D::TYPE, &[2, 3])?;
    r.resize(&[2, 3])?;
    assert_eq!(
        r.to_vec::<f64>()?,
        [1.0; 6],
        "same shape keeps the values"
    );
    r.resize(&[3, 3])?;
    assert_eq!(
        r.to_vec::<f64>()?,
        [0.0; 9],
        "new shape gets fresh zeroed memory"
    );
    let (_owner, mut map) = fortran_map::<D, f32>(&[1.0; 4], &[4]);
    let e = map.resize(&[8]).unwrap_err();
    assert!(
        matches!(e, Error::InvalidArgument { op: "resize", .. }),
        "{e}"
    );
    Ok(())
});
