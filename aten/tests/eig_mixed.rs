//! `eigvalsh` with `EigBackend::Mixed` (a single-precision solve refined by one
//! Rayleigh–Ritz step in full precision) against the full-precision `LapackEvr` on the
//! same matrices: random Hermitian and real symmetric ones of awkward sizes, every index
//! range (bottom, middle, top, all, empty), every memory layout, garbage in the unread
//! triangle, degenerate and nearly degenerate eigenvalues at the edge of the range,
//! matrices beyond f32's range, stacks, and the inputs it refuses.
#![deny(unused_must_use)]

mod common;

use common::*;
use ctensor_aten::{
    eigvalsh, qr, DataType, DeviceType, EigBackend, EighRange, Error, QrMode, Tensor,
    MIXED_TOLERANCE,
};

/// What a helper that can fail returns.
type Fallible<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// A random `n × n` matrix of `dt` (f64 or c64), entries in -1000..1000.
fn random_matrix(dt: DataType, n: usize, seed: u64) -> Tensor {
    match dt {
        DataType::Double => random_tensor::<f64>(&mut rng(seed), &[n, n]).0,
        _ => random_tensor::<ctensor_aten::c64>(&mut rng(seed), &[n, n]).0,
    }
}

/// A random Hermitian (c64) or symmetric (f64) matrix of order `n`, row-major: (B + Bᴴ)/2
/// with B's entries in -1000..1000, so eigenvalues up to about 1000·√n.
fn hermitian(dt: DataType, n: usize, seed: u64) -> Fallible<Tensor> {
    let b = random_matrix(dt, n, seed);
    Ok(b.add(&b.t()?.conj()?)?.mul_scalar(0.5)?.contiguous()?)
}

/// Q diag(w) Qᴴ with a random unitary (orthogonal) Q: a matrix with the spectrum `w`.
fn with_spectrum(dt: DataType, w: &[f64], seed: u64) -> Fallible<Tensor> {
    let n = w.len();
    let b = random_matrix(dt, n, seed);
    let (q, _) = qr(&b, QrMode::Reduced)?;
    let d = Tensor::from_slice(w, &[1, n])?.cast(dt)?;
    let a = ctensor_aten::matmul(&q.mul(&d)?, &q.t()?.conj()?)?;
    // Exactly Hermitian whatever the rounding (only one triangle is read anyway).
    Ok(a.add(&a.t()?.conj()?)?.mul_scalar(0.5)?.contiguous()?)
}

/// The largest |λ| of `a` (its 2-norm), from the full-precision solver.
fn norm2(a: &Tensor) -> Fallible<f64> {
    let w = eigvalsh(a, EighRange::All, EigBackend::LapackEvd)?.to_vec::<f64>()?;
    Ok(w.iter().fold(0.0f64, |m, x| m.max(x.abs())))
}

/// Mixed against LapackEvr on `a` for `range`: same count, every value within `rel`·‖A‖₂
/// (the reference's own error is about 1e-16·‖A‖₂).
fn agrees(a: &Tensor, range: EighRange, rel: f64, what: &str) -> Fallible<()> {
    let reference = eigvalsh(a, range, EigBackend::LapackEvr)?.to_vec::<f64>()?;
    let mixed = eigvalsh(a, range, EigBackend::Mixed)?;
    assert_eq!(mixed.dtype(), DataType::Double, "{what}");
    let mixed = mixed.to_vec::<f64>()?;
    assert_eq!(mixed.len(), reference.len(), "{what}: count");
    let scale = norm2(a)?.max(f64::MIN_POSITIVE);
    for (i, (x, y)) in mixed.iter().zip(&reference).enumerate() {
        assert!(
            (x - y).abs() <= rel * scale,
            "{what}: eigenvalue {i}: mixed {x}, full precision {y}, |Δ|/‖A‖ = {:.2e}",
            (x - y).abs() / scale
        );
    }
    Ok(())
}

#[test]
fn random_matrices_every_size_and_range() -> Fallible<()> {
    for dt in [DataType::Double, DataType::ComplexDouble] {
        for n in [1usize, 2, 3, 7, 33, 169, 300] {
            let a = hermitian(dt, n, 11 + n as u64)?;
            let k = (n / 10).max(1);
            let mid = n / 2;
            let mut ranges = vec![
                EighRange::Index(0, k),
                EighRange::Index(n - k, n),
                EighRange::Index(mid.saturating_sub(k / 2), (mid + k.div_ceil(2)).min(n)),
                EighRange::Index(0, 0),
                EighRange::Index(n, n),
            ];
            if n <= 33 {
                ranges.push(EighRange::All);
            }
            for range in ranges {
                // Observed: about 1e-14·‖A‖; MIXED_TOLERANCE is what the backend checks.
                agrees(
                    &a,
                    range,
                    10.0 * MIXED_TOLERANCE,
                    &format!("{dt} n={n} {range:?}"),
                )?;
            }
        }
    }
    Ok(())
}

#[test]
fn typical_error_is_near_double_precision() -> Fallible<()> {
    // The refinement squares the single-precision error: on random matrices the values
    // come out within 1e-12 of ‖A‖, far inside the checked tolerance.
    for dt in [DataType::Double, DataType::ComplexDouble] {
        let a = hermitian(dt, 257, 5)?;
        agrees(&a, EighRange::Index(0, 20), 1e-12, &format!("{dt} n=257"))?;
    }
    Ok(())
}

#[test]
fn every_layout_and_garbage_in_the_unread_triangle() -> Fallible<()> {
    for dt in [DataType::Double, DataType::ComplexDouble] {
        let n = 45;
        let a = hermitian(dt, n, 3)?;
        let reference = eigvalsh(&a, EighRange::Index(0, 6), EigBackend::LapackEvr)?;
        // NaN and ±∞ above the diagonal, which must not be read.
        let dirty = a.try_clone()?;
        for (i, j, v) in [
            (0, 1, f64::NAN),
            (3, 40, f64::INFINITY),
            (10, 44, -f64::INFINITY),
        ] {
            dirty.narrow(0, i, 1)?.narrow(1, j, 1)?.fill(v)?;
        }
        // A strided window of a larger matrix (neither row- nor column-major dense).
        let big = hermitian(dt, n + 5, 4)?;
        big.narrow(0, 2, n)?.narrow(1, 2, n)?.assign(&dirty)?;
        let window = big.narrow(0, 2, n)?.narrow(1, 2, n)?;
        assert!(window.dense_order().is_none());
        let layouts = [
            ("strided window", window),
            ("row-major", dirty.share()),
            ("column-major", column_major(&dirty)),
            // The transpose of the transpose: a strided view of the same matrix.
            (
                "transposed view",
                column_major(&dirty).t()?.contiguous()?.t()?,
            ),
        ];
        for (name, m) in layouts {
            let w = eigvalsh(&m, EighRange::Index(0, 6), EigBackend::Mixed)?;
            let tol = 1e-11 * norm2(&a)?;
            assert!(w.allclose(&reference, 0.0, tol)?, "{dt} {name}");
        }
    }
    Ok(())
}

#[test]
fn non_finite_in_the_read_triangle_is_refused_with_its_position() -> Fallible<()> {
    for dt in [DataType::Double, DataType::ComplexDouble] {
        for (row, col, v) in [
            (7usize, 2usize, f64::NAN),
            (5, 5, f64::INFINITY),
            (9, 0, f64::NEG_INFINITY),
        ] {
            for layout in ["row-major", "column-major"] {
                let a = hermitian(dt, 12, 1)?;
                a.narrow(0, row, 1)?.narrow(1, col, 1)?.fill(v)?;
                let a = if layout == "row-major" {
                    a
                } else {
                    column_major(&a)
                };
                match eigvalsh(&a, EighRange::Index(0, 3), EigBackend::Mixed) {
                    Err(Error::NonFinite {
                        row: r,
                        col: c,
                        part,
                        ..
                    }) => {
                        assert_eq!((r, c), (row, col), "{dt} {layout} {v}");
                        assert_eq!(part, "the lower triangle", "{dt} {layout}");
                    }
                    other => panic!("{dt} {layout} {v}: expected NonFinite, got {other:?}"),
                }
            }
        }
    }
    Ok(())
}

#[test]
fn degenerate_and_nearly_degenerate_at_the_edge_of_the_range() -> Fallible<()> {
    // Eigenvalues that a single-precision solve cannot tell apart, straddling the end
    // of the range and its guard: the result is still the full-precision one (refined
    // or, where the estimate cannot vouch for it, recomputed in full precision).
    for dt in [DataType::Double, DataType::ComplexDouble] {
        let n = 60;
        let mut cases: Vec<(&str, Vec<f64>)> = Vec::new();
        // A 6-fold degenerate level across the end of the lowest 8 and past the guard.
        let mut w: Vec<f64> = (0..n).map(|i| i as f64).collect();
        for x in w.iter_mut().take(12).skip(6) {
            *x = 6.0;
        }
        cases.push(("six-fold level at 6..12", w));
        // Levels 1e-9 apart across the end of the range (7 and 8) and around it.
        let w: Vec<f64> = (0..n)
            .map(|i| {
                if (5..11).contains(&i) {
                    5.0 + 1e-9 * i as f64
                } else {
                    i as f64
                }
            })
            .collect();
        cases.push(("levels 1e-9 apart at 5..11", w));
        // A cluster at the very bottom and the very top (the ends of the spectrum).
        let w: Vec<f64> = (0..n)
            .map(|i| match i {
                i if i < 3 => -1.0,
                i if i >= n - 3 => 100.0,
                i => i as f64,
            })
            .collect();
        cases.push(("clusters at both ends", w));
        for (name, mut w) in cases {
            w.sort_by(f64::total_cmp);
            let a = with_spectrum(dt, &w, 9)?;
            for range in [
                EighRange::Index(0, 8),
                EighRange::Index(n - 8, n),
                EighRange::Index(20, 30),
            ] {
                agrees(&a, range, 1e-11, &format!("{dt} {name} {range:?}"))?;
            }
        }
    }
    Ok(())
}

#[test]
fn beyond_single_precision_range() -> Fallible<()> {
    // 1e200·A overflows f32 and 1e-200·A underflows it: the values are still right
    // (the full-precision solver takes over where f32 cannot hold the matrix).
    for dt in [DataType::Double, DataType::ComplexDouble] {
        let a = hermitian(dt, 30, 8)?;
        for s in [1e200, 1e-200, 1e30, 1e-30] {
            let b = a.mul_scalar(s)?;
            agrees(
                &b,
                EighRange::Index(0, 5),
                1e-11,
                &format!("{dt} scaled by {s}"),
            )?;
        }
        // The zero matrix: every eigenvalue 0.
        let z = Tensor::zeros(dt, DeviceType::Cpu, &[9, 9])?;
        let w = eigvalsh(&z, EighRange::Index(0, 4), EigBackend::Mixed)?.to_vec::<f64>()?;
        assert_eq!(w, vec![0.0; 4], "{dt} zero matrix");
    }
    Ok(())
}

#[test]
fn stacks_and_empty_stacks() -> Fallible<()> {
    for dt in [DataType::Double, DataType::ComplexDouble] {
        let n = 40;
        let mats: Vec<Tensor> = (0..5)
            .map(|s| hermitian(dt, n, 100 + s))
            .collect::<Fallible<_>>()?;
        let stack = ctensor_aten::stack(&mats.iter().collect::<Vec<_>>(), 0)?;
        let w = eigvalsh(&stack, EighRange::Index(0, 4), EigBackend::Mixed)?;
        assert_eq!(w.dims(), &[5, 4]);
        for (i, m) in mats.iter().enumerate() {
            let r = eigvalsh(m, EighRange::Index(0, 4), EigBackend::LapackEvr)?;
            assert!(
                w.narrow(0, i, 1)?
                    .reshape(&[4])?
                    .allclose(&r, 0.0, 1e-10 * norm2(m)?)?,
                "{dt} matrix {i}"
            );
        }
        // Zero matrices of a huge order, and matrices of order 0.
        let e = Tensor::zeros(dt, DeviceType::Cpu, &[0, 1 << 20, 1 << 20])?;
        assert_eq!(
            eigvalsh(&e, EighRange::Index(0, 3), EigBackend::Mixed)?.dims(),
            &[0, 3]
        );
        let e = Tensor::zeros(dt, DeviceType::Cpu, &[0, 0])?;
        assert_eq!(
            eigvalsh(&e, EighRange::All, EigBackend::Mixed)?.dims(),
            &[0]
        );
    }
    Ok(())
}

#[test]
fn refused_inputs_say_what_to_use() -> Fallible<()> {
    let a = hermitian(DataType::ComplexDouble, 10, 2)?;
    for dt in [DataType::Float, DataType::ComplexFloat] {
        let e = eigvalsh(&a.cast(dt)?, EighRange::Index(0, 2), EigBackend::Mixed).unwrap_err();
        assert!(matches!(e, Error::UnsupportedDType { .. }), "{dt}: {e}");
        assert!(e.to_string().contains("LapackEvr"), "{e}");
    }
    let e = eigvalsh(&a, EighRange::Value(-1.0, 1.0), EigBackend::Mixed).unwrap_err();
    assert!(e.to_string().contains("value range"), "{e}");
    let e = ctensor_aten::eigh(&a, EighRange::Index(0, 2), EigBackend::Mixed).unwrap_err();
    assert!(e.to_string().contains("eigvalsh"), "{e}");
    let e = eigvalsh(&a, EighRange::Index(3, 11), EigBackend::Mixed).unwrap_err();
    assert!(matches!(e, Error::OutOfRange { .. }), "{e}");
    let e = eigvalsh(
        &a.narrow(1, 0, 9)?,
        EighRange::Index(0, 2),
        EigBackend::Mixed,
    )
    .unwrap_err();
    assert!(matches!(e, Error::NotAMatrix { .. }), "{e}");
    Ok(())
}
