//! `eigh`, `eigvalsh` and `eigh_generalized` over stacks of matrices (one per k-point),
//! on both devices: each result equals the solve of its own matrix, `H V = V Λ` holds,
//! index ranges, shared and per-matrix `B`, empty stacks, OpenBLAS's thread count is
//! restored, and a value range or a NaN in one matrix is an error.
#![deny(unused_must_use)]

mod common;

use common::*;
use ctensor_aten::{
    eigh, eigh_generalized, eigvalsh, matmul, DataType, Device, EigBackend, EighRange, Error,
    Scalar, Tensor,
};

/// What a helper that can fail returns.
type Fallible<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// A stack of random Hermitian matrices `[batch..., n, n]` (A + Aᴴ) on `D`, plus `shift`
/// on the diagonal (large shifts make them positive definite).
fn hermitian_stack<D: Device, T: Scalar>(
    batch: &[usize],
    n: usize,
    shift: f64,
    seed: u64,
) -> Fallible<Tensor> {
    Ok({
        let mut shape = batch.to_vec();
        shape.extend([n, n]);
        let (a, _) = random_on::<D, T>(&mut rng(seed), &shape);
        let rank = shape.len();
        let h = (&a + &a.transpose(rank - 2, rank - 1)?.conj()?)?;
        let eye = Tensor::eye(T::DTYPE, D::TYPE, n)?;
        (&h + &(&eye * shift)?)?.contiguous()?
    })
}

fn stacks_of<D: Device, T: Scalar>() -> TestResult {
    let dt = T::DTYPE;
    for n in [1usize, 7, 40] {
        let h = hermitian_stack::<D, T>(&[3, 2], n, 0.0, n as u64)?;
        for (range, m) in [
            (EighRange::All, n),
            (EighRange::Index(0, n.div_ceil(2)), n.div_ceil(2)),
        ] {
            for backend in [
                EigBackend::LapackEvd,
                EigBackend::LapackEvr,
                EigBackend::Faer,
            ] {
                let what = format!("{dt} n={n} {range:?} {backend:?}");
                let (w, v) = eigh(&h, range, backend).unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(
                    (w.dims(), v.dims()),
                    (&[3, 2, m][..], &[3, 2, n, m][..]),
                    "{what}"
                );
                // Entries up to 250 in magnitude: eigenvalues up to about 250·n.
                let tol = 50.0 * eps(dt) * 250.0 * (n as f64);
                let wv = eigvalsh(&h, range, backend)?;
                assert!(wv.allclose(&w, 0.0, tol)?, "{what}: eigvalsh");
                for i in 0..3 {
                    for j in 0..2 {
                        let hij = h.index(i)?.index(j)?;
                        let (w1, _) = eigh(&hij, range, backend)?;
                        let wij = w.index(i)?.index(j)?;
                        assert!(wij.allclose(&w1, 0.0, tol)?, "{what}: values of [{i}, {j}]");
                        // H V = V Λ for the batched vectors.
                        let vij = v.index(i)?.index(j)?;
                        let lhs = matmul(&hij, &vij)?;
                        let rhs = (&vij * &wij)?;
                        assert!(
                            lhs.allclose(&rhs, 0.0, tol)?,
                            "{what}: H V ≠ V Λ at [{i}, {j}]"
                        );
                    }
                }
            }
        }
    }
    Ok(())
}

device_test!(stacked_eigh_solves_each_matrix, D -> Result {
    for_blas_dtypes!(stacks_of, D);
    Ok(())
});

device_test!(stacked_generalized_eigh_takes_one_b_or_a_stack, D -> Result {
    let a = hermitian_stack::<D, ctensor_aten::c64>(&[4], 9, 0.0, 1)?;
    // Entries up to 250: a shift of 9 · 250 makes B diagonally dominant, so definite.
    let b = hermitian_stack::<D, ctensor_aten::c64>(&[4], 9, 2300.0, 2)?;
    let b0 = b.index(0)?;
    for (what, bb) in [("per-matrix B", b.share()), ("shared B", b0.share())] {
        let (w, v) = eigh_generalized(&a, &bb, 1, EighRange::Index(0, 3))?;
        assert_eq!((w.dims(), v.dims()), (&[4, 3][..], &[4, 9, 3][..]), "{what}");
        for k in 0..4 {
            let bk = if bb.ndim() == 3 { bb.index(k)? } else { bb.share() };
            let (w1, _) = eigh_generalized(&a.index(k)?, &bk, 1, EighRange::Index(0, 3))?;
            assert!(w.index(k)?.allclose(&w1, 0.0, 1e-10)?, "{what} [{k}]");
        }
    }
    let e = eigh_generalized(&a, &hermitian_stack::<D, ctensor_aten::c64>(&[3], 9, 2300.0, 2)?, 1, EighRange::All).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { op: "eigh_generalized", .. }), "{e}");
    Ok(())
});

device_test!(stacked_eigh_refuses_value_ranges_and_reports_nan, D -> Result {
    let h = hermitian_stack::<D, f64>(&[2], 5, 0.0, 3)?;
    let e = eigh(&h, EighRange::Value(-1.0, 1.0), EigBackend::default()).unwrap_err();
    assert!(matches!(e, Error::Unsupported { op: "eigh", .. }), "{e}");
    // NaN in the lower triangle of the second matrix: the batch fails and says so.
    let mut bad = h.to_vec::<f64>()?;
    bad[25 + 3 * 5 + 1] = f64::NAN;
    let bad = on::<D>(Tensor::from_slice(&bad, &[2, 5, 5])?);
    let e = eigh(&bad, EighRange::All, EigBackend::LapackEvd).unwrap_err();
    assert!(matches!(e, Error::NonFinite { .. }), "{e}");
    // An empty stack has the result shapes.
    let empty = on::<D>(Tensor::zeros(DataType::Double, D::TYPE, &[0, 5, 5])?);
    let (w, v) = eigh(&empty, EighRange::Index(0, 2), EigBackend::default())?;
    assert_eq!((w.dims(), v.dims()), (&[0, 2][..], &[0, 5, 2][..]));
    Ok(())
});
