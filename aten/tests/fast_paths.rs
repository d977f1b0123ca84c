//! The fast paths of issue 14, each against a plain loop: permuted copies that run in the
//! transpose kernel (every dtype, ranks 1–4, size-1 and empty axes, offsets, column-major
//! and transposed destinations, and views that must keep the strided walk); `matmul` /
//! `matmul_into` as one direct gemm call with operands and outputs that are narrowed,
//! transposed or column-major, `beta` accumulating, and NaN where nothing may be read or
//! written; in-place element-wise loops above the threading threshold with the output as
//! the first input, as the second, and as both.
#![deny(unused_must_use)]

mod common;

use common::*;
use ctensor_aten::{
    c64, matmul_into, matmul_op, DataType, DeviceType, Order, Scalar, Tensor, Trans,
};

/// What a helper that can fail returns.
type Fallible<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// Every permutation of `0..n`.
fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for i in 0..=p.len() {
            let mut q = p.clone();
            q.insert(i, n - 1);
            out.push(q);
        }
    }
    out
}

/// The row-major values of `x` permuted by `perm`, by index arithmetic.
fn permuted<T: Copy>(x: &[T], dims: &[usize], perm: &[usize]) -> Vec<T> {
    let out_dims: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
    all_indices(&out_dims)
        .iter()
        .map(|o| {
            let mut idx = vec![0; dims.len()];
            for (d, &p) in perm.iter().enumerate() {
                idx[p] = o[d];
            }
            x[flat(dims, &idx)]
        })
        .collect()
}

fn permuted_copies<D: ctensor_aten::Device, T: Scalar>() -> TestResult {
    let mut r = rng(41);
    let shapes: &[&[usize]] = &[
        &[7],
        &[0, 5],
        &[3, 5],
        &[1, 4, 1, 3],
        &[2, 3, 4],
        &[5, 1, 300],
        &[33, 17],
        &[2, 3, 2, 5],
    ];
    for dims in shapes {
        let (x, xv) = random_on::<D, T>(&mut r, dims);
        for perm in permutations(dims.len()) {
            let want = permuted(&xv, dims, &perm);
            let what = format!("{} {dims:?} permuted by {perm:?}", T::DTYPE);
            let view = x.permute(&perm)?;
            // contiguous(), try_clone() and a row-major sync of the permuted view.
            let c = view.contiguous()?;
            assert!(c.is_contiguous(), "{what}");
            assert_eq!(c.to_vec::<T>()?, want, "{what}: contiguous");
            assert_eq!(view.try_clone()?.to_vec::<T>()?, want, "{what}: clone");
            // Into a column-major destination: its memory is the permuted view's transpose.
            let mut f = Tensor::new_in_order(T::DTYPE, D::TYPE, view.dims(), Order::ColMajor)?;
            f.sync(&view)?;
            assert_eq!(f.contiguous()?.to_vec::<T>()?, want, "{what}: into F order");
            // Into the transposed view of an existing row-major tensor.
            let rev: Vec<usize> = (0..dims.len()).rev().collect();
            let rdims: Vec<usize> = rev.iter().map(|&p| view.dims()[p]).collect();
            let base = Tensor::zeros(T::DTYPE, D::TYPE, &rdims)?;
            let mut into_t = base.permute(&rev)?;
            into_t.sync(&view)?;
            assert_eq!(
                into_t.contiguous()?.to_vec::<T>()?,
                want,
                "{what}: into a transposed view"
            );
        }
    }
    // A dense block at an offset (rows 2.. of a matrix), and a view that is not dense
    // (every other column): both transposed into fresh memory.
    let (x, xv) = random_on::<D, T>(&mut r, &[9, 8]);
    let rows = x.narrow(0, 2, 7)?;
    let want: Vec<T> = permuted(&xv[16..], &[7, 8], &[1, 0]);
    assert_eq!(rows.t()?.contiguous()?.to_vec::<T>()?, want);
    let cols = x.narrow(1, 1, 5)?;
    let sub: Vec<T> = (0..9)
        .flat_map(|i| xv[i * 8 + 1..i * 8 + 6].to_vec())
        .collect();
    let want = permuted(&sub, &[9, 5], &[1, 0]);
    assert_eq!(cols.t()?.contiguous()?.to_vec::<T>()?, want);
    Ok(())
}

device_test!(permuted_copies_match_index_arithmetic_for_every_dtype, D -> Result {
    for_all_dtypes!(permuted_copies, D);
    Ok(())
});

/// `C = alpha · op_a(A) · op_b(B) + beta · C` by a plain loop over complex doubles.
#[allow(clippy::too_many_arguments)]
fn reference(
    a: &Tensor,
    op_a: Trans,
    b: &Tensor,
    op_b: Trans,
    alpha: c64,
    beta: c64,
    c: &[c64],
    n: usize,
) -> Fallible<Fallible<Vec<c64>>> {
    Ok({
        Ok({
            let val = |t: &Tensor| {
                t.contiguous()
                    .unwrap()
                    .cast(DataType::ComplexDouble)
                    .unwrap()
                    .to_vec::<c64>()
                    .unwrap()
            };
            let (av, bv) = (val(a), val(b));
            let at = |t: &[c64], cols: usize, op: Trans, i: usize, j: usize| match op {
                Trans::N => t[i * cols + j],
                Trans::T => t[j * cols + i],
                Trans::C => t[j * cols + i].conj(),
            };
            let (ac, bc) = (a.dims()[1], b.dims()[1]);
            let k = if op_a == Trans::N { ac } else { a.dims()[0] };
            (0..c.len())
                .map(|f| {
                    let (i, j) = (f / n, f % n);
                    let mut s = c64::new(0.0, 0.0);
                    for l in 0..k {
                        s += at(&av, ac, op_a, i, l) * at(&bv, bc, op_b, l, j);
                    }
                    alpha * s
                        + if beta == c64::new(0.0, 0.0) {
                            c64::new(0.0, 0.0)
                        } else {
                            beta * c[f]
                        }
                })
                .collect()
        })
    })
}

/// `got` equals `want` (complex doubles; real parts only for a real `got`) within `tol`
/// relative to each value.
fn assert_matches(got: &Tensor, want: &[c64], tol: f64, what: &str) -> TestResult {
    let g = got
        .contiguous()?
        .cast(DataType::ComplexDouble)?
        .to_vec::<c64>()?;
    assert_eq!(g.len(), want.len(), "{what}");
    for (f, (g, w)) in g.iter().zip(want).enumerate() {
        let w = if got.dtype().is_complex() {
            *w
        } else {
            c64::new(w.re, 0.0)
        };
        assert!(
            (g - w).norm() <= tol * (1.0 + w.norm()),
            "{what}: [{f}] {g} vs {w}"
        );
    }
    Ok(())
}

fn direct_gemm_layouts<D: ctensor_aten::Device, T: Scalar>() -> TestResult {
    let dt = T::DTYPE;
    let mut r = rng(42);
    let tol = if dt == DataType::Double || dt == DataType::ComplexDouble {
        1e-12
    } else {
        1e-4
    };
    let nan = T::cast_from(f64::NAN);
    for &(m, k, n) in &[(1usize, 1usize, 1usize), (3, 5, 2), (7, 4, 9), (260, 3, 5)] {
        for op_a in [Trans::N, Trans::T, Trans::C] {
            for op_b in [Trans::N, Trans::T, Trans::C] {
                let what = format!("{dt} {op_a:?}·{op_b:?} m={m} k={k} n={n}");
                let sa = if op_a == Trans::N { [m, k] } else { [k, m] };
                let sb = if op_b == Trans::N { [k, n] } else { [n, k] };
                // A as a narrowed block of a wider matrix (leading dimension > its rows);
                // B as a transposed view of a row-major tensor (column-major for BLAS).
                let (wide, _) = random_on::<D, T>(&mut r, &[sa[0], sa[1] + 3]);
                let a = wide.narrow(1, 2, sa[1])?;
                let (bt, _) = random_on::<D, T>(&mut r, &[sb[1], sb[0]]);
                let b = bt.t()?;
                let got = matmul_op(&a, op_a, &b, op_b)?;
                let want = reference(
                    &a,
                    op_a,
                    &b,
                    op_b,
                    c64::new(1.0, 0.0),
                    c64::new(0.0, 0.0),
                    &vec![c64::new(0.0, 0.0); m * n],
                    n,
                )??;
                assert_matches(&got, &want, tol, &what)?;
                // Into the transposed view of a column-major block inside NaN padding,
                // accumulating with beta; the padding must stay NaN.
                let (c0, c0v) = random_on::<D, T>(&mut r, &[m, n]);
                let pad = Tensor::full(nan, D::TYPE, &[n + 2, m + 1])?;
                let pad = on::<D>(pad);
                let mut out = pad.narrow(0, 1, n)?.narrow(1, 0, m)?.t()?;
                out.sync(&c0)?;
                let (alpha, beta) = if dt.is_complex() {
                    (c64::new(0.5, -1.0), c64::new(-1.0, 0.25))
                } else {
                    (c64::new(0.5, 0.0), c64::new(-1.0, 0.0))
                };
                matmul_into(&a, op_a, &b, op_b, alpha, beta, &mut out)?;
                let cv: Vec<c64> = c0v.iter().map(|x| x.to_c64()).collect();
                let want = reference(&a, op_a, &b, op_b, alpha, beta, &cv, n)??;
                assert_matches(&out, &want, tol, &format!("{what}: into"))?;
                let p = pad.cast(DataType::ComplexDouble)?.to_vec::<c64>()?;
                let written = p.iter().filter(|z| !z.re.is_nan()).count();
                assert_eq!(written, m * n, "{what}: the padding was written");
                // beta = 0 into NaN: the old contents are not read.
                let mut fresh = on::<D>(Tensor::full(nan, D::TYPE, &[m, n])?);
                matmul_into(&a, op_a, &b, op_b, 1.0, 0.0, &mut fresh)?;
                assert!(fresh.allclose(&got, 1e-5, 1e-5)?, "{what}: beta = 0");
            }
        }
    }
    // An output that is one of the operands takes the general path and stays correct.
    let (sq, _) = random_on::<D, T>(&mut r, &[4, 4]);
    let want = matmul_op(&sq, Trans::N, &sq, Trans::N)?;
    let mut alias = sq.share();
    matmul_into(
        &sq,
        Trans::N,
        &sq.try_clone()?,
        Trans::N,
        1.0,
        0.0,
        &mut alias,
    )?;
    assert!(sq.allclose(&want, 1e-5, 1e-5)?);
    Ok(())
}

device_test!(direct_gemm_reads_and_writes_every_layout, D -> Result {
    direct_gemm_layouts::<D, f32>()?;
    direct_gemm_layouts::<D, f64>()?;
    direct_gemm_layouts::<D, ctensor_aten::c32>()?;
    direct_gemm_layouts::<D, c64>()?;
    Ok(())
});

fn in_place<D: ctensor_aten::Device, T: Scalar>() -> TestResult {
    let mut r = rng(43);
    // Above every threading threshold, with an odd tail.
    let n = 300_001;
    let (a, av) = random_on::<D, T>(&mut r, &[n]);
    let (b, bv) = random_on::<D, T>(&mut r, &[n]);
    let c = |x: T| x.to_c64();
    let check = |t: &Tensor, want: &dyn Fn(usize) -> c64, what: &str| {
        let got = t
            .cast(DataType::ComplexDouble)
            .unwrap()
            .to_vec::<c64>()
            .unwrap();
        let w0 = T::DTYPE;
        for (i, g) in got.iter().enumerate() {
            // The reference rounded once to T: what a correct loop in T gives.
            let w = T::cast_from(want(i)).to_c64();
            assert!(
                (g - w).norm() <= 1e-12 * (1.0 + w.norm()),
                "{w0} {what} [{i}]: {g} vs {w}"
            );
        }
    };
    // Output = first input.
    let x = a.try_clone()?;
    x.share().add_(&b)?;
    check(&x, &|i| c(av[i]) + c(bv[i]), "x.add_(&b)");
    // Output = both inputs.
    let y = a.try_clone()?;
    y.share().mul_(&y)?;
    check(&y, &|i| c(av[i]) * c(av[i]), "y.mul_(&y)");
    // Output = second input only.
    let z = b.try_clone()?;
    let mut out = z.share();
    Tensor::sub_into(&a, &z, &mut out)?;
    check(&z, &|i| c(av[i]) - c(bv[i]), "z = a - z");
    Ok(())
}

device_test!(in_place_loops_match_fresh_results_above_the_threading_threshold, D -> Result {
    in_place::<D, f64>()?;
    in_place::<D, f32>()?;
    in_place::<D, c64>()?;
    in_place::<D, i32>()?;
    Ok(())
});

device_test!(fast_paths_take_zero_size_huge_shapes_offset_views_and_overlaps, D -> Result {
    let big = 1usize << 40;
    let z = |dims: &[usize]| on::<D>(Tensor::zeros(DataType::Double, DeviceType::Cpu, dims).unwrap());
    // Zero-size operands with a huge other dimension: nothing is allocated per element,
    // nothing is read, and the shapes come out right.
    let (wide, tall) = (z(&[0, big]), z(&[big, 0]));
    assert_eq!(matmul_op(&wide, Trans::N, &tall, Trans::N)?.dims(), [0, 0]);
    assert_eq!(matmul_op(&tall, Trans::T, &tall, Trans::N)?.dims(), [0, 0]);
    let mut out = z(&[0, 0]);
    matmul_into(&wide, Trans::N, &wide, Trans::T, 1.0, 0.0, &mut out)?;
    assert_eq!((&wide + &wide)?.dims(), [0, big]);
    let mut w = wide.share();
    w.add_(&wide)?;
    assert_eq!(wide.t()?.contiguous()?.dims(), [big, 0]);
    // A product of [2^40, 0] · [0, 2^40] would have 2^80 elements: an error, not an abort.
    assert!(matmul_op(&tall, Trans::N, &wide, Trans::N).is_err());
    // In place through views at an offset (rows 1..4 of a 5 × 6 matrix), which are dense
    // and take the direct element-wise path.
    let (x, xv) = random_on::<D, f64>(&mut rng(44), &[5, 6]);
    let (y, yv) = random_on::<D, f64>(&mut rng(45), &[3, 6]);
    let mut rows = x.narrow(0, 1, 3)?;
    rows.add_(&y)?;
    let got = x.to_vec::<f64>()?;
    for (i, g) in got.iter().enumerate() {
        let want = if (6..24).contains(&i) { xv[i] + yv[i - 6] } else { xv[i] };
        assert_eq!(*g, want, "[{i}]");
    }
    // A transposed copy into the same buffer (x ← xᵀ of a square block): the overlap
    // goes through a temporary, then the transpose.
    let (sq, sv) = random_on::<D, f64>(&mut rng(46), &[7, 7]);
    let mut dst = sq.share();
    dst.sync(&sq.t()?)?;
    let want: Vec<f64> = (0..49).map(|f| sv[(f % 7) * 7 + f / 7]).collect();
    assert_eq!(sq.to_vec::<f64>()?, want);
    // A product whose output is a view of an operand's buffer takes the general path
    // and gives the same values as into fresh memory.
    let (ab, _) = random_on::<D, f64>(&mut rng(47), &[4, 8]);
    let (lhs, rhs) = (ab.narrow(1, 0, 4)?, ab.narrow(1, 4, 4)?);
    let want = matmul_op(&lhs, Trans::N, &lhs, Trans::T)?;
    let mut into = rhs.share();
    matmul_into(&lhs, Trans::N, &lhs, Trans::T, 1.0, 0.0, &mut into)?;
    assert!(into.allclose(&want, 1e-14, 1e-14)?);
    Ok(())
});
