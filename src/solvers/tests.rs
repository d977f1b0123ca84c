//! Both solvers against dense `eigh` of the same matrix, every floating dtype, awkward
//! sizes, degenerate spectra, and the inputs that must be refused.

use super::*;
use ctensor_aten::{
    c64, eigh, matmul, matmul_into, DataType, DeviceType, EigBackend, EighRange, Tensor, Trans,
};

type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;
type Solver = fn(&Tensor, &Tensor, &Tensor, SolverOptions) -> Result<Eigenpairs>;

const FLOATS: [DataType; 4] = [
    DataType::Float,
    DataType::Double,
    DataType::ComplexFloat,
    DataType::ComplexDouble,
];

fn run_davidson(h: &Tensor, d: &Tensor, x0: &Tensor, o: SolverOptions) -> Result<Eigenpairs> {
    davidson(|x| matmul(h, x), diagonal_preconditioner(d, 1e-2), x0, o)
}

fn run_lobpcg(h: &Tensor, d: &Tensor, x0: &Tensor, o: SolverOptions) -> Result<Eigenpairs> {
    lobpcg(|x| matmul(h, x), diagonal_preconditioner(d, 1e-2), x0, o)
}

/// A Hermitian `[n, n]` matrix: a spread diagonal plus a random Hermitian coupling
/// (a plane-wave Hamiltonian's shape: diagonally dominant, not diagonal). With
/// `degenerate`, the diagonal holds pairs of equal values.
fn matrix(dtype: DataType, n: usize, seed: u64, degenerate: bool) -> Result<(Tensor, Tensor)> {
    let a = Tensor::randn(dtype, DeviceType::Cpu, &[n, n], seed)?.mul_scalar(0.05)?;
    let sym = a.add(&a.t()?.conj()?)?;
    let d: Vec<f64> = (0..n)
        .map(|i| {
            if degenerate {
                (i / 2) as f64
            } else {
                i as f64 * 0.7
            }
        })
        .collect();
    let dt = Tensor::from_slice(&d, &[n])?;
    let h = if degenerate {
        // Exact degeneracy: H = diag(d) itself, with a unitary-invariant pairwise block.
        Tensor::eye(dtype, DeviceType::Cpu, n)?.mul(&dt.unsqueeze(0)?.cast(dtype)?)?
    } else {
        sym.add(&Tensor::eye(dtype, DeviceType::Cpu, n)?.mul(&dt.unsqueeze(0)?.cast(dtype)?)?)?
    };
    let real = if matches!(dtype, DataType::Float | DataType::ComplexFloat) {
        DataType::Float
    } else {
        DataType::Double
    };
    Ok((h, dt.cast(real)?))
}

fn check_against_eigh(solver: Solver, dtype: DataType, n: usize, nev: usize) -> TestResult {
    let single = matches!(dtype, DataType::Float | DataType::ComplexFloat);
    for degenerate in [false, true] {
        let (h, d) = matrix(dtype, n, 7 + n as u64, degenerate)?;
        let x0 = Tensor::randn(dtype, DeviceType::Cpu, &[n, nev], 3)?;
        let mut o = SolverOptions::new(nev);
        o.tol = if single { 2e-3 } else { 1e-9 };
        o.max_iter = 400;
        let found = solver(&h, &d, &x0, o)?;
        assert!(
            found.converged,
            "{dtype:?} n={n} nev={nev}: {:?}",
            found.residual_norms
        );
        let want = eigh(&h, EighRange::Index(0, nev), EigBackend::default())?.0;
        let (got, want) = (host_values(&found.values)?, host_values(&want)?);
        let tol = if single { 1e-3 } else { 1e-9 };
        for (g, w) in got.iter().zip(&want) {
            assert!(
                (g - w).abs() <= tol * w.abs().max(1.0),
                "{dtype:?} n={n}: {got:?} vs {want:?}"
            );
        }
        // The vectors: orthonormal, and their residuals are the ones reported.
        let v = &found.vectors;
        let gram = matmul_op_c(v, v)?;
        let eye = Tensor::eye(dtype, DeviceType::Cpu, nev)?;
        assert!(gram.allclose(&eye, 0.0, if single { 1e-4 } else { 1e-10 })?);
        let r = matmul(&h, v)?.sub(&v.mul(&found.values.unsqueeze(0)?)?)?;
        let norms = column_norms(&r)?;
        for (a, b) in norms.iter().zip(&found.residual_norms) {
            assert!((a - b).abs() <= if single { 1e-3 } else { 1e-10 });
        }
    }
    Ok(())
}

fn matmul_op_c(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    ctensor_aten::matmul_op(a, ctensor_aten::Trans::C, b, ctensor_aten::Trans::N)
}

#[test]
fn davidson_matches_dense_eigh_for_every_dtype_and_size() -> TestResult {
    for dtype in FLOATS {
        for (n, nev) in [(1, 1), (7, 3), (40, 5), (301, 8)] {
            check_against_eigh(run_davidson, dtype, n, nev)?;
        }
    }
    Ok(())
}

#[test]
fn lobpcg_matches_dense_eigh_for_every_dtype_and_size() -> TestResult {
    for dtype in FLOATS {
        for (n, nev) in [(1, 1), (7, 3), (40, 5), (301, 8)] {
            check_against_eigh(run_lobpcg, dtype, n, nev)?;
        }
    }
    Ok(())
}

#[test]
fn an_iteration_limit_returns_the_current_pairs_unconverged() -> TestResult {
    for solver in [run_davidson as Solver, run_lobpcg] {
        let (h, d) = matrix(DataType::ComplexDouble, 120, 5, false)?;
        let x0 = Tensor::randn(DataType::ComplexDouble, DeviceType::Cpu, &[120, 6], 9)?;
        let mut o = SolverOptions::new(6);
        o.max_iter = 1;
        o.tol = 1e-12;
        let found = solver(&h, &d, &x0, o)?;
        assert!(!found.converged);
        assert_eq!(found.iterations, 1);
        assert_eq!(found.vectors.dims(), [120, 6]);
        assert!(found.residual_norms.iter().any(|&r| r > 1e-12));
    }
    Ok(())
}

#[test]
fn buffer_pairs_do_not_hold_the_wanted_ones_back() -> TestResult {
    for solver in [run_davidson as Solver, run_lobpcg] {
        let (h, d) = matrix(DataType::ComplexDouble, 200, 11, false)?;
        let x0 = Tensor::randn(DataType::ComplexDouble, DeviceType::Cpu, &[200, 8], 2)?;
        let mut o = SolverOptions::new(8);
        o.tol = 1e-10;
        o.nconv = 5;
        let found = solver(&h, &d, &x0, o)?;
        assert!(found.converged);
        assert!(found.residual_norms[..5].iter().all(|&r| r <= 1e-10));
        let want = host_values(&eigh(&h, EighRange::Index(0, 5), EigBackend::default())?.0)?;
        let got = host_values(&found.values)?;
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() < 1e-9);
        }
        o.nconv = 9;
        assert!(solver(&h, &d, &x0, o).is_err());
    }
    Ok(())
}

#[test]
fn bad_start_blocks_and_settings_are_refused_with_errors() -> TestResult {
    let (h, d) = matrix(DataType::Double, 10, 1, false)?;
    for solver in [run_davidson as Solver, run_lobpcg] {
        // nev larger than n, a start block of the wrong width, an integer block.
        let x0 = Tensor::randn(DataType::Double, DeviceType::Cpu, &[10, 11], 1)?;
        assert!(solver(&h, &d, &x0, SolverOptions::new(11)).is_err());
        let x0 = Tensor::randn(DataType::Double, DeviceType::Cpu, &[10, 3], 1)?;
        let e = solver(&h, &d, &x0, SolverOptions::new(2)).unwrap_err();
        assert!(e.to_string().contains("nev = 2"), "{e}");
        let xi = Tensor::zeros(DataType::Int, DeviceType::Cpu, &[10, 2])?;
        assert!(solver(&h, &d, &xi, SolverOptions::new(2)).is_err());
        // A tolerance that is NaN or zero.
        for tol in [f64::NAN, 0.0, -1.0, f64::INFINITY] {
            let mut o = SolverOptions::new(3);
            o.tol = tol;
            assert!(solver(&h, &d, &x0, o).is_err(), "tol {tol}");
        }
        // A start block with NaN: an error (eigh refuses non-finite input), not a hang.
        let xn = Tensor::full(f64::NAN, DeviceType::Cpu, &[10, 3])?;
        assert!(solver(&h, &d, &xn, SolverOptions::new(3)).is_err());
        // An operator that fails: its error comes back unchanged.
        let fail = |_: &Tensor| -> Result<Tensor> {
            Err(ctensor_aten::Error::InvalidArgument {
                op: "my_operator",
                expected: "x".into(),
                given: "y".into(),
            })
        };
        let e = davidson(
            fail,
            diagonal_preconditioner(&d, 1e-2),
            &x0,
            SolverOptions::new(3),
        )
        .unwrap_err();
        assert!(e.to_string().contains("my_operator"));
        let e = lobpcg(
            fail,
            diagonal_preconditioner(&d, 1e-2),
            &x0,
            SolverOptions::new(3),
        )
        .unwrap_err();
        assert!(e.to_string().contains("my_operator"));
    }
    Ok(())
}

/// `‖QᴴQ − I‖_max` and `‖A − Q (Qᴴ A)‖_max / ‖A‖_max`: how orthonormal `q` is and how
/// well it spans the columns of `a`.
fn orthonormal_and_spanning(q: &Tensor, a: &Tensor) -> Result<(f64, f64)> {
    let m = q.dims()[1];
    let eye = Tensor::eye(q.dtype(), DeviceType::Cpu, m)?;
    let gram = matmul_op_c(q, q)?.sub(&eye)?;
    let off = host_values(&gram.abs()?.max(&[0, 1])?)?[0];
    let back = matmul(q, &matmul_op_c(q, a)?)?.sub(a)?;
    let scale = host_values(&a.abs()?.max(&[0, 1])?)?[0];
    let miss = host_values(&back.abs()?.max(&[0, 1])?)?[0] / scale;
    Ok((off, miss))
}

#[test]
fn orthonormalize_takes_cholesky_qr_for_independent_columns_and_householder_otherwise() -> TestResult
{
    for dtype in FLOATS {
        let single = matches!(dtype, DataType::Float | DataType::ComplexFloat);
        let tol = if single { 2e-5 } else { 1e-13 };
        for (n, m) in [(1, 1), (7, 3), (300, 17), (513, 64)] {
            // Columns of norms from 1e-9 to 1: scaled first, so Cholesky QR still applies.
            let scales: Vec<f64> = (0..m)
                .map(|j| 10f64.powf(-9.0 * j as f64 / m as f64))
                .collect();
            let s = Tensor::from_slice(&scales, &[1, m])?.cast(dtype.real_type())?;
            let a = Tensor::randn(dtype, DeviceType::Cpu, &[n, m], 5 + n as u64)?.mul(&s)?;
            assert!(
                cholesky_qr_factor(&a)?.is_some(),
                "{dtype:?} {n}x{m}: Cholesky QR should apply"
            );
            let mut q = a.try_clone()?;
            let memory = q.share();
            orthonormalize_(&mut q)?;
            assert!(q.shares_memory_with(&memory), "not in place");
            let (off, miss) = orthonormal_and_spanning(&q, &a)?;
            // One pass loses up to ε·κ² of orthogonality (κ of the scaled columns is
            // small here); the span is kept to rounding, relative to the largest column.
            assert!(off <= 100.0 * tol, "{dtype:?} {n}x{m}: QᴴQ - I = {off:e}");
            assert!(
                miss <= 100.0 * tol,
                "{dtype:?} {n}x{m}: span missed by {miss:e}"
            );
        }
        // Dependent columns (the last is the first plus a multiple of rounding) and a
        // zero column: Householder QR, still orthonormal, spanning what was there.
        let a = Tensor::randn(dtype, DeviceType::Cpu, &[50, 6], 8)?;
        let near = a.narrow(1, 0, 1)?.mul_scalar(1.0 + 1e-12)?;
        a.narrow(1, 5, 1)?.assign(&near)?;
        assert!(
            cholesky_qr_factor(&a)?.is_none(),
            "{dtype:?}: dependent columns"
        );
        let mut q = a.try_clone()?;
        orthonormalize_(&mut q)?;
        let (off, miss) = orthonormal_and_spanning(&q, &a)?;
        assert!(
            off <= 100.0 * tol && miss <= 100.0 * tol,
            "{dtype:?}: {off:e} {miss:e}"
        );
        let z = a.try_clone()?;
        z.narrow(1, 2, 1)?.fill(0.0)?;
        assert!(
            cholesky_qr_factor(&z)?.is_none(),
            "{dtype:?}: a zero column"
        );
        // NaN anywhere: Householder QR's NaN result, no panic and no error.
        let nan = a.try_clone()?;
        nan.narrow(0, 3, 1)?.narrow(1, 1, 1)?.fill(f64::NAN)?;
        assert!(cholesky_qr_factor(&nan)?.is_none(), "{dtype:?}: NaN");
        let mut q = nan.try_clone()?;
        orthonormalize_(&mut q)?;
        assert_eq!(q.dims(), [50, 6]);
    }
    Ok(())
}

/// `‖[B T]ᴴ[B T] − I‖_max`: how far the basis and the block beside it are from one set of
/// orthonormal columns.
fn joint_departure(basis: &Tensor, t: &Tensor) -> Result<f64> {
    let both = ctensor_aten::cat(&[basis, t], 1)?;
    let eye = Tensor::eye(both.dtype(), DeviceType::Cpu, both.dims()[1])?;
    let gram = matmul_op_c(&both, &both)?.sub(&eye)?;
    if gram.numel() == 0 {
        return Ok(0.0);
    }
    Ok(host_values(&gram.abs()?.max(&[0, 1])?)?[0])
}

/// An orthonormal `[n, m]` basis from Householder QR of random columns.
fn orthonormal_basis(dtype: DataType, n: usize, m: usize, seed: u64) -> Result<Tensor> {
    let a = Tensor::randn(dtype, DeviceType::Cpu, &[n, m], seed)?;
    Ok(qr(&a, QrMode::Reduced)?.0)
}

#[test]
fn orthogonalizing_against_a_basis_takes_one_pass_only_when_it_provably_suffices() -> TestResult {
    for dtype in FLOATS {
        let single = matches!(dtype, DataType::Float | DataType::ComplexFloat);
        let tol = if single { 1e-4 } else { 1e-13 };
        for (n, m, k) in [(2, 1, 1), (9, 4, 3), (300, 40, 17), (517, 96, 33)] {
            let basis = orthonormal_basis(dtype, n, m, 3 + n as u64)?;
            // Random columns: far from the basis and from each other, so one pass.
            let a = Tensor::randn(dtype, DeviceType::Cpu, &[n, k], 7 + n as u64)?;
            let mut t = a.try_clone()?;
            let memory = t.share();
            let passes = orthogonalize_against_(&basis, &mut t)?;
            assert!(t.shares_memory_with(&memory), "not in place");
            let off = joint_departure(&basis, &t)?;
            assert!(off <= tol, "{dtype:?} {n}x{m}+{k}: [B T] off by {off:e}");
            // It spans what the projected columns spanned: (I − B Bᴴ) a = T (Tᴴ a).
            let projected = a.sub(&matmul(&basis, &matmul_op_c(&basis, &a)?)?)?;
            let (_, miss) = orthonormal_and_spanning(&t, &projected)?;
            assert!(
                miss <= 100.0 * tol,
                "{dtype:?} {n}x{m}+{k}: span missed by {miss:e}"
            );
            if n >= 300 {
                assert_eq!(passes, 1, "{dtype:?} {n}x{m}+{k}: random columns");
            }

            // Columns almost inside the basis (1e-6 of them outside; 1e-3 in f32): the
            // projection cancels most of their norm, so one pass would leave rounding
            // along the basis that is large against what remains. Two passes.
            let outside = if single { 1e-3 } else { 1e-6 };
            let c = Tensor::randn(dtype, DeviceType::Cpu, &[m, k], 11 + n as u64)?;
            let inside = matmul(&basis, &c)?;
            let mut t = Tensor::randn(dtype, DeviceType::Cpu, &[n, k], 13 + n as u64)?
                .mul_scalar(outside)?
                .add(&inside)?;
            if n > m + k {
                assert_eq!(
                    orthogonalize_against_(&basis, &mut t)?,
                    2,
                    "{dtype:?} {n}: inside"
                );
                let off = joint_departure(&basis, &t)?;
                assert!(off <= tol, "{dtype:?} {n}x{m}+{k}: inside, off by {off:e}");
            }

            // Projected columns that are nearly dependent (the second is the first plus
            // 1e-3 of a random column; 3e-2 in f32): Cholesky QR still applies, but its
            // condition number is far above ONE_PASS_CONDITION. Two passes.
            if k >= 2 && n > m + k {
                let near = Tensor::randn(dtype, DeviceType::Cpu, &[n, k], 17 + n as u64)?;
                let gap = if single { 3e-2 } else { 1e-3 };
                let second = near
                    .narrow(1, 0, 1)?
                    .add(&near.narrow(1, 1, 1)?.mul_scalar(gap)?)?;
                near.narrow(1, 1, 1)?.assign(&second)?;
                let mut t = near.try_clone()?;
                assert_eq!(
                    orthogonalize_against_(&basis, &mut t)?,
                    2,
                    "{dtype:?} {n}: dependent"
                );
                let off = joint_departure(&basis, &t)?;
                assert!(
                    off <= tol,
                    "{dtype:?} {n}x{m}+{k}: dependent, off by {off:e}"
                );
            }
        }
        // An empty basis (the first block), an empty block, and zero rows of both.
        let mut t = Tensor::randn(dtype, DeviceType::Cpu, &[50, 6], 19)?;
        let empty = Tensor::zeros(dtype, DeviceType::Cpu, &[50, 0])?;
        assert_eq!(
            orthogonalize_against_(&empty, &mut t)?,
            1,
            "{dtype:?}: empty basis"
        );
        assert!(joint_departure(&empty, &t)? <= tol);
        let basis = orthonormal_basis(dtype, 50, 5, 23)?;
        let mut none = Tensor::zeros(dtype, DeviceType::Cpu, &[50, 0])?;
        orthogonalize_against_(&basis, &mut none)?;
        assert_eq!(none.dims(), [50, 0]);
        // NaN in the block: Householder QR's NaN result after two passes, no panic.
        let mut nan = Tensor::randn(dtype, DeviceType::Cpu, &[50, 6], 29)?;
        nan.narrow(0, 7, 1)?.narrow(1, 2, 1)?.fill(f64::NAN)?;
        assert_eq!(
            orthogonalize_against_(&basis, &mut nan)?,
            2,
            "{dtype:?}: NaN"
        );
        assert_eq!(nan.dims(), [50, 6]);
    }
    Ok(())
}

#[test]
fn one_pass_needs_kept_norms_and_a_small_condition_number() {
    let after = |norms2: Vec<f64>, condition: f64| GramSummary { norms2, condition };
    // The norms kept: exactly 1/√2 of them is enough, a hair less is not.
    assert!(one_pass_is_enough(&[2.0, 1.0], &after(vec![2.0, 0.5], 1.0)));
    assert!(!one_pass_is_enough(
        &[2.0, 1.0],
        &after(vec![2.0, 0.499], 1.0)
    ));
    // The condition number: the bound itself is enough, above it is not.
    assert!(one_pass_is_enough(
        &[1.0],
        &after(vec![1.0], ONE_PASS_CONDITION)
    ));
    assert!(!one_pass_is_enough(
        &[1.0],
        &after(vec![1.0], ONE_PASS_CONDITION * 1.01)
    ));
    // Anything non-finite, or a summary of other columns, asks for the second pass.
    for bad in [f64::NAN, f64::INFINITY] {
        assert!(!one_pass_is_enough(&[bad], &after(vec![1.0], 1.0)));
        assert!(!one_pass_is_enough(&[1.0], &after(vec![bad], 1.0)));
        assert!(!one_pass_is_enough(&[1.0], &after(vec![1.0], bad)));
    }
    assert!(!one_pass_is_enough(&[1.0, 1.0], &after(vec![1.0], 1.0)));
}

#[test]
fn davidson_restarts_in_place_at_every_basis_size() -> TestResult {
    for dtype in [DataType::ComplexDouble, DataType::Float] {
        let single = dtype == DataType::Float;
        let (h, d) = matrix(dtype, 301, 4, false)?;
        let want = host_values(&eigh(&h, EighRange::Index(0, 8), EigBackend::default())?.0)?;
        let x0 = Tensor::randn(dtype, DeviceType::Cpu, &[301, 8], 6)?;
        // 2·nev restarts at every step; 2·nev + 3 leaves room for fewer corrections than
        // are open, so some steps take the lowest that fit.
        for max_basis in [16, 19, 24, 40] {
            let mut o = SolverOptions::new(8);
            o.tol = if single { 2e-3 } else { 1e-9 };
            o.max_iter = 400;
            o.max_basis = max_basis;
            let found = run_davidson(&h, &d, &x0, o)?;
            assert!(found.converged, "{dtype:?} basis {max_basis}");
            let got = host_values(&found.values)?;
            for (g, w) in got.iter().zip(&want) {
                assert!(
                    (g - w).abs() <= if single { 1e-3 } else { 1e-9 },
                    "{dtype:?} basis {max_basis}: {got:?} vs {want:?}"
                );
            }
            let v = &found.vectors;
            assert!(v.is_contiguous() && v.dims() == [301, 8]);
            let eye = Tensor::eye(dtype, DeviceType::Cpu, 8)?;
            assert!(matmul_op_c(v, v)?.allclose(&eye, 0.0, if single { 1e-4 } else { 1e-10 })?);
        }
    }
    // nev = n: the first basis spans the space, and the pairs are exact.
    let (h, d) = matrix(DataType::ComplexDouble, 7, 2, false)?;
    let x0 = Tensor::randn(DataType::ComplexDouble, DeviceType::Cpu, &[7, 7], 1)?;
    let found = run_davidson(&h, &d, &x0, SolverOptions::new(7))?;
    let want = host_values(&eigh(&h, EighRange::All, EigBackend::default())?.0)?;
    for (g, w) in host_values(&found.values)?.iter().zip(&want) {
        assert!((g - w).abs() < 1e-12);
    }
    // The identity preconditioner hands back the residual block itself, which the
    // solver then overwrites: still the right pairs.
    let (h, _) = matrix(DataType::Double, 120, 3, false)?;
    let x0 = Tensor::randn(DataType::Double, DeviceType::Cpu, &[120, 4], 2)?;
    let mut o = SolverOptions::new(4);
    o.max_iter = 400;
    let found = davidson(
        |x: &Tensor| matmul(&h, x),
        |r: &Tensor, _: &[f64]| Ok(r.share()),
        &x0,
        o,
    )?;
    assert!(found.converged);
    let want = host_values(&eigh(&h, EighRange::Index(0, 4), EigBackend::default())?.0)?;
    for (g, w) in host_values(&found.values)?.iter().zip(&want) {
        assert!((g - w).abs() < 1e-9);
    }
    Ok(())
}

/// `davidson_owned` is `davidson`: the same pairs bit for bit, from a start block that
/// is a column window of a wider block (its neighbours NaN, never read), which the
/// solver only reads even when it owns the only other handle to it. The operator is
/// given its blocks where they lie in the basis: columns with the basis's row stride.
#[test]
fn davidson_owned_gives_the_same_pairs_and_only_reads_the_start_block() -> TestResult {
    for dtype in [DataType::ComplexDouble, DataType::Float] {
        let (h, d) = matrix(dtype, 301, 11, false)?;
        let wide = Tensor::randn(dtype, DeviceType::Cpu, &[301, 12], 4)?;
        let nan = Tensor::full(f64::NAN, DeviceType::Cpu, &[301, 2])?.cast(dtype)?;
        wide.narrow(1, 0, 2)?.assign(&nan)?;
        wide.narrow(1, 10, 2)?.assign(&nan)?;
        let x0 = wide.narrow(1, 2, 8)?;
        let before = x0.contiguous()?.try_clone()?;
        let mut o = SolverOptions::new(8);
        o.tol = if dtype == DataType::Float { 2e-3 } else { 1e-9 };
        o.max_iter = 400;
        o.max_basis = 19;
        let a = run_davidson(&h, &d, &x0, o)?;
        let strides = std::cell::RefCell::new(Vec::new());
        let op = |x: &Tensor| {
            strides.borrow_mut().push((x.dims()[1], x.strides()[0]));
            matmul(&h, x)
        };
        let b = davidson_owned(op, diagonal_preconditioner(&d, 1e-2), x0.share(), o)?;
        assert!(a.converged && b.converged);
        assert_eq!(a.iterations, b.iterations);
        assert!(a.values.allclose(&b.values, 0.0, 0.0)?);
        assert!(a.vectors.allclose(&b.vectors, 0.0, 0.0)?);
        assert!(
            x0.allclose(&before, 0.0, 0.0)?,
            "{dtype:?}: the start block was written"
        );
        for c in [0, 1, 10, 11] {
            let col = wide.narrow(1, c, 1)?.cast(DataType::ComplexDouble)?;
            assert!(col.to_vec::<c64>()?.iter().all(|v| v.re.is_nan()));
        }
        // Every block the operator saw is a window of the 19-column basis.
        let seen = strides.into_inner();
        assert!(
            !seen.is_empty() && seen.iter().all(|&(_, s)| s == 19),
            "{seen:?}"
        );
    }
    Ok(())
}

/// `gather_columns_` against `take` of the same columns: every floating dtype, sizes
/// that take one slab, several slabs with a short last one (3001 × 97), a row wider
/// than a slab (1 × 70 001), no rows, and column sets that are empty, all, a prefix,
/// scattered, and the last alone. The result is the front window of the block itself
/// (same memory, the block's row stride), and a block that is a window of a wider one
/// leaves its NaN neighbours as they were.
#[test]
fn gathering_the_open_columns_in_place_is_take_of_them() -> TestResult {
    for dtype in FLOATS {
        for (n, m) in [(7, 5), (3001, 97), (1, 70_001), (0, 300)] {
            let last = m - 1;
            let sets: Vec<Vec<usize>> = vec![
                vec![],
                (0..m).collect(),
                (0..m / 2).collect(),
                (0..m).filter(|c| c % 3 != 1).collect(),
                vec![1, 2, last],
                vec![last],
            ];
            for cols in sets {
                let wide = Tensor::randn(dtype, DeviceType::Cpu, &[n, m + 3], 5)?;
                let nan = Tensor::full(f64::NAN, DeviceType::Cpu, &[n, 1])?.cast(dtype)?;
                wide.narrow(1, 0, 1)?.assign(&nan)?;
                wide.narrow(1, m + 1, 2)?.assign(&nan)?;
                let r = wide.narrow(1, 1, m)?;
                let want = r.take(1, &cols)?;
                let got = gather_columns_(&r, &cols)?;
                let what = format!("{dtype:?} [{n}, {m}] {} columns", cols.len());
                assert_eq!(got.dims(), [n, cols.len()], "{what}");
                assert!(got.allclose(&want, 0.0, 0.0)?, "{what}");
                assert!(
                    r.narrow(1, 0, cols.len())?.allclose(&want, 0.0, 0.0)?,
                    "{what}: not gathered in the block"
                );
                assert_eq!(got.strides()[0], m + 3, "{what}");
                for c in [0, m + 1, m + 2] {
                    let col = wide.narrow(1, c, 1)?.cast(DataType::ComplexDouble)?;
                    assert!(
                        col.to_vec::<c64>()?.iter().all(|v| v.re.is_nan()),
                        "{what}: neighbour {c} written"
                    );
                }
            }
        }
    }
    Ok(())
}

/// `davidson_into` is `davidson`: the same pairs bit for bit with an operator that writes
/// `H X` into the window it is given (always a window of `H V`'s storage, with its row
/// stride), through restarts (so windows that held older columns are written again),
/// and an operator's error comes back unchanged.
#[test]
fn davidson_into_gives_davidsons_pairs_writing_into_the_basis() -> TestResult {
    for dtype in [DataType::ComplexDouble, DataType::Float] {
        let (h, d) = matrix(dtype, 263, 17, false)?;
        let x0 = Tensor::randn(dtype, DeviceType::Cpu, &[263, 7], 6)?;
        let mut o = SolverOptions::new(7);
        o.tol = if dtype == DataType::Float { 2e-3 } else { 1e-9 };
        o.max_iter = 400;
        o.max_basis = 17;
        let a = run_davidson(&h, &d, &x0, o)?;
        let seen = std::cell::RefCell::new(Vec::new());
        let op_into = |x: &Tensor, out: &mut Tensor| {
            seen.borrow_mut().push(out.strides()[0]);
            matmul_into(&h, Trans::N, x, Trans::N, 1.0, 0.0, out)
        };
        let b = davidson_into(op_into, diagonal_preconditioner(&d, 1e-2), x0.share(), o)?;
        assert!(a.converged && b.converged, "{dtype:?}");
        assert_eq!(a.iterations, b.iterations, "{dtype:?}");
        assert!(a.values.allclose(&b.values, 0.0, 0.0)?, "{dtype:?}");
        assert!(a.vectors.allclose(&b.vectors, 0.0, 0.0)?, "{dtype:?}");
        let seen = seen.into_inner();
        assert!(seen.len() > 3 && seen.iter().all(|&s| s == 17), "{seen:?}");
        // The third application fails: that error is the solver's.
        let mut calls = 0;
        let failing = |x: &Tensor, out: &mut Tensor| {
            calls += 1;
            if calls == 3 {
                return Err(Error::InvalidArgument {
                    op: "test operator",
                    expected: "two calls".into(),
                    given: "a third".into(),
                });
            }
            matmul_into(&h, Trans::N, x, Trans::N, 1.0, 0.0, out)
        };
        let e =
            davidson_into(failing, diagonal_preconditioner(&d, 1e-2), x0.share(), o).unwrap_err();
        assert!(
            matches!(
                e,
                Error::InvalidArgument {
                    op: "test operator",
                    ..
                }
            ),
            "{e}"
        );
    }
    Ok(())
}

/// Both solvers hand their preconditioner a residual block of their own: one that is
/// overwritten in place leads to the same pairs, bit for bit, with every column open
/// and with some converged (the open columns, moved to the front of the solver's
/// residual block, are a window of it then: Davidson and LOBPCG both see one).
#[test]
fn both_solvers_take_an_in_place_preconditioner_to_the_same_pairs() -> TestResult {
    for dtype in [DataType::ComplexDouble, DataType::Float] {
        let (h, d) = matrix(dtype, 211, 13, false)?;
        let x0 = Tensor::randn(dtype, DeviceType::Cpu, &[211, 9], 8)?;
        let mut o = SolverOptions::new(9);
        o.tol = if dtype == DataType::Float { 2e-3 } else { 1e-9 };
        o.max_iter = 400;
        o.nconv = 6;
        for solver in ["davidson", "lobpcg"] {
            // In-place calls given a window of a wider block.
            let windows = std::cell::Cell::new(0);
            let run = |in_place: bool| -> Result<Eigenpairs> {
                let op = |x: &Tensor| matmul(&h, x);
                let mut out_of_place = diagonal_preconditioner(&d, 1e-2);
                let mut inner = diagonal_preconditioner_in_place(&d, 1e-2);
                let pre = |r: &Tensor, th: &[f64]| {
                    if !in_place {
                        return out_of_place(r, th);
                    }
                    windows.set(windows.get() + usize::from(r.strides()[0] > th.len()));
                    inner(r, th)
                };
                if solver == "davidson" {
                    davidson(op, pre, &x0, o)
                } else {
                    lobpcg(op, pre, &x0, o)
                }
            };
            let (a, b) = (run(false)?, run(true)?);
            assert!(a.converged && b.converged, "{solver} {dtype:?}");
            assert_eq!(a.iterations, b.iterations, "{solver} {dtype:?}");
            assert!(
                a.values.allclose(&b.values, 0.0, 0.0)?,
                "{solver} {dtype:?}"
            );
            assert!(
                a.vectors.allclose(&b.vectors, 0.0, 0.0)?,
                "{solver} {dtype:?}"
            );
            assert!(
                windows.get() > 0,
                "{solver} {dtype:?}: no window preconditioned"
            );
        }
    }
    Ok(())
}

/// Zero-size residual blocks with a huge other dimension: no rows and 200 000 Ritz
/// values, and 2²⁰ rows (16 slabs) with no columns.
#[test]
fn the_diagonal_preconditioners_take_zero_size_blocks_with_huge_other_dimensions() -> TestResult {
    let theta = vec![0.5; 200_000];
    let none = Tensor::zeros(DataType::Double, DeviceType::Cpu, &[0])?;
    let r = Tensor::zeros(DataType::ComplexDouble, DeviceType::Cpu, &[0, 200_000])?;
    assert_eq!(
        diagonal_preconditioner(&none, 0.1)(&r, &theta)?.dims(),
        [0, 200_000]
    );
    assert_eq!(
        diagonal_preconditioner_in_place(&none, 0.1)(&r, &theta)?.dims(),
        [0, 200_000]
    );
    let d = Tensor::ones(DataType::Float, DeviceType::Cpu, &[1 << 20])?;
    let r = Tensor::zeros(DataType::Float, DeviceType::Cpu, &[1 << 20, 0])?;
    assert_eq!(
        diagonal_preconditioner(&d, 0.1)(&r, &[])?.dims(),
        [1 << 20, 0]
    );
    assert_eq!(
        diagonal_preconditioner_in_place(&d, 0.1)(&r, &[])?.dims(),
        [1 << 20, 0]
    );
    Ok(())
}

/// The diagonal preconditioner against a plain loop, for real and complex residual
/// blocks of f64 and f32 diagonals (and an f32 block with an f64 diagonal), a column
/// window of a wider block (its neighbours NaN, never read) and an empty block; the
/// residual is left as it was. The in-place variant gives the same values bit for bit,
/// written over the residual (a window's neighbours stay NaN), or a new block where the
/// residual's type cannot hold them.
#[test]
fn the_diagonal_preconditioner_is_the_plain_quotient_and_leaves_the_residual() -> TestResult {
    for (ddt, rdt) in [
        (DataType::Double, DataType::Double),
        (DataType::Double, DataType::ComplexDouble),
        (DataType::Float, DataType::Float),
        (DataType::Float, DataType::ComplexFloat),
        (DataType::Double, DataType::Float),
    ] {
        let promoted = ctensor_aten::result_type(rdt, ddt);
        // 2051 × 97 takes four slabs of shifts, the last one short.
        for (n, m) in [(301, 5), (2051, 97)] {
            let d = Tensor::randn(ddt, DeviceType::Cpu, &[n], 1)?.mul_scalar(3.0)?;
            let wide = Tensor::full(f64::NAN, DeviceType::Cpu, &[n, m + 2])?.cast(rdt)?;
            wide.narrow(1, 1, m)?
                .assign(&Tensor::randn(rdt, DeviceType::Cpu, &[n, m], 2)?)?;
            let theta: Vec<f64> = (0..m).map(|j| -1.0 + 8.0 * j as f64 / m as f64).collect();
            for r in [wide.narrow(1, 1, m)?, wide.narrow(1, 1, m)?.contiguous()?] {
                let before = r.cast(DataType::ComplexDouble)?.to_vec::<c64>()?;
                let mut pre = diagonal_preconditioner(&d, 0.1);
                let t = pre(&r, &theta)?;
                assert_eq!((t.dims(), t.dtype()), (&[n, m][..], promoted));
                let (tv, dv) = (
                    t.cast(DataType::ComplexDouble)?.to_vec::<c64>()?,
                    d.cast(DataType::Double)?.to_vec::<f64>()?,
                );
                let tol = if ddt == DataType::Float { 1e-5 } else { 1e-14 };
                for i in 0..n {
                    for (j, th) in theta.iter().enumerate() {
                        let want = before[i * m + j] / ((dv[i] - th).abs() + 0.1);
                        let got = tv[i * m + j];
                        assert!((got - want).norm() <= tol * want.norm(), "{rdt} ({i}, {j})");
                    }
                }
                assert_eq!(r.cast(DataType::ComplexDouble)?.to_vec::<c64>()?, before);
                let own = wide.try_clone()?;
                let r2 = if r.is_contiguous() {
                    own.narrow(1, 1, m)?.contiguous()?
                } else {
                    own.narrow(1, 1, m)?
                };
                let t2 = diagonal_preconditioner_in_place(&d, 0.1)(&r2, &theta)?;
                assert_eq!((t2.dims(), t2.dtype()), (&[n, m][..], promoted));
                assert!(t2.allclose(&t, 0.0, 0.0)?, "{rdt}: in place differs");
                let r2v = r2.cast(DataType::ComplexDouble)?.to_vec::<c64>()?;
                if promoted == rdt {
                    assert!(r2.allclose(&t, 0.0, 0.0)?, "{rdt}: not written in place");
                } else {
                    assert_eq!(
                        r2v, before,
                        "{rdt}: a residual of too narrow a type changed"
                    );
                }
                for c in [0, m + 1] {
                    let col = own.narrow(1, c, 1)?.cast(DataType::ComplexDouble)?;
                    assert!(col.to_vec::<c64>()?.iter().all(|v| v.re.is_nan()));
                }
            }
            let empty = Tensor::zeros(rdt, DeviceType::Cpu, &[n, 0])?;
            assert_eq!(
                diagonal_preconditioner(&d, 0.1)(&empty, &[])?.dims(),
                [n, 0]
            );
            assert_eq!(
                diagonal_preconditioner_in_place(&d, 0.1)(&empty, &[])?.dims(),
                [n, 0]
            );
            // Residuals of another length, or a Ritz value count that is not the column
            // count, are errors that say what was expected.
            let mut pre = diagonal_preconditioner(&d, 0.1);
            let short = Tensor::zeros(rdt, DeviceType::Cpu, &[n - 1, m])?;
            let e = pre(&short, &theta)
                .err()
                .ok_or("a short residual block was taken")?;
            assert!(
                e.to_string().contains(&format!("residuals [{n}, {m}]")),
                "{e}"
            );
            let e = pre(&wide.narrow(1, 1, m)?, &theta[1..])
                .err()
                .ok_or("too few Ritz values were taken")?;
            assert!(e.to_string().contains(&format!("[{n}, {}]", m - 1)), "{e}");
        }
    }
    Ok(())
}

/// `residuals_into_spare` against the residual block formed whole (`residual` for a
/// rotated basis, `H V Y − V Y Θ` otherwise) with its column norms: every floating
/// dtype, both forms, residuals that take several slabs of rows (70 001 × 5), one slab
/// (257 × 9), a row (1 × 4), and rooms of none, one column, fewer columns than the open
/// pairs (the columns past it give norms only), exactly as many and more. The tolerance
/// is midway between the two middle norms, so about half the pairs are open; the spare's columns past what
/// was kept, and the storage's columns before it, are left as they were (NaN).
#[test]
fn residuals_formed_in_the_spare_columns_are_the_whole_residuals() -> TestResult {
    for dtype in FLOATS {
        let close = if dtype.real_type() == DataType::Float {
            1e-4
        } else {
            1e-11
        };
        for (n, m, nev) in [(70_001, 7, 5), (257, 13, 9), (1, 4, 4)] {
            let v = Tensor::randn(dtype, DeviceType::Cpu, &[n, m], 11)?;
            let hv = Tensor::randn(dtype, DeviceType::Cpu, &[n, m], 12)?;
            let y = Tensor::randn(dtype, DeviceType::Cpu, &[m, nev], 13)?;
            let theta = Tensor::randn(dtype.real_type(), DeviceType::Cpu, &[nev], 14)?;
            let y_theta = y.mul(&theta.unsqueeze(0)?)?;
            let (x, hx) = (v.narrow(1, 0, nev)?, hv.narrow(1, 0, nev)?);
            let forms = [
                (
                    "rotated",
                    RitzBlock::Rotated {
                        x: &x,
                        hx: &hx,
                        theta: &theta,
                    },
                    residual(&theta, &x, &hx)?,
                ),
                (
                    "combined",
                    RitzBlock::Combined {
                        v: &v,
                        hv: &hv,
                        y: &y,
                        y_theta: &y_theta,
                    },
                    {
                        let mut r = matmul(&hv, &y)?;
                        matmul_into(&v, Trans::N, &y_theta, Trans::N, -1.0, 1.0, &mut r)?;
                        r
                    },
                ),
            ];
            for (form, ritz, whole) in forms {
                let want_norms = column_norms(&whole)?;
                let mut sorted = want_norms.clone();
                sorted.sort_by(f64::total_cmp);
                let tol = 0.5 * (sorted[nev / 2 - 1] + sorted[nev / 2]);
                let want_open: Vec<usize> = (0..nev).filter(|&b| want_norms[b] > tol).collect();
                for room in [
                    0,
                    1,
                    want_open.len().saturating_sub(1),
                    want_open.len(),
                    nev + 2,
                ] {
                    let what = format!("{dtype:?} {form} [{n}, {nev}] room {room}");
                    // The spare columns of a storage [n, 2 + room]: two filled before.
                    let storage =
                        Tensor::full(f64::NAN, DeviceType::Cpu, &[n, 2 + room])?.cast(dtype)?;
                    let spare = storage.narrow(1, 2, room)?;
                    let (norms, open, kept) = residuals_into_spare(&ritz, (n, nev), &spare, tol)?;
                    assert_eq!(open, want_open, "{what}");
                    assert_eq!(kept, open.len().min(room), "{what}");
                    for (b, (&got, &want)) in norms.iter().zip(&want_norms).enumerate() {
                        assert!(
                            (got - want).abs() <= close * want,
                            "{what}: norm {b} {got} against {want}"
                        );
                    }
                    let want_cols = whole.take(1, &open[..kept])?;
                    let got_cols = spare.narrow(1, 0, kept)?;
                    assert!(
                        got_cols.allclose(&want_cols, close, close)?,
                        "{what}: the kept columns"
                    );
                    let before = storage.narrow(1, 0, 2)?.cast(DataType::ComplexDouble)?;
                    assert!(
                        before.to_vec::<c64>()?.iter().all(|z| z.re.is_nan()),
                        "{what}: a filled column written"
                    );
                }
            }
        }
    }
    Ok(())
}
