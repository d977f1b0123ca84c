//! `qr` and `qr_r` on both devices for f32/f64/c32/c64: `Q R = A`, `Qᴴ Q = I`, `R`
//! exactly zero below its diagonal, reduced and complete shapes for tall, wide, square,
//! empty and one-element matrices (and > 256 rows), results in the input's memory order
//! (a Fortran-order map stays column-major), stacks of matrices, NaN propagation, and
//! the errors for integers and vectors.
#![deny(unused_must_use)]

mod common;

use common::*;
use ctensor_aten::{
    matmul, matmul_op, qr, qr_r, DataType, Device, Error, Order, QrMode, Scalar, Tensor, Trans,
};

fn unit(dt: DataType) -> f64 {
    eps(dt)
}

fn check_qr<D: Device>(a: &Tensor, mode: QrMode, what: &str) -> TestResult {
    let dt = a.dtype();
    let (m, n) = (a.dims()[0], a.dims()[1]);
    let k = m.min(n);
    let (q, r) = qr(a, mode).unwrap_or_else(|e| panic!("{what}: {e}"));
    let (qc, rr) = if mode == QrMode::Complete {
        (m, m)
    } else {
        (k, k)
    };
    assert_eq!((q.dims(), r.dims()), (&[m, qc][..], &[rr, n][..]), "{what}");
    assert_eq!(
        (q.device(), r.device(), q.dtype(), r.dtype()),
        (D::TYPE, D::TYPE, dt, dt),
        "{what}"
    );
    let tol = 50.0 * (m.max(n).max(1) as f64) * unit(dt);
    let scale = a
        .abs()?
        .cast(DataType::Double)?
        .to_vec::<f64>()?
        .into_iter()
        .fold(1.0, f64::max);
    // Qᴴ Q = I.
    let qhq = matmul_op(&q, Trans::C, &q, Trans::N)?;
    let eye = Tensor::eye(dt, D::TYPE, qc)?;
    assert!(qhq.allclose(&eye, 0.0, tol)?, "{what}: QᴴQ ≠ I");
    // Q R = A.
    if m > 0 && n > 0 {
        let qr_prod = matmul(&q, &r)?;
        assert!(qr_prod.allclose(a, 0.0, tol * scale)?, "{what}: QR ≠ A");
    }
    // R is exactly zero below the diagonal.
    let rv = r
        .cast(DataType::ComplexDouble)?
        .to_vec::<ctensor_aten::c64>()?;
    for i in 0..rr {
        for j in 0..n.min(i) {
            assert_eq!(rv[i * n + j].norm(), 0.0, "{what}: R[{i},{j}]");
        }
    }
    // qr_r is the R of the reduced factorization, bit for bit.
    let r_only = qr_r(a)?;
    let (_, r_red) = qr(a, QrMode::Reduced)?;
    assert_eq!(
        r_only
            .cast(DataType::ComplexDouble)?
            .to_vec::<ctensor_aten::c64>()?,
        r_red
            .cast(DataType::ComplexDouble)?
            .to_vec::<ctensor_aten::c64>()?,
        "{what}: qr_r"
    );
    Ok(())
}

fn qr_of<D: Device, T: Scalar>() -> TestResult {
    let mut r = rng(17);
    for (m, n) in [
        (0, 3),
        (3, 0),
        (1, 1),
        (7, 5),
        (5, 7),
        (6, 6),
        (300, 17),
        (17, 300),
    ] {
        let (a, _) = random_on::<D, T>(&mut r, &[m, n]);
        for mode in [QrMode::Reduced, QrMode::Complete] {
            check_qr::<D>(&a, mode, &format!("{} {m}×{n} {mode:?}", T::DTYPE))?;
        }
    }
    // A column-major map: results stay column-major. A transposed view: row-major.
    let (_, v) = random_on::<D, T>(&mut r, &[4 * 3]);
    let (_owner, map) = fortran_map::<D, T>(&v, &[4, 3]);
    check_qr::<D>(&map, QrMode::Reduced, "map")?;
    let (q, rr) = qr(&map, QrMode::Reduced)?;
    assert_eq!(
        (q.dense_order(), rr.dense_order()),
        (Some(Order::ColMajor), Some(Order::ColMajor))
    );
    let t = map.t()?;
    check_qr::<D>(&t, QrMode::Complete, "transposed view")?;
    Ok(())
}

device_test!(qr_factors_reconstruct_every_shape_and_dtype, D -> Result {
    for_blas_dtypes!(qr_of, D);
    Ok(())
});

device_test!(qr_of_a_stack_is_the_qr_of_each_matrix, D -> Result {
    let mut r = rng(23);
    let (a, _) = random_on::<D, ctensor_aten::c64>(&mut r, &[2, 3, 7, 4]);
    let (q, rr) = qr(&a, QrMode::Reduced)?;
    assert_eq!((q.dims(), rr.dims()), (&[2, 3, 7, 4][..], &[2, 3, 4, 4][..]));
    for i in 0..2 {
        for j in 0..3 {
            let (q1, r1) = qr(&a.index(i)?.index(j)?, QrMode::Reduced)?;
            assert!(q.index(i)?.index(j)?.allclose(&q1, 0.0, 0.0)?);
            assert!(rr.index(i)?.index(j)?.allclose(&r1, 0.0, 0.0)?);
        }
    }
    assert_eq!(qr_r(&a)?.dims(), [2, 3, 4, 4]);
    // An empty stack has the factor shapes.
    let e = on::<D>(Tensor::zeros(DataType::Double, D::TYPE, &[0, 5, 3])?);
    let (q, rr) = qr(&e, QrMode::Complete)?;
    assert_eq!((q.dims(), rr.dims()), (&[0, 5, 5][..], &[0, 5, 3][..]));
    Ok(())
});

device_test!(qr_propagates_nan_and_refuses_what_it_cannot_factor, D -> Result {
    let has_nan = |t: &Tensor| t.to_vec::<f64>().unwrap().iter().any(|x| x.is_nan());
    // NaN in the second column: the first reflector comes from the finite first column
    // and the last is the identity, so Q is finite and the NaN is in R.
    let a = on::<D>(Tensor::from_slice(&[1.0f64, f64::NAN, 3.0, 4.0], &[2, 2])?);
    let (q, r) = qr(&a, QrMode::Reduced)?;
    assert!(!has_nan(&q) && has_nan(&r), "NaN must show in R");
    // NaN in the first column reaches both factors.
    let a = on::<D>(Tensor::from_slice(&[1.0f64, 2.0, f64::NAN, 4.0], &[2, 2])?);
    let (q, r) = qr(&a, QrMode::Reduced)?;
    assert!(has_nan(&q) && has_nan(&r), "NaN must show in Q and R");
    let i = on::<D>(Tensor::zeros(DataType::Int, D::TYPE, &[2, 2])?);
    let e = qr(&i, QrMode::Reduced).unwrap_err();
    assert!(matches!(e, Error::UnsupportedDType { op: "qr", .. }), "{e}");
    let v = on::<D>(Tensor::zeros(DataType::Double, D::TYPE, &[3])?);
    let e = qr_r(&v).unwrap_err();
    assert!(matches!(e, Error::NotAMatrix { op: "qr_r", .. }), "{e}");
    Ok(())
});
