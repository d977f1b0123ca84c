//! `geqrf` and `orgqr`/`ungqr` on both devices (the GPU through `device_test!`), for
//! f32/f64/c32/c64, on random matrices of awkward shapes with padded leading dimensions:
//! `Q R = A`, `Qᴴ Q = I`, `R` upper triangular, the reduced and the complete `Q`; NaN
//! propagates into the factors; bad sizes are errors.
#![deny(unused_must_use)]

mod common;

use common::*;
use ctensor_base::{c64, Error, Scalar};
use ctensor_kernels::qr::{LapackGeqrf, LapackOrgqr};

/// `v` (column-major, leading dimension `ld`) at `(i, j)` as c64.
fn at<T: Scalar>(v: &[T], ld: usize, i: usize, j: usize) -> c64 {
    v[i + j * ld].to_c64()
}

fn qr_case<D: TestDevice + LapackGeqrf<T> + LapackOrgqr<T>, T: Scalar>(
    m: usize,
    n: usize,
    pad: usize,
) -> TestResult {
    let mut r = rng((m * 1000 + n) as u64);
    let lda = m + pad;
    let a0: Vec<T> = random_vec(&mut r, lda * n);
    let k = m.min(n);
    let mut a = Buf::on::<D>(a0.clone());
    let mut tau = Buf::on::<D>(vec![T::zero(); k]);
    // SAFETY: `a` holds lda·n elements and `tau` k.
    unsafe { D::geqrf(m, n, a.ptr(), lda, tau.ptr()) }?;
    let f = a.get();
    // Q: the reduced m × k, and the complete m × m when m > n.
    for qcols in [k, m] {
        if qcols == m && m <= n {
            continue;
        }
        let mut q0 = vec![T::zero(); lda * qcols];
        q0[..lda * k].copy_from_slice(&f[..lda * k]);
        let mut q = Buf::on::<D>(q0);
        // SAFETY: `q` holds lda·qcols elements, `tau` k.
        unsafe { D::orgqr(m, qcols, k, q.ptr(), lda, tau.ptr()) }?;
        let q = q.get();
        let tol = 30.0 * (m.max(n) as f64) * eps::<T>();
        let what = format!("{} m={m} n={n} lda={lda} Q with {qcols} columns", T::DTYPE);
        // Qᴴ Q = I.
        for i in 0..qcols {
            for j in 0..qcols {
                let g: c64 = (0..m)
                    .map(|l| at(&q, lda, l, i).conj() * at(&q, lda, l, j))
                    .sum();
                let want = if i == j { 1.0 } else { 0.0 };
                assert_close(
                    g,
                    c64::new(want, 0.0),
                    tol,
                    &format!("{what}: (QᴴQ)[{i},{j}]"),
                );
            }
        }
        // Q R = A with R the upper k × n trapezoid of the factors.
        let scale = a0
            .iter()
            .map(|x| x.to_c64().norm())
            .fold(0.0, f64::max)
            .max(1.0);
        for i in 0..m {
            for j in 0..n {
                let g: c64 = (0..=j.min(k - 1))
                    .map(|l| at(&q, lda, i, l) * at(&f, lda, l, j))
                    .sum();
                assert_close(
                    g,
                    at(&a0, lda, i, j),
                    tol * scale,
                    &format!("{what}: (QR)[{i},{j}]"),
                );
            }
        }
    }
    // The padding rows past m are not touched.
    for j in 0..n {
        for i in m..lda {
            assert_eq!(
                f[i + j * lda].to_c64(),
                a0[i + j * lda].to_c64(),
                "padding at ({i},{j})"
            );
        }
    }
    Ok(())
}

fn qr_shapes<D: TestDevice + LapackGeqrf<T> + LapackOrgqr<T>, T: Scalar>() -> TestResult {
    for (m, n, pad) in [
        (1, 1, 0),
        (7, 5, 0),
        (5, 7, 3),
        (6, 6, 1),
        (300, 17, 2),
        (17, 300, 0),
        (1, 9, 0),
        (9, 1, 4),
    ] {
        qr_case::<D, T>(m, n, pad)?;
    }
    Ok(())
}

device_test!(geqrf_and_orgqr_reconstruct_a_with_orthonormal_q, D -> Result {
    for_blas_dtypes!(qr_shapes, D);
    Ok(())
});

device_test!(qr_of_empty_matrices_and_nan_input, D -> Result {
    // Nothing to do for an empty matrix (no pointer is read).
    // SAFETY: zero sizes.
    unsafe {
        D::geqrf(0, 3, std::ptr::null_mut::<f64>(), 1, std::ptr::null_mut())?;
        D::geqrf(3, 0, std::ptr::null_mut::<f64>(), 3, std::ptr::null_mut())?;
        D::orgqr(3, 0, 0, std::ptr::null_mut::<f64>(), 3, std::ptr::null())?;
    }
    // NaN propagates into R instead of vanishing.
    let mut a = Buf::on::<D>(vec![1.0f64, 2.0, f64::NAN, 4.0]);
    let mut tau = Buf::on::<D>(vec![0.0f64; 2]);
    // SAFETY: a 2 × 2 matrix and 2 scale factors.
    unsafe { D::geqrf(2, 2, a.ptr(), 2, tau.ptr()) }?;
    assert!(a.get()[2].is_nan() || a.get()[3].is_nan(), "{:?}", a.get());
    Ok(())
});

#[test]
fn qr_arguments_are_checked() -> TestResult {
    use ctensor_base::CpuDevice;
    let mut a = vec![0.0f64; 12];
    let tau = [0.0f64; 3];
    // SAFETY: the checks fail before any memory is touched.
    unsafe {
        let e = CpuDevice::orgqr(3, 4, 3, a.as_mut_ptr(), 3, tau.as_ptr()).unwrap_err();
        assert!(
            matches!(e, Error::InvalidArgument { op: "orgqr", .. }),
            "{e}"
        );
        assert!(e.to_string().contains("m = 3, n = 4"), "{e}");
        let e = CpuDevice::orgqr(4, 2, 3, a.as_mut_ptr(), 4, tau.as_ptr()).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
        let e = CpuDevice::geqrf(4, 3, a.as_mut_ptr(), 2, std::ptr::null_mut()).unwrap_err();
        assert!(e.to_string().contains("lda"), "{e}");
        let e = CpuDevice::geqrf(4, 3, a.as_mut_ptr(), 4, std::ptr::null_mut()).unwrap_err();
        assert!(e.to_string().contains("tau"), "{e}");
    }
    Ok(())
}
