//! BLAS kernels against plain reference loops (computed in complex double), for f32,
//! f64, c32 and c64, awkward sizes, non-unit and negative increments, ld > rows and
//! every `trans`. `cargo test -p ctensor-kernels gemm_` runs the gemm tests, and so on.
#![deny(unused_must_use)]
#![allow(clippy::needless_range_loop)]

mod common;

use common::*;
use ctensor_base::{c64, CastFrom, CpuDevice, Error, Scalar};
use ctensor_kernels::blas::*;
use rand::rngs::StdRng;

const TRANS: [Trans; 3] = [Trans::N, Trans::T, Trans::C];
const INCS: [(isize, isize); 4] = [(1, 1), (2, 3), (-1, 2), (3, -2)];

fn rand_scalar<T: Scalar>(rng: &mut StdRng) -> T {
    random_vec::<T>(rng, 1)[0]
}

/// The logical `n`-vector stored with `inc` in `buf`.
fn gather<T: Scalar>(buf: &[T], n: usize, inc: isize) -> Vec<c64> {
    (0..n).map(|i| c(buf[vidx(i, n, inc)])).collect()
}

/// Element `(i, l)` of `op(A)` for column-major `a` with leading dimension `lda`.
fn op_at<T: Scalar>(a: &[T], lda: usize, t: Trans, i: usize, l: usize) -> c64 {
    match t {
        Trans::N => c(a[i + l * lda]),
        Trans::T => c(a[l + i * lda]),
        Trans::C => c(a[l + i * lda]).conj(),
    }
}

/// Tolerance for a sum of `k` products whose magnitudes add up to `scale`.
fn tol<T: Scalar>(k: usize, scale: f64) -> f64 {
    4.0 * (k as f64 + 2.0) * eps::<T>() * scale.max(1.0)
}

fn dot_case<D, T: Scalar>() -> TestResult
where
    D: TestDevice + BlasDot<T>,
{
    let mut rng = rng(1);
    for n in SIZES {
        for (incx, incy) in INCS {
            let x = random_vec::<T>(&mut rng, vspan(n, incx));
            let y = random_vec::<T>(&mut rng, vspan(n, incy));
            let (xs, ys) = (gather(&x, n, incx), gather(&y, n, incy));
            let dotc: c64 = xs.iter().zip(&ys).map(|(a, b)| a.conj() * b).sum();
            let dotu: c64 = xs.iter().zip(&ys).map(|(a, b)| a * b).sum();
            let scale: f64 = xs.iter().zip(&ys).map(|(a, b)| a.norm() * b.norm()).sum();
            let (mut dx, mut dy) = (Buf::on::<D>(x.clone()), Buf::on::<D>(y.clone()));
            let (px, py) = (dx.ptr(), dy.ptr());
            // SAFETY: buffers span the vectors.
            let (gc, gu) = unsafe {
                (
                    <D as BlasDot<T>>::dot(n, px, incx, py, incy)?,
                    <D as BlasDot<T>>::dotu(n, px, incx, py, incy)?,
                )
            };
            let what = format!("{} dot n={n} inc=({incx},{incy})", T::DTYPE);
            assert_close(c(gc), dotc, tol::<T>(n, scale), &what);
            assert_close(c(gu), dotu, tol::<T>(n, scale), &what);
        }
    }
    Ok(())
}

device_test!(dot_and_dotu_match_reference_for_every_dtype_size_and_increment, D -> Result {
    for_blas_dtypes!(dot_case, D);
    Ok(())
});

device_test!(dot_conjugates_the_first_argument_and_dotu_does_not, D -> Result {
    let mut x = Buf::on::<D>(vec![c64::new(0.0, 1.0), c64::new(2.0, 0.0)]);
    let mut y = Buf::on::<D>(vec![c64::new(1.0, 0.0), c64::new(0.0, 3.0)]);
    let (px, py) = (x.ptr(), y.ptr());
    // SAFETY: two elements each.
    let (dc, du) = unsafe {
        (
            <D as BlasDot<c64>>::dot(2, px, 1, py, 1)?,
            <D as BlasDot<c64>>::dotu(2, px, 1, py, 1)?,
        )
    };
    // conj(i)·1 + 2·3i = -i + 6i; i·1 + 2·3i = 7i.
    assert_eq!(dc, c64::new(0.0, 5.0));
    assert_eq!(du, c64::new(0.0, 7.0));
    Ok(())
});

fn nrm2_case<D, T: Scalar>() -> TestResult
where
    D: TestDevice + BlasNrm2<T>,
{
    let mut rng = rng(2);
    for n in SIZES {
        for inc in [1isize, 3, -2] {
            let x = random_vec::<T>(&mut rng, vspan(n, inc));
            let want = gather(&x, n, inc)
                .iter()
                .map(|v| v.norm_sqr())
                .sum::<f64>()
                .sqrt();
            let mut dx = Buf::on::<D>(x.clone());
            // SAFETY: the buffer spans the vector.
            let got = unsafe { <D as BlasNrm2<T>>::nrm2(n, dx.ptr(), inc) }?;
            let what = format!("{} nrm2 n={n} inc={inc}", T::DTYPE);
            assert_close(c(got), c64::new(want, 0.0), tol::<T>(n, want), &what);
        }
    }
    Ok(())
}

device_test!(nrm2_matches_reference_for_every_dtype_size_and_increment, D -> Result {
    for_blas_dtypes!(nrm2_case, D);
    Ok(())
});

fn scal_case<D, T: Scalar>() -> TestResult
where
    D: TestDevice + BlasScal<T>,
{
    let mut rng = rng(3);
    for n in SIZES {
        for inc in [1isize, 2, -3] {
            let x0 = random_vec::<T>(&mut rng, vspan(n, inc));
            let alpha: T = rand_scalar(&mut rng);
            let ar = <T::Real as CastFrom<f64>>::cast_from(1.5);
            let (mut dx, mut dxr) = (Buf::on::<D>(x0.clone()), Buf::on::<D>(x0.clone()));
            // SAFETY: the buffers span the vector.
            unsafe {
                <D as BlasScal<T>>::scal(n, alpha, dx.ptr(), inc)?;
                <D as BlasScal<T>>::scal_real(n, ar, dxr.ptr(), inc)?;
            }
            let (x, xr) = (dx.get(), dxr.get());
            for j in 0..x0.len() {
                let on = inc.unsigned_abs() == 1 || j % inc.unsigned_abs() == 0;
                let (want, want_r) = if on {
                    (c(alpha) * c(x0[j]), c(x0[j]) * 1.5)
                } else {
                    (c(x0[j]), c(x0[j])) // gaps between strided elements are untouched
                };
                let what = format!("{} scal n={n} inc={inc} j={j}", T::DTYPE);
                assert_close(c(x[j]), want, tol::<T>(1, want.norm()), &what);
                assert_close(c(xr[j]), want_r, tol::<T>(1, want_r.norm()), &what);
            }
        }
    }
    Ok(())
}

device_test!(scal_and_scal_real_match_reference_and_skip_gaps, D -> Result {
    for_blas_dtypes!(scal_case, D);
    Ok(())
});

fn axpy_copy_case<D, T: Scalar>() -> TestResult
where
    D: TestDevice + BlasAxpy<T> + BlasCopy<T>,
{
    let mut rng = rng(4);
    for n in SIZES {
        for (incx, incy) in INCS {
            let x = random_vec::<T>(&mut rng, vspan(n, incx));
            let y0 = random_vec::<T>(&mut rng, vspan(n, incy));
            let alpha: T = rand_scalar(&mut rng);
            let mut dx = Buf::on::<D>(x.clone());
            let (mut dy, mut dyc) = (Buf::on::<D>(y0.clone()), Buf::on::<D>(y0.clone()));
            // SAFETY: buffers span the vectors and are distinct.
            unsafe {
                <D as BlasAxpy<T>>::axpy(n, alpha, dx.ptr(), incx, dy.ptr(), incy)?;
                <D as BlasCopy<T>>::copy(n, dx.ptr(), incx, dyc.ptr(), incy)?;
            }
            let (y, yc) = (dy.get(), dyc.get());
            for i in 0..n {
                let (xi, yi) = (c(x[vidx(i, n, incx)]), c(y0[vidx(i, n, incy)]));
                let want = c(alpha) * xi + yi;
                let what = format!("{} axpy n={n} inc=({incx},{incy}) i={i}", T::DTYPE);
                let scale = c(alpha).norm() * xi.norm() + yi.norm();
                assert_close(c(y[vidx(i, n, incy)]), want, tol::<T>(1, scale), &what);
                assert_eq!(c(yc[vidx(i, n, incy)]), xi, "{} copy n={n} i={i}", T::DTYPE);
            }
        }
    }
    Ok(())
}

device_test!(axpy_matches_reference_and_copy_is_exact_for_every_increment, D -> Result {
    for_blas_dtypes!(axpy_copy_case, D);
    Ok(())
});

/// Reference `y := alpha op(A) x + beta y` on logical vectors.
#[allow(clippy::too_many_arguments)]
fn gemv_ref<T: Scalar>(
    t: Trans,
    m: usize,
    n: usize,
    alpha: T,
    a: &[T],
    lda: usize,
    x: &[c64],
    beta: T,
    y: &[c64],
) -> (Vec<c64>, Vec<f64>) {
    let (rows, cols) = if t == Trans::N { (m, n) } else { (n, m) };
    (0..rows)
        .map(|i| {
            let mut s = c64::new(0.0, 0.0);
            let mut mag = 0.0;
            for l in 0..cols {
                let p = op_at(a, lda, t, i, l) * x[l];
                s += p;
                mag += p.norm();
            }
            let yb = if beta == T::zero() {
                c64::new(0.0, 0.0)
            } else {
                c(beta) * y[i]
            };
            (c(alpha) * s + yb, c(alpha).norm() * mag + yb.norm())
        })
        .unzip()
}

const GEMV_SHAPES: [(usize, usize); 7] =
    [(0, 3), (3, 0), (1, 1), (7, 5), (5, 7), (300, 17), (17, 300)];

fn gemv_case<D, T: Scalar>() -> TestResult
where
    D: TestDevice + BlasGemv<T>,
{
    let mut rng = rng(5);
    for (m, n) in GEMV_SHAPES {
        for t in TRANS {
            for (incx, incy) in [(1isize, 1isize), (2, -3)] {
                for zero_beta in [false, true] {
                    let lda = m + 3;
                    let a = random_vec::<T>(&mut rng, lda * n);
                    let (ly, lx) = if t == Trans::N { (m, n) } else { (n, m) };
                    let x = random_vec::<T>(&mut rng, vspan(lx, incx));
                    let mut y = random_vec::<T>(&mut rng, vspan(ly, incy));
                    let alpha: T = rand_scalar(&mut rng);
                    let beta = if zero_beta {
                        // With beta = 0, y is output only: NaN in it must not survive.
                        for v in y.iter_mut() {
                            *v = T::cast_from(f64::NAN);
                        }
                        T::zero()
                    } else {
                        rand_scalar(&mut rng)
                    };
                    let (want, mag) = gemv_ref(
                        t,
                        m,
                        n,
                        alpha,
                        &a,
                        lda,
                        &gather(&x, lx, incx),
                        beta,
                        &gather(&y, ly, incy),
                    );
                    let (mut da, mut dx) = (Buf::on::<D>(a.clone()), Buf::on::<D>(x.clone()));
                    let mut dy = Buf::on::<D>(y);
                    // SAFETY: buffers match the shapes, increments and lda.
                    unsafe {
                        <D as BlasGemv<T>>::gemv(
                            t,
                            m,
                            n,
                            alpha,
                            da.ptr(),
                            lda,
                            dx.ptr(),
                            incx,
                            beta,
                            dy.ptr(),
                            incy,
                        )?
                    };
                    let y = dy.get();
                    for i in 0..ly {
                        let what = format!(
                            "{} gemv {t} m={m} n={n} inc=({incx},{incy}) beta0={zero_beta} i={i}",
                            T::DTYPE
                        );
                        let got = c(y[vidx(i, ly, incy)]);
                        assert_close(got, want[i], tol::<T>(lx, mag[i]), &what);
                    }
                }
            }
        }
    }
    Ok(())
}

device_test!(gemv_matches_reference_for_every_trans_shape_increment_and_lda, D -> Result {
    for_blas_dtypes!(gemv_case, D);
    Ok(())
});

fn gemv_batched_case<D, T: Scalar>() -> TestResult
where
    D: TestDevice + BlasGemvBatched<T> + BlasGemvBatchedStrided<T>,
{
    let mut rng = rng(6);
    let (m, n, batch) = (9, 4, 5);
    let (incx, incy) = (2isize, 3isize); // deliberately different
    for t in TRANS {
        let lda = m + 1;
        let (ly, lx) = if t == Trans::N { (m, n) } else { (n, m) };
        let (sa, sx, sy) = (lda * n + 2, vspan(lx, incx) + 1, vspan(ly, incy) + 4);
        let a = random_vec::<T>(&mut rng, sa * batch);
        let x = random_vec::<T>(&mut rng, sx * batch);
        let y0 = random_vec::<T>(&mut rng, sy * batch);
        let (alpha, beta): (T, T) = (rand_scalar(&mut rng), rand_scalar(&mut rng));
        let (mut da, mut dx) = (Buf::on::<D>(a.clone()), Buf::on::<D>(x.clone()));
        let (mut dyp, mut dys) = (Buf::on::<D>(y0.clone()), Buf::on::<D>(y0.clone()));
        let (pa, px, py) = (da.ptr(), dx.ptr(), dyp.ptr());
        // Entry pointers are offsets into the buffers (device addresses on the GPU).
        let ap: Vec<*const T> = (0..batch)
            .map(|b| pa.wrapping_add(b * sa) as *const T)
            .collect();
        let xp: Vec<*const T> = (0..batch)
            .map(|b| px.wrapping_add(b * sx) as *const T)
            .collect();
        let yp: Vec<*mut T> = (0..batch).map(|b| py.wrapping_add(b * sy)).collect();
        // SAFETY: each entry spans its matrix/vectors; the y entries are disjoint.
        unsafe {
            <D as BlasGemvBatched<T>>::gemv_batched(
                t, m, n, alpha, &ap, lda, &xp, incx, beta, &yp, incy,
            )?;
            <D as BlasGemvBatchedStrided<T>>::gemv_batched_strided(
                t,
                m,
                n,
                alpha,
                pa,
                lda,
                sa,
                px,
                incx,
                sx,
                beta,
                dys.ptr(),
                incy,
                sy,
                batch,
            )?;
        }
        let (y_ptrs, y_strided) = (dyp.get(), dys.get());
        for b in 0..batch {
            let (want, mag) = gemv_ref(
                t,
                m,
                n,
                alpha,
                &a[b * sa..],
                lda,
                &gather(&x[b * sx..], lx, incx),
                beta,
                &gather(&y0[b * sy..], ly, incy),
            );
            for i in 0..ly {
                let what = format!("{} gemv_batched {t} b={b} i={i}", T::DTYPE);
                let k = b * sy + vidx(i, ly, incy);
                assert_close(c(y_ptrs[k]), want[i], tol::<T>(lx, mag[i]), &what);
                assert_close(c(y_strided[k]), want[i], tol::<T>(lx, mag[i]), &what);
            }
            // The padding between batch entries is untouched.
            for k in b * sy + vspan(ly, incy)..(b + 1) * sy {
                assert_eq!(y_ptrs[k], y0[k]);
                assert_eq!(y_strided[k], y0[k]);
            }
        }
    }
    Ok(())
}

device_test!(gemv_batched_and_gemv_batched_strided_match_reference_with_different_increments, D -> Result {
    for_blas_dtypes!(gemv_batched_case, D);
    Ok(())
});

/// Reference `C := alpha op(A) op(B) + beta C` with magnitudes for the tolerance.
#[allow(clippy::too_many_arguments)]
fn gemm_ref<T: Scalar>(
    ta: Trans,
    tb: Trans,
    m: usize,
    n: usize,
    k: usize,
    alpha: T,
    a: &[T],
    lda: usize,
    b: &[T],
    ldb: usize,
    beta: T,
    c0: &[T],
    ldc: usize,
) -> (Vec<c64>, Vec<f64>) {
    let mut out = vec![c64::new(0.0, 0.0); m * n];
    let mut mag = vec![0.0; m * n];
    for j in 0..n {
        for i in 0..m {
            let (mut s, mut g) = (c64::new(0.0, 0.0), 0.0);
            for l in 0..k {
                let p = op_at(a, lda, ta, i, l) * op_at(b, ldb, tb, l, j);
                s += p;
                g += p.norm();
            }
            let cb = if beta == T::zero() {
                c64::new(0.0, 0.0)
            } else {
                c(beta) * c(c0[i + j * ldc])
            };
            out[i + j * m] = c(alpha) * s + cb;
            mag[i + j * m] = c(alpha).norm() * g + cb.norm();
        }
    }
    (out, mag)
}

const GEMM_SHAPES: [(usize, usize, usize); 8] = [
    (0, 3, 2),
    (3, 0, 2),
    (3, 2, 0),
    (1, 1, 1),
    (7, 5, 3),
    (5, 3, 7),
    (257, 3, 9),
    (4, 300, 6),
];

fn gemm_case<D, T: Scalar>() -> TestResult
where
    D: TestDevice + BlasGemm<T>,
{
    let mut rng = rng(7);
    for (m, n, k) in GEMM_SHAPES {
        for ta in TRANS {
            for tb in TRANS {
                let zero_beta = (m + n + k) % 2 == 0;
                let (ar, ac) = ta.stored(m, k);
                let (br, bc) = tb.stored(k, n);
                let (lda, ldb, ldc) = (ar + 2, br + 1, m + 3);
                let a = random_vec::<T>(&mut rng, lda * ac);
                let b = random_vec::<T>(&mut rng, ldb * bc);
                let mut cm = random_vec::<T>(&mut rng, ldc * n);
                let alpha: T = rand_scalar(&mut rng);
                let beta = if zero_beta {
                    for v in cm.iter_mut() {
                        *v = T::cast_from(f64::NAN);
                    }
                    T::zero()
                } else {
                    rand_scalar(&mut rng)
                };
                let c0 = cm.clone();
                let (want, mag) =
                    gemm_ref(ta, tb, m, n, k, alpha, &a, lda, &b, ldb, beta, &c0, ldc);
                let (mut da, mut db) = (Buf::on::<D>(a.clone()), Buf::on::<D>(b.clone()));
                let mut dc = Buf::on::<D>(cm);
                // SAFETY: buffers match the stored shapes and leading dimensions.
                unsafe {
                    <D as BlasGemm<T>>::gemm(
                        ta,
                        tb,
                        m,
                        n,
                        k,
                        alpha,
                        da.ptr(),
                        lda,
                        db.ptr(),
                        ldb,
                        beta,
                        dc.ptr(),
                        ldc,
                    )?
                };
                let cm = dc.get();
                for j in 0..n {
                    for i in 0..ldc {
                        let got = cm[i + j * ldc];
                        if i < m {
                            let what =
                                format!("{} gemm {ta}{tb} m={m} n={n} k={k} ({i},{j})", T::DTYPE);
                            let w = i + j * m;
                            assert_close(c(got), want[w], tol::<T>(k, mag[w]), &what);
                        } else {
                            // Rows between m and ldc are not part of C: untouched
                            // (still NaN where beta = 0 came with a NaN-filled C).
                            let untouched = if zero_beta {
                                c(got).re.is_nan()
                            } else {
                                got.same_value(c0[i + j * ldc])
                            };
                            assert!(untouched, "{} gemm wrote padding ({i},{j})", T::DTYPE);
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

device_test!(gemm_matches_reference_for_every_trans_pair_shape_and_ld, D -> Result {
    for_blas_dtypes!(gemm_case, D);
    Ok(())
});

fn gemm_batched_case<D, T: Scalar>() -> TestResult
where
    D: TestDevice + BlasGemmBatched<T> + BlasGemmBatchedStrided<T>,
{
    let mut rng = rng(8);
    let (m, n, k, batch) = (6, 5, 7, 4);
    for (ta, tb) in [
        (Trans::N, Trans::N),
        (Trans::C, Trans::T),
        (Trans::T, Trans::C),
    ] {
        let (ar, ac) = ta.stored(m, k);
        let (br, bc) = tb.stored(k, n);
        let (lda, ldb, ldc) = (ar + 1, br + 2, m + 1);
        let (sa, sb, sc) = (lda * ac + 3, ldb * bc, ldc * n + 5);
        let a = random_vec::<T>(&mut rng, sa * batch);
        let b = random_vec::<T>(&mut rng, sb * batch);
        let c0 = random_vec::<T>(&mut rng, sc * batch);
        let (alpha, beta): (T, T) = (rand_scalar(&mut rng), rand_scalar(&mut rng));
        let (mut da, mut db) = (Buf::on::<D>(a.clone()), Buf::on::<D>(b.clone()));
        let (mut dcp, mut dcs) = (Buf::on::<D>(c0.clone()), Buf::on::<D>(c0.clone()));
        let (pa, pb, pc) = (da.ptr(), db.ptr(), dcp.ptr());
        // Entry pointers are offsets into the buffers (device addresses on the GPU).
        let ap: Vec<*const T> = (0..batch)
            .map(|i| pa.wrapping_add(i * sa) as *const T)
            .collect();
        let bp: Vec<*const T> = (0..batch)
            .map(|i| pb.wrapping_add(i * sb) as *const T)
            .collect();
        let cp: Vec<*mut T> = (0..batch).map(|i| pc.wrapping_add(i * sc)).collect();
        // SAFETY: each entry spans its matrices; the C entries are disjoint.
        unsafe {
            <D as BlasGemmBatched<T>>::gemm_batched(
                ta, tb, m, n, k, alpha, &ap, lda, &bp, ldb, beta, &cp, ldc,
            )?;
            <D as BlasGemmBatchedStrided<T>>::gemm_batched_strided(
                ta,
                tb,
                m,
                n,
                k,
                alpha,
                pa,
                lda,
                sa,
                pb,
                ldb,
                sb,
                beta,
                dcs.ptr(),
                ldc,
                sc,
                batch,
            )?;
        }
        let (c_ptrs, c_strided) = (dcp.get(), dcs.get());
        for i in 0..batch {
            let (want, mag) = gemm_ref(
                ta,
                tb,
                m,
                n,
                k,
                alpha,
                &a[i * sa..],
                lda,
                &b[i * sb..],
                ldb,
                beta,
                &c0[i * sc..],
                ldc,
            );
            for col in 0..n {
                for row in 0..m {
                    let g = i * sc + row + col * ldc;
                    let w = row + col * m;
                    let what =
                        format!("{} gemm_batched {ta}{tb} batch {i} ({row},{col})", T::DTYPE);
                    assert_close(c(c_ptrs[g]), want[w], tol::<T>(k, mag[w]), &what);
                    assert_close(c(c_strided[g]), want[w], tol::<T>(k, mag[w]), &what);
                }
            }
        }
    }
    Ok(())
}

device_test!(gemm_batched_and_gemm_batched_strided_match_reference, D -> Result {
    for_blas_dtypes!(gemm_batched_case, D);
    Ok(())
});

// ---- bad arguments -----------------------------------------------------------------

#[test]
fn gemm_rejects_small_leading_dimensions_and_null_pointers() -> TestResult {
    let a = [1.0f64; 64];
    let mut cm = vec![0.0f64; 64];
    // SAFETY: every call is rejected before memory is touched, or fits in 64 elements.
    unsafe {
        let e = <CpuDevice as BlasGemm<f64>>::gemm(
            Trans::N,
            Trans::N,
            4,
            4,
            4,
            1.0,
            a.as_ptr(),
            3,
            a.as_ptr(),
            4,
            0.0,
            cm.as_mut_ptr(),
            4,
        )
        .unwrap_err();
        assert!(
            matches!(e, Error::InvalidArgument { op: "gemm", .. }),
            "{e}"
        );
        assert!(e.to_string().contains("`lda` >= max(1, 4)"), "{e}");
        assert!(e.to_string().contains("`lda` = 3"), "{e}");
        // For op(A) = Aᵀ, A is stored k × m, so lda must cover k.
        let e = <CpuDevice as BlasGemm<f64>>::gemm(
            Trans::T,
            Trans::N,
            2,
            2,
            5,
            1.0,
            a.as_ptr(),
            4,
            a.as_ptr(),
            5,
            0.0,
            cm.as_mut_ptr(),
            2,
        )
        .unwrap_err();
        assert!(e.to_string().contains("max(1, 5)"), "{e}");
        let e = <CpuDevice as BlasGemm<f64>>::gemm(
            Trans::N,
            Trans::N,
            2,
            2,
            2,
            1.0,
            a.as_ptr(),
            2,
            a.as_ptr(),
            2,
            0.0,
            cm.as_mut_ptr(),
            1,
        )
        .unwrap_err();
        assert!(e.to_string().contains("`ldc`"), "{e}");
        let e = <CpuDevice as BlasGemm<f64>>::gemm(
            Trans::N,
            Trans::N,
            2,
            2,
            2,
            1.0,
            std::ptr::null(),
            2,
            a.as_ptr(),
            2,
            0.0,
            cm.as_mut_ptr(),
            2,
        )
        .unwrap_err();
        assert!(e.to_string().contains("null pointer"), "{e}");
        // lda = 0 is rejected even for an empty matrix (reference BLAS: lda >= 1).
        assert!(<CpuDevice as BlasGemm<f64>>::gemm(
            Trans::N,
            Trans::N,
            0,
            2,
            2,
            1.0,
            a.as_ptr(),
            0,
            a.as_ptr(),
            2,
            0.0,
            cm.as_mut_ptr(),
            1,
        )
        .is_err());
    }
    Ok(())
}

#[test]
fn gemm_rejects_sizes_beyond_the_blas_integer() -> TestResult {
    let a = [1.0f32];
    let mut cm = [0.0f32];
    let big = i32::MAX as usize + 1;
    // SAFETY: rejected before any memory is touched.
    let e = unsafe {
        <CpuDevice as BlasGemm<f32>>::gemm(
            Trans::N,
            Trans::N,
            1,
            1,
            big,
            1.0,
            a.as_ptr(),
            1,
            a.as_ptr(),
            big,
            0.0,
            cm.as_mut_ptr(),
            1,
        )
    }
    .unwrap_err();
    assert!(matches!(e, Error::Overflow { .. }), "{e}");
    Ok(())
}

#[test]
fn gemv_rejects_zero_increment_and_small_lda() -> TestResult {
    let a = [1.0f32; 16];
    let mut y = vec![0.0f32; 4];
    // SAFETY: rejected before any memory is touched.
    unsafe {
        let e = <CpuDevice as BlasGemv<f32>>::gemv(
            Trans::N,
            2,
            2,
            1.0,
            a.as_ptr(),
            2,
            a.as_ptr(),
            0,
            0.0,
            y.as_mut_ptr(),
            1,
        )
        .unwrap_err();
        assert!(e.to_string().contains("non-zero increment `incx`"), "{e}");
        let e = <CpuDevice as BlasGemv<f32>>::gemv(
            Trans::T,
            3,
            2,
            1.0,
            a.as_ptr(),
            2,
            a.as_ptr(),
            1,
            0.0,
            y.as_mut_ptr(),
            1,
        )
        .unwrap_err();
        assert!(e.to_string().contains("`lda` >= max(1, 3)"), "{e}");
    }
    Ok(())
}

#[test]
fn level1_general_paths_refuse_what_the_fast_path_sends_them() -> TestResult {
    let x = [1.0f64; 4];
    let mut y = [0.0f64; 4];
    let big = i32::MAX as usize + 1;
    // SAFETY: every call is rejected before any memory is touched.
    unsafe {
        let e = <CpuDevice as BlasScal<f64>>::scal(2, 2.0, y.as_mut_ptr(), 0).unwrap_err();
        assert!(e.to_string().contains("non-zero increment"), "{e}");
        let e =
            <CpuDevice as BlasScal<c64>>::scal_real(2, 2.0, std::ptr::null_mut(), 1).unwrap_err();
        assert!(e.to_string().contains("non-null pointer"), "{e}");
        let e = <CpuDevice as BlasDot<f64>>::dotu(2, x.as_ptr(), 0, x.as_ptr(), 1).unwrap_err();
        assert!(e.to_string().contains("non-zero increment"), "{e}");
        // Beyond the BLAS integer: refused as an overflow, not truncated.
        let e = <CpuDevice as BlasAxpy<f64>>::axpy(big, 1.0, x.as_ptr(), 1, y.as_mut_ptr(), 1)
            .unwrap_err();
        assert!(matches!(e, Error::Overflow { op: "axpy", .. }), "{e}");
        let e = <CpuDevice as BlasNrm2<f64>>::nrm2(big, x.as_ptr(), 1).unwrap_err();
        assert!(matches!(e, Error::Overflow { op: "nrm2", .. }), "{e}");
    }
    assert_eq!(y, [0.0; 4], "nothing is written by a refused call");
    Ok(())
}

#[test]
fn dot_axpy_and_copy_reject_zero_increments() -> TestResult {
    let x = [1.0f64; 4];
    let mut y = [0.0f64; 4];
    // SAFETY: rejected before any memory is touched.
    unsafe {
        assert!(<CpuDevice as BlasDot<f64>>::dot(2, x.as_ptr(), 1, y.as_ptr(), 0).is_err());
        assert!(
            <CpuDevice as BlasAxpy<f64>>::axpy(2, 1.0, x.as_ptr(), 0, y.as_mut_ptr(), 1).is_err()
        );
        assert!(<CpuDevice as BlasCopy<f64>>::copy(2, x.as_ptr(), 1, y.as_mut_ptr(), 0).is_err());
        assert!(<CpuDevice as BlasNrm2<f64>>::nrm2(2, std::ptr::null(), 1).is_err());
    }
    Ok(())
}

#[test]
fn gemm_batched_rejects_pointer_arrays_of_different_lengths() -> TestResult {
    let a = [1.0f64; 4];
    let mut cm = [0.0f64; 4];
    let ap = [a.as_ptr(), a.as_ptr()];
    let cp = [cm.as_mut_ptr()];
    // SAFETY: rejected before any memory is touched.
    let e = unsafe {
        <CpuDevice as BlasGemmBatched<f64>>::gemm_batched(
            Trans::N,
            Trans::N,
            2,
            2,
            2,
            1.0,
            &ap,
            2,
            &ap,
            2,
            0.0,
            &cp,
            2,
        )
    }
    .unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    assert!(e.to_string().contains("[2, 2, 1]"), "{e}");
    Ok(())
}

#[test]
fn trans_parses_lowercase_and_rejects_unknown_characters() -> TestResult {
    assert_eq!(Trans::from_char('t')?, Trans::T);
    assert_eq!("C".parse::<Trans>()?, Trans::C);
    let e = Trans::from_char('Q').unwrap_err();
    assert_eq!(
        e.to_string(),
        "unknown BLAS trans 'Q': expected N, T or C (either case)"
    );
    assert!("".parse::<Trans>().is_err());
    Ok(())
}

#[test]
fn gemm_batched_strided_rejects_a_batch_beyond_the_address_space() -> TestResult {
    let a = [1.0f64; 4];
    let mut cm = [0.0f64; 4];
    // SAFETY: rejected before any memory is touched.
    let e = unsafe {
        <CpuDevice as BlasGemmBatchedStrided<f64>>::gemm_batched_strided(
            Trans::N,
            Trans::N,
            2,
            2,
            2,
            1.0,
            a.as_ptr(),
            2,
            usize::MAX / 2,
            a.as_ptr(),
            2,
            0,
            0.0,
            cm.as_mut_ptr(),
            2,
            0,
            3,
        )
    }
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Overflow {
                op: "gemm_batched_strided",
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("batch entry 2 of `a`"), "{e}");
    Ok(())
}
