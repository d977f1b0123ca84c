//! `svd`, `svdvals` and `pinv` on both devices for f32/f64/c32/c64: reconstruction and
//! orthonormality for tall, wide, square and empty matrices (thin and full), the values
//! against `svdvals`, and `pinv` by the four Penrose conditions (also rank-deficient),
//! against `inverse` for an invertible matrix, and on zero and NaN input.
#![deny(unused_must_use)]

mod common;

use common::*;
use ctensor_aten::{
    cat, inverse, matmul, matmul_op, pinv, svd, svdvals, DataType, Device, Error, Scalar, Tensor,
    Trans,
};

fn close(got: &Tensor, want: &Tensor, tol: f64, what: &str) -> TestResult {
    let scale = want
        .abs()?
        .cast(DataType::Double)?
        .to_vec::<f64>()?
        .into_iter()
        .fold(1.0, f64::max);
    assert!(got.allclose(want, 0.0, tol * scale)?, "{what}");
    Ok(())
}

fn svd_of<D: Device, T: Scalar>() -> TestResult {
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
                &matmul_op(&u, Trans::C, &u, Trans::N)?,
                &eye(uc),
                tol,
                &format!("{what}: UᴴU"),
            )?;
            close(
                &matmul_op(&vh, Trans::N, &vh, Trans::C)?,
                &eye(vr),
                tol,
                &format!("{what}: VᴴV"),
            )?;
            if k > 0 {
                let us = (&u.narrow(1, 0, k)? * &s)?;
                close(
                    &matmul(&us, &vh.narrow(0, 0, k)?)?,
                    &a,
                    tol,
                    &format!("{what}: UΣVᴴ"),
                )?;
            }
            assert!(
                svdvals(&a)?.allclose(
                    &s,
                    0.0,
                    tol * s
                        .abs()?
                        .cast(DataType::Double)?
                        .to_vec::<f64>()?
                        .first()
                        .copied()
                        .unwrap_or(1.0)
                        .max(1.0)
                )?,
                "{what}: svdvals"
            );
        }
    }
    Ok(())
}

device_test!(svd_reconstructs_every_shape, D -> Result {
    for_blas_dtypes!(svd_of, D);
    Ok(())
});

fn pinv_of<D: Device, T: Scalar>() -> TestResult {
    let dt = T::DTYPE;
    let tol = 1e4 * eps(dt);
    let (a, _) = random_on::<D, T>(&mut rng(3), &[9, 4]);
    // Rank 4 tall, a rank-deficient 9 × 6 (two columns repeated), and wide.
    let dup = cat(&[&a, &a.narrow(1, 0, 2)?], 1)?;
    for (what, x) in [
        ("tall", a.share()),
        ("rank-deficient", dup),
        ("wide", a.t()?.contiguous()?),
    ] {
        let p = pinv(&x, None)?;
        assert_eq!(p.dims(), [x.dims()[1], x.dims()[0]]);
        let w = format!("{dt} {what}");
        let xp = matmul(&x, &p)?;
        let px = matmul(&p, &x)?;
        close(&matmul(&xp, &x)?, &x, tol, &format!("{w}: A A⁺ A = A"))?;
        close(&matmul(&px, &p)?, &p, tol, &format!("{w}: A⁺ A A⁺ = A⁺"))?;
        close(&xp.t()?.conj()?, &xp, tol, &format!("{w}: A A⁺ Hermitian"))?;
        close(&px.t()?.conj()?, &px, tol, &format!("{w}: A⁺ A Hermitian"))?;
    }
    // Square and invertible: the inverse.
    let sq =
        (&random_on::<D, T>(&mut rng(4), &[6, 6]).0 + &(&Tensor::eye(dt, D::TYPE, 6)? * 500.0)?)?;
    close(
        &pinv(&sq, None)?,
        &inverse(&sq)?,
        tol,
        &format!("{dt} pinv = inverse"),
    )?;
    // Zero matrix: zero pseudo-inverse.
    let z = on::<D>(Tensor::zeros(dt, D::TYPE, &[3, 2])?);
    assert!(pinv(&z, None)?.allclose(&on::<D>(Tensor::zeros(dt, D::TYPE, &[2, 3])?), 0.0, 0.0)?);
    Ok(())
}

device_test!(pinv_satisfies_the_penrose_conditions, D -> Result {
    for_blas_dtypes!(pinv_of, D);
    let bad = on::<D>(Tensor::from_slice(&[1.0f64, f64::NAN, 0.0, 1.0], &[2, 2])?);
    assert!(matches!(svd(&bad, false).unwrap_err(), Error::NonFinite { .. }));
    let ok = on::<D>(Tensor::eye(DataType::Double, D::TYPE, 2)?);
    assert!(matches!(pinv(&ok, Some(-1.0)).unwrap_err(), Error::InvalidArgument { op: "pinv", .. }));
    assert!(matches!(svd(&on::<D>(Tensor::zeros(DataType::Double, D::TYPE, &[3])?), false).unwrap_err(), Error::NotAMatrix { .. }));
    Ok(())
});
