//! Element-wise and layout kernels against plain reference loops, for all eight element
//! types, awkward sizes, sizes above the parallel threshold, and in place.
//! `cargo test -p ctensor-kernels transpose_` runs one family.
#![allow(clippy::needless_range_loop)]
#![deny(unused_must_use)]

mod common;

use common::*;
use ctensor_base::{c64, CpuDevice, DataType, Error, Scalar};
use ctensor_kernels::arith::Arith;
use ctensor_kernels::elementwise::math::{Math, MathOp, MathScalar};
use ctensor_kernels::layout::row_major_strides;
use ctensor_kernels::linalg::*;

/// Sizes for element-wise kernels: the usual awkward ones plus one above the default
/// parallel threshold (2¹⁸), so the threaded path runs too.
const EW_SIZES: [usize; 7] = [0, 1, 2, 7, 257, 1000, 300_007];

/// α and β that stay exact-ish in every type: integers take the real part (3, -2).
fn alpha<T: Scalar>() -> T {
    T::cast_from(c64::new(3.0, -0.5))
}
fn beta<T: Scalar>() -> T {
    T::cast_from(c64::new(-2.0, 1.0))
}

/// Compares `got` with the exact `want`: integers exactly; floats within a few units of
/// the type's roundoff relative to `mag` (the sum of the magnitudes of the terms).
fn check<T: Scalar>(got: T, want: c64, mag: f64, what: &str) {
    if T::DTYPE.is_integer() {
        assert_eq!(got, T::cast_from(want), "{} {what}", T::DTYPE);
    } else {
        assert_close(
            c(got),
            want,
            4.0 * eps::<T>() * mag.max(f64::MIN_POSITIVE),
            what,
        );
    }
}

/// Inputs for an element-wise case; divisors are made non-zero.
fn inputs<T: Scalar>(seed: u64, n: usize) -> [Vec<T>; 3] {
    let mut r = rng(seed);
    let x = random_vec::<T>(&mut r, n);
    let mut y = random_vec::<T>(&mut r, n);
    for v in y.iter_mut() {
        if c(*v).norm() == 0.0 {
            *v = T::one();
        }
    }
    let z = random_vec::<T>(&mut r, n);
    [x, y, z]
}

/// Where the output goes: a fresh buffer, or over one of the inputs.
#[derive(Clone, Copy, Debug)]
enum Out {
    Fresh,
    OverX,
    OverY,
    OverZ,
}

/// Runs `kernel(x, y, z, out)` with `out` placed as `place` says and returns `out`.
fn run<D: TestDevice, T: Scalar>(
    place: Out,
    [x, y, z]: &[Vec<T>; 3],
    kernel: impl Fn(*const T, *const T, *const T, *mut T) -> ctensor_base::Result<()>,
) -> ctensor_base::Result<Vec<T>> {
    let [mut x, mut y, mut z] = [x, y, z].map(|v| Buf::on::<D>(v.clone()));
    let mut fresh = Buf::on::<D>(vec![T::zero(); x.get().len()]);
    let out = match place {
        Out::Fresh => fresh.ptr(),
        Out::OverX => x.ptr(),
        Out::OverY => y.ptr(),
        Out::OverZ => z.ptr(),
    };
    kernel(x.ptr(), y.ptr(), z.ptr(), out)?;
    Ok(match place {
        Out::Fresh => fresh.get(),
        Out::OverX => x.get(),
        Out::OverY => y.get(),
        Out::OverZ => z.get(),
    })
}

fn elementwise_case<D, T: Arith>() -> TestResult
where
    D: TestDevice + Add<T> + Mul<T> + Div<T> + Fma<T>,
{
    let (a, b) = (alpha::<T>(), beta::<T>());
    let (ac, bc) = (c(a), c(b));
    for n in EW_SIZES {
        let data = inputs::<T>(n as u64 + 21, n);
        let [x, y, z] = &data;
        let (xs, ys, zs): (Vec<c64>, Vec<c64>, Vec<c64>) = (
            x.iter().map(|&v| c(v)).collect(),
            y.iter().map(|&v| c(v)).collect(),
            z.iter().map(|&v| c(v)).collect(),
        );
        for place in [Out::Fresh, Out::OverX, Out::OverY] {
            // SAFETY (all closures below): every buffer holds `n` elements and the output
            // is a fresh buffer or exactly one of the inputs.
            let got = run::<D, T>(place, &data, |x, y, _, o| unsafe {
                <D as Add<T>>::add(n, a, x, b, y, o)
            })?;
            for i in 0..n {
                let (p, q) = (ac * xs[i], bc * ys[i]);
                check(
                    got[i],
                    p + q,
                    p.norm() + q.norm(),
                    &format!("add {place:?} n={n} i={i}"),
                );
            }
            let got = run::<D, T>(place, &data, |x, y, _, o| unsafe {
                <D as Mul<T>>::mul(n, a, x, y, o)
            })?;
            for i in 0..n {
                let w = ac * xs[i] * ys[i];
                check(got[i], w, w.norm(), &format!("mul {place:?} n={n} i={i}"));
            }
            let got = run::<D, T>(place, &data, |x, y, _, o| unsafe {
                <D as Div<T>>::div(n, a, x, y, o)
            })?;
            for i in 0..n {
                let w = if T::DTYPE.is_integer() {
                    c64::new(((ac.re * xs[i].re) / ys[i].re).trunc(), 0.0)
                } else {
                    ac * xs[i] / ys[i]
                };
                check(
                    got[i],
                    w,
                    2.0 * w.norm(),
                    &format!("div {place:?} n={n} i={i}"),
                );
            }
        }
        for place in [Out::Fresh, Out::OverX] {
            let got = run::<D, T>(place, &data, |x, _, _, o| unsafe {
                <D as Mul<T>>::scale(n, a, x, o)
            })?;
            for i in 0..n {
                let w = ac * xs[i];
                check(got[i], w, w.norm(), &format!("scale {place:?} n={n} i={i}"));
            }
        }
        for place in [Out::Fresh, Out::OverX, Out::OverY, Out::OverZ] {
            let got = run::<D, T>(place, &data, |x, y, z, o| unsafe {
                <D as Fma<T>>::fma(n, a, x, y, b, z, o)
            })?;
            for i in 0..n {
                let (p, q) = (ac * xs[i] * ys[i], bc * zs[i]);
                check(
                    got[i],
                    p + q,
                    p.norm() + q.norm(),
                    &format!("fma {place:?} n={n} i={i}"),
                );
            }
        }
    }
    Ok(())
}

device_test!(add_mul_div_fma_match_reference_for_every_dtype_in_and_out_of_place, D -> Result {
    for_all_dtypes!(elementwise_case, D);
    Ok(())
});

#[test]
fn add_gives_the_same_result_on_one_thread_and_many() -> TestResult {
    let n = 300_001;
    let [x, y, _] = inputs::<f64>(5, n);
    let mut z = [vec![0.0; n], vec![0.0; n]];
    let before = ctensor_kernels::parallel::parallel_threshold();
    for (k, threshold) in [usize::MAX, 1024].into_iter().enumerate() {
        ctensor_kernels::parallel::set_parallel_threshold(threshold);
        // SAFETY: n elements each, distinct buffers.
        unsafe {
            <CpuDevice as Add<f64>>::add(n, 0.5, x.as_ptr(), 2.0, y.as_ptr(), z[k].as_mut_ptr())
        }?;
    }
    ctensor_kernels::parallel::set_parallel_threshold(before);
    assert_eq!(z[0], z[1]);
    Ok(())
}

device_test!(div_of_integers_by_zero_is_an_error_and_min_over_minus_one_wraps, D -> Result {
    let mut x = Buf::on::<D>(vec![7i32, i32::MIN, 3]);
    let mut y = Buf::on::<D>(vec![1i32, -1, 0]);
    let mut z = Buf::on::<D>(vec![99i32; 3]);
    // SAFETY: three elements each.
    let e = unsafe { <D as Div<i32>>::div(3, 1, x.ptr(), y.ptr(), z.ptr()) }.unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { op: "div", .. }), "{e}");
    assert!(e.to_string().contains("y[2] = 0"), "{e}");
    assert_eq!(z.get(), [99; 3], "nothing is written when a divisor is zero");
    // SAFETY: two elements each.
    unsafe { <D as Div<i32>>::div(2, 1, x.ptr(), y.ptr(), z.ptr()) }?;
    assert_eq!(&z.get()[..2], &[7, i32::MIN]);
    // Floats follow IEEE.
    let mut xf = Buf::on::<D>(vec![1.0f64, -1.0, 0.0]);
    let mut yf = Buf::on::<D>(vec![0.0f64; 3]);
    let mut zf = Buf::on::<D>(vec![0.0f64; 3]);
    // SAFETY: three elements each.
    unsafe { <D as Div<f64>>::div(3, 1.0, xf.ptr(), yf.ptr(), zf.ptr()) }?;
    let zf = zf.get();
    assert_eq!(zf[0], f64::INFINITY);
    assert_eq!(zf[1], f64::NEG_INFINITY);
    assert!(zf[2].is_nan());
    Ok(())
});

device_test!(fma_of_half_precision_computes_in_f32_and_rounds_once, D -> Result {
    use ctensor_base::f16;
    // α·x·y = 256·256·1 = 65536 overflows f16 (max 65504); computed in f32 and rounded
    // once, 65536 − 32768 = 32768 is exact. Computed in f16 steps it would be inf.
    let mut x = Buf::on::<D>(vec![f16::from_f32(256.0)]);
    let mut y = Buf::on::<D>(vec![f16::ONE]);
    let mut z = Buf::on::<D>(vec![f16::from_f32(-32768.0)]);
    let mut out = Buf::on::<D>(vec![f16::ZERO]);
    let a = f16::from_f32(256.0);
    // SAFETY: one element each.
    unsafe { <D as Fma<f16>>::fma(1, a, x.ptr(), y.ptr(), f16::ONE, z.ptr(), out.ptr()) }
        ?;
    assert_eq!(out.get()[0].to_f32(), 32768.0);
    Ok(())
});

// ---- transpose ---------------------------------------------------------------------

fn all_perms(rank: usize) -> Vec<Vec<usize>> {
    if rank == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for p in all_perms(rank - 1) {
        for pos in 0..=p.len() {
            let mut q = p.clone();
            q.insert(pos, rank - 1);
            out.push(q);
        }
    }
    out
}

/// Reference permutation: output element `i` (multi-index) is `src[j]` with
/// `j[perm[d]] = i[d]`.
fn transpose_ref<T: Scalar>(shape: &[usize], perm: &[usize], src: &[T], conj: bool) -> Vec<T> {
    let out_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
    let n: usize = shape.iter().product();
    let in_strides = row_major_strides(shape);
    let out_strides = row_major_strides(&out_shape);
    (0..n)
        .map(|o| {
            let mut j = 0;
            for d in 0..perm.len() {
                let i_d = (o / out_strides[d]) % out_shape[d];
                j += i_d * in_strides[perm[d]];
            }
            if conj {
                src[j].conj()
            } else {
                src[j]
            }
        })
        .collect()
}

fn transpose_case<D, T: Scalar>() -> TestResult
where
    D: TestDevice + Transpose<T>,
{
    let mut r = rng(31);
    let shapes: Vec<Vec<usize>> = vec![
        vec![],
        vec![0],
        vec![5],
        vec![3, 0],
        vec![1, 1],
        vec![7, 5],
        vec![1, 9],
        vec![257, 300],
        vec![600, 500],
        vec![2, 3, 4],
        vec![33, 1, 17],
        vec![3, 1, 4, 2],
        vec![5, 40, 3, 2],
    ];
    for shape in shapes {
        let n: usize = shape.iter().product();
        let src = random_vec::<T>(&mut r, n);
        let perms = if shape.len() <= 4 {
            all_perms(shape.len())
        } else {
            vec![]
        };
        for perm in perms {
            for conj in [false, true] {
                let want = transpose_ref(&shape, &perm, &src, conj && T::DTYPE.is_complex());
                let (mut dsrc, mut ddst) =
                    (Buf::on::<D>(src.clone()), Buf::on::<D>(vec![T::zero(); n]));
                let mut dinplace = Buf::on::<D>(src.clone());
                // SAFETY: n elements each; the second call is in place.
                unsafe {
                    <D as Transpose<T>>::transpose(&shape, &perm, dsrc.ptr(), ddst.ptr(), conj)?;
                    let p = dinplace.ptr();
                    <D as Transpose<T>>::transpose(&shape, &perm, p, p, conj)?;
                }
                let (dst, inplace) = (ddst.get(), dinplace.get());
                let what = format!("{} transpose {shape:?} perm {perm:?} conj={conj}", T::DTYPE);
                assert!(
                    dst.iter().zip(&want).all(|(a, b)| a.same_value(*b)),
                    "{what}"
                );
                assert!(
                    inplace.iter().zip(&want).all(|(a, b)| a.same_value(*b)),
                    "{what} in place"
                );
            }
        }
    }
    Ok(())
}

device_test!(transpose_matches_reference_for_every_permutation_dtype_and_conj, D -> Result {
    for_all_dtypes!(transpose_case, D);
    Ok(())
});

#[test]
fn transpose_rejects_a_non_permutation() -> TestResult {
    let a = [0.0f32; 6];
    let mut b = [0.0f32; 6];
    for perm in [&[0usize, 0][..], &[0, 2], &[1]] {
        // SAFETY: rejected before memory is touched.
        let e = unsafe {
            <CpuDevice as Transpose<f32>>::transpose(
                &[2, 3],
                perm,
                a.as_ptr(),
                b.as_mut_ptr(),
                false,
            )
        }
        .unwrap_err();
        assert!(e.to_string().contains("a permutation of 0..2"), "{e}");
    }
    Ok(())
}

// ---- stride and inflate ------------------------------------------------------------

fn stride_ref<T: Scalar>(shape: &[usize], steps: &[usize], src: &[T]) -> Vec<T> {
    let out_shape: Vec<usize> = shape
        .iter()
        .zip(steps)
        .map(|(&n, &s)| n.div_ceil(s))
        .collect();
    let n_out: usize = out_shape.iter().product();
    let (is, os) = (row_major_strides(shape), row_major_strides(&out_shape));
    (0..n_out)
        .map(|o| {
            let j: usize = (0..shape.len())
                .map(|d| ((o / os[d]) % out_shape[d]) * steps[d] * is[d])
                .sum();
            src[j]
        })
        .collect()
}

fn inflate_ref<T: Scalar>(
    shape: &[usize],
    steps: &[usize],
    src: &[T],
    dst_shape: &[usize],
) -> Vec<T> {
    let n_out: usize = dst_shape.iter().product();
    let (is, os) = (row_major_strides(shape), row_major_strides(dst_shape));
    (0..n_out)
        .map(|o| {
            let mut j = 0;
            for d in 0..shape.len() {
                let i = (o / os[d]) % dst_shape[d];
                if !i.is_multiple_of(steps[d]) || i / steps[d] >= shape[d] {
                    return T::zero();
                }
                j += (i / steps[d]) * is[d];
            }
            src[j]
        })
        .collect()
}

fn stride_inflate_case<D, T: Scalar>() -> TestResult
where
    D: TestDevice + Stride<T> + Inflate<T>,
{
    let mut r = rng(41);
    let cases: Vec<(Vec<usize>, Vec<usize>)> = vec![
        (vec![0], vec![2]),
        (vec![1], vec![3]),
        (vec![7], vec![2]),
        (vec![5, 6], vec![1, 4]),
        (vec![257, 3], vec![3, 2]),
        (vec![3, 4, 5], vec![2, 3, 1]),
        (vec![], vec![]),
    ];
    for (shape, steps) in cases {
        let n: usize = shape.iter().product();
        let src = random_vec::<T>(&mut r, n);
        let what = format!("{} {shape:?} steps {steps:?}", T::DTYPE);
        // stride, fresh and in place
        let want = stride_ref(&shape, &steps, &src);
        let mut dsrc = Buf::on::<D>(src.clone());
        let mut ddst = Buf::on::<D>(vec![T::zero(); want.len()]);
        let mut dinplace = Buf::on::<D>(src.clone());
        // SAFETY: buffers hold the input and output sizes; in place shares the start.
        unsafe {
            <D as Stride<T>>::stride(&shape, &steps, dsrc.ptr(), ddst.ptr())?;
            let p = dinplace.ptr();
            <D as Stride<T>>::stride(&shape, &steps, p, p)?;
        }
        let (dst, inplace) = (ddst.get(), dinplace.get());
        assert_eq!(dst, want, "stride {what}");
        assert_eq!(&inplace[..want.len()], &want[..], "stride in place {what}");
        // inflate onto the tight grid and one a row larger, fresh and in place
        for extra in [0usize, 1] {
            let dst_shape: Vec<usize> = shape
                .iter()
                .zip(&steps)
                .map(|(&n, &s)| {
                    if n == 0 {
                        extra
                    } else {
                        (n - 1) * s + 1 + extra
                    }
                })
                .collect();
            let want = inflate_ref(&shape, &steps, &src, &dst_shape);
            let mut ddst = Buf::on::<D>(vec![T::one(); want.len()]);
            let mut inplace = src.clone();
            inplace.resize(want.len().max(n), T::one());
            let mut dinplace = Buf::on::<D>(inplace);
            // SAFETY: as above.
            unsafe {
                <D as Inflate<T>>::inflate(&shape, &steps, dsrc.ptr(), &dst_shape, ddst.ptr())?;
                let p = dinplace.ptr();
                <D as Inflate<T>>::inflate(&shape, &steps, p, &dst_shape, p)?;
            }
            let (dst, inplace) = (ddst.get(), dinplace.get());
            assert_eq!(dst, want, "inflate {what} extra={extra}");
            assert_eq!(&inplace[..want.len()], &want[..], "inflate in place {what}");
            if extra == 0 {
                // stride undoes inflate on the tight grid
                let mut dback = Buf::on::<D>(vec![T::zero(); n]);
                // SAFETY: the inflated array and n outputs.
                unsafe { <D as Stride<T>>::stride(&dst_shape, &steps, ddst.ptr(), dback.ptr()) }?;
                let back = dback.get();
                assert_eq!(back, src, "stride ∘ inflate {what}");
            }
        }
    }
    Ok(())
}

device_test!(stride_and_inflate_match_reference_and_invert_each_other, D -> Result {
    for_all_dtypes!(stride_inflate_case, D);
    Ok(())
});

#[test]
fn stride_and_inflate_reject_zero_steps_and_small_targets() -> TestResult {
    let a = [1.0f64; 8];
    let mut b = [0.0f64; 8];
    // SAFETY: rejected before memory is touched.
    unsafe {
        let e = <CpuDevice as Stride<f64>>::stride(&[2, 4], &[1, 0], a.as_ptr(), b.as_mut_ptr())
            .unwrap_err();
        assert!(e.to_string().contains("axis 1 is 0"), "{e}");
        let e = <CpuDevice as Inflate<f64>>::inflate(&[3], &[2], a.as_ptr(), &[4], b.as_mut_ptr())
            .unwrap_err();
        assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
        assert!(
            e.to_string()
                .contains(">= (shape[0] - 1) · steps[0] + 1 = 5"),
            "{e}"
        );
        let e = <CpuDevice as Stride<f64>>::stride(&[2, 4], &[1], a.as_ptr(), b.as_mut_ptr())
            .unwrap_err();
        assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
    }
    Ok(())
}

// ---- reduce ------------------------------------------------------------------------

fn reduce_case<D, T: Arith>() -> TestResult
where
    D: TestDevice + Reduce<T>,
{
    let mut r = rng(51);
    let half = matches!(T::DTYPE, DataType::Half | DataType::BFloat16);
    // Sums accumulate in f32 for half types, so the error bound uses f32's roundoff
    // plus one final rounding to the storage type.
    let acc_eps = if half {
        f32::EPSILON as f64
    } else {
        eps::<T>()
    };
    for (rows, inner) in [
        (0usize, 5usize),
        (3, 0),
        (1, 1),
        (7, 9),
        (257, 3),
        (300, 257),
        (2, 1000),
    ] {
        let src = random_vec::<T>(&mut r, rows * inner);
        let (mut dsrc, mut ddst) = (
            Buf::on::<D>(src.clone()),
            Buf::on::<D>(vec![T::one(); rows]),
        );
        let mut inplace = src.clone();
        inplace.resize((rows * inner).max(rows), T::one());
        let mut dinplace = Buf::on::<D>(inplace);
        // SAFETY: rows·inner inputs, rows outputs; in place starts at the same address.
        unsafe {
            <D as Reduce<T>>::reduce(rows, inner, dsrc.ptr(), ddst.ptr())?;
            let p = dinplace.ptr();
            <D as Reduce<T>>::reduce(rows, inner, p, p)?;
        }
        let (dst, inplace) = (ddst.get(), dinplace.get());
        for i in 0..rows {
            let row = &src[i * inner..(i + 1) * inner];
            let want: c64 = row.iter().map(|&v| c(v)).sum();
            let mag: f64 = row.iter().map(|&v| c(v).norm()).sum();
            let what = format!("{} reduce rows={rows} inner={inner} row {i}", T::DTYPE);
            for got in [dst[i], inplace[i]] {
                if T::DTYPE.is_integer() {
                    assert_eq!(got, T::cast_from(want), "{what}");
                } else {
                    let tol = (inner as f64 + 1.0) * acc_eps * mag + eps::<T>() * want.norm();
                    assert_close(c(got), want, tol, &what);
                }
            }
        }
    }
    Ok(())
}

device_test!(reduce_matches_reference_for_every_dtype_in_and_out_of_place, D -> Result {
    for_all_dtypes!(reduce_case, D);
    Ok(())
});

#[test]
fn reduce_rejects_null_pointers() -> TestResult {
    let mut out = [0.0f32; 2];
    // SAFETY: rejected before memory is touched.
    let e = unsafe { <CpuDevice as Reduce<f32>>::reduce(2, 3, std::ptr::null(), out.as_mut_ptr()) }
        .unwrap_err();
    assert!(e.to_string().contains("null pointer"), "{e}");
    Ok(())
}

// ---- unary, abs, extremes, matmul ------------------------------------------------------

fn unary_case<D, T: MathScalar>() -> TestResult
where
    D: TestDevice + Math<T> + Abs<T>,
{
    let mut r = rng(61);
    for n in [0usize, 1, 7, 1000] {
        let x: Vec<T> = random_vec::<T>(&mut r, n)
            .into_iter()
            .map(|v| T::cast_from(c(v) / 64.0)) // keep exp in range for f16
            .collect();
        for op in [MathOp::Neg, MathOp::Sqrt, MathOp::Exp] {
            let (mut dx, mut dy) = (Buf::on::<D>(x.clone()), Buf::on::<D>(vec![T::zero(); n]));
            let mut dinplace = Buf::on::<D>(x.clone());
            // SAFETY: n elements each; the second call is in place.
            let res = unsafe { <D as Math<T>>::math(op, n, dx.ptr(), dy.ptr()) };
            if T::DTYPE.is_integer() && op != MathOp::Neg {
                let e = res.unwrap_err();
                assert!(matches!(e, Error::UnsupportedDType { .. }), "{e}");
                continue;
            }
            res?;
            let p = dinplace.ptr();
            // SAFETY: as above.
            unsafe { <D as Math<T>>::math(op, n, p, p) }?;
            let (y, inplace) = (dy.get(), dinplace.get());
            for i in 0..n {
                let xi = c(x[i]);
                let want = match op {
                    MathOp::Neg => -xi,
                    MathOp::Sqrt if !T::DTYPE.is_complex() && xi.re < 0.0 => {
                        c64::new(f64::NAN, 0.0)
                    }
                    MathOp::Sqrt => xi.sqrt(),
                    MathOp::Exp if !T::DTYPE.is_complex() => c64::new(xi.re.exp(), 0.0),
                    MathOp::Exp => xi.exp(),
                    other => unreachable!("not in this test: {other:?}"),
                };
                let what = format!("{} {op:?} n={n} i={i}", T::DTYPE);
                for got in [y[i], inplace[i]] {
                    if want.re.is_nan() {
                        assert!(c(got).re.is_nan(), "{what}");
                    } else {
                        check(got, want, 2.0 * want.norm(), &what);
                    }
                }
            }
        }
        let mut dx = Buf::on::<D>(x.clone());
        let mut da = Buf::on::<D>(vec![<T::Real as Scalar>::zero(); n]);
        // SAFETY: n elements each, distinct buffers.
        unsafe { <D as Abs<T>>::abs(n, dx.ptr(), da.ptr()) }?;
        let a = da.get();
        for i in 0..n {
            let want = c(x[i]).norm();
            check(
                a[i],
                c64::new(want, 0.0),
                2.0 * want,
                &format!("{} abs", T::DTYPE),
            );
        }
    }
    Ok(())
}

device_test!(unary_neg_sqrt_exp_and_abs_match_reference_for_every_dtype, D -> Result {
    for_all_dtypes!(unary_case, D);
    Ok(())
});

fn extreme_case<D, T: Arith>() -> TestResult
where
    D: TestDevice + ReduceExtreme<T>,
{
    let mut r = rng(62);
    for (rows, inner) in [(0usize, 3usize), (1, 1), (5, 7), (3, 1000)] {
        let src = random_vec::<T>(&mut r, rows * inner);
        for max in [true, false] {
            let (mut dsrc, mut ddst) = (
                Buf::on::<D>(src.clone()),
                Buf::on::<D>(vec![T::zero(); rows]),
            );
            // SAFETY: rows·inner inputs and rows outputs.
            let res = unsafe {
                <D as ReduceExtreme<T>>::reduce_extreme(max, rows, inner, dsrc.ptr(), ddst.ptr())
            };
            if T::DTYPE.is_complex() {
                assert!(matches!(res.unwrap_err(), Error::UnsupportedDType { .. }));
                continue;
            }
            res?;
            let dst = ddst.get();
            for i in 0..rows {
                let row = src[i * inner..(i + 1) * inner].iter().map(|&v| c(v).re);
                let want = if max {
                    row.fold(f64::MIN, f64::max)
                } else {
                    row.fold(f64::MAX, f64::min)
                };
                assert_eq!(c(dst[i]).re, want, "{} max={max} row {i}", T::DTYPE);
            }
        }
    }
    Ok(())
}

device_test!(reduce_extreme_matches_reference_and_rejects_complex_and_empty_rows, D -> Result {
    for_all_dtypes!(extreme_case, D);
    let mut nan = Buf::on::<D>(vec![1.0f64, f64::NAN, 3.0]);
    let mut out = Buf::on::<D>(vec![0.0f64]);
    // SAFETY: three inputs, one output.
    unsafe { <D as ReduceExtreme<f64>>::reduce_extreme(true, 1, 3, nan.ptr(), out.ptr()) }
        ?;
    assert!(out.get()[0].is_nan(), "NaN wins, as in NumPy");
    // SAFETY: rejected before memory is touched.
    let e = unsafe { <D as ReduceExtreme<f64>>::reduce_extreme(true, 2, 0, nan.ptr(), out.ptr()) }
        .unwrap_err();
    assert!(e.to_string().contains("empty axis"), "{e}");
    Ok(())
});

fn matmul_case<D, T: Arith>() -> TestResult
where
    D: TestDevice + MatMul<T>,
{
    use ctensor_kernels::blas::Trans;
    let mut r = rng(63);
    for (m, n, k) in [
        (0usize, 2usize, 3usize),
        (2, 3, 0),
        (1, 1, 1),
        (7, 5, 3),
        (33, 2, 17),
    ] {
        for (ta, tb) in [
            (Trans::N, Trans::N),
            (Trans::T, Trans::C),
            (Trans::C, Trans::N),
        ] {
            let (ar, ac) = ta.stored(m, k);
            let (br, bc) = tb.stored(k, n);
            let (lda, ldb, ldc) = (ar + 1, br + 2, m + 1);
            // Small values, so that sums of products stay inside f16's range (65504).
            let small = |v: T| {
                if T::DTYPE.is_integer() {
                    v
                } else {
                    T::cast_from(c(v) / 16.0)
                }
            };
            let a: Vec<T> = random_vec::<T>(&mut r, lda * ac)
                .into_iter()
                .map(small)
                .collect();
            let b: Vec<T> = random_vec::<T>(&mut r, ldb * bc)
                .into_iter()
                .map(small)
                .collect();
            let c0 = random_vec::<T>(&mut r, ldc * n);
            let (mut da, mut db) = (Buf::on::<D>(a.clone()), Buf::on::<D>(b.clone()));
            let mut dc = Buf::on::<D>(c0.clone());
            let (al, be) = (alpha::<T>(), beta::<T>());
            // SAFETY: buffers match the stored shapes and leading dimensions.
            unsafe {
                <D as MatMul<T>>::matmul(
                    ta,
                    tb,
                    m,
                    n,
                    k,
                    al,
                    da.ptr(),
                    lda,
                    db.ptr(),
                    ldb,
                    be,
                    dc.ptr(),
                    ldc,
                )
            }?;
            let cm = dc.get();
            let op = |t: Trans, buf: &[T], ld: usize, i: usize, l: usize| match t {
                Trans::N => c(buf[i + l * ld]),
                Trans::T => c(buf[l + i * ld]),
                Trans::C => c(buf[l + i * ld]).conj(),
            };
            for j in 0..n {
                for i in 0..m {
                    let (mut s, mut mag) = (c64::new(0.0, 0.0), 0.0);
                    for l in 0..k {
                        let p = op(ta, &a, lda, i, l) * op(tb, &b, ldb, l, j);
                        s += p;
                        mag += p.norm();
                    }
                    let want = c(al) * s + c(be) * c(c0[i + j * ldc]);
                    let mag = c(al).norm() * mag + c(be).norm() * c(c0[i + j * ldc]).norm();
                    let what = format!("{} matmul {ta}{tb} {m}x{n}x{k} ({i},{j})", T::DTYPE);
                    if T::DTYPE.is_integer() {
                        assert_eq!(cm[i + j * ldc], T::cast_from(want), "{what}");
                    } else {
                        let acc_eps = if matches!(T::DTYPE, DataType::Half | DataType::BFloat16) {
                            f32::EPSILON as f64
                        } else {
                            eps::<T>()
                        };
                        let tol = 4.0 * (k as f64 + 2.0) * acc_eps * mag + eps::<T>() * want.norm();
                        assert_close(c(cm[i + j * ldc]), want, tol, &what);
                    }
                }
            }
        }
    }
    Ok(())
}

device_test!(matmul_matches_reference_for_every_dtype_and_trans, D -> Result {
    for_all_dtypes!(matmul_case, D);
    Ok(())
});

/// Complex square roots that lose digits or overflow with the textbook formula, with
/// references from closed forms (√(1+εi) = 1 + εi/2 − ..., √(10²⁰⁰(1+i)) =
/// 10¹⁰⁰·√(1+i), √(−4 ± 0i) = ±2i) and C99 Annex G for the non-finite ones; every finite
/// result is also checked by squaring it back.
fn complex_sqrt_is_accurate_at_the_extremes<D: TestDevice + Math<T>, T: MathScalar>() -> TestResult
{
    use rand::Rng;
    let single = T::DTYPE == ctensor_base::DataType::ComplexFloat;
    let big = if single { 1e20 } else { 1e200 };
    let tiny = if single { 1e-20 } else { 1e-200 };
    // √(1+i) = (√((1+√2)/2), √((√2−1)/2)).
    let (s1, s2) = (
        ((1.0 + 2f64.sqrt()) / 2.0).sqrt(),
        ((2f64.sqrt() - 1.0) / 2.0).sqrt(),
    );
    let inf = f64::INFINITY;
    let cases: Vec<(c64, c64)> = vec![
        (c64::new(1.0, 1e-10), c64::new(1.0, 5e-11)),
        (c64::new(1.0, -1e-10), c64::new(1.0, -5e-11)),
        (c64::new(-1.0, 1e-10), c64::new(5e-11, 1.0)),
        (c64::new(big, big), c64::new(s1, s2) * big.sqrt()),
        (c64::new(-big, -big), c64::new(s2, -s1) * big.sqrt()),
        (c64::new(tiny, 0.0), c64::new(tiny.sqrt(), 0.0)),
        (
            c64::new(0.0, tiny),
            c64::new(1.0, 1.0) * (tiny / 2.0).sqrt(),
        ),
        (c64::new(-4.0, 0.0), c64::new(0.0, 2.0)),
        (c64::new(-4.0, -0.0), c64::new(0.0, -2.0)),
        (c64::new(4.0, 0.0), c64::new(2.0, 0.0)),
        (c64::new(0.0, 0.0), c64::new(0.0, 0.0)),
        (c64::new(3.0, inf), c64::new(inf, inf)),
        (c64::new(-inf, 2.0), c64::new(0.0, inf)),
        (c64::new(inf, -2.0), c64::new(inf, -0.0)),
    ];
    let x: Vec<T> = cases.iter().map(|(z, _)| T::cast_from(*z)).collect();
    let n = x.len();
    let mut bx = Buf::on::<D>(x);
    let mut by = Buf::on::<D>(vec![T::zero(); n]);
    // SAFETY: both buffers hold n elements on D.
    unsafe { D::math(MathOp::Sqrt, n, bx.ptr(), by.ptr()) }?;
    let tol = 4.0 * eps::<T>();
    for ((z, want), got) in cases.iter().zip(by.get()) {
        let got = c(got);
        let what = format!("{:?} sqrt({z})", T::DTYPE);
        if !want.re.is_finite() || !want.im.is_finite() {
            assert_eq!((got.re, got.im), (want.re, want.im), "{what}");
            continue;
        }
        for (g, w) in [(got.re, want.re), (got.im, want.im)] {
            assert!(
                (g - w).abs() <= tol * w.abs() || g == w,
                "{what}: got {got}, want {want}"
            );
            assert_eq!(
                g.is_sign_negative(),
                w.is_sign_negative(),
                "{what}: sign of {got}"
            );
        }
    }
    // Random values over the whole exponent range, checked by squaring back.
    let mut r = rng(17);
    let span = if single { 35 } else { 300 };
    let x: Vec<T> = (0..1000)
        .map(|_| {
            let e = |r: &mut rand::rngs::StdRng| 10f64.powi(r.gen_range(-span..span));
            let re = r.gen_range(-1.0..1.0) * e(&mut r);
            let im = r.gen_range(-1.0..1.0) * e(&mut r);
            T::cast_from(c64::new(re, im))
        })
        .collect();
    let mut bx = Buf::on::<D>(x.clone());
    let mut by = Buf::on::<D>(vec![T::zero(); x.len()]);
    // SAFETY: both buffers hold 1000 elements on D.
    unsafe { D::math(MathOp::Sqrt, x.len(), bx.ptr(), by.ptr()) }?;
    for (z, w) in x.iter().zip(by.get()) {
        let (z, w) = (c(*z), c(w));
        assert!(
            w.re >= 0.0,
            "{:?}: sqrt({z}) = {w} is not the principal root",
            T::DTYPE
        );
        // Squaring in f64 (w is at most 10^150 or 10^18, so w·w stays finite).
        let back = w * w;
        assert!(
            (back - z).norm() <= 8.0 * eps::<T>() * z.norm(),
            "{:?}: sqrt({z})² = {back}",
            T::DTYPE
        );
    }
    Ok(())
}

device_test!(complex_sqrt_keeps_small_parts_and_does_not_overflow, D -> Result {
    complex_sqrt_is_accurate_at_the_extremes::<D, ctensor_base::c64>()?;
    complex_sqrt_is_accurate_at_the_extremes::<D, ctensor_base::c32>()?;
    Ok(())
});
