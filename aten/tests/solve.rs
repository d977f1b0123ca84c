//! `solve_triangular`, `cholesky_solve`, `lstsq`, `det` and `slogdet` on both devices for
//! f32/f64/c32/c64, against independent references: residuals with the triangle as read
//! (NaN in the other triangle and on a unit diagonal), `solve` on the full matrix, the
//! normal equations, the minimum-norm formula, products of eigenvalues and closed forms;
//! singular and rank-deficient input, overflow, and empty matrices.
#![deny(unused_must_use)]

mod common;

use common::*;
use ctensor_aten::{
    c64, cholesky, cholesky_solve, det, eigvalsh, lstsq, matmul_op, slogdet, solve,
    solve_triangular, DataType, Device, Diag, EigBackend, EighRange, Error, Scalar, Tensor, Trans,
    Uplo,
};

/// What a helper that can fail returns.
type Fallible<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn values(t: &Tensor) -> Fallible<Vec<c64>> {
    Ok(t.cast(DataType::ComplexDouble)?.to_vec::<c64>()?)
}

fn close(got: &Tensor, want: &Tensor, tol: f64, what: &str) -> TestResult {
    let (g, w) = (values(got)?, values(want)?);
    assert_eq!(g.len(), w.len(), "{what}: lengths");
    let scale = w.iter().map(|z| z.norm()).fold(1.0, f64::max);
    for (k, (a, b)) in g.iter().zip(&w).enumerate() {
        assert!(
            (a - b).norm() <= tol * scale,
            "{what}: [{k}] {a} vs {b} (tolerance {:e})",
            tol * scale
        );
    }
    Ok(())
}

/// A well-conditioned n × n matrix: random entries scaled small, plus 2 on the diagonal.
fn conditioned<D: Device, T: Scalar>(n: usize, seed: u64) -> Fallible<Tensor> {
    Ok({
        let (a, _) = random_on::<D, T>(&mut rng(seed), &[n, n]);
        let eye = Tensor::eye(T::DTYPE, D::TYPE, n)?;
        (&(&a * (0.5 / (125.0 * n as f64)))? + &(&eye * 2.0)?)?
    })
}

/// The `uplo` triangle of `a` (unit diagonal when asked) with zeros elsewhere, and a copy
/// with NaN where the solver must not look.
fn triangle(a: &Tensor, uplo: Uplo, diag: Diag) -> Fallible<Fallible<(Tensor, Tensor)>> {
    Ok({
        Ok({
            let n = a.dims()[0];
            let v = values(a)?;
            let nan = c64::new(f64::NAN, f64::NAN);
            let (mut clean, mut dirty) = (vec![c64::new(0.0, 0.0); n * n], vec![nan; n * n]);
            for i in 0..n {
                for j in 0..n {
                    let inside = if uplo == Uplo::Upper { i <= j } else { i >= j };
                    if i == j && diag == Diag::Unit {
                        clean[i * n + j] = c64::new(1.0, 0.0);
                    } else if inside {
                        clean[i * n + j] = v[i * n + j];
                        dirty[i * n + j] = v[i * n + j];
                    }
                }
            }
            let back = |x: Vec<c64>| {
                Tensor::from_slice(&x, &[n, n])
                    .unwrap()
                    .cast(a.dtype())
                    .unwrap()
                    .to_device(a.device())
                    .unwrap()
            };
            (back(clean), back(dirty))
        })
    })
}

fn solves_of<D: Device, T: Scalar>() -> TestResult {
    let dt = T::DTYPE;
    let tol = 200.0 * eps(dt);
    for n in [1usize, 7, 64] {
        let a = conditioned::<D, T>(n, n as u64)?;
        let (b, _) = random_on::<D, T>(&mut rng(99), &[n, 3]);
        for uplo in [Uplo::Lower, Uplo::Upper] {
            for diag in [Diag::NonUnit, Diag::Unit] {
                let (clean, dirty) = triangle(&a, uplo, diag)??;
                for trans in [Trans::N, Trans::T, Trans::C] {
                    let what = format!("{dt} n={n} {uplo:?} {diag:?} {trans:?}");
                    let x = solve_triangular(&dirty, &b, uplo, trans, diag)
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    let lhs = matmul_op(&clean, trans, &x, Trans::N)?;
                    close(&lhs, &b, tol, &what)?;
                }
                // A vector right-hand side keeps its shape.
                let bv = b.narrow(1, 0, 1)?.reshape(&[n as i64])?;
                assert_eq!(
                    solve_triangular(&dirty, &bv, uplo, Trans::N, diag)?.dims(),
                    [n]
                );
            }
        }
        // Cholesky: A = M Mᴴ + n I, both factor triangles, against `solve`.
        let spd = (&matmul_op(&a, Trans::N, &a, Trans::C)?
            + &(&Tensor::eye(dt, D::TYPE, n)? * n as f64)?)?;
        let want = solve(&spd, &b)?;
        for uplo in [Uplo::Lower, Uplo::Upper] {
            let f = cholesky(&spd, uplo)?;
            close(
                &cholesky_solve(&f, &b, uplo)?,
                &want,
                tol,
                &format!("{dt} n={n} cholesky_solve {uplo:?}"),
            )?;
        }
    }
    Ok(())
}

device_test!(triangular_and_cholesky_solves_match_references, D -> Result {
    for_blas_dtypes!(solves_of, D);
    Ok(())
});

fn least_squares_of<D: Device, T: Scalar>() -> TestResult {
    let dt = T::DTYPE;
    let tol = 2000.0 * eps(dt);
    // Tall: against the normal equations (AᴴA) x = Aᴴ b.
    let (a, _) = random_on::<D, T>(&mut rng(5), &[40, 6]);
    let (b, _) = random_on::<D, T>(&mut rng(6), &[40, 2]);
    let x = lstsq(&a, &b)?;
    let normal = solve(
        &matmul_op(&a, Trans::C, &a, Trans::N)?,
        &matmul_op(&a, Trans::C, &b, Trans::N)?,
    )?;
    close(&x, &normal, tol, &format!("{dt} tall lstsq"))?;
    // Wide: the minimum-norm solution Aᴴ (A Aᴴ)⁻¹ b, which solves A x = b exactly.
    let (w, _) = random_on::<D, T>(&mut rng(7), &[5, 30]);
    let (c, _) = random_on::<D, T>(&mut rng(8), &[5]);
    let x = lstsq(&w, &c)?;
    assert_eq!(x.dims(), [30]);
    let min_norm = matmul_op(
        &w,
        Trans::C,
        &solve(
            &matmul_op(&w, Trans::N, &w, Trans::C)?,
            &c.reshape(&[5, 1])?,
        )?,
        Trans::N,
    )?;
    close(
        &x.reshape(&[30, 1])?,
        &min_norm,
        tol,
        &format!("{dt} wide lstsq"),
    )?;
    // Rank deficient: two equal columns.
    let dup = ctensor_aten::cat(&[&a.narrow(1, 0, 3)?, &a.narrow(1, 0, 3)?], 1)?;
    let e = lstsq(&dup, &b).unwrap_err();
    assert!(
        matches!(e, Error::IllConditioned { op: "lstsq", .. }),
        "{dt}: {e}"
    );
    Ok(())
}

device_test!(lstsq_matches_the_normal_equations_and_the_minimum_norm_formula, D -> Result {
    for_blas_dtypes!(least_squares_of, D);
    Ok(())
});

fn determinants_of<D: Device, T: Scalar>() -> TestResult {
    let dt = T::DTYPE;
    let tol = 1000.0 * eps(dt);
    let m = on::<D>(Tensor::from_slice(&[1.0f64, 2.0, 3.0, 4.0], &[2, 2])?.cast(dt)?);
    close(
        &det(&m)?,
        &Tensor::scalar(-2.0f64)?,
        tol,
        &format!("{dt} det 2×2"),
    )?;
    // A permutation: sign −1, |det| = 1.
    let p = on::<D>(
        Tensor::from_slice(&[0.0f64, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0], &[3, 3])?.cast(dt)?,
    );
    let (sign, log) = slogdet(&p)?;
    assert!(
        (sign - c64::new(-1.0, 0.0)).norm() < tol && log.abs() < tol,
        "{dt}: {sign} {log}"
    );
    // A Hermitian matrix: the product of its eigenvalues.
    let a = conditioned::<D, T>(9, 3)?;
    let h = (&a + &a.t()?.conj()?)?;
    let w = values(&eigvalsh(&h, EighRange::All, EigBackend::LapackEvd)?)?;
    let prod: c64 = w.iter().product();
    close(
        &det(&h)?,
        &Tensor::scalar(prod)?,
        tol,
        &format!("{dt} det = Π λ"),
    )?;
    // Singular, overflowing and empty.
    let s = on::<D>(Tensor::from_slice(&[1.0f64, 2.0, 2.0, 4.0], &[2, 2])?.cast(dt)?);
    assert_eq!(slogdet(&s)?, (c64::new(0.0, 0.0), f64::NEG_INFINITY));
    assert_eq!(values(&det(&s)?)?, [c64::new(0.0, 0.0)]);
    let big_v = if matches!(dt, DataType::Float | DataType::ComplexFloat) {
        1e30
    } else {
        1e200
    };
    let big = (&Tensor::eye(dt, D::TYPE, 5)? * big_v)?;
    let (sign, log) = slogdet(&big)?;
    assert!(
        (sign - c64::new(1.0, 0.0)).norm() < tol
            && (log - 5.0 * big_v.ln()).abs() < 5.0 * tol * log.abs(),
        "{dt}: {log}"
    );
    assert_eq!(
        slogdet(&on::<D>(Tensor::zeros(dt, D::TYPE, &[0, 0])?))?,
        (c64::new(1.0, 0.0), 0.0)
    );
    Ok(())
}

device_test!(determinants_match_closed_forms_and_eigenvalue_products, D -> Result {
    for_blas_dtypes!(determinants_of, D);
    let m = on::<D>(Tensor::zeros(DataType::Double, D::TYPE, &[2, 3])?);
    assert!(matches!(det(&m).unwrap_err(), Error::NotAMatrix { .. }));
    Ok(())
});

device_test!(lstsq_and_det_refuse_non_finite_input_and_name_the_entry, D -> Result {
    // NaN at row 0, column 1 of a row-major matrix.
    let a = on::<D>(Tensor::from_slice(&[1.0f64, f64::NAN, 0.0, 1.0, 2.0, 3.0], &[3, 2])?);
    let b = on::<D>(Tensor::ones(DataType::Double, D::TYPE, &[3])?);
    let e = lstsq(&a, &b).unwrap_err();
    assert!(matches!(e, Error::NonFinite { op: "lstsq", row: 0, col: 1, .. }), "{e}");
    // The same matrix stored column-major: the same entry is named.
    let e = lstsq(&column_major(&a), &b).unwrap_err();
    assert!(matches!(e, Error::NonFinite { op: "lstsq", row: 0, col: 1, .. }), "{e}");
    let w = on::<D>(Tensor::from_slice(&[1.0f64, 2.0, f64::INFINITY, 0.0, 1.0, 5.0], &[2, 3])?);
    let e = lstsq(&w, &on::<D>(Tensor::ones(DataType::Double, D::TYPE, &[2])?)).unwrap_err();
    assert!(matches!(e, Error::NonFinite { row: 0, col: 2, .. }), "{e}");
    let sq = on::<D>(Tensor::from_slice(&[1.0f64, 0.0, f64::NAN, 1.0], &[2, 2])?);
    assert!(matches!(det(&sq).unwrap_err(), Error::NonFinite { op: "det", .. }));
    // No unknowns: the empty solution; a huge empty matrix is no overflow.
    let e0 = on::<D>(Tensor::zeros(DataType::Double, D::TYPE, &[3, 0])?);
    assert_eq!(lstsq(&e0, &b)?.dims(), [0]);
    let huge = on::<D>(Tensor::zeros(DataType::Double, D::TYPE, &[1 << 40, 0])?);
    let (q, r) = ctensor_aten::qr(&huge, ctensor_aten::QrMode::Reduced)?;
    assert_eq!((q.dims(), r.dims()), (&[1usize << 40, 0][..], &[0, 0][..]));
    let (u, s, vh) = ctensor_aten::svd(&huge, false)?;
    assert_eq!((u.dims(), s.dims(), vh.dims()), (&[1usize << 40, 0][..], &[0][..], &[0, 0][..]));
    Ok(())
});

device_test!(singular_triangles_are_refused, D -> Result {
    let a = on::<D>(Tensor::from_slice(&[2.0f64, 0.0, 1.0, 0.0], &[2, 2])?);
    let b = on::<D>(Tensor::from_slice(&[1.0f64, 1.0], &[2])?);
    let e = solve_triangular(&a, &b, Uplo::Lower, Trans::N, Diag::NonUnit).unwrap_err();
    assert!(matches!(e, Error::Lapack { info: 2, .. }), "{e}");
    // With a unit diagonal the stored zero is not read.
    let x = solve_triangular(&a, &b, Uplo::Lower, Trans::N, Diag::Unit)?;
    assert_eq!(x.to_vec::<f64>()?, [1.0, 0.0]);
    let e = solve_triangular(&a, &on::<D>(Tensor::zeros(DataType::Double, D::TYPE, &[3])?), Uplo::Lower, Trans::N, Diag::Unit).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { op: "solve_triangular", .. }), "{e}");
    Ok(())
});

/// `A[b] X[b] - B[b]` in c64 by plain loops, relative to `|A| |X| + |B|`, for a stack
/// already broadcast to `[count, n, n]` / `[count, n, k]`.
fn stacked_residual(a: &[c64], x: &[c64], b: &[c64], count: usize, n: usize, k: usize) -> f64 {
    let mut worst: f64 = 0.0;
    for s in 0..count {
        for i in 0..n {
            for c in 0..k {
                let (mut r, mut mag) = (-b[(s * n + i) * k + c], b[(s * n + i) * k + c].norm());
                for j in 0..n {
                    let t = a[(s * n + i) * n + j] * x[(s * n + j) * k + c];
                    r += t;
                    mag += t.norm();
                }
                worst = worst.max(r.norm() / mag.max(1e-300));
            }
        }
    }
    worst
}

fn stacked_solves_of<D: Device, T: Scalar>() -> TestResult {
    let eps = if matches!(T::DTYPE, DataType::Float | DataType::ComplexFloat) {
        f32::EPSILON as f64
    } else {
        f64::EPSILON
    };
    for n in [1usize, 3, 17] {
        // Six well-conditioned matrices as [2, 3, n, n].
        let mats = (0..6)
            .map(|s| conditioned::<D, T>(n, 100 + s as u64))
            .collect::<Fallible<Vec<_>>>()?;
        let refs: Vec<&Tensor> = mats.iter().collect();
        let a = ctensor_aten::stack(&refs, 0)?.reshape(&[2, 3, n as i64, n as i64])?;
        let mut r = rng(7 + n as u64);
        // (b's shape, the broadcast result's shape, right-hand sides per matrix)
        let cases: Vec<(Vec<usize>, Vec<usize>, usize)> = vec![
            (vec![n], vec![2, 3, n], 1),
            (vec![2, 3, n, 4], vec![2, 3, n, 4], 4),
            (vec![3, n, 2], vec![2, 3, n, 2], 2),
            (vec![1, 1, n, 1], vec![2, 3, n, 1], 1),
            (vec![5, 1, 1, n, 2], vec![5, 2, 3, n, 2], 2),
        ];
        for (bs, want, k) in cases {
            let (b, _) = random_on::<D, T>(&mut r, &bs);
            for (what, av) in [
                ("row-major", a.share()),
                ("transposed views", a.transpose(2, 3)?),
            ] {
                let x = solve(&av, &b)?;
                assert_eq!(x.dims(), &want[..], "{} n={n} b {bs:?}", T::DTYPE);
                let count: usize = want[..want.len() - if bs.len() == 1 { 1 } else { 2 }]
                    .iter()
                    .product();
                let batch = &want[..want.len() - if bs.len() == 1 { 1 } else { 2 }];
                let full_a: Vec<usize> = batch.iter().chain(&[n, n]).copied().collect();
                let full_b: Vec<usize> = batch.iter().chain(&[n, k]).copied().collect();
                let bb = if bs.len() == 1 {
                    b.reshape(&[n as i64, 1])?
                } else {
                    b.share()
                };
                let av_full = values(&av.broadcast_to(&full_a)?.contiguous()?)?;
                let b_full = values(&bb.broadcast_to(&full_b)?.contiguous()?)?;
                let xv = values(&x.contiguous()?)?;
                let res = stacked_residual(&av_full, &xv, &b_full, count, n, k);
                assert!(
                    res < 50.0 * eps,
                    "{} n={n} b {bs:?} {what}: residual {res:e}",
                    T::DTYPE
                );
            }
        }
    }
    Ok(())
}

device_test!(solve_stacks_broadcast_as_numpy_and_report_bad_shapes, D -> Result {
    stacked_solves_of::<D, f32>()?;
    stacked_solves_of::<D, f64>()?;
    stacked_solves_of::<D, ctensor_aten::c32>()?;
    stacked_solves_of::<D, c64>()?;
    // An empty stack of huge matrices: an empty result of the broadcast shape, no work.
    let a = Tensor::zeros(DataType::Double, D::TYPE, &[0, 3, 3])?;
    let b = Tensor::zeros(DataType::Double, D::TYPE, &[3])?;
    assert_eq!(solve(&a, &b)?.dims(), &[0, 3]);
    let b = Tensor::zeros(DataType::Double, D::TYPE, &[4, 1, 3, 2])?;
    assert_eq!(solve(&a, &b)?.dims(), &[4, 0, 3, 2]);
    // A stack of 2^40 empty matrices: no work, no allocation.
    let huge = Tensor::zeros(DataType::ComplexDouble, D::TYPE, &[1 << 40, 0, 0])?;
    let none = Tensor::zeros(DataType::ComplexDouble, D::TYPE, &[0])?;
    assert_eq!(solve(&huge, &none)?.dims(), &[1 << 40, 0]);
    // No right-hand side: empty, without factoring (these matrices are singular).
    let zero = Tensor::zeros(DataType::Double, D::TYPE, &[2, 3, 3])?;
    let no_rhs = Tensor::zeros(DataType::Double, D::TYPE, &[2, 3, 0])?;
    assert_eq!(solve(&zero, &no_rhs)?.dims(), &[2, 3, 0]);
    // Errors name what was expected.
    let e = solve(&Tensor::zeros(DataType::Double, D::TYPE, &[2, 3, 4])?, &b).unwrap_err();
    assert!(e.to_string().contains("[..., n, n]"), "{e}");
    let e = solve(&Tensor::zeros(DataType::Double, D::TYPE, &[2, 4, 4])?, &b).unwrap_err();
    assert!(e.to_string().contains("[..., 4, k]"), "{e}");
    let e = solve(&a, &Tensor::zeros(DataType::Double, D::TYPE, &[])?).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { op: "solve", .. }), "{e}");
    let e = solve(
        &Tensor::zeros(DataType::Double, D::TYPE, &[2, 3, 3])?,
        &Tensor::zeros(DataType::Double, D::TYPE, &[3, 3, 1])?,
    )
    .unwrap_err();
    assert!(e.to_string().contains("[2] and [3] do not broadcast"), "{e}");
    // One singular matrix in the stack: the whole call fails, as NumPy's LinAlgError.
    let s = Tensor::zeros(DataType::Double, D::TYPE, &[3, 2, 2])?;
    for i in 0..2 {
        s.index(i)?.diagonal()?.fill(1.0)?;
    }
    let rhs = Tensor::ones(DataType::Double, D::TYPE, &[2])?;
    let e = solve(&s, &rhs).unwrap_err();
    assert!(matches!(e, Error::IllConditioned { .. } | Error::Lapack { .. }), "{e}");
    s.index(2)?.diagonal()?.fill(1.0)?;
    assert_eq!(solve(&s, &rhs)?.to_vec::<f64>()?, vec![1.0; 6]);
    Ok(())
});
