//! Linear algebra on tensors: eigensolvers (every backend, ranges, generalized), the
//! Cholesky orthonormalisation pipeline of a BPCG solver, solve/inverse, matmul in
//! every layout, and the errors; on the CPU and, through `device_test!`, on the GPU
//! (one `SKIP` line per test without one).
#![allow(clippy::needless_range_loop)]
#![deny(unused_must_use)]

mod common;

use common::*;
use ctensor_aten::ops::einsum::{einsum, EinsumOptions};
use ctensor_aten::{
    c32, c64, cholesky, eigh, eigh_generalized, eigvalsh, inverse, matmul, overlap, set_matrix,
    solve, tri_inverse, DataType, Device, Diag, EigBackend, EighRange, Error, Order, Scalar,
    Tensor, Uplo,
};
use rand::Rng;

/// What a helper that can fail returns.
type Fallible<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// A random Hermitian matrix of dtype `T` (entries in [-1, 1]), in `order`.
fn hermitian<D: Device, T: Scalar>(
    seed: u64,
    n: usize,
    order: Order,
) -> Fallible<(Tensor, Vec<c64>)> {
    Ok({
        let mut r = rng(seed);
        let mut h = vec![c64::new(0.0, 0.0); n * n];
        for i in 0..n {
            for j in 0..=i {
                let im = if T::DTYPE.is_complex() && i != j {
                    r.gen_range(-1.0..1.0)
                } else {
                    0.0
                };
                let v = c64::new(r.gen_range(-1.0..1.0), im);
                h[i * n + j] = v;
                h[j * n + i] = v.conj();
            }
        }
        let vals: Vec<T> = h.iter().map(|&v| T::cast_from(v)).collect();
        let t = on::<D>(on::<D>(Tensor::from_slice(&vals, &[n, n])?));
        let t = if order == Order::ColMajor {
            t.copy_to_col_major()
        } else {
            t
        };
        (t, h)
    })
}

trait TestExt {
    fn c64s(&self) -> Vec<c64>;
}

impl TestExt for Tensor {
    fn c64s(&self) -> Vec<c64> {
        self.cast(DataType::ComplexDouble)
            .unwrap()
            .to_vec::<c64>()
            .unwrap()
    }
}

trait ColMajor {
    fn copy_to_col_major(&self) -> Tensor;
}
impl ColMajor for Tensor {
    fn copy_to_col_major(&self) -> Tensor {
        let mut out =
            Tensor::new_in_order(self.dtype(), self.device(), self.dims(), Order::ColMajor)
                .unwrap();
        out.sync(self).unwrap();
        out
    }
}

/// `a · b` of logical row-major value lists.
fn mm(a: &[c64], b: &[c64], m: usize, k: usize, n: usize) -> Vec<c64> {
    let mut c = vec![c64::new(0.0, 0.0); m * n];
    for i in 0..m {
        for l in 0..k {
            for j in 0..n {
                c[i * n + j] += a[i * k + l] * b[l * n + j];
            }
        }
    }
    c
}

fn check_eig(h: &[c64], n: usize, w: &[c64], v: &[c64], m: usize, tol: f64, what: &str) {
    // A V = V Λ, column by column, and Vᴴ V = I.
    let av = mm(h, v, n, n, m);
    for j in 0..m {
        for i in 0..n {
            let d = av[i * m + j] - v[i * m + j] * w[j];
            assert!(d.norm() <= tol, "{what}: (AV - VΛ)[{i},{j}] = {d}");
        }
        if j > 0 {
            assert!(w[j - 1].re <= w[j].re + tol, "{what}: not ascending");
        }
    }
    for p in 0..m {
        for q in 0..m {
            let s: c64 = (0..n).map(|i| v[i * m + p].conj() * v[i * m + q]).sum();
            let want = if p == q { 1.0 } else { 0.0 };
            assert!((s - want).norm() <= tol, "{what}: (VᴴV)[{p},{q}] = {s}");
        }
    }
}

fn eigh_case<D: Device, T: Scalar>() -> TestResult {
    for n in [1usize, 2, 9, 64] {
        for order in [Order::RowMajor, Order::ColMajor] {
            let (a, h) = hermitian::<D, T>(n as u64 + 7, n, order)?;
            let tol = 200.0 * n as f64 * eps(T::DTYPE);
            for backend in BACKENDS {
                let what = format!("{} eigh n={n} {order:?} {backend:?}", T::DTYPE);
                let (w, v) = eigh(&a, EighRange::All, backend)?;
                assert_eq!(w.dtype(), T::DTYPE.real_type(), "{what}");
                assert_eq!(v.dims(), [n, n], "{what}");
                let want_order = if order == Order::ColMajor && n > 1 {
                    Some(Order::ColMajor)
                } else {
                    Some(Order::RowMajor)
                };
                assert_eq!(
                    v.dense_order(),
                    want_order,
                    "{what}: vectors in the input's order"
                );
                let (wc, vc) = (w.c64s(), v.c64s());
                check_eig(&h, n, &wc, &vc, n, tol, &what);
                let vals = eigvalsh(&a, EighRange::All, backend)?.c64s();
                for k in 0..n {
                    assert!((vals[k] - wc[k]).norm() <= tol, "{what}: values-only");
                }
                let full = wc;
                // Partial spectra equal the matching slice of the full one.
                let (lo, hi) = (n / 3, n / 3 + n.div_ceil(3));
                let (wp, vp) = eigh(&a, EighRange::Index(lo, hi), backend)?;
                let (wp, vp) = (wp.c64s(), vp.c64s());
                assert_eq!(wp.len(), hi - lo, "{what}: index range count");
                for k in 0..hi - lo {
                    assert!(
                        (wp[k] - full[lo + k]).norm() <= tol,
                        "{what}: index range values"
                    );
                }
                check_eig(
                    &h,
                    n,
                    &wp,
                    &vp,
                    hi - lo,
                    tol,
                    &format!("{what} index range"),
                );
                if n >= 3 {
                    let (l, u) = (
                        (full[0].re + full[1].re) / 2.0,
                        (full[n - 2].re + full[n - 1].re) / 2.0,
                    );
                    let (wv, _) = eigh(&a, EighRange::Value(l, u), backend)?;
                    let wv = wv.c64s();
                    assert_eq!(wv.len(), n - 2, "{what}: value range count");
                    for k in 0..n - 2 {
                        assert!(
                            (wv[k] - full[1 + k]).norm() <= tol,
                            "{what}: value range values"
                        );
                    }
                }
            }
        }
    }
    Ok(())
}

device_test!(eigh_gives_av_eq_v_lambda_for_every_backend_order_range_and_dtype, D -> Result {
    eigh_case::<D, f64>()?;
    eigh_case::<D, c64>()?;
    eigh_case::<D, f32>()?;
    eigh_case::<D, c32>()?;
    Ok(())
});

device_test!(eigh_at_n_300_agrees_across_backends, D -> Result {
    let n = 300;
    let (a, h) = hermitian::<D, c64>(11, n, Order::RowMajor)?;
    let tol = 200.0 * n as f64 * f64::EPSILON;
    let mut first: Option<Vec<c64>> = None;
    for backend in BACKENDS {
        let (w, v) = eigh(&a, EighRange::Index(0, 8), backend)?;
        let (wc, vc) = (w.c64s(), v.c64s());
        check_eig(&h, n, &wc, &vc, 8, tol, &format!("n=300 {backend:?}"));
        match &first {
            None => first = Some(wc),
            Some(f) => {
                for k in 0..8 {
                    assert!((f[k] - wc[k]).norm() < tol, "{backend:?} eigenvalue {k}");
                }
            }
        }
    }
    Ok(())
});

device_test!(eigh_generalized_solves_all_three_types_and_rejects_indefinite_b, D -> Result {
    let n = 12;
    let (a, h) = hermitian::<D, c64>(5, n, Order::RowMajor)?;
    // B = R Rᴴ / n + I, Hermitian positive definite.
    let mut r = rng(6);
    let rv: Vec<c64> = (0..n * n)
        .map(|_| c64::new(r.gen_range(-1.0..1.0), r.gen_range(-1.0..1.0)))
        .collect();
    let mut bv = vec![c64::new(0.0, 0.0); n * n];
    for i in 0..n {
        for j in 0..n {
            bv[i * n + j] = (0..n)
                .map(|k| rv[i * n + k] * rv[j * n + k].conj())
                .sum::<c64>()
                / n as f64;
        }
        bv[i * n + i] += 1.0;
    }
    let b = on::<D>(Tensor::from_slice(&bv, &[n, n])?);
    for itype in 1..=3 {
        let (w, v) = eigh_generalized(&a, &b, itype, EighRange::All)?;
        let (w, v) = (w.c64s(), v.c64s());
        let (lhs, rhs) = match itype {
            1 => (mm(&h, &v, n, n, n), mm(&bv, &v, n, n, n)),
            2 => (mm(&h, &mm(&bv, &v, n, n, n), n, n, n), v.clone()),
            _ => (mm(&bv, &mm(&h, &v, n, n, n), n, n, n), v.clone()),
        };
        for i in 0..n {
            for j in 0..n {
                let d = lhs[i * n + j] - rhs[i * n + j] * w[j];
                assert!(d.norm() < 1e-10, "itype {itype}: residual {d} at ({i},{j})");
            }
        }
    }
    let mut bad = bv.clone();
    bad[0] = c64::new(-5.0, 0.0);
    let bad = on::<D>(Tensor::from_slice(&bad, &[n, n])?);
    let e = eigh_generalized(&a, &bad, 1, EighRange::All).unwrap_err();
    assert!(matches!(e, Error::Lapack { .. }), "{e}");
    assert!(e.to_string().contains("not positive definite"), "{e}");
    Ok(())
});

device_test!(bpcg_cholesky_orthonormalisation_gives_orthonormal_bands_to_1e_12, D -> Result {
    // ψ (nband × nbasis), S = ψψᴴ, S = L Lᴴ, ψ' = L⁻¹ ψ: then ψ'ψ'ᴴ = I.
    let (nband, nbasis) = (8, 257);
    let mut r = rng(9);
    let psi_v: Vec<c64> = (0..nband * nbasis)
        .map(|_| c64::new(r.gen_range(-1.0..1.0), r.gen_range(-1.0..1.0)))
        .collect();
    let psi = on::<D>(Tensor::from_slice(&psi_v, &[nband, nbasis])?);
    let s = overlap(&psi)?;
    let l = cholesky(&s, Uplo::Lower)?;
    let linv = tri_inverse(&l, Uplo::Lower, Diag::NonUnit)?;
    let rotated = einsum("ij,jk->ik", &[&linv, &psi], &EinsumOptions::default())?;
    let s2 = overlap(&rotated)?.c64s();
    for i in 0..nband {
        for j in 0..nband {
            let want = if i == j { 1.0 } else { 0.0 };
            assert!(
                (s2[i * nband + j] - want).norm() < 1e-12,
                "S'[{i},{j}] = {}",
                s2[i * nband + j]
            );
        }
    }
    // The factor has a zero upper triangle, and L Lᴴ = S.
    let lv = l.c64s();
    for i in 0..nband {
        for j in i + 1..nband {
            assert_eq!(lv[i * nband + j], c64::new(0.0, 0.0));
        }
    }
    let llh = einsum("ij,kj->ik", &[&l, &l], &EinsumOptions::conj_y())
        ?
        .c64s();
    let sv = s.c64s();
    for k in 0..nband * nband {
        assert!((llh[k] - sv[k]).norm() < 1e-10);
    }
    Ok(())
});

device_test!(solve_inverse_and_matmul_in_every_layout, D -> Result {
    let n = 17;
    let mut r = rng(12);
    let av: Vec<f64> = (0..n * n)
        .map(|i| r.gen_range(-1.0..1.0) + if i % (n + 1) == 0 { 4.0 } else { 0.0 })
        .collect();
    let a = on::<D>(Tensor::from_slice(&av, &[n, n])?);
    let bv: Vec<f64> = (0..n * 3).map(|_| r.gen_range(-1.0..1.0)).collect();
    let b = on::<D>(Tensor::from_slice(&bv, &[n, 3])?);
    let x = solve(&a, &b)?;
    let ax = matmul(&a, &x)?;
    assert!(ax.allclose(&b, 1e-12, 1e-12)?);
    let x1 = solve(&a, &b.t()?.index(0)?)?;
    assert_eq!(x1.dims(), [n]);
    let ainv = inverse(&a)?;
    let id = matmul(&a, &ainv)?;
    assert!(id
        .allclose(
            &Tensor::eye(DataType::Double, D::TYPE, n)?,
            1e-12,
            1e-12
        )
        ?);
    // matmul of a transposed view, a Fortran map and a batched broadcast.
    let at = a.t()?;
    let want = mm(
        &(0..n * n)
            .map(|k| c64::new(av[(k % n) * n + k / n], 0.0))
            .collect::<Vec<_>>(),
        &bv.iter().map(|&v| c64::new(v, 0.0)).collect::<Vec<_>>(),
        n,
        n,
        3,
    );
    let got = matmul(&at, &b)?.c64s();
    for k in 0..n * 3 {
        assert!((got[k] - want[k]).norm() < 1e-12);
    }
    let batch = on::<D>(Tensor::from_slice(&[av.clone(), av.clone()].concat(), &[2, n, n])?);
    let y = matmul(&batch, &b)?;
    assert_eq!(y.dims(), [2, n, 3]);
    assert!(y
        .index(1)
        ?
        .allclose(&matmul(&a, &b)?, 1e-14, 0.0)
        ?);
    // A singular matrix is an error.
    let z = Tensor::zeros(DataType::Double, D::TYPE, &[3, 3])?;
    assert!(matches!(inverse(&z).unwrap_err(), Error::Lapack { .. }));
    Ok(())
});

device_test!(linalg_errors_are_reported, D -> Result {
    let rect = Tensor::zeros(DataType::ComplexDouble, D::TYPE, &[3, 4])?;
    let e = eigh(&rect, EighRange::All, EigBackend::default()).unwrap_err();
    assert!(e.to_string().contains("square matrix"), "{e}");
    let ints = Tensor::zeros(DataType::Int, D::TYPE, &[3, 3])?;
    let e = eigh(&ints, EighRange::All, EigBackend::LapackEvd).unwrap_err();
    assert!(matches!(e, Error::UnsupportedDType { .. }), "{e}");
    let (a, _) = hermitian::<D, f64>(1, 4, Order::RowMajor)?;
    let e = eigh(&a, EighRange::Index(2, 9), EigBackend::Faer).unwrap_err();
    assert!(matches!(e, Error::OutOfRange { .. }), "{e}");
    let mut m = Tensor::ones(DataType::Int, D::TYPE, &[3, 3])?;
    set_matrix(&mut m, Uplo::Upper)?;
    assert_eq!(m.to_vec::<i32>()?, [1, 1, 1, 0, 1, 1, 0, 0, 1]);
    let e = matmul(
        &Tensor::zeros(DataType::Double, D::TYPE, &[3])?,
        &a,
    )
    .unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    Ok(())
});

#[test]
fn set_num_threads_governs_both_pools_and_results_do_not_depend_on_it() -> TestResult {
    for bad in [0, 1025, usize::MAX] {
        assert!(
            matches!(
                ctensor_aten::set_num_threads(bad),
                Err(Error::OutOfRange { .. })
            ),
            "{bad}"
        );
    }
    let (a, _) = hermitian::<ctensor_aten::CpuDevice, c64>(21, 40, Order::RowMajor)?;
    let mut results = Vec::new();
    for threads in [1usize, 2] {
        ctensor_aten::set_num_threads(threads)?;
        assert_eq!(ctensor_aten::num_threads(), threads);
        assert_eq!(ctensor_aten::blas_num_threads(), threads);
        results.push(eigvalsh(&a, EighRange::All, EigBackend::Faer)?.c64s());
    }
    for (x, y) in results[0].iter().zip(&results[1]) {
        assert!((x - y).norm() < 1e-12);
    }
    Ok(())
}
