//! LAPACK kernels checked by the identities they promise (A V = V Λ, Vᴴ V = I, L Lᴴ = A,
//! T T⁻¹ = I, P A = L U, ...) in complex double, for f32, f64, c32 and c64, with n = 0,
//! 1, odd and ≥ 300, lda > n and both triangles; and each failure mode returns
//! `Error::Lapack`. `cargo test -p ctensor-kernels heevd_` runs one family.
#![allow(clippy::needless_range_loop)]
#![deny(unused_must_use)]

mod common;

use common::*;
use ctensor_base::{c64, CastFrom, CpuDevice, Error, Scalar};
use ctensor_kernels::blas::Trans;
use ctensor_kernels::lapack::*;
use rand::rngs::StdRng;
use rand::Rng;

/// What a helper that can fail returns.
type Fallible<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// A column-major `rows × cols` matrix in complex double (the reference side).
#[derive(Clone)]
struct M {
    rows: usize,
    cols: usize,
    v: Vec<c64>,
}

impl M {
    fn zeros(rows: usize, cols: usize) -> M {
        M {
            rows,
            cols,
            v: vec![c64::new(0.0, 0.0); rows * cols],
        }
    }
    fn eye(n: usize) -> M {
        let mut m = M::zeros(n, n);
        for i in 0..n {
            m.v[i + i * n] = c64::new(1.0, 0.0);
        }
        m
    }
    fn at(&self, i: usize, j: usize) -> c64 {
        self.v[i + j * self.rows]
    }
    fn set(&mut self, i: usize, j: usize, x: c64) {
        self.v[i + j * self.rows] = x;
    }
    /// Uniform entries in [-1, 1] (real for real types).
    fn random<T: Scalar>(rng: &mut StdRng, rows: usize, cols: usize) -> M {
        let mut m = M::zeros(rows, cols);
        for x in m.v.iter_mut() {
            let im = if T::DTYPE.is_complex() {
                rng.gen_range(-1.0..1.0)
            } else {
                0.0
            };
            *x = c64::new(rng.gen_range(-1.0..1.0), im);
        }
        m
    }
    /// A random Hermitian matrix.
    fn hermitian<T: Scalar>(rng: &mut StdRng, n: usize) -> M {
        let r = M::random::<T>(rng, n, n);
        let mut h = M::zeros(n, n);
        for j in 0..n {
            for i in 0..n {
                h.set(i, j, (r.at(i, j) + r.at(j, i).conj()) * 0.5);
            }
        }
        h
    }
    /// A random Hermitian positive definite matrix, well conditioned: `R Rᴴ / n + I`.
    fn hpd<T: Scalar>(rng: &mut StdRng, n: usize) -> M {
        let r = M::random::<T>(rng, n, n);
        let mut b = r.mul(&r.adjoint());
        for x in b.v.iter_mut() {
            *x /= n.max(1) as f64;
        }
        for i in 0..n {
            b.v[i + i * n] += 1.0;
        }
        b
    }
    fn mul(&self, o: &M) -> M {
        assert_eq!(self.cols, o.rows);
        let mut out = M::zeros(self.rows, o.cols);
        for j in 0..o.cols {
            for l in 0..self.cols {
                let b = o.at(l, j);
                for i in 0..self.rows {
                    out.v[i + j * self.rows] += self.v[i + l * self.rows] * b;
                }
            }
        }
        out
    }
    fn adjoint(&self) -> M {
        let mut out = M::zeros(self.cols, self.rows);
        for j in 0..self.cols {
            for i in 0..self.rows {
                out.set(j, i, self.at(i, j).conj());
            }
        }
        out
    }
    fn sub(&self, o: &M) -> M {
        M {
            rows: self.rows,
            cols: self.cols,
            v: self.v.iter().zip(&o.v).map(|(a, b)| a - b).collect(),
        }
    }
    fn norm(&self) -> f64 {
        self.v.iter().map(|x| x.norm_sqr()).sum::<f64>().sqrt()
    }
    /// Column-major storage of type `T` with leading dimension `ld` (padding NaN, so
    /// reading it would show).
    fn store<T: Scalar>(&self, ld: usize) -> Vec<T> {
        let mut out = vec![T::cast_from(f64::NAN); ld * self.cols];
        for j in 0..self.cols {
            for i in 0..self.rows {
                out[i + j * ld] = T::cast_from(self.at(i, j));
            }
        }
        out
    }
    /// The `rows × cols` matrix stored in `buf` with leading dimension `ld`.
    fn load<T: Scalar>(buf: &[T], rows: usize, cols: usize, ld: usize) -> M {
        let mut m = M::zeros(rows, cols);
        for j in 0..cols {
            for i in 0..rows {
                m.set(i, j, c(buf[i + j * ld]));
            }
        }
        m
    }
    /// The triangle `uplo` (with diagonal) of `self`, the rest zero.
    fn triangle(&self, uplo: Uplo) -> M {
        let mut m = self.clone();
        for j in 0..self.cols {
            for i in 0..self.rows {
                let keep = match uplo {
                    Uplo::Upper => i <= j,
                    Uplo::Lower => i >= j,
                };
                if !keep {
                    m.set(i, j, c64::new(0.0, 0.0));
                }
            }
        }
        m
    }
    /// The Hermitian matrix whose `uplo` triangle is that of `self`.
    fn hermitian_from(&self, uplo: Uplo) -> M {
        let mut m = self.clone();
        for j in 0..self.cols {
            for i in 0..self.rows {
                let from_other = match uplo {
                    Uplo::Upper => i > j,
                    Uplo::Lower => i < j,
                };
                if from_other {
                    m.set(i, j, self.at(j, i).conj());
                }
            }
        }
        m
    }
}

/// `‖got − want‖_F <= 30 · n · eps · scale`: backward-stable LAPACK routines have
/// residuals of order n · eps · ‖A‖; the factor 30 absorbs the constants.
fn assert_small<T: Scalar>(residual: f64, n: usize, scale: f64, what: &str) {
    let tol = 30.0 * (n.max(1) as f64) * eps::<T>() * scale.max(1.0);
    assert!(
        residual <= tol,
        "{} {what}: residual {residual:e} > tolerance {tol:e}",
        T::DTYPE
    );
}

const UPLOS: [Uplo; 2] = [Uplo::Upper, Uplo::Lower];
const EIG_SIZES: [usize; 6] = [0, 1, 2, 7, 33, 300];

fn check_eigenpairs<T: Scalar>(a: &M, w: &[c64], v: &M, what: &str) {
    let n = a.rows;
    for k in 1..w.len() {
        assert!(
            w[k - 1].re <= w[k].re,
            "{what}: eigenvalues not ascending: {w:?}"
        );
    }
    let mut vl = v.clone();
    for j in 0..v.cols {
        for i in 0..n {
            vl.v[i + j * n] *= w[j];
        }
    }
    let av = a.mul(v);
    assert_small::<T>(
        av.sub(&vl).norm(),
        n,
        a.norm(),
        &format!("{what}: ‖AV − VΛ‖"),
    );
    let vhv = v.adjoint().mul(v);
    let id = M::eye(v.cols);
    assert_small::<T>(vhv.sub(&id).norm(), n, 1.0, &format!("{what}: ‖VᴴV − I‖"));
}

fn heevd_case<D, T: Scalar>() -> TestResult
where
    D: TestDevice + LapackHeevd<T>,
{
    let mut rng = rng(11);
    for n in EIG_SIZES {
        for uplo in UPLOS {
            let a = M::hermitian::<T>(&mut rng, n);
            let lda = n + 2;
            // Only the `uplo` triangle may be read: poison the other one.
            let mut buf = a.triangle(uplo).store::<T>(lda);
            for j in 0..n {
                for i in 0..n {
                    if (uplo == Uplo::Upper && i > j) || (uplo == Uplo::Lower && i < j) {
                        buf[i + j * lda] = T::cast_from(f64::NAN);
                    }
                }
            }
            let mut vals_only = Buf::on::<D>(buf.clone());
            let mut buf = Buf::on::<D>(buf);
            let mut w = Buf::on::<D>(vec![<T::Real as Scalar>::zero(); n]);
            let mut w2 = Buf::on::<D>(vec![<T::Real as Scalar>::zero(); n]);
            // SAFETY: buffers of lda·n and n elements.
            unsafe {
                <D as LapackHeevd<T>>::heevd(Jobz::Vectors, uplo, n, buf.ptr(), lda, w.ptr())?;
                <D as LapackHeevd<T>>::heevd(
                    Jobz::ValuesOnly,
                    uplo,
                    n,
                    vals_only.ptr(),
                    lda,
                    w2.ptr(),
                )?;
            }
            let (w, w2) = (w.get(), w2.get());
            let wc: Vec<c64> = w.iter().map(|&x| c(x)).collect();
            let v = M::load(&buf.get(), n, n, lda);
            check_eigenpairs::<T>(&a, &wc, &v, &format!("heevd n={n} {uplo}"));
            for k in 0..n {
                let tol = 30.0 * n as f64 * eps::<T>() * a.norm().max(1.0);
                assert_close(
                    c(w2[k]),
                    wc[k],
                    tol,
                    &format!("{} heevd values-only", T::DTYPE),
                );
            }
        }
    }
    Ok(())
}

device_test!(heevd_eigenpairs_satisfy_av_eq_v_lambda_and_are_orthonormal, D -> Result {
    for_blas_dtypes!(heevd_case, D);
    Ok(())
});

fn heevr_case<D, T: Scalar>() -> TestResult
where
    D: TestDevice + LapackHeevr<T> + LapackHeevd<T>,
{
    let mut rng = rng(12);
    for n in [1usize, 2, 9, 300] {
        let a = M::hermitian::<T>(&mut rng, n);
        let lda = n + 1;
        // All eigenvalues from heevd, to pick ranges and compare.
        let mut full = Buf::on::<D>(a.store::<T>(lda));
        let mut w_all = Buf::on::<D>(vec![<T::Real as Scalar>::zero(); n]);
        // SAFETY: lda·n and n elements.
        unsafe {
            <D as LapackHeevd<T>>::heevd(
                Jobz::ValuesOnly,
                Uplo::Lower,
                n,
                full.ptr(),
                lda,
                w_all.ptr(),
            )
        }?;
        let w_all: Vec<f64> = w_all.get().iter().map(|&x| c(x).re).collect();
        let lo = n / 3;
        let hi = (lo + 1 + n / 4).min(n);
        let mid = |k: usize| (w_all[k - 1] + w_all[k]) / 2.0;
        let mut ranges: Vec<(EigRange<T::Real>, Range)> = vec![
            (EigRange::All, 0..n),
            (EigRange::Index(lo..hi), lo..hi),
            (EigRange::Index(0..1), 0..1),
        ];
        if n >= 3 {
            // (mid(1), mid(n-1)] holds eigenvalues 1..n-1, away from any boundary.
            let (l, u) = (mid(1), mid(n - 1));
            let value = EigRange::Value {
                lower: <T::Real as CastFrom<f64>>::cast_from(l),
                upper: <T::Real as CastFrom<f64>>::cast_from(u),
            };
            ranges.push((value, 1..n - 1));
        }
        for (range, want) in ranges {
            for uplo in UPLOS {
                // NaN in the rows past m (inside the leading dimension), which must not be read.
                let mut buf = Buf::on::<D>(nan_padded::<T>(&a, lda));
                let ldz = n + 3;
                let mut z = Buf::on::<D>(vec![T::zero(); ldz * n]);
                let mut w = Buf::on::<D>(vec![<T::Real as Scalar>::zero(); n]);
                // SAFETY: z has n columns of ldz, w n values.
                let m = unsafe {
                    <D as LapackHeevr<T>>::heevr(
                        uplo,
                        n,
                        buf.ptr(),
                        lda,
                        range.clone(),
                        w.ptr(),
                        z.ptr(),
                        ldz,
                    )
                }?;
                let (w, z) = (w.get(), z.get());
                let what = format!("heevr n={n} {range:?} {uplo}");
                assert_eq!(m, want.len(), "{} {what}: eigenpair count", T::DTYPE);
                let wc: Vec<c64> = w[..m].iter().map(|&x| c(x)).collect();
                for (k, &x) in want.clone().zip(&wc) {
                    let tol = 30.0 * n as f64 * eps::<T>() * a.norm().max(1.0);
                    assert_close(x, c64::new(w_all[k], 0.0), tol, &what);
                }
                let v = M::load(&z, n, m, ldz);
                check_eigenpairs::<T>(&a, &wc, &v, &what);
            }
        }
    }
    Ok(())
}

type Range = std::ops::Range<usize>;

device_test!(heevr_index_and_value_ranges_give_the_right_eigenpairs, D -> Result {
    for_blas_dtypes!(heevr_case, D);
    Ok(())
});

fn hegvd_case<D, T: Scalar>() -> TestResult
where
    D: TestDevice + LapackHegvd<T>,
{
    let mut rng = rng(13);
    for n in [0usize, 1, 2, 7, 300] {
        for itype in 1..=3 {
            for uplo in UPLOS {
                if n == 300 && (itype != 1 || uplo == Uplo::Upper) {
                    continue; // one large case per dtype keeps the debug build quick
                }
                let a = M::hermitian::<T>(&mut rng, n);
                let b = M::hpd::<T>(&mut rng, n);
                let (lda, ldb) = (n + 1, n + 2);
                let mut abuf = Buf::on::<D>(a.store::<T>(lda));
                let mut bbuf = Buf::on::<D>(b.store::<T>(ldb));
                let mut w = Buf::on::<D>(vec![<T::Real as Scalar>::zero(); n]);
                // SAFETY: buffers of lda·n, ldb·n and n elements.
                unsafe {
                    <D as LapackHegvd<T>>::hegvd(
                        itype,
                        Jobz::Vectors,
                        uplo,
                        n,
                        abuf.ptr(),
                        lda,
                        bbuf.ptr(),
                        ldb,
                        w.ptr(),
                    )
                }?;
                let w = w.get();
                let v = M::load(&abuf.get(), n, n, lda);
                let mut vl = v.clone();
                for j in 0..n {
                    for i in 0..n {
                        vl.v[i + j * n] *= c(w[j]);
                    }
                }
                let what = format!("hegvd itype={itype} n={n} {uplo}");
                let (lhs, rhs) = match itype {
                    1 => (a.mul(&v), b.mul(&vl)), // A v = λ B v
                    2 => (a.mul(&b.mul(&v)), vl), // A B v = λ v
                    _ => (b.mul(&a.mul(&v)), vl), // B A v = λ v
                };
                let scale = a.norm() * b.norm() * v.norm();
                assert_small::<T>(lhs.sub(&rhs).norm(), n, scale, &what);
                if itype != 3 {
                    let vbv = v.adjoint().mul(&b.mul(&v));
                    assert_small::<T>(vbv.sub(&M::eye(n)).norm(), n, b.norm(), &what);
                }
            }
        }
    }
    Ok(())
}

device_test!(hegvd_solves_all_three_problem_types, D -> Result {
    for_blas_dtypes!(hegvd_case, D);
    Ok(())
});

fn hegvd_indefinite_case<D, T: Scalar>()
where
    D: TestDevice + LapackHegvd<T>,
{
    let n = 4;
    let a = M::eye(n).store::<T>(n);
    // B = diag(1, 1, -1, 1): its leading minor of order 3 is negative.
    let mut bm = M::eye(n);
    bm.set(2, 2, c64::new(-1.0, 0.0));
    let (mut abuf, mut bbuf) = (Buf::on::<D>(a), Buf::on::<D>(bm.store::<T>(n)));
    let mut w = Buf::on::<D>(vec![<T::Real as Scalar>::zero(); n]);
    // SAFETY: n × n buffers and n values.
    let e = unsafe {
        <D as LapackHegvd<T>>::hegvd(
            1,
            Jobz::Vectors,
            Uplo::Lower,
            n,
            abuf.ptr(),
            n,
            bbuf.ptr(),
            n,
            w.ptr(),
        )
    }
    .unwrap_err();
    match &e {
        Error::Lapack { routine, info, .. } => {
            assert!(routine.ends_with("gvd"), "{e}");
            assert_eq!(*info, (n + 3) as i64, "{e}");
        }
        _ => panic!("expected Error::Lapack, got {e}"),
    }
    assert!(
        e.to_string()
            .contains("order 3 of B is not positive definite"),
        "{e}"
    );
}

device_test!(hegvd_with_indefinite_overlap_returns_the_lapack_error, D -> Result {
    for_blas_dtypes!(hegvd_indefinite_case, D);
    Ok(())
});

fn potrf_potri_case<D, T: Scalar>() -> TestResult
where
    D: TestDevice + LapackPotrf<T> + LapackPotri<T> + SetMatrix<T>,
{
    let mut rng = rng(14);
    for n in [0usize, 1, 2, 7, 300] {
        for uplo in UPLOS {
            let a = M::hpd::<T>(&mut rng, n);
            let lda = n + 3;
            // NaN in the rows past m (inside the leading dimension), which must not be read.
            let mut buf = Buf::on::<D>(nan_padded::<T>(&a, lda));
            // SAFETY: lda·n elements.
            unsafe {
                <D as LapackPotrf<T>>::potrf(uplo, n, buf.ptr(), lda)?;
            }
            let mut factor = Buf::on::<D>(buf.get());
            // SAFETY: as above.
            unsafe { <D as SetMatrix<T>>::set_matrix(uplo, n, factor.ptr(), lda)? };
            let f = M::load(&factor.get(), n, n, lda);
            let product = match uplo {
                Uplo::Lower => f.mul(&f.adjoint()), // L Lᴴ
                Uplo::Upper => f.adjoint().mul(&f), // Uᴴ U
            };
            let what = format!("potrf n={n} {uplo}");
            assert_small::<T>(product.sub(&a).norm(), n, a.norm(), &what);
            // potri: the same triangle of A⁻¹.
            // SAFETY: as above.
            unsafe { <D as LapackPotri<T>>::potri(uplo, n, buf.ptr(), lda) }?;
            let inv = M::load(&buf.get(), n, n, lda).hermitian_from(uplo);
            let what = format!("potri n={n} {uplo}");
            let cond = a.norm() * inv.norm();
            assert_small::<T>(a.mul(&inv).sub(&M::eye(n)).norm(), n, cond, &what);
        }
    }
    Ok(())
}

device_test!(potrf_gives_l_lh_eq_a_and_potri_the_inverse, D -> Result {
    for_blas_dtypes!(potrf_potri_case, D);
    Ok(())
});

fn potrf_indefinite_case<D, T: Scalar>()
where
    D: TestDevice + LapackPotrf<T>,
{
    let mut m = M::eye(3);
    m.set(1, 1, c64::new(-2.0, 0.0));
    let mut buf = Buf::on::<D>(m.store::<T>(3));
    // SAFETY: 3 × 3.
    let e = unsafe { <D as LapackPotrf<T>>::potrf(Uplo::Upper, 3, buf.ptr(), 3) }.unwrap_err();
    assert!(matches!(e, Error::Lapack { info: 2, .. }), "{e}");
    assert!(
        e.to_string()
            .contains("leading minor of order 2 is not positive definite"),
        "{e}"
    );
}

device_test!(potrf_of_an_indefinite_matrix_returns_the_lapack_error, D -> Result {
    for_blas_dtypes!(potrf_indefinite_case, D);
    Ok(())
});

fn trtri_case<D, T: Scalar>() -> TestResult
where
    D: TestDevice + LapackTrtri<T>,
{
    let mut rng = rng(15);
    for n in [0usize, 1, 2, 7, 300] {
        for uplo in UPLOS {
            for diag in [Diag::NonUnit, Diag::Unit] {
                // Well conditioned: off-diagonal entries scaled by 1/n, diagonal ≥ 1.
                let mut t = M::random::<T>(&mut rng, n, n).triangle(uplo);
                for j in 0..n {
                    for i in 0..n {
                        let x = t.at(i, j) / n as f64;
                        t.set(i, j, x);
                    }
                    let d = t.at(j, j) * (n as f64) + 2.0;
                    t.set(j, j, d);
                }
                let lda = n + 1;
                let mut buf = t.store::<T>(lda);
                if diag == Diag::Unit {
                    // The diagonal must not be referenced: poison it.
                    for j in 0..n {
                        buf[j + j * lda] = T::cast_from(f64::NAN);
                    }
                    for j in 0..n {
                        t.set(j, j, c64::new(1.0, 0.0));
                    }
                }
                let mut buf = Buf::on::<D>(buf);
                // SAFETY: lda·n elements.
                unsafe { <D as LapackTrtri<T>>::trtri(uplo, diag, n, buf.ptr(), lda) }?;
                let mut inv = M::load(&buf.get(), n, n, lda).triangle(uplo);
                if diag == Diag::Unit {
                    for j in 0..n {
                        inv.set(j, j, c64::new(1.0, 0.0));
                    }
                }
                let what = format!("trtri n={n} {uplo} {diag:?}");
                let scale = t.norm() * inv.norm();
                assert_small::<T>(t.mul(&inv).sub(&M::eye(n)).norm(), n, scale, &what);
            }
        }
    }
    Ok(())
}

device_test!(trtri_gives_t_tinv_eq_i_for_both_triangles_and_diagonals, D -> Result {
    for_blas_dtypes!(trtri_case, D);
    Ok(())
});

fn getrf_getrs_case<D, T: Scalar>() -> TestResult
where
    D: TestDevice + LapackGetrf<T> + LapackGetrs<T>,
{
    let mut rng = rng(16);
    // P A = L U for non-square shapes.
    for (m, n) in [(0usize, 3usize), (1, 1), (7, 4), (4, 7), (300, 301)] {
        let a = M::random::<T>(&mut rng, m, n);
        let lda = m + 2;
        // NaN in the rows past m (inside the leading dimension), which must not be read.
        let mut buf = Buf::on::<D>(nan_padded::<T>(&a, lda));
        let k = m.min(n);
        let mut ipiv = Buf::on::<D>(vec![0i32; k]);
        // SAFETY: lda·n elements and k pivots.
        unsafe { <D as LapackGetrf<T>>::getrf(m, n, buf.ptr(), lda, ipiv.ptr()) }?;
        let (lu, ipiv) = (M::load(&buf.get(), m, n, lda), ipiv.get());
        let mut l = M::zeros(m, k);
        let mut u = M::zeros(k, n);
        for i in 0..m {
            for j in 0..n {
                if i > j && j < k {
                    l.set(i, j, lu.at(i, j));
                } else if i < k {
                    u.set(i, j, lu.at(i, j));
                }
            }
            if i < k {
                l.set(i, i, c64::new(1.0, 0.0));
            }
        }
        let mut pa = a.clone();
        for (i, &p) in ipiv.iter().enumerate() {
            let p = p as usize - 1;
            for j in 0..n {
                let (x, y) = (pa.at(i, j), pa.at(p, j));
                pa.set(i, j, y);
                pa.set(p, j, x);
            }
        }
        let what = format!("getrf {m}x{n}");
        assert_small::<T>(l.mul(&u).sub(&pa).norm(), m.max(n), a.norm(), &what);
    }
    // Solve op(A) X = B.
    for n in [1usize, 5, 300] {
        for trans in [Trans::N, Trans::T, Trans::C] {
            let mut a = M::random::<T>(&mut rng, n, n);
            for i in 0..n {
                let d = a.at(i, i) + 4.0;
                a.set(i, i, d);
            }
            let nrhs = 3;
            let b = M::random::<T>(&mut rng, n, nrhs);
            let (lda, ldb) = (n + 1, n + 4);
            let mut abuf = Buf::on::<D>(a.store::<T>(lda));
            let mut bbuf = Buf::on::<D>(b.store::<T>(ldb));
            let mut ipiv = Buf::on::<D>(vec![0i32; n]);
            // SAFETY: buffers match n, nrhs and the leading dimensions.
            unsafe {
                <D as LapackGetrf<T>>::getrf(n, n, abuf.ptr(), lda, ipiv.ptr())?;
                <D as LapackGetrs<T>>::getrs(
                    trans,
                    n,
                    nrhs,
                    abuf.ptr(),
                    lda,
                    ipiv.ptr(),
                    bbuf.ptr(),
                    ldb,
                )?;
            }
            let x = M::load(&bbuf.get(), n, nrhs, ldb);
            let op_a = match trans {
                Trans::N => a.clone(),
                Trans::C => a.adjoint(),
                Trans::T => {
                    let mut t = a.adjoint();
                    t.v.iter_mut().for_each(|v| *v = v.conj());
                    t
                }
            };
            let what = format!("getrs {trans} n={n}");
            let scale = a.norm() * x.norm();
            assert_small::<T>(op_a.mul(&x).sub(&b).norm(), n, scale, &what);
        }
    }
    Ok(())
}

device_test!(getrf_gives_pa_eq_lu_and_getrs_solves_every_trans, D -> Result {
    for_blas_dtypes!(getrf_getrs_case, D);
    Ok(())
});

device_test!(getrf_of_a_singular_matrix_returns_the_lapack_error, D -> Result {
    let mut a = Buf::on::<D>(vec![1.0f64, 2.0, 2.0, 4.0]); // rank 1
    let mut ipiv = Buf::on::<D>(vec![0i32; 2]);
    // SAFETY: 2 × 2 and two pivots.
    let e = unsafe { <D as LapackGetrf<f64>>::getrf(2, 2, a.ptr(), 2, ipiv.ptr()) }.unwrap_err();
    match &e {
        Error::Lapack { routine, info, .. } => {
            assert!(routine.ends_with("getrf"), "{e}");
            assert_eq!(*info, 2, "{e}");
        }
        _ => panic!("expected Error::Lapack, got {e}"),
    }
    assert!(e.to_string().contains("singular"), "{e}");
    Ok(())
});

fn set_matrix_case<D, T: Scalar>() -> TestResult
where
    D: TestDevice + SetMatrix<T>,
{
    let mut rng = rng(17);
    for n in [0usize, 1, 5, 257] {
        for keep in UPLOS {
            let lda = n + 2;
            let orig = random_vec::<T>(&mut rng, lda * n);
            let mut buf = Buf::on::<D>(orig.clone());
            // SAFETY: lda·n elements.
            unsafe { <D as SetMatrix<T>>::set_matrix(keep, n, buf.ptr(), lda) }?;
            let buf = buf.get();
            for j in 0..n {
                for i in 0..lda {
                    let k = i + j * lda;
                    let zeroed = i < n
                        && match keep {
                            Uplo::Upper => i > j,
                            Uplo::Lower => i < j,
                        };
                    let want = if zeroed { T::zero() } else { orig[k] };
                    assert_eq!(
                        buf[k],
                        want,
                        "{} set_matrix n={n} {keep} ({i},{j})",
                        T::DTYPE
                    );
                }
            }
        }
    }
    Ok(())
}

device_test!(set_matrix_zeroes_exactly_the_other_triangle_for_every_dtype, D -> Result {
    for_all_dtypes!(set_matrix_case, D);
    Ok(())
});

// ---- bad arguments -----------------------------------------------------------------

/// Argument errors come back before any memory is touched or any library is called, so
/// this runs on every device, with or without a GPU.
fn bad_arguments_case<D>()
where
    D: LapackPotrf<f64>
        + LapackHegvd<f64>
        + LapackHeevr<f64>
        + LapackHeevd<f64>
        + LapackGetrf<f64>
        + LapackGetrs<f64>,
{
    let mut a = [0.0f64; 16];
    let mut b = [0.0f64; 16];
    let mut w = [0.0f64; 4];
    let mut z = [0.0f64; 16];
    let p = a.as_mut_ptr();
    // SAFETY: every call below is rejected before memory is touched.
    unsafe {
        let e = <D as LapackPotrf<f64>>::potrf(Uplo::Lower, 4, p, 3).unwrap_err();
        assert!(e.to_string().contains("`lda` >= max(1, 4)"), "{e}");
        let e = <D as LapackHegvd<f64>>::hegvd(
            4,
            Jobz::Vectors,
            Uplo::Lower,
            4,
            p,
            4,
            b.as_mut_ptr(),
            4,
            w.as_mut_ptr(),
        )
        .unwrap_err();
        assert!(matches!(e, Error::OutOfRange { given: 4, .. }), "{e}");
        let e = <D as LapackHeevr<f64>>::heevr(
            Uplo::Lower,
            4,
            p,
            4,
            EigRange::Index(2..5),
            w.as_mut_ptr(),
            z.as_mut_ptr(),
            4,
        )
        .unwrap_err();
        assert!(matches!(e, Error::OutOfRange { given: 5, .. }), "{e}");
        let e = <D as LapackHeevr<f64>>::heevr(
            Uplo::Lower,
            4,
            p,
            4,
            EigRange::Value {
                lower: 1.0,
                upper: 1.0,
            },
            w.as_mut_ptr(),
            z.as_mut_ptr(),
            4,
        )
        .unwrap_err();
        assert!(e.to_string().contains("lower < upper"), "{e}");
        let e = <D as LapackHeevd<f64>>::heevd(
            Jobz::Vectors,
            Uplo::Upper,
            4,
            p,
            4,
            std::ptr::null_mut(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("null pointer for `w`"), "{e}");
        let mut ipiv = [0i32; 4];
        let e = <D as LapackGetrf<f64>>::getrf(4, 3, p, 3, ipiv.as_mut_ptr()).unwrap_err();
        assert!(e.to_string().contains("`lda` >= max(1, 4)"), "{e}");
        let e = <D as LapackGetrf<f64>>::getrf(2, 2, p, 2, std::ptr::null_mut()).unwrap_err();
        assert!(e.to_string().contains("null pointer for `ipiv`"), "{e}");
        let e =
            <D as LapackGetrs<f64>>::getrs(Trans::N, 4, 2, p, 4, ipiv.as_ptr(), z.as_mut_ptr(), 3)
                .unwrap_err();
        assert!(e.to_string().contains("`ldb` >= max(1, 4)"), "{e}");
    }
}

#[test]
fn lapack_kernels_reject_bad_arguments_before_calling_lapack() -> TestResult {
    bad_arguments_case::<CpuDevice>();
    #[cfg(feature = "cuda")]
    bad_arguments_case::<ctensor_base::GpuDevice>();
    assert!(Uplo::from_char('x').is_err());
    assert_eq!(Uplo::from_char('l')?, Uplo::Lower);
    assert!(Diag::from_char('?').is_err());
    assert_eq!(Jobz::from_char('v')?, Jobz::Vectors);
    Ok(())
}

#[test]
fn getrf_and_getrs_on_a_2_mib_stack_thread_do_not_overflow_it() -> TestResult {
    // Threaded OpenBLAS LU needs several MiB of stack; the kernel must provide it.
    let n = 700;
    let mut rng = rng(18);
    let mut a = M::random::<f64>(&mut rng, n, n);
    for i in 0..n {
        let d = a.at(i, i) + 4.0;
        a.set(i, i, d);
    }
    let b = M::random::<f64>(&mut rng, n, 1);
    let (abuf, bbuf) = (a.store::<f64>(n), b.store::<f64>(n));
    let x = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let (mut abuf, mut bbuf) = (abuf, bbuf);
            let mut ipiv = vec![0i32; n];
            // SAFETY: n × n, n pivots, n × 1.
            unsafe {
                <CpuDevice as LapackGetrf<f64>>::getrf(
                    n,
                    n,
                    abuf.as_mut_ptr(),
                    n,
                    ipiv.as_mut_ptr(),
                )
                .unwrap();
                <CpuDevice as LapackGetrs<f64>>::getrs(
                    Trans::N,
                    n,
                    1,
                    abuf.as_ptr(),
                    n,
                    ipiv.as_ptr(),
                    bbuf.as_mut_ptr(),
                    n,
                )
                .unwrap();
            }
            bbuf
        })?
        .join()
        .unwrap();
    let x = M::load(&x, n, 1, n);
    let scale = a.norm() * x.norm();
    assert_small::<f64>(
        a.mul(&x).sub(&b).norm(),
        n,
        scale,
        "getrf+getrs on a small stack",
    );
    Ok(())
}

/// The inverse of `a` by Gauss–Jordan elimination with partial pivoting, in c64: an
/// independent reference for `gecon`.
fn inverse(a: &M) -> Fallible<M> {
    Ok({
        let n = a.rows;
        let (mut l, mut r) = (a.clone(), M::eye(n));
        for k in 0..n {
            let p = (k..n)
                .max_by(|&i, &j| l.at(i, k).norm().total_cmp(&l.at(j, k).norm()))
                .unwrap();
            for j in 0..n {
                let (x, y) = (l.at(k, j), l.at(p, j));
                l.set(k, j, y);
                l.set(p, j, x);
                let (x, y) = (r.at(k, j), r.at(p, j));
                r.set(k, j, y);
                r.set(p, j, x);
            }
            let d = l.at(k, k);
            for j in 0..n {
                l.set(k, j, l.at(k, j) / d);
                r.set(k, j, r.at(k, j) / d);
            }
            for i in (0..n).filter(|&i| i != k) {
                let f = l.at(i, k);
                for j in 0..n {
                    l.set(i, j, l.at(i, j) - f * l.at(k, j));
                    r.set(i, j, r.at(i, j) - f * r.at(k, j));
                }
            }
        }
        r
    })
}

/// `a` stored with leading dimension `ld`, NaN in the rows past `a.rows` (for the float
/// types; integers have no NaN).
fn nan_padded<T: Scalar>(a: &M, ld: usize) -> Vec<T> {
    let mut v = a.store::<T>(ld);
    for (k, x) in v.iter_mut().enumerate() {
        if k % ld >= a.rows {
            *x = T::cast_from(f64::NAN);
        }
    }
    v
}

/// `max_j Σ_i |a_ij|`.
fn norm_one_ref(a: &M) -> f64 {
    (0..a.cols)
        .map(|j| (0..a.rows).map(|i| a.at(i, j).norm()).sum::<f64>())
        .fold(0.0, f64::max)
}

/// `norm_one` against a plain loop (awkward and empty shapes, lda above the minimum), and
/// `gecon` against the exact `1 / (‖A‖₁ ‖A⁻¹‖₁)`: LAPACK estimates ‖A⁻¹‖₁ from below
/// (Hager–Higham), so the estimate is at least the true value and, on these matrices,
/// within a factor of 10 of it; n = 0 gives 1, as LAPACK defines it.
fn gecon_case<D, T: Scalar>() -> TestResult
where
    D: TestDevice + LapackGecon<T> + LapackGetrf<T>,
{
    let mut rng = rng(41);
    for (m, n) in [(0usize, 5usize), (5, 0), (1, 1), (7, 5), (5, 7), (300, 257)] {
        let a = M::random::<T>(&mut rng, m, n);
        let lda = m + 3;
        // NaN in the rows past m (inside the leading dimension), which must not be read.
        let mut buf = Buf::on::<D>(nan_padded::<T>(&a, lda));
        // SAFETY: `buf` holds the m × n matrix with leading dimension lda.
        let got = unsafe { <D as LapackGecon<T>>::norm_one(m, n, buf.ptr(), lda) }?;
        let want = norm_one_ref(&a);
        let got = got.to_c64().re;
        assert!(
            (got - want).abs() <= 4.0 * m as f64 * eps::<T>() * want,
            "{} norm_one {m}x{n}: {got} vs {want}",
            T::DTYPE
        );
    }
    // A NaN inside the matrix is not hidden by the maximum.
    let mut a = M::random::<T>(&mut rng, 4, 3);
    a.set(2, 1, c64::new(f64::NAN, 0.0));
    let mut buf = Buf::on::<D>(a.store::<T>(5));
    // SAFETY: `buf` holds the 4 × 3 matrix with leading dimension 5.
    let got = unsafe { <D as LapackGecon<T>>::norm_one(4, 3, buf.ptr(), 5) }?;
    assert!(
        got.to_c64().re.is_nan(),
        "{} norm_one of a matrix with NaN: {got:?}",
        T::DTYPE
    );
    for n in [0usize, 1, 5, 33] {
        let mut a = M::random::<T>(&mut rng, n, n);
        // Graded diagonal: condition numbers from about 1 to 10⁴.
        for i in 0..n {
            let d = a.at(i, i) + 10f64.powi(i as i32 % 5) * 100.0;
            a.set(i, i, d);
        }
        let lda = n + 2;
        let anorm = norm_one_ref(&a);
        let mut lu = Buf::on::<D>(nan_padded::<T>(&a, lda));
        let mut ipiv = Buf::on::<D>(vec![0i32; n]);
        // SAFETY: `lu` holds n × n with leading dimension lda, `ipiv` n pivots.
        let rcond = unsafe {
            <D as LapackGetrf<T>>::getrf(n, n, lu.ptr(), lda, ipiv.ptr())?;
            <D as LapackGecon<T>>::gecon(n, lu.ptr(), lda, T::Real::cast_from(anorm))
        }?
        .to_c64()
        .re;
        if n == 0 {
            assert_eq!(rcond, 1.0, "{} gecon n=0", T::DTYPE);
            continue;
        }
        let exact = 1.0 / (anorm * norm_one_ref(&inverse(&a)?));
        let slack = 1.0 + 100.0 * n as f64 * eps::<T>();
        assert!(
            rcond >= exact / slack && rcond <= 10.0 * exact * slack,
            "{} gecon n={n}: estimate {rcond}, exact {exact}",
            T::DTYPE
        );
    }
    Ok(())
}

device_test!(norm_one_and_gecon_match_plain_loops_and_the_exact_condition, D -> Result {
    for_blas_dtypes!(gecon_case, D);
    Ok(())
});
