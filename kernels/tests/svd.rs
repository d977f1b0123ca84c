//! The SVD kernel on both devices (the GPU through `device_test!`) for f32/f64/c32/c64:
//! `U Σ Vᴴ = A`, orthonormal `U` and `V`, values descending and non-negative and equal to
//! the square roots of the eigenvalues of `AᴴA` (from `heevd`, an independent route), for
//! every job and tall or square shapes with padded leading dimensions; NaN input and wide
//! matrices are refused.
#![deny(unused_must_use)]

mod common;

use common::*;
use ctensor_base::{c64, Error, Scalar};
use ctensor_kernels::lapack::{Jobz, LapackHeevd, Uplo};
use ctensor_kernels::svd::{LapackSvd, SvdJob};

fn at<T: Scalar>(v: &[T], ld: usize, i: usize, j: usize) -> c64 {
    v[i + j * ld].to_c64()
}

fn svd_case<D: TestDevice + LapackSvd<T>, T: Scalar>(m: usize, n: usize, job: SvdJob) -> TestResult
where
    ctensor_base::CpuDevice: LapackHeevd<T>,
{
    let (lda, ldu, ldvt) = (m + 1, m + 2, n + 1);
    let a0: Vec<T> = random_vec(&mut rng((m * 100 + n) as u64), lda * n);
    let ucols = if job == SvdJob::Full { m } else { n };
    let mut a = Buf::on::<D>(a0.clone());
    let mut s = Buf::on::<D>(vec![<T::Real as Scalar>::zero(); n]);
    let mut u = Buf::on::<D>(vec![T::zero(); ldu * ucols.max(1)]);
    let mut vt = Buf::on::<D>(vec![T::zero(); ldvt * n.max(1)]);
    // SAFETY: buffers of the documented spans.
    unsafe {
        D::svd(
            job,
            m,
            n,
            a.ptr(),
            lda,
            s.ptr(),
            u.ptr(),
            ldu,
            vt.ptr(),
            ldvt,
        )
    }?;
    let s: Vec<f64> = s.get().iter().map(|x| x.to_c64().re).collect();
    let what = format!("{} {m}×{n} {job:?}", T::DTYPE);
    let scale = a0.iter().map(|x| x.to_c64().norm()).fold(1.0, f64::max) * (m as f64).sqrt() * 4.0;
    let tol = 60.0 * (m as f64) * eps::<T>();
    assert!(
        s.windows(2).all(|w| w[0] >= w[1]) && s.iter().all(|&x| x >= 0.0),
        "{what}: {s:?}"
    );
    // σ² against the eigenvalues of AᴴA (heevd on the host, ascending).
    let mut g = vec![T::zero(); n * n];
    for i in 0..n {
        for j in 0..n {
            let v: c64 = (0..m)
                .map(|l| at(&a0, lda, l, i).conj() * at(&a0, lda, l, j))
                .sum();
            g[i + j * n] = T::cast_from(v);
        }
    }
    let mut w = vec![<T::Real as Scalar>::zero(); n];
    // SAFETY: `g` n × n, `w` n values.
    unsafe {
        ctensor_base::CpuDevice::heevd(
            Jobz::ValuesOnly,
            Uplo::Lower,
            n,
            g.as_mut_ptr(),
            n,
            w.as_mut_ptr(),
        )
    }?;
    for (k, sv) in s.iter().enumerate() {
        let lam = w[n - 1 - k].to_c64().re.max(0.0);
        assert!(
            (sv * sv - lam).abs() <= tol * scale * scale,
            "{what}: σ{k}² = {} vs λ = {lam}",
            sv * sv
        );
    }
    if job == SvdJob::ValuesOnly {
        return Ok(());
    }
    let (u, vt) = (u.get(), vt.get());
    for i in 0..ucols {
        for j in 0..ucols {
            let g: c64 = (0..m)
                .map(|l| at(&u, ldu, l, i).conj() * at(&u, ldu, l, j))
                .sum();
            assert_close(
                g,
                c64::new(if i == j { 1.0 } else { 0.0 }, 0.0),
                tol,
                &format!("{what}: UᴴU[{i},{j}]"),
            );
        }
    }
    for i in 0..n {
        for j in 0..n {
            let g: c64 = (0..n)
                .map(|l| at(&vt, ldvt, i, l) * at(&vt, ldvt, j, l).conj())
                .sum();
            assert_close(
                g,
                c64::new(if i == j { 1.0 } else { 0.0 }, 0.0),
                tol,
                &format!("{what}: VᴴV[{i},{j}]"),
            );
        }
    }
    for i in 0..m {
        for j in 0..n {
            let r: c64 = (0..n)
                .map(|k| at(&u, ldu, i, k) * s[k] * at(&vt, ldvt, k, j))
                .sum();
            assert_close(
                r,
                at(&a0, lda, i, j),
                tol * scale,
                &format!("{what}: (UΣVᴴ)[{i},{j}]"),
            );
        }
    }
    Ok(())
}

fn svd_shapes<D: TestDevice + LapackSvd<T>, T: Scalar>() -> TestResult
where
    ctensor_base::CpuDevice: LapackHeevd<T>,
{
    for job in [SvdJob::ValuesOnly, SvdJob::Thin, SvdJob::Full] {
        for (m, n) in [(1, 1), (7, 5), (6, 6), (300, 17), (40, 1)] {
            svd_case::<D, T>(m, n, job)?;
        }
    }
    Ok(())
}

device_test!(svd_reconstructs_a_with_orthonormal_factors, D -> Result {
    for_blas_dtypes!(svd_shapes, D);
    Ok(())
});

device_test!(svd_refuses_nan_and_wide_matrices, D -> Result {
    let mut a = Buf::on::<D>(vec![1.0f64, f64::NAN, 2.0, 3.0]);
    let mut s = Buf::on::<D>(vec![0.0f64; 2]);
    // SAFETY: a 2 × 2 matrix and 2 values; vectors not referenced.
    let e = unsafe { D::svd(SvdJob::ValuesOnly, 2, 2, a.ptr(), 2, s.ptr(), std::ptr::null_mut(), 2, std::ptr::null_mut(), 2) }.unwrap_err();
    assert!(matches!(e, Error::NonFinite { .. }), "{e}");
    // SAFETY: refused before any memory is used.
    let e = unsafe { D::svd(SvdJob::ValuesOnly, 2, 3, a.ptr(), 2, s.ptr(), std::ptr::null_mut(), 2, std::ptr::null_mut(), 3) }.unwrap_err();
    assert!(matches!(e, Error::NotAMatrix { op: "svd", .. }), "{e}");
    Ok(())
});
