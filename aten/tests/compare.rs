//! Comparisons, classification, `where_cond`, `maximum`/`minimum`/`clamp`, `any`/`all` and
//! `vector_norm` against plain Rust on hostile values (NaN, ±inf, ±0, ties, huge and tiny
//! magnitudes), for every dtype they take, with broadcasting and promotion, on the CPU
//! and (through `device_test!`) the GPU.
#![deny(unused_must_use)]

mod common;

use common::*;
use ctensor_aten::{c64, where_cond, DataType, Device, Error, NormOrd, Scalar, Tensor};
use DataType::*;

/// What a helper that can fail returns.
type Fallible<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn values(t: &Tensor) -> Fallible<Vec<c64>> {
    Ok(t.cast(ComplexDouble)?.to_vec::<c64>()?)
}

fn mask(t: &Tensor) -> Fallible<Vec<i32>> {
    Ok({
        assert_eq!(t.dtype(), Int, "masks are i32");
        t.to_vec::<i32>()?
    })
}

const SPECIAL: [f64; 9] = [
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    0.0,
    -0.0,
    1.0,
    -1.0,
    2.5,
    7.0,
];

/// Every pair of SPECIAL values (x along rows, y along columns) in `dt`.
fn pairs<D: Device>(dt: DataType) -> Fallible<(Tensor, Tensor)> {
    Ok({
        let v: Vec<f64> = SPECIAL
            .iter()
            .map(|&x| {
                if dt.is_integer() && !x.is_finite() {
                    3.0
                } else {
                    x
                }
            })
            .collect();
        let x = on::<D>(Tensor::from_slice(&v, &[9, 1])?.cast(dt)?);
        let y = on::<D>(Tensor::from_slice(&v, &[1, 9])?.cast(dt)?);
        (x, y)
    })
}

fn comparisons_of<D: Device, T: Scalar>() -> TestResult {
    let dt = T::DTYPE;
    let (x, y) = pairs::<D>(dt)?;
    let (xv, yv) = (values(&x)?, values(&y)?);
    let outer = |f: &dyn Fn(c64, c64) -> bool| -> Vec<i32> {
        xv.iter()
            .flat_map(|a| yv.iter().map(move |b| f(*a, *b) as i32))
            .collect()
    };
    assert_eq!(mask(&x.equal(&y)?)?, outer(&|a, b| a == b), "{dt} equal");
    assert_eq!(
        mask(&x.not_equal(&y)?)?,
        outer(&|a, b| a != b),
        "{dt} not_equal"
    );
    if dt.is_complex() {
        for e in [x.lt(&y).unwrap_err(), x.maximum(&y).unwrap_err()] {
            assert!(matches!(e, Error::UnsupportedDType { .. }), "{e}");
        }
    } else {
        assert_eq!(mask(&x.lt(&y)?)?, outer(&|a, b| a.re < b.re), "{dt} lt");
        assert_eq!(mask(&x.le(&y)?)?, outer(&|a, b| a.re <= b.re), "{dt} le");
        assert_eq!(mask(&x.gt(&y)?)?, outer(&|a, b| a.re > b.re), "{dt} gt");
        assert_eq!(mask(&x.ge(&y)?)?, outer(&|a, b| a.re >= b.re), "{dt} ge");
        let pick = |max: bool, a: f64, b: f64| {
            if a.is_nan() || b.is_nan() {
                f64::NAN
            } else if (b > a) == max {
                b
            } else {
                a
            }
        };
        for (max, got) in [(true, x.maximum(&y)?), (false, x.minimum(&y)?)] {
            let want: Vec<f64> = xv
                .iter()
                .flat_map(|a| yv.iter().map(move |b| pick(max, a.re, b.re)))
                .collect();
            let got: Vec<f64> = values(&got)?.iter().map(|z| z.re).collect();
            for (g, w) in got.iter().zip(&want) {
                assert!(
                    g == w || (g.is_nan() && w.is_nan()),
                    "{dt} max={max}: {g} vs {w}"
                );
            }
        }
    }
    let classes = [
        (
            x.isnan()?,
            xv.iter()
                .map(|z| z.re.is_nan() || z.im.is_nan())
                .collect::<Vec<_>>(),
        ),
        (
            x.isfinite()?,
            xv.iter()
                .map(|z| z.re.is_finite() && z.im.is_finite())
                .collect(),
        ),
        (
            x.isinf()?,
            xv.iter()
                .map(|z| {
                    !(z.re.is_nan() || z.im.is_nan()) && (z.re.is_infinite() || z.im.is_infinite())
                })
                .collect(),
        ),
    ];
    for (k, (got, want)) in classes.into_iter().enumerate() {
        let want: Vec<i32> = want.into_iter().map(i32::from).collect();
        assert_eq!(mask(&got)?, want, "{dt} class {k}");
    }
    Ok(())
}

device_test!(comparisons_and_classes_match_rust_for_every_dtype, D -> Result {
    for_all_dtypes!(comparisons_of, D);
    Ok(())
});

device_test!(mixed_types_and_numbers_promote_before_comparing, D -> Result {
    let i = on::<D>(Tensor::from_slice(&[1i32, 2, 3], &[3])?);
    // 2 < 2.5 only in f64: the number lifts the integer tensor.
    assert_eq!(mask(&i.lt_scalar(2.5)?)?, [1, 1, 0]);
    assert_eq!(mask(&i.ge_scalar(2)?)?, [0, 1, 1]);
    assert_eq!(mask(&i.equal_scalar(2)?)?, [0, 1, 0]);
    let f = on::<D>(Tensor::from_slice(&[0.5f32, 2.0, 3.5], &[3])?);
    assert_eq!(mask(&i.gt(&f)?)?, [1, 0, 0]);
    let z = on::<D>(Tensor::from_slice(&[c64::new(2.0, 0.0), c64::new(2.0, 1.0), c64::new(3.0, 0.0)], &[3])?);
    assert_eq!(mask(&i.equal(&z)?)?, [0, 0, 1]);
    assert!(i.lt(&on::<D>(Tensor::zeros(Double, D::TYPE, &[2])?)).is_err(), "shapes must broadcast");
    Ok(())
});

device_test!(where_selects_with_broadcasting_and_any_mask_type, D -> Result {
    let m = on::<D>(Tensor::from_slice(&[0.0f64, 0.5, f64::NAN], &[3, 1])?);
    let a = on::<D>(Tensor::from_slice(&[f64::INFINITY, -2.0], &[1, 2])?);
    let b = on::<D>(Tensor::scalar(7i32)?);
    let got = where_cond(&m, &a, &b)?;
    assert_eq!((got.dtype(), got.dims()), (Double, &[3, 2][..]));
    // 0 is false; 0.5 and NaN are true. Infinity passes through untouched.
    assert_eq!(got.to_vec::<f64>()?, [7.0, 7.0, f64::INFINITY, -2.0, f64::INFINITY, -2.0]);
    let c = on::<D>(Tensor::from_slice(&[c64::new(0.0, 1.0), c64::new(0.0, 0.0)], &[2])?);
    let got = where_cond(&c, &on::<D>(Tensor::scalar(1.0f32)?), &on::<D>(Tensor::scalar(0.0f32)?))?;
    assert_eq!(got.to_vec::<f32>()?, [1.0, 0.0], "an imaginary-only mask entry is true");
    Ok(())
});

device_test!(clamp_any_and_all, D -> Result {
    let x = on::<D>(Tensor::from_slice(&[-5.0f64, 0.5, f64::NAN, 9.0], &[4])?);
    let got = x.clamp(Some(-1.0), Some(1.0))?.to_vec::<f64>()?;
    assert_eq!(got[..2], [-1.0, 0.5]);
    assert!(got[2].is_nan());
    assert_eq!(got[3], 1.0);
    assert_eq!(x.clamp(None::<f64>, Some(0.0))?.to_vec::<f64>()?[3], 0.0);
    let i = on::<D>(Tensor::from_slice(&[-3i32, 4], &[2])?);
    let c = i.clamp(Some(-1.5), None::<f64>)?;
    assert_eq!((c.dtype(), c.to_vec::<f64>()?), (Double, vec![-1.5, 4.0]));
    let e = x.clamp(Some(2.0), Some(1.0)).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { op: "clamp", .. }), "{e}");
    let with_zero = on::<D>(Tensor::from_slice(&[0.0f64, -0.0, 2.0], &[3])?);
    assert!(with_zero.any()? && !with_zero.all()?);
    let zeros = on::<D>(Tensor::from_slice(&[0.0f64, -0.0], &[2])?);
    assert!(!zeros.any()?, "-0.0 is zero");
    assert!(on::<D>(Tensor::from_slice(&[f64::NAN, 1.0], &[2])?).all()?, "NaN is nonzero");
    let empty = on::<D>(Tensor::zeros(Float, D::TYPE, &[0, 3])?);
    assert!(!empty.any()? && empty.all()?);
    Ok(())
});

fn norms_of<D: Device, T: Scalar>() -> TestResult {
    let dt = T::DTYPE;
    let (big, tiny) = if matches!(dt, Float | ComplexFloat) {
        (1e30, 1e-30)
    } else {
        (1e200, 1e-200)
    };
    // Columns: ordinary, huge (would overflow |x|²), tiny (would underflow), zero, ±inf, NaN.
    let cols: [[f64; 3]; 6] = [
        [3.0, -4.0, 12.0],
        [3.0 * big, 4.0 * big, 0.0],
        [3.0 * tiny, -4.0 * tiny, 0.0],
        [0.0, 0.0, 0.0],
        [1.0, f64::NEG_INFINITY, 2.0],
        [1.0, f64::NAN, f64::INFINITY],
    ];
    let flat: Vec<f64> = (0..3)
        .flat_map(|r| cols.iter().map(move |c| c[r]))
        .collect();
    let x = on::<D>(Tensor::from_slice(&flat, &[3, 6])?.cast(dt)?);
    let two: Vec<f64> = values(&x.vector_norm(&[0], NormOrd::Two)?)?
        .iter()
        .map(|z| z.re)
        .collect();
    let want = [13.0, 5.0 * big, 5.0 * tiny, 0.0, f64::INFINITY, f64::NAN];
    let tol = 4.0 * eps(dt);
    for (k, (g, w)) in two.iter().zip(&want).enumerate() {
        let ok = if w.is_nan() {
            g.is_nan()
        } else if w.is_infinite() {
            g == w
        } else {
            (g - w).abs() <= tol * w.abs()
        };
        assert!(ok, "{dt} 2-norm of column {k}: {g} vs {w}");
    }
    let one = values(&x.vector_norm(&[0], NormOrd::One)?)?;
    assert!((one[0].re - 19.0).abs() <= tol * 19.0, "{dt} 1-norm");
    let inf = values(&x.vector_norm(&[0], NormOrd::Inf)?)?;
    assert_eq!(inf[0].re, 12.0, "{dt} ∞-norm");
    // Over both axes of the first column pair: the Frobenius norm √(169 + …).
    let ord = x.narrow(1, 0, 1)?;
    let fro = values(&ord.vector_norm(&[0, 1], NormOrd::Two)?)?;
    assert!((fro[0].re - 13.0).abs() <= tol * 13.0, "{dt} Frobenius");
    assert_eq!(x.vector_norm(&[0], NormOrd::Two)?.dtype(), dt.real_type());
    Ok(())
}

device_test!(vector_norm_neither_overflows_nor_underflows, D -> Result {
    norms_of::<D, f32>()?;
    norms_of::<D, f64>()?;
    norms_of::<D, ctensor_aten::c32>()?;
    norms_of::<D, c64>()?;
    let i = on::<D>(Tensor::zeros(Int, D::TYPE, &[2])?);
    assert!(matches!(i.vector_norm(&[0], NormOrd::Two).unwrap_err(), Error::UnsupportedDType { .. }));
    // A random complex block: each column's norm against a plain loop.
    let (r, v) = random_on::<D, c64>(&mut rng(3), &[257, 5]);
    let got = r.vector_norm(&[0], NormOrd::Two)?.to_vec::<f64>()?;
    for c in 0..5 {
        let want: f64 = (0..257).map(|i| v[i * 5 + c].norm_sqr()).sum::<f64>().sqrt();
        assert!((got[c] - want).abs() <= 1e-14 * want, "column {c}");
    }
    Ok(())
});

/// A block too large for one pass (2 051 × 600, taken in slabs of columns; and its rows,
/// taken in slabs of rows; and a 3-D case keeping its middle axis) gives each norm of
/// the plain loop, and exactly what the same columns give alone, with a huge column, an
/// infinite one and a NaN one in different slabs.
fn slabbed_norms_of<D: Device, T: Scalar>() -> TestResult {
    let dt = T::DTYPE;
    let big = if matches!(dt, Float | ComplexFloat) {
        1e30
    } else {
        1e200
    };
    let (rows, cols) = (2051, 600);
    let (x, _) = random_on::<D, T>(&mut rng(40), &[rows, cols]);
    let mut v = values(&x)?;
    for r in 0..rows {
        v[r * cols + 5] *= big;
        if r == 1000 {
            v[r * cols + 300] = c64::new(f64::INFINITY, 0.0);
            v[r * cols + 599] = c64::new(f64::NAN, 0.0);
        }
    }
    let x = on::<D>(Tensor::from_vec(v.clone(), &[rows, cols])?.cast(dt)?);
    let v = values(&x)?; // as stored in dt
    let tol = 8.0 * eps(dt);
    let check = |got: f64, want: f64, what: &str| {
        let ok = if want.is_nan() {
            got.is_nan()
        } else if want.is_infinite() {
            got == want
        } else {
            (got - want).abs() <= tol * want
        };
        assert!(ok, "{dt} {what}: {got} against {want}");
    };
    let plain = |idx: &mut dyn Iterator<Item = usize>| -> f64 {
        let ix: Vec<usize> = idx.collect();
        if ix.iter().any(|&i| v[i].re.is_nan() || v[i].im.is_nan()) {
            return f64::NAN;
        }
        if ix.iter().any(|&i| v[i].norm().is_infinite()) {
            return f64::INFINITY;
        }
        let s = ix
            .iter()
            .map(|&i| v[i].norm())
            .fold(0.0, f64::max)
            .max(f64::MIN_POSITIVE);
        s * ix
            .iter()
            .map(|&i| (v[i] / s).norm_sqr())
            .sum::<f64>()
            .sqrt()
    };
    let by_cols = values(&x.vector_norm(&[0], NormOrd::Two)?)?;
    assert_eq!(by_cols.len(), cols);
    for c in [0, 5, 299, 300, 301, 599] {
        check(
            by_cols[c].re,
            plain(&mut (0..rows).map(|r| r * cols + c)),
            "column",
        );
        let alone = values(&x.narrow(1, c, 1)?.vector_norm(&[0], NormOrd::Two)?)?;
        assert!(alone[0] == by_cols[c] || (alone[0].re.is_nan() && by_cols[c].re.is_nan()));
    }
    let by_rows = values(&x.vector_norm(&[1], NormOrd::Two)?)?;
    assert_eq!(by_rows.len(), rows);
    for r in [0, 999, 1000, 2050] {
        check(
            by_rows[r].re,
            plain(&mut (0..cols).map(|c| r * cols + c)),
            "row",
        );
    }
    for (ord, name) in [(NormOrd::One, "1-norm"), (NormOrd::Inf, "max")] {
        let got = values(&x.t()?.vector_norm(&[1], ord)?)?;
        let c = 7;
        let want = (0..rows).map(|r| v[r * cols + c].norm());
        let want = if ord == NormOrd::One {
            want.sum::<f64>()
        } else {
            want.fold(0.0, f64::max)
        };
        check(got[c].re, want, name);
    }
    // [rows, 2, 300] over axes 0 and 2: the middle axis is kept.
    let y = x.reshape(&[rows as i64, 2, 300])?;
    let mid = values(&y.vector_norm(&[0, 2], NormOrd::Two)?)?;
    assert_eq!(mid.len(), 2);
    let first_half = (0..rows).flat_map(|r| (0..300).map(move |c| r * cols + c));
    check(mid[0].re, plain(&mut first_half.into_iter()), "3-D");
    assert!(mid[1].re.is_nan(), "{dt} 3-D: the half with the NaN");
    Ok(())
}

device_test!(vector_norm_of_a_large_block_goes_by_slabs_to_the_same_values, D -> Result {
    slabbed_norms_of::<D, f32>()?;
    slabbed_norms_of::<D, f64>()?;
    slabbed_norms_of::<D, ctensor_aten::c32>()?;
    slabbed_norms_of::<D, c64>()?;
    Ok(())
});

/// The 2-norm along each single axis of strided views (a permuted 3-D tensor; a window
/// narrowed on two axes, so it starts at an offset; every other row of a block) against
/// a plain loop, for the BLAS types (one `?nrm2` per result on the host) and the half
/// types (the element-wise path); and NaN beside ±∞ in either order gives NaN.
fn single_axis_norms_of<D: Device, T: Scalar>() -> TestResult {
    let dt = T::DTYPE;
    let (x, _) = random_on::<D, T>(&mut rng(50), &[7, 3, 11]);
    let views = [
        x.share(),
        x.permute(&[2, 0, 1])?,
        x.narrow(2, 2, 5)?.narrow(0, 1, 6)?,
        x.reshape(&[21, 11])?.narrow_step(0, 1, 10, 2)?,
    ];
    let tol = 8.0
        * eps(dt).max(if matches!(dt, Half | BFloat16) {
            1e-2
        } else {
            0.0
        });
    for v in &views {
        let dims = v.dims().to_vec();
        let vals = values(&v.contiguous()?)?; // row-major, as the view reads
        let strides: Vec<usize> = (0..dims.len())
            .map(|d| dims[d + 1..].iter().product())
            .collect();
        for axis in 0..dims.len() {
            let got = values(&v.vector_norm(&[axis], NormOrd::Two)?)?;
            let kept: Vec<usize> = (0..dims.len()).filter(|&d| d != axis).collect();
            let count: usize = kept.iter().map(|&d| dims[d]).product();
            assert_eq!(got.len(), count, "{dt} {dims:?} axis {axis}");
            for (k, g) in got.iter().enumerate() {
                // The kept position of result k, row-major over the kept axes.
                let (mut rest, mut at) = (k, 0);
                for &d in kept.iter().rev() {
                    at += (rest % dims[d]) * strides[d];
                    rest /= dims[d];
                }
                let want = (0..dims[axis])
                    .map(|i| vals[at + i * strides[axis]].norm_sqr())
                    .sum::<f64>()
                    .sqrt();
                assert!(
                    (g.re - want).abs() <= tol * want,
                    "{dt} {dims:?} axis {axis} [{k}]: {} against {want}",
                    g.re
                );
            }
        }
    }
    // A window whose surroundings are NaN: the norms read only the window.
    let block = on::<D>(Tensor::full(f64::NAN, ctensor_aten::DeviceType::Cpu, &[9, 6])?.cast(dt)?);
    let mut window = block.narrow(0, 2, 5)?.narrow(1, 1, 4)?;
    let (w, _) = random_on::<D, T>(&mut rng(51), &[5, 4]);
    window.assign(&w)?;
    for axis in 0..2 {
        let got = values(&window.vector_norm(&[axis], NormOrd::Two)?)?;
        let want = values(&w.vector_norm(&[axis], NormOrd::Two)?)?;
        for (g, v) in got.iter().zip(&want) {
            assert!(
                (g.re - v.re).abs() <= tol * v.re,
                "{dt} axis {axis}: the window {} against its copy {}",
                g.re,
                v.re
            );
        }
    }
    // No elements, huge other dimensions: empty results, or zeros for an empty axis.
    let wide = on::<D>(Tensor::zeros(dt, D::TYPE, &[0, 1 << 40])?);
    assert_eq!(wide.vector_norm(&[1], NormOrd::Two)?.dims(), &[0]);
    let tall = on::<D>(Tensor::zeros(dt, D::TYPE, &[1 << 40, 0])?);
    assert_eq!(tall.vector_norm(&[0], NormOrd::Two)?.dims(), &[0]);
    let deep = on::<D>(Tensor::zeros(dt, D::TYPE, &[3, 0, 1 << 40])?);
    assert_eq!(deep.vector_norm(&[2], NormOrd::Two)?.dims(), &[3, 0]);
    if !dt.is_integer() {
        let col = |a: f64, b: f64| Tensor::from_slice(&[1.0, a, b, 2.0], &[4, 1]);
        for (a, b) in [(f64::NAN, f64::INFINITY), (f64::NEG_INFINITY, f64::NAN)] {
            let c = on::<D>(col(a, b)?.cast(dt)?);
            let n = values(&c.vector_norm(&[0], NormOrd::Two)?)?;
            assert!(n[0].re.is_nan(), "{dt}: [1, {a}, {b}, 2] gives {}", n[0].re);
        }
        let c = on::<D>(col(1.0, f64::NEG_INFINITY)?.cast(dt)?);
        assert_eq!(
            values(&c.vector_norm(&[0], NormOrd::Two)?)?[0].re,
            f64::INFINITY
        );
    }
    Ok(())
}

device_test!(single_axis_norms_of_strided_views_match_a_plain_loop, D -> Result {
    single_axis_norms_of::<D, f32>()?;
    single_axis_norms_of::<D, f64>()?;
    single_axis_norms_of::<D, ctensor_aten::c32>()?;
    single_axis_norms_of::<D, c64>()?;
    single_axis_norms_of::<D, ctensor_aten::f16>()?;
    single_axis_norms_of::<D, ctensor_aten::bf16>()?;
    Ok(())
});

device_test!(norms_of_empty_axes_and_views, D -> Result {
    let z = on::<D>(Tensor::zeros(Float, D::TYPE, &[0, 3])?);
    // The 1- and 2-norms of nothing are 0 (NumPy's answer); ∞ has no maximum.
    for ord in [NormOrd::Two, NormOrd::One] {
        let n = z.vector_norm(&[0], ord)?;
        assert_eq!((n.dims(), n.to_vec::<f32>()?), (&[3][..], vec![0.0; 3]), "{ord:?}");
    }
    let e = z.vector_norm(&[0], NormOrd::Inf).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { op: "vector_norm", .. }), "{e}");
    // Views: columns of a transposed view are the rows of the original.
    let (x, xv) = random_on::<D, f64>(&mut rng(21), &[4, 7]);
    let got = x.t()?.vector_norm(&[0], NormOrd::Two)?.to_vec::<f64>()?;
    for r in 0..4 {
        let want: f64 = (0..7).map(|c| xv[r * 7 + c] * xv[r * 7 + c]).sum::<f64>().sqrt();
        assert!((got[r] - want).abs() <= 4.0 * f64::EPSILON * want, "row {r}");
    }
    // Comparisons and math on a transposed view equal those on its dense copy.
    let (xt, xc) = (x.t()?, x.t()?.contiguous()?);
    assert_eq!(mask(&xt.gt_scalar(0.0)?)?, mask(&xc.gt_scalar(0.0)?)?);
    assert_eq!(values(&xt.sin()?)?, values(&xc.sin()?)?);
    // A NaN bound has no order: refused.
    let e = x.clamp(Some(f64::NAN), Some(1.0)).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { op: "clamp", .. }), "{e}");
    Ok(())
});

device_test!(vdot_along_an_axis_gives_per_column_inner_products, D -> Result {
    let (x, xv) = random_on::<D, c64>(&mut rng(11), &[257, 4]);
    let (y, yv) = random_on::<D, c64>(&mut rng(12), &[257, 4]);
    let got = x.vdot_along(&y, &[0])?.to_vec::<c64>()?;
    for c in 0..4 {
        let want: c64 = (0..257).map(|i| xv[i * 4 + c].conj() * yv[i * 4 + c]).sum();
        assert!((got[c] - want).norm() <= 1e-13 * want.norm().max(1.0), "column {c}");
    }
    // Real with complex promotes; a shape that does not broadcast names the op.
    let r = on::<D>(Tensor::ones(Double, D::TYPE, &[257, 1])?);
    assert_eq!(r.vdot_along(&y, &[0])?.dims(), [4]);
    let e = x.vdot_along(&on::<D>(Tensor::ones(Double, D::TYPE, &[3])?), &[0]).unwrap_err();
    assert!(e.to_string().starts_with("vdot_along"), "{e}");
    Ok(())
});
