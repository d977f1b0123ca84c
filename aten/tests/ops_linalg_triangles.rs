//! The Hermitian solvers read only the documented (lower) triangle, for every backend,
//! memory layout, range and dtype: the other triangle holds NaN and must not matter.
#![deny(unused_must_use)]

mod common;

use common::*;
use ctensor_aten::{
    c64, cholesky, eigh, eigh_generalized, eigvalsh, matmul, DataType, Device, EigBackend,
    EighRange, Order, Result, Scalar, Tensor, Uplo,
};
use rand::Rng;

/// Logical row-major values of a random Hermitian matrix (`clean`) and the same with NaN
/// in the strict upper triangle (`dirty`); `shift` is added to the diagonal.
fn matrices<T: Scalar>(seed: u64, n: usize, shift: f64) -> (Vec<T>, Vec<T>) {
    let mut r = rng(seed);
    let mut h = vec![c64::new(0.0, 0.0); n * n];
    for i in 0..n {
        for j in 0..=i {
            let im = if T::DTYPE.is_complex() && i != j {
                r.gen_range(-1.0..1.0)
            } else {
                0.0
            };
            let v = c64::new(
                r.gen_range(-1.0..1.0) + if i == j { shift } else { 0.0 },
                im,
            );
            h[i * n + j] = v;
            h[j * n + i] = v.conj();
        }
    }
    let clean: Vec<T> = h.iter().map(|&v| T::cast_from(v)).collect();
    let mut dirty = clean.clone();
    for i in 0..n {
        for j in i + 1..n {
            dirty[i * n + j] = T::cast_from(c64::new(f64::NAN, f64::NAN));
        }
    }
    (clean, dirty)
}

/// `values` (logical row-major n × n) as a row-major tensor, a column-major tensor and a
/// transposed view of a row-major tensor, on device `D`.
fn layouts<D: Device, T: Scalar>(values: &[T], n: usize) -> Result<Vec<(&'static str, Tensor)>> {
    let row = on::<D>(Tensor::from_slice(values, &[n, n])?);
    let mut col = Tensor::new_in_order(T::DTYPE, D::TYPE, &[n, n], Order::ColMajor)?;
    col.sync(&row)?;
    let mut tr = vec![T::zero(); n * n];
    for i in 0..n {
        for j in 0..n {
            tr[j * n + i] = values[i * n + j];
        }
    }
    let view = on::<D>(Tensor::from_slice(&tr, &[n, n])?).t()?;
    Ok(vec![
        ("row-major", row),
        ("column-major", col),
        ("transposed view", view),
    ])
}

fn c64s(t: &Tensor) -> Result<Vec<c64>> {
    t.cast(DataType::ComplexDouble)?.to_vec::<c64>()
}

fn eigh_ignores_the_upper_triangle<D: Device, T: Scalar>() -> Result<()> {
    for n in [1usize, 2, 7, 40] {
        let (clean, dirty) = matrices::<T>(n as u64, n, 0.0);
        let h = on::<D>(Tensor::from_slice(&clean, &[n, n])?);
        let (w_ref, _) = eigh(&h, EighRange::All, EigBackend::LapackEvd)?;
        let w_ref: Vec<f64> = c64s(&w_ref)?.iter().map(|x| x.re).collect();
        let tol = 100.0 * n as f64 * eps(T::DTYPE);
        let mid = if n > 1 {
            0.5 * (w_ref[0] + w_ref[1])
        } else {
            w_ref[0] + 1.0
        };
        let ranges = [
            (EighRange::All, 0..n),
            (EighRange::Index(0, n.div_ceil(2)), 0..n.div_ceil(2)),
            (EighRange::Value(w_ref[0] - 1.0, mid), 0..1),
        ];
        for (name, a) in layouts::<D, T>(&dirty, n)? {
            for backend in BACKENDS {
                for (range, expect) in ranges.clone() {
                    let what = format!("{:?} n={n} {name} {backend:?} {range:?}", T::DTYPE);
                    let (w, v) = eigh(&a, range, backend)?;
                    let w: Vec<f64> = c64s(&w)?.iter().map(|x| x.re).collect();
                    assert_eq!(w.len(), expect.len(), "{what}: number of eigenvalues");
                    // The values alone (LAPACK's values-only modes) give the same values.
                    let wv: Vec<f64> = c64s(&eigvalsh(&a, range, backend)?)?
                        .iter()
                        .map(|x| x.re)
                        .collect();
                    assert_eq!(wv.len(), w.len(), "{what}: eigvalsh count");
                    for (x, y) in wv.iter().zip(&w) {
                        assert!((x - y).abs() <= tol, "{what}: eigvalsh {x} vs eigh {y}");
                    }
                    for (x, y) in w.iter().zip(&w_ref[expect.clone()]) {
                        assert!((x - y).abs() <= tol, "{what}: {x} vs {y}");
                    }
                    // H V = V Λ with the clean H.
                    let hv = c64s(&matmul(&h, &v)?)?;
                    let vv = c64s(&v)?;
                    let m = w.len();
                    for i in 0..n {
                        for k in 0..m {
                            let r = hv[i * m + k] - vv[i * m + k] * w[k];
                            assert!(r.norm() <= tol * 10.0, "{what}: residual {r}");
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

device_test!(eigh_reads_only_the_lower_triangle_for_every_backend_layout_and_range, D -> Result {
    eigh_ignores_the_upper_triangle::<D, f64>()?;
    eigh_ignores_the_upper_triangle::<D, c64>()?;
    eigh_ignores_the_upper_triangle::<D, f32>()?;
    eigh_ignores_the_upper_triangle::<D, c32>()?;
    Ok(())
});

use ctensor_aten::c32;

#[test]
fn the_reported_row_major_case_gives_1_and_4_with_every_backend() -> Result<()> {
    // H = [[2, g], [1+i, 3]] row-major with garbage g in the unread upper triangle.
    let h = Tensor::from_slice(
        &[
            c64::new(2.0, 0.0),
            c64::new(1000.0, 700.0),
            c64::new(1.0, 1.0),
            c64::new(3.0, 0.0),
        ],
        &[2, 2],
    )?;
    for backend in BACKENDS {
        let w = eigh(&h, EighRange::All, backend)?.0.to_vec::<f64>()?;
        assert!(
            (w[0] - 1.0).abs() < 1e-12 && (w[1] - 4.0).abs() < 1e-12,
            "{backend:?}: {w:?}"
        );
        let w = eigh(&h, EighRange::Value(0.0, 5.0), backend)?
            .0
            .to_vec::<f64>()?;
        assert_eq!(w.len(), 2, "{backend:?}: value range");
    }
    Ok(())
}

fn generalized_and_cholesky_ignore_the_upper_triangle<D: Device, T: Scalar>() -> Result<()> {
    let n = 9;
    let (a_clean, a_dirty) = matrices::<T>(5, n, 0.0);
    let (b_clean, b_dirty) = matrices::<T>(6, n, n as f64);
    let tol = 1000.0 * n as f64 * eps(T::DTYPE);
    let ac = on::<D>(Tensor::from_slice(&a_clean, &[n, n])?);
    let bc = on::<D>(Tensor::from_slice(&b_clean, &[n, n])?);
    let (w_ref, _) = eigh_generalized(&ac, &bc, 1, EighRange::All)?;
    let w_ref = c64s(&w_ref)?;
    let l_ref = c64s(&cholesky(&bc, Uplo::Lower)?)?;
    for ((name, a), (_, b)) in layouts::<D, T>(&a_dirty, n)?
        .into_iter()
        .zip(layouts::<D, T>(&b_dirty, n)?)
    {
        let w = c64s(&eigh_generalized(&a, &b, 1, EighRange::All)?.0)?;
        for (x, y) in w.iter().zip(&w_ref) {
            assert!(
                (x - y).norm() <= tol,
                "{:?} {name}: generalized {x} vs {y}",
                T::DTYPE
            );
        }
        let l = c64s(&cholesky(&b, Uplo::Lower)?)?;
        for (x, y) in l.iter().zip(&l_ref) {
            assert!(
                (x - y).norm() <= tol,
                "{:?} {name}: cholesky {x} vs {y}",
                T::DTYPE
            );
        }
    }
    Ok(())
}

device_test!(eigh_generalized_and_cholesky_read_only_the_lower_triangle, D -> Result {
    generalized_and_cholesky_ignore_the_upper_triangle::<D, f64>()?;
    generalized_and_cholesky_ignore_the_upper_triangle::<D, c64>()?;
    generalized_and_cholesky_ignore_the_upper_triangle::<D, c32>()?;
    Ok(())
});

use ctensor_aten::{tri_inverse, Diag};

/// The inverse of a unit triangular matrix has a unit diagonal, whatever `a` stores there.
fn unit_tri_inverse<D: Device, T: Scalar>() -> Result<()> {
    let one = |x: f64| T::cast_from(c64::new(x, 0.0));
    let a = on::<D>(Tensor::from_slice(
        &[one(7.0), one(0.0), one(0.5), one(7.0)],
        &[2, 2],
    )?);
    let inv = c64s(&tri_inverse(&a, Uplo::Lower, Diag::Unit)?)?;
    let expect = [1.0, 0.0, -0.5, 1.0];
    for (x, y) in inv.iter().zip(expect) {
        assert!(
            (x - c64::new(y, 0.0)).norm() < 1e-6,
            "{:?}: {inv:?}",
            T::DTYPE
        );
    }
    // Random n = 37, every triangle and layout: U · U⁻¹ = I with the unit diagonal, NaN
    // on the stored diagonal and in the other triangle.
    let n = 37;
    let mut r = rng(3);
    for uplo in [Uplo::Lower, Uplo::Upper] {
        let mut clean = vec![T::zero(); n * n];
        let mut dirty = vec![T::cast_from(c64::new(f64::NAN, 0.0)); n * n];
        for i in 0..n {
            for j in 0..n {
                let inside = match uplo {
                    Uplo::Lower => j < i,
                    Uplo::Upper => j > i,
                };
                if inside {
                    let v = one(r.gen_range(-0.3..0.3));
                    clean[i * n + j] = v;
                    dirty[i * n + j] = v;
                } else if i == j {
                    clean[i * n + j] = one(1.0);
                }
            }
        }
        let u = on::<D>(Tensor::from_slice(&clean, &[n, n])?);
        for (name, a) in layouts::<D, T>(&dirty, n)? {
            let inv = tri_inverse(&a, uplo, Diag::Unit)?;
            let p = c64s(&matmul(&u, &inv)?)?;
            for i in 0..n {
                for j in 0..n {
                    let e = if i == j { 1.0 } else { 0.0 };
                    let d = (p[i * n + j] - c64::new(e, 0.0)).norm();
                    assert!(
                        d < 100.0 * n as f64 * eps(T::DTYPE),
                        "{:?} {uplo:?} {name}: ({i},{j}) off by {d}",
                        T::DTYPE
                    );
                }
            }
        }
    }
    Ok(())
}

device_test!(tri_inverse_with_a_unit_diagonal_is_the_inverse_of_the_unit_matrix, D -> Result {
    unit_tri_inverse::<D, f64>()?;
    unit_tri_inverse::<D, c64>()?;
    unit_tri_inverse::<D, f32>()?;
    unit_tri_inverse::<D, c32>()?;
    Ok(())
});

use ctensor_aten::{solve, Error};

/// NaN or an infinity in the part a solver reads is `Error::NonFinite` naming the entry,
/// for every backend; the same value in the unread triangle is fine (tested above).
fn non_finite_input_is_refused<D: Device, T: Scalar>() -> Result<()> {
    let n = 5;
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let (clean, _) = matrices::<T>(8, n, n as f64);
        let mut dirty = clean.clone();
        dirty[3 * n + 1] = T::cast_from(c64::new(bad, 0.0)); // (3, 1): lower triangle
        let a = on::<D>(Tensor::from_slice(&dirty, &[n, n])?);
        let good = on::<D>(Tensor::from_slice(&clean, &[n, n])?);
        let expect_at = |r: Result<()>, what: &str| match r {
            Err(Error::NonFinite { row, col, .. }) => {
                // The solvers read a column-major copy: entry (3, 1) of the logical matrix.
                assert_eq!((row, col), (3, 1), "{:?} {what} {bad}", T::DTYPE);
            }
            other => panic!(
                "{:?} {what} with {bad}: expected NonFinite, got {other:?}",
                T::DTYPE
            ),
        };
        for backend in BACKENDS {
            for range in [
                EighRange::All,
                EighRange::Index(0, 2),
                EighRange::Value(-1.0, 1.0),
            ] {
                let r = eigh(&a, range, backend).map(|_| ());
                // A row-major matrix goes to LAPACK as its transpose's upper triangle;
                // the error still names the caller's triangle.
                if let Err(Error::NonFinite { part, .. }) = &r {
                    assert_eq!(*part, "the lower triangle", "eigh {backend:?} {range:?}");
                }
                expect_at(r, &format!("eigh {backend:?} {range:?}"));
                // The values-only solvers scan the same triangle.
                expect_at(
                    eigvalsh(&a, range, backend).map(|_| ()),
                    &format!("eigvalsh {backend:?} {range:?}"),
                );
            }
        }
        expect_at(
            eigh_generalized(&a, &good, 1, EighRange::All).map(|_| ()),
            "eigh_generalized A",
        );
        expect_at(
            eigh_generalized(&good, &a, 1, EighRange::All).map(|_| ()),
            "eigh_generalized B",
        );
        expect_at(cholesky(&a, Uplo::Lower).map(|_| ()), "cholesky");
        let b = on::<D>(Tensor::ones(T::DTYPE, D::TYPE, &[n])?);
        expect_at(solve(&a, &b).map(|_| ()), "solve");
    }
    // The reported case: [[0, 0], [NaN, 4]].
    let a = on::<D>(Tensor::from_slice(
        &[0.0, 0.0, f64::NAN, 4.0].map(|x| T::cast_from(c64::new(x, 0.0))),
        &[2, 2],
    )?);
    for backend in BACKENDS {
        assert!(
            matches!(
                eigh(&a, EighRange::All, backend),
                Err(Error::NonFinite { .. })
            ),
            "{backend:?}"
        );
    }
    Ok(())
}

device_test!(non_finite_values_in_the_read_part_are_an_error, D -> Result {
    non_finite_input_is_refused::<D, f64>()?;
    non_finite_input_is_refused::<D, c64>()?;
    non_finite_input_is_refused::<D, f32>()?;
    non_finite_input_is_refused::<D, c32>()?;
    Ok(())
});

/// A system singular to working precision is `Error::IllConditioned`; a well-conditioned
/// one still solves (checked by A·x = b).
fn near_singular_solve_is_refused<D: Device, T: Scalar>() -> Result<()> {
    let v = |x: f64| T::cast_from(c64::new(x, 0.0));
    // The reported case: two equal rows; rounding leaves no exact zero pivot.
    let a = on::<D>(Tensor::from_slice(
        &[-2.0, -2.0, 1.0, -2.0, -2.0, 1.0, 3.0, 1.0, 2.0].map(v),
        &[3, 3],
    )?);
    let b = on::<D>(Tensor::ones(T::DTYPE, D::TYPE, &[3])?);
    match solve(&a, &b) {
        Err(Error::IllConditioned { .. }) | Err(Error::Lapack { .. }) => {}
        other => panic!(
            "{:?}: expected a singular-matrix error, got {other:?}",
            T::DTYPE
        ),
    }
    // Hilbert matrices: condition about 1.5e7 at n = 6 (beyond f32), 1.7e16 at n = 12
    // (beyond f64).
    let n = if T::DTYPE.real_type() == DataType::Float {
        6
    } else {
        12
    };
    let hilbert: Vec<T> = (0..n * n)
        .map(|k| v(1.0 / ((k / n + k % n + 1) as f64)))
        .collect();
    let h = on::<D>(Tensor::from_slice(&hilbert, &[n, n])?);
    let ones = on::<D>(Tensor::ones(T::DTYPE, D::TYPE, &[n])?);
    assert!(
        matches!(solve(&h, &ones), Err(Error::IllConditioned { .. })),
        "{:?}: Hilbert {n}",
        T::DTYPE
    );
    // Well conditioned: diagonally dominant, n = 33.
    let n = 33;
    let (m, _) = matrices::<T>(21, n, n as f64);
    let a = on::<D>(Tensor::from_slice(&m, &[n, n])?);
    let b = on::<D>(Tensor::ones(T::DTYPE, D::TYPE, &[n, 2])?);
    let x = solve(&a, &b)?;
    let r = c64s(&matmul(&a, &x)?)?;
    for z in r {
        assert!(
            (z - c64::new(1.0, 0.0)).norm() < 100.0 * n as f64 * eps(T::DTYPE),
            "{:?}: {z}",
            T::DTYPE
        );
    }
    Ok(())
}

device_test!(solve_refuses_matrices_singular_to_working_precision, D -> Result {
    near_singular_solve_is_refused::<D, f64>()?;
    near_singular_solve_is_refused::<D, c64>()?;
    near_singular_solve_is_refused::<D, f32>()?;
    near_singular_solve_is_refused::<D, c32>()?;
    Ok(())
});

#[test]
fn matmul_errors_name_matmul() -> Result<()> {
    let a = Tensor::zeros(DataType::Double, ctensor_aten::DeviceType::Cpu, &[2, 3])?;
    let b = Tensor::zeros(DataType::Double, ctensor_aten::DeviceType::Cpu, &[4, 5])?;
    // Mixed types promote, so a failing mixed product fails on its shapes.
    let f = Tensor::zeros(DataType::Float, ctensor_aten::DeviceType::Cpu, &[4, 5])?;
    for (x, y) in [(&a, &b), (&a, &f)] {
        let e = matmul(x, y).unwrap_err();
        assert!(e.to_string().starts_with("matmul:"), "{e}");
    }
    Ok(())
}
