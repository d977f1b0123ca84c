//! `svd`, `svdvals` and `pinv` on both devices for f32/f64/c32/c64: reconstruction and
//! orthonormality for tall, wide, square and empty matrices (thin and full), the values
//! against `svdvals`, and `pinv` by the four Penrose conditions (also rank-deficient),
//! against `inverse` for an invertible matrix, and on zero and NaN input.

mod common;

use common::*;
use ctensor_aten::{
    cat, inverse, matmul, matmul_op, pinv, svd, svdvals, DataType, Device, Error, Scalar, Tensor,
    Trans,
};

fn close(got: &Tensor, want: &Tensor, tol: f64, what: &str) {
    let scale = want
        .abs()
        .unwrap()
        .cast(DataType::Double)
        .unwrap()
        .to_vec::<f64>()
        .unwrap()
        .into_iter()
        .fold(1.0, f64::max);
    assert!(got.allclose(want, 0.0, tol * scale).unwrap(), "{what}");
}

fn svd_of<D: Device, T: Scalar>() {
    let dt = T::DTYPE;
    let tol = 200.0 * eps(dt) * 40.0;
    for (m, n) in [
        (1, 1),
        (7, 5),
        (5, 7),
        (6, 6),
        (40, 3),
        (3, 40),
        (0, 4),
        (4, 0),
    ] {
        let (a, _) = random_on::<D, T>(&mut rng((m * 7 + n) as u64), &[m, n]);
        for full in [false, true] {
            let what = format!("{dt} {m}×{n} full={full}");
            let (u, s, vh) = svd(&a, full).unwrap_or_else(|e| panic!("{what}: {e}"));
            let k = m.min(n);
            let (uc, vr) = if full { (m, n) } else { (k, k) };
            assert_eq!(
                (u.dims(), s.dims(), vh.dims()),
                (&[m, uc][..], &[k][..], &[vr, n][..]),
                "{what}"
            );
            assert_eq!(s.dtype(), dt.real_type());
            let eye = |r| Tensor::eye(dt, D::TYPE, r).unwrap();
            close(
                &matmul_op(&u, Trans::C, &u, Trans::N).unwrap(),
                &eye(uc),
                tol,
                &format!("{what}: UᴴU"),
            );
            close(
                &matmul_op(&vh, Trans::N, &vh, Trans::C).unwrap(),
                &eye(vr),
                tol,
                &format!("{what}: VᴴV"),
            );
            if k > 0 {
                let us = (&u.narrow(1, 0, k).unwrap() * &s).unwrap();
                close(
                    &matmul(&us, &vh.narrow(0, 0, k).unwrap()).unwrap(),
                    &a,
                    tol,
                    &format!("{what}: UΣVᴴ"),
                );
            }
            assert!(
                svdvals(&a)
                    .unwrap()
                    .allclose(
                        &s,
                        0.0,
                        tol * s
                            .abs()
                            .unwrap()
                            .cast(DataType::Double)
                            .unwrap()
                            .to_vec::<f64>()
                            .unwrap()
                            .first()
                            .copied()
                            .unwrap_or(1.0)
                            .max(1.0)
                    )
                    .unwrap(),
                "{what}: svdvals"
            );
        }
    }
}

device_test!(svd_reconstructs_every_shape, D => {
    for_blas_dtypes!(svd_of, D);
});

fn pinv_of<D: Device, T: Scalar>() {
    let dt = T::DTYPE;
    let tol = 1e4 * eps(dt);
    let (a, _) = random_on::<D, T>(&mut rng(3), &[9, 4]);
    // Rank 4 tall, a rank-deficient 9 × 6 (two columns repeated), and wide.
    let dup = cat(&[&a, &a.narrow(1, 0, 2).unwrap()], 1).unwrap();
    for (what, x) in [
        ("tall", a.share()),
        ("rank-deficient", dup),
        ("wide", a.t().unwrap().contiguous().unwrap()),
    ] {
        let p = pinv(&x, None).unwrap();
        assert_eq!(p.dims(), [x.dims()[1], x.dims()[0]]);
        let w = format!("{dt} {what}");
        let xp = matmul(&x, &p).unwrap();
        let px = matmul(&p, &x).unwrap();
        close(
            &matmul(&xp, &x).unwrap(),
            &x,
            tol,
            &format!("{w}: A A⁺ A = A"),
        );
        close(
            &matmul(&px, &p).unwrap(),
            &p,
            tol,
            &format!("{w}: A⁺ A A⁺ = A⁺"),
        );
        close(
            &xp.t().unwrap().conj().unwrap(),
            &xp,
            tol,
            &format!("{w}: A A⁺ Hermitian"),
        );
        close(
            &px.t().unwrap().conj().unwrap(),
            &px,
            tol,
            &format!("{w}: A⁺ A Hermitian"),
        );
    }
    // Square and invertible: the inverse.
    let sq = (&random_on::<D, T>(&mut rng(4), &[6, 6]).0
        + &(&Tensor::eye(dt, D::TYPE, 6).unwrap() * 500.0).unwrap())
        .unwrap();
    close(
        &pinv(&sq, None).unwrap(),
        &inverse(&sq).unwrap(),
        tol,
        &format!("{dt} pinv = inverse"),
    );
    // Zero matrix: zero pseudo-inverse.
    let z = on::<D>(Tensor::zeros(dt, D::TYPE, &[3, 2]).unwrap());
    assert!(pinv(&z, None)
        .unwrap()
        .allclose(
            &on::<D>(Tensor::zeros(dt, D::TYPE, &[2, 3]).unwrap()),
            0.0,
            0.0
        )
        .unwrap());
}

device_test!(pinv_satisfies_the_penrose_conditions, D => {
    for_blas_dtypes!(pinv_of, D);
    let bad = on::<D>(Tensor::from_slice(&[1.0f64, f64::NAN, 0.0, 1.0], &[2, 2]).unwrap());
    assert!(matches!(svd(&bad, false).unwrap_err(), Error::NonFinite { .. }));
    let ok = on::<D>(Tensor::eye(DataType::Double, D::TYPE, 2).unwrap());
    assert!(matches!(pinv(&ok, Some(-1.0)).unwrap_err(), Error::InvalidArgument { op: "pinv", .. }));
    assert!(matches!(svd(&on::<D>(Tensor::zeros(DataType::Double, D::TYPE, &[3]).unwrap()), false).unwrap_err(), Error::NotAMatrix { .. }));
});
