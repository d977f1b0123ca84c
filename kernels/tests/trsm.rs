//! `trsm` on both devices (the GPU through `device_test!`) for f32/f64/c32/c64: every
//! side, triangle, transpose and diagonal, awkward sizes with padded leading dimensions,
//! a complex `alpha`, and NaN in the triangle (and, for a unit diagonal, on the diagonal)
//! that must not be read; checked by the residual `op(A) X − αB` of a plain loop.
#![deny(unused_must_use)]

mod common;

use common::*;
use ctensor_base::{c64, Scalar};
use ctensor_kernels::blas::{BlasTrsm, Side, Trans};
use ctensor_kernels::lapack::{Diag, Uplo};

fn trsm_case<D: TestDevice + BlasTrsm<T>, T: Scalar>(
    side: Side,
    uplo: Uplo,
    trans: Trans,
    diag: Diag,
    m: usize,
    n: usize,
) -> TestResult {
    let k = if side == Side::Left { m } else { n };
    let (lda, ldb) = (k + 2, m + 1);
    let mut r = rng((m * 31 + n) as u64);
    // A: diagonally dominant inside its triangle, NaN outside it (and on a unit diagonal).
    let mut a: Vec<T> = random_vec(&mut r, lda * k);
    for j in 0..k {
        for i in 0..k {
            let inside = if uplo == Uplo::Upper { i <= j } else { i >= j };
            if !inside || (i == j && diag == Diag::Unit) {
                a[i + j * lda] = T::cast_from(c64::new(f64::NAN, f64::NAN));
            } else if i == j {
                a[i + j * lda] = T::cast_from(c64::new(2.0 + i as f64 / k as f64, 0.0));
            } else {
                // |entries| <= 1/k: every row diagonally dominant, unit diagonal included.
                a[i + j * lda] = T::cast_from(a[i + j * lda].to_c64() / (125.0 * k as f64));
            }
        }
    }
    let b0: Vec<T> = random_vec(&mut r, ldb * n);
    let alpha = T::cast_from(c64::new(0.5, -1.25));
    let mut ab = Buf::on::<D>(a.clone());
    let mut b = Buf::on::<D>(b0.clone());
    // SAFETY: `a` holds lda·k, `b` ldb·n elements.
    unsafe {
        D::trsm(
            side,
            uplo,
            trans,
            diag,
            m,
            n,
            alpha,
            ab.ptr(),
            lda,
            b.ptr(),
            ldb,
        )
    }?;
    let x = b.get();
    // The triangle A as read: unit diagonal where asked, zero outside.
    let at = |i: usize, j: usize| -> c64 {
        let inside = if uplo == Uplo::Upper { i <= j } else { i >= j };
        if i == j && diag == Diag::Unit {
            c64::new(1.0, 0.0)
        } else if inside {
            a[i + j * lda].to_c64()
        } else {
            c64::new(0.0, 0.0)
        }
    };
    let op_a = |i: usize, j: usize| match trans {
        Trans::N => at(i, j),
        Trans::T => at(j, i),
        Trans::C => {
            let v = at(j, i);
            if T::DTYPE.is_complex() {
                v.conj()
            } else {
                v
            }
        }
    };
    let what = format!(
        "{} {side:?} {uplo:?} {trans:?} {diag:?} m={m} n={n}",
        T::DTYPE
    );
    let tol = 40.0 * (k as f64 + 1.0) * eps::<T>();
    for i in 0..m {
        for j in 0..n {
            let lhs: c64 = match side {
                Side::Left => (0..m).map(|l| op_a(i, l) * x[l + j * ldb].to_c64()).sum(),
                Side::Right => (0..n).map(|l| x[i + l * ldb].to_c64() * op_a(l, j)).sum(),
            };
            let rhs = alpha.to_c64() * b0[i + j * ldb].to_c64();
            assert_close(
                lhs,
                rhs,
                tol * rhs.norm().max(1000.0),
                &format!("{what}: [{i},{j}]"),
            );
        }
        // Rows past m inside the leading dimension are not written.
        for j in 0..n {
            for pad in m..ldb {
                assert_eq!(
                    x[pad + j * ldb].to_c64(),
                    b0[pad + j * ldb].to_c64(),
                    "{what}: padding"
                );
            }
        }
    }
    Ok(())
}

fn trsm_all<D: TestDevice + BlasTrsm<T>, T: Scalar>() -> TestResult {
    for side in [Side::Left, Side::Right] {
        for uplo in [Uplo::Upper, Uplo::Lower] {
            for trans in [Trans::N, Trans::T, Trans::C] {
                for diag in [Diag::NonUnit, Diag::Unit] {
                    for (m, n) in [(0, 3), (3, 0), (1, 1), (7, 4), (4, 7)] {
                        trsm_case::<D, T>(side, uplo, trans, diag, m, n)?;
                    }
                }
            }
        }
    }
    trsm_case::<D, T>(Side::Left, Uplo::Lower, Trans::C, Diag::NonUnit, 300, 5)?;
    trsm_case::<D, T>(Side::Right, Uplo::Upper, Trans::N, Diag::Unit, 5, 300)?;
    Ok(())
}

device_test!(trsm_solves_every_side_triangle_transpose_and_diagonal, D -> Result {
    for_blas_dtypes!(trsm_all, D);
    Ok(())
});

#[test]
fn trsm_arguments_are_checked() -> TestResult {
    use ctensor_base::CpuDevice;
    let a = [1.0f64; 9];
    let mut b = [1.0f64; 9];
    // SAFETY: the checks fail before memory is read.
    let e = unsafe {
        CpuDevice::trsm(
            Side::Left,
            Uplo::Upper,
            Trans::N,
            Diag::NonUnit,
            3,
            3,
            1.0,
            a.as_ptr(),
            2,
            b.as_mut_ptr(),
            3,
        )
    }
    .unwrap_err();
    assert!(e.to_string().contains("lda"), "{e}");
    // SAFETY: as above.
    let e = unsafe {
        CpuDevice::trsm(
            Side::Right,
            Uplo::Upper,
            Trans::N,
            Diag::NonUnit,
            3,
            3,
            1.0,
            std::ptr::null(),
            3,
            b.as_mut_ptr(),
            3,
        )
    }
    .unwrap_err();
    assert!(e.to_string().contains("null"), "{e}");
    Ok(())
}
