//! Element-wise ops, reductions and layout ops on tensors against plain loops, for all
//! dtypes they support, contiguous inputs, transposed views, Fortran-order maps and
//! broadcast shapes; in place including `a.add_(&a)`. On the CPU and, through
//! `device_test!`, on the GPU (one `SKIP` line per test without one).
#![allow(clippy::needless_range_loop)]
#![deny(unused_must_use)]

mod common;

use common::*;
use ctensor_aten::{c64, CastFrom, DataType, Device, DeviceType, Error, Scalar, Tensor};

/// What a helper that can fail returns.
type Fallible<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn c64s(t: &Tensor) -> Fallible<Vec<c64>> {
    Ok(t.cast(DataType::ComplexDouble)?.to_vec::<c64>()?)
}

fn eps(dt: DataType) -> f64 {
    match dt {
        DataType::Float | DataType::ComplexFloat => f32::EPSILON as f64,
        DataType::Double | DataType::ComplexDouble => f64::EPSILON,
        DataType::Half => 9.8e-4,
        DataType::BFloat16 => 7.9e-3,
        _ => 0.0,
    }
}

fn close(got: c64, want: c64, dt: DataType, what: &str) {
    let tol = 4.0 * eps(dt) * want.norm().max(1.0);
    if dt.is_integer() {
        assert_eq!(got, want, "{what}");
    } else {
        assert!((got - want).norm() <= tol, "{what}: got {got}, want {want}");
    }
}

/// Reference value of the broadcast operand at output multi-index `idx`.
fn at(v: &[c64], dims: &[usize], out: &[usize], idx: &[usize]) -> c64 {
    let lead = out.len() - dims.len();
    let i: Vec<usize> = dims
        .iter()
        .enumerate()
        .map(|(d, &n)| if n == 1 { 0 } else { idx[lead + d] })
        .collect();
    v[flat(dims, &i)]
}

fn binary_case<D: Device, T: Scalar>() -> TestResult {
    let mut r = rng(71);
    let shapes: [(&[usize], &[usize]); 6] = [
        (&[0], &[0]),
        (&[7], &[7]),
        (&[3, 4], &[4]),
        (&[3, 1], &[1, 5]),
        (&[2, 3, 4], &[3, 1]),
        (&[300, 257], &[300, 257]),
    ];
    for (sa, sb) in shapes {
        let (a, av) = random_on::<D, T>(&mut r, sa);
        let (_, mut bv) = random_on::<D, T>(&mut r, sb);
        for v in bv.iter_mut() {
            if c(*v).norm() == 0.0 {
                *v = T::one();
            }
        }
        let b = on::<D>(Tensor::from_slice(&bv, sb)?);
        let (ac, bc): (Vec<c64>, Vec<c64>) = (
            av.iter().map(|&x| c(x)).collect(),
            bv.iter().map(|&x| c(x)).collect(),
        );
        let results = [
            ("add", (&a + &b)?),
            ("sub", (&a - &b)?),
            ("mul", (&a * &b)?),
            ("div", (&a / &b)?),
            ("add_scaled", a.add_scaled(2.0, &b, -3.0)?),
        ];
        for (name, got) in results {
            let out = got.dims().to_vec();
            let g = c64s(&got)?;
            for (k, idx) in all_indices(&out).iter().enumerate() {
                let (x, y) = (at(&ac, sa, &out, idx), at(&bc, sb, &out, idx));
                let want = match name {
                    "add" => x + y,
                    "sub" => x - y,
                    "mul" => x * y,
                    "div" if T::DTYPE.is_integer() => c64::new((x.re / y.re).trunc(), 0.0),
                    "div" => x / y,
                    _ => x * 2.0 - y * 3.0,
                };
                let want = c(T::cast_from(want));
                close(
                    g[k],
                    want,
                    T::DTYPE,
                    &format!("{} {name} {sa:?} {sb:?} at {idx:?}", T::DTYPE),
                );
            }
        }
    }
    Ok(())
}

fn c<T: Scalar>(x: T) -> c64 {
    c64::cast_from(x.to_c64())
}

device_test!(binary_ops_broadcast_and_match_loops_for_every_dtype, D -> Result {
    binary_case::<D, f32>()?;
    binary_case::<D, f64>()?;
    binary_case::<D, i32>()?;
    binary_case::<D, i64>()?;
    binary_case::<D, ctensor_aten::c32>()?;
    binary_case::<D, c64>()?;
    binary_case::<D, ctensor_aten::f16>()?;
    binary_case::<D, ctensor_aten::bf16>()?;
    Ok(())
});

/// Equal as IEEE values bit for bit (signed zeros told apart), NaN equal to NaN.
fn same_part(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

/// Complex element-wise ops where parts are infinite, NaN or signed zeros, against
/// part-by-part references: every pair of 7 × 7 special values (2 401 elements). `a + b`
/// is computed as `1·a + 1·b`; a full complex product by `1 + 0i` makes `1·re − 0·∞` =
/// NaN, which gave `(1 + 0i) + (0 + ∞i)` = `NaN + ∞i` (NumPy: `1 + ∞i`) until factors
/// with a zero imaginary part scaled as real numbers (`Arith::scale`, `ct_factor`).
/// The values are exact in f32 too, so one f64 reference serves c32 and c64.
fn nonfinite_complex_case<D: Device, T: Scalar>() -> TestResult {
    let [xv, yv, zv] = special_value_operands();
    let n = xv.len();
    let t = |v: &[c64]| {
        let cast: Vec<T> = v.iter().map(|&z| T::cast_from(z)).collect();
        on::<D>(Tensor::from_slice(&cast, &[v.len()]).unwrap())
    };
    let (x, y, z) = (t(&xv), t(&yv), t(&zv));
    // The textbook product, NumPy's: no special cases.
    fn prod(a: c64, b: c64) -> c64 {
        c64::new(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re)
    }
    fn real(s: f64, a: c64) -> c64 {
        c64::new(s * a.re, s * a.im)
    }
    fn plus(a: c64, b: c64) -> c64 {
        c64::new(a.re + b.re, a.im + b.im)
    }
    let mut in_place = x.try_clone()?;
    in_place.add_(&y)?;
    let mut into = x.try_clone()?;
    x.sub_into(&y, &mut into)?;
    type Case<'a> = (&'a str, Tensor, fn(c64, c64, c64) -> c64);
    let cases: Vec<Case> = vec![
        ("add", (&x + &y)?, |a, b, _| plus(a, b)),
        ("add_", in_place, |a, b, _| plus(a, b)),
        ("sub", (&x - &y)?, |a, b, _| {
            c64::new(a.re - b.re, a.im - b.im)
        }),
        ("sub_into", into, |a, b, _| {
            c64::new(a.re - b.re, a.im - b.im)
        }),
        ("mul", (&x * &y)?, |a, b, _| prod(a, b)),
        (
            "add_scaled(2, -3)",
            x.add_scaled(2.0, &y, -3.0)?,
            |a, b, _| plus(real(2.0, a), real(-3.0, b)),
        ),
        ("mul_scalar(2)", x.mul_scalar(2.0)?, |a, _, _| real(2.0, a)),
        ("fma(1, 1)", x.fma(&y, &z, 1.0, 1.0)?, |a, b, c| {
            plus(prod(a, b), c)
        }),
        ("add_scalar(2)", x.add_scalar(2.0)?, |a, _, _| {
            plus(a, c64::new(2.0, 0.0))
        }),
    ];
    for (name, got, want) in cases {
        let g = c64s(&got)?;
        assert_eq!(g.len(), n, "{name}");
        for k in 0..n {
            let w = c(T::cast_from(want(xv[k], yv[k], zv[k])));
            assert!(
                same_part(g[k].re, w.re) && same_part(g[k].im, w.im),
                "{} {name}({}, {}, {}): got {}, want {w}",
                T::DTYPE,
                xv[k],
                yv[k],
                zv[k],
                g[k]
            );
        }
    }
    Ok(())
}

device_test!(complex_ops_with_infinite_nan_and_signed_zero_parts_match_part_by_part, D -> Result {
    nonfinite_complex_case::<D, ctensor_aten::c32>()?;
    nonfinite_complex_case::<D, c64>()?;
    Ok(())
});

/// Complex division over the whole exponent range: `x·2^kx / (y·2^ky)` for parts of `x`
/// and `y` in [-1, 1) against the quotient of the unscaled parts (in f64, where it is far
/// from overflow) times `2^(kx − ky)`, for every pair of scales whose quotient is normal.
/// The textbook `x·conj(y) / |y|²` gave 0 or infinity for `|y|` beyond `1.3e154` or under
/// `1.5e-154` (c64; `1.8e19` and `1.1e-19` for c32) with a finite quotient. Then division
/// by zero and by a real divisor with infinite parts, in closed form.
fn division_range_case<D: Device, T: Scalar>(ks: &[i32], max_k: i32) -> TestResult {
    let mut r = rng(75);
    let n = 300;
    let (_, xv) = random_tensor::<c64>(&mut r, &[n]);
    let (_, yv) = random_tensor::<c64>(&mut r, &[n]);
    let tol = 8.0 * eps(T::DTYPE);
    for &kx in ks {
        for &ky in ks {
            if (kx - ky).abs() > max_k {
                continue;
            }
            let (sx, sy) = (2f64.powi(kx), 2f64.powi(ky));
            let xs: Vec<T> = xv.iter().map(|&v| T::cast_from(v * sx)).collect();
            let ys: Vec<T> = yv.iter().map(|&v| T::cast_from(v * sy)).collect();
            let x = on::<D>(Tensor::from_slice(&xs, &[n])?);
            let y = on::<D>(Tensor::from_slice(&ys, &[n])?);
            let got = c64s(&(&x / &y)?)?;
            for i in 0..n {
                // The stored inputs, unscaled exactly (powers of two), divided where
                // nothing overflows, and scaled back.
                let (a, b) = (c(xs[i]) / sx, c(ys[i]) / sy);
                let d = b.re * b.re + b.im * b.im;
                let q = c64::new(a.re * b.re + a.im * b.im, a.im * b.re - a.re * b.im) / d;
                let want = q * 2f64.powi(kx - ky);
                assert!(
                    (got[i] - want).norm() <= tol * want.norm(),
                    "{} x·2^{kx} / y·2^{ky} at {i}: got {}, want {want}",
                    T::DTYPE,
                    got[i]
                );
            }
        }
    }
    let inf = f64::INFINITY;
    let t = |v: &[c64]| {
        let cast: Vec<T> = v.iter().map(|&z| T::cast_from(z)).collect();
        on::<D>(Tensor::from_slice(&cast, &[v.len()]).unwrap())
    };
    let num = t(&[
        c64::new(1.0, 2.0),
        c64::new(-1.0, 0.0),
        c64::new(0.0, inf),
        c64::new(3.0, -inf),
    ]);
    let den = t(&[
        c64::new(0.0, 0.0),
        c64::new(0.0, 0.0),
        c64::new(2.0, 0.0),
        c64::new(-0.5, 0.0),
    ]);
    let got = c64s(&(&num / &den)?)?;
    let want = [
        c64::new(inf, inf),
        c64::new(-inf, f64::NAN),
        c64::new(0.0, inf),
        c64::new(-6.0, inf),
    ];
    for (g, w) in got.iter().zip(&want) {
        assert!(
            same_part(g.re, w.re) && same_part(g.im, w.im),
            "{}: got {g}, want {w}",
            T::DTYPE
        );
    }
    Ok(())
}

device_test!(complex_division_is_right_across_the_exponent_range_and_at_zero, D -> Result {
    division_range_case::<D, ctensor_aten::c32>(
        &[-120, -80, -66, -64, -40, 0, 40, 64, 66, 80, 120],
        100,
    )?;
    division_range_case::<D, c64>(
        &[-1000, -600, -515, -512, -300, -100, 0, 100, 300, 512, 515, 600, 1000],
        1000,
    )?;
    Ok(())
});

device_test!(ops_read_views_and_fortran_maps_and_write_in_place, D -> Result {
    let mut r = rng(72);
    let (a, av) = random_on::<D, f64>(&mut r, &[5, 7]);
    // A transposed view and a column-major map of the same logical 7 × 5 matrix.
    let at_view = a.t()?;
    // row-major a == column-major aᵀ: map a device copy of it as a Fortran array.
    let (fortran, mut map) = fortran_map::<D, f64>(&av, &[7, 5]);
    let sum = (&at_view + &*map)?;
    for i in 0..7 {
        for j in 0..5 {
            assert_eq!(sum.get_value::<f64>(&[i, j])?, 2.0 * av[j * 7 + i]);
        }
    }
    // In place into the map: the owner's memory changes, in its own layout.
    map.mul_(&at_view)?;
    drop(map);
    let fortran = fortran.to_vec::<f64>()?;
    for k in 0..35 {
        assert_eq!(fortran[k], av[k] * av[k]);
    }
    // a += a, a -= a[0] (broadcast row), a *= a, all in place on one buffer.
    let mut b = on::<D>(Tensor::from_slice(&av, &[5, 7])?);
    let alias = b.share();
    b.add_(&alias)?;
    assert_eq!(
        b.to_vec::<f64>()?,
        av.iter().map(|x| 2.0 * x).collect::<Vec<_>>()
    );
    let row0 = b.index(0)?;
    b.sub_(&row0)?;
    for i in 0..5 {
        for j in 0..7 {
            assert_eq!(
                b.get_value::<f64>(&[i, j])?,
                2.0 * (av[i * 7 + j] - av[j])
            );
        }
    }
    // In place on a strided view writes only the view.
    let c = on::<D>(Tensor::from_slice(&av, &[5, 7])?);
    let mut col = c.t()?.index(2)?; // column 2, stride 7
    col.scale_(-1.0)?;
    for i in 0..5 {
        for j in 0..7 {
            let want = if j == 2 {
                -av[i * 7 + j]
            } else {
                av[i * 7 + j]
            };
            assert_eq!(c.get_value::<f64>(&[i, j])?, want);
        }
    }
    // A target that would need to grow is an error, not a resize.
    let small = Tensor::zeros(DataType::Double, D::TYPE, &[7])?;
    let mut row = small.share();
    let e = row.add_(&a).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    Ok(())
});

device_test!(unary_ops_match_loops_and_reject_what_has_no_meaning, D -> Result {
    let v = [c64::new(1.0, 2.0), c64::new(-3.0, 0.5), c64::new(0.0, -1.0)];
    let t = on::<D>(Tensor::from_slice(&v, &[3])?);
    let (neg, sq, ex, ab) = (
        c64s(&(-&t)?)?,
        c64s(&t.sqrt()?)?,
        c64s(&t.exp()?)?,
        t.abs()?,
    );
    assert_eq!(ab.dtype(), DataType::Double);
    let ab = ab.to_vec::<f64>()?;
    for i in 0..3 {
        assert_eq!(neg[i], -v[i]);
        assert!((sq[i] - v[i].sqrt()).norm() < 1e-15);
        assert!((ex[i] - v[i].exp()).norm() < 1e-14 * v[i].exp().norm());
        assert!((ab[i] - v[i].norm()).abs() < 1e-15);
    }
    let ints = on::<D>(Tensor::from_slice(&[-2i32, 5], &[2])?);
    assert_eq!(ints.abs()?.to_vec::<i32>()?, [2, 5]);
    assert_eq!(ints.neg()?.to_vec::<i32>()?, [2, -5]);
    // sqrt and exp of integers are computed in f64, as every other function that
    // integers do not take (NumPy's rule); in place they stay integer and are refused.
    let r = ints.sqrt()?;
    assert_eq!(r.dtype(), DataType::Double);
    let r = r.to_vec::<f64>()?;
    assert!(r[0].is_nan() && r[1] == 5f64.sqrt(), "{r:?}");
    assert_eq!(ints.exp()?.to_vec::<f64>()?, [(-2f64).exp(), 5f64.exp()]);
    assert!(matches!(
        ints.share().math_(ctensor_aten::MathOp::Sqrt).unwrap_err(),
        Error::UnsupportedDType { op: "sqrt", .. }
    ));
    assert!(matches!(
        ints.mean(&[0]).unwrap_err(),
        Error::UnsupportedDType { .. }
    ));
    let z = on::<D>(Tensor::from_slice(&[0i32, 1], &[2])?);
    assert!(
        ints.div(&z).is_err(),
        "integer division by zero is an error"
    );
    // An integer number keeps the integer type; a floating one lifts it to f64 (NEP 50).
    assert_eq!(
        ints.mul_scalar(3)?.to_vec::<i32>()?,
        [-6, 15]
    );
    assert_eq!(
        ints.add_scalar(1)?.to_vec::<i32>()?,
        [-1, 6]
    );
    assert_eq!(
        ints.mul_scalar(0.5)?.to_vec::<f64>()?,
        [-1.0, 2.5]
    );
    let f = on::<D>(Tensor::from_slice(&[1.0f32, 4.0], &[2])?);
    assert_eq!(
        f.div_scalar(2.0)?.to_vec::<f32>()?,
        [0.5, 2.0]
    );
    assert_eq!(
        f.sub_scalar(1.0)?.to_vec::<f32>()?,
        [0.0, 3.0]
    );
    let g = f.fma(&f, &f, 2.0, -1.0)?; // 2·f·f − f
    assert_eq!(g.to_vec::<f32>()?, [1.0, 28.0]);
    // Mixed types promote (f32 with f64 is f64); tests/promotion.rs checks every pair.
    let p = (&f + &Tensor::zeros(DataType::Double, D::TYPE, &[2])?)?;
    assert_eq!(p.dtype(), DataType::Double);
    let e = (&f + &Tensor::zeros(DataType::Float, D::TYPE, &[3])?).unwrap_err();
    assert!(e.to_string().contains("broadcast"), "{e}");
    Ok(())
});

fn reduce_case<D: Device, T: Scalar>() -> TestResult {
    let mut r = rng(73);
    for shape in [&[4usize, 5, 6][..], &[1, 257], &[3, 0]] {
        let (t, v) = random_on::<D, T>(&mut r, shape);
        let vc: Vec<c64> = v.iter().map(|&x| c(x)).collect();
        let nd = shape.len();
        let axes_sets: Vec<Vec<usize>> = (0..(1 << nd))
            .map(|m| (0..nd).filter(|d| m >> d & 1 == 1).collect())
            .collect();
        for axes in axes_sets {
            let kept: Vec<usize> = (0..nd).filter(|d| !axes.contains(d)).collect();
            let out_dims: Vec<usize> = kept.iter().map(|&d| shape[d]).collect();
            let sum = t.sum(&axes)?;
            assert_eq!(sum.dims(), out_dims);
            let got = c64s(&sum)?;
            let mut want = vec![c64::new(0.0, 0.0); out_dims.iter().product()];
            let mut mag = vec![0.0; want.len()];
            let mut maxv = vec![f64::MIN; want.len()];
            for idx in all_indices(shape) {
                let o = flat(&out_dims, &kept.iter().map(|&d| idx[d]).collect::<Vec<_>>());
                let x = vc[flat(shape, &idx)];
                want[o] += x;
                mag[o] += x.norm();
                maxv[o] = maxv[o].max(x.re);
            }
            for k in 0..want.len() {
                let acc = if matches!(T::DTYPE, DataType::Half | DataType::BFloat16) {
                    f32::EPSILON as f64
                } else {
                    eps(T::DTYPE)
                };
                let tol = (shape.iter().product::<usize>() as f64 + 1.0) * acc * mag[k]
                    + eps(T::DTYPE) * want[k].norm();
                assert!(
                    (got[k] - want[k]).norm() <= tol,
                    "{} sum {shape:?} axes {axes:?}",
                    T::DTYPE
                );
            }
            if !T::DTYPE.is_complex() && !shape.contains(&0) {
                let got = c64s(&t.max(&axes)?)?;
                for k in 0..want.len() {
                    assert_eq!(
                        got[k].re,
                        maxv[k],
                        "{} max {shape:?} axes {axes:?}",
                        T::DTYPE
                    );
                }
            }
        }
    }
    Ok(())
}

device_test!(sum_and_max_over_every_axis_set_match_loops_for_every_dtype, D -> Result {
    reduce_case::<D, f32>()?;
    reduce_case::<D, f64>()?;
    reduce_case::<D, i32>()?;
    reduce_case::<D, i64>()?;
    reduce_case::<D, ctensor_aten::c32>()?;
    reduce_case::<D, c64>()?;
    reduce_case::<D, ctensor_aten::f16>()?;
    reduce_case::<D, ctensor_aten::bf16>()?;
    Ok(())
});

device_test!(mean_min_norm_dot_vdot_and_layout_ops, D -> Result {
    let x = on::<D>(Tensor::from_slice(&[1.0f64, -2.0, 3.0, 4.0, 5.0, -6.0], &[2, 3])?);
    assert_eq!(
        x.mean(&[1])?.to_vec::<f64>()?,
        [2.0 / 3.0, 1.0]
    );
    assert_eq!(
        x.min(&[0])?.to_vec::<f64>()?,
        [1.0, -2.0, -6.0]
    );
    assert_eq!(x.sum_all()?.to_vec::<f64>()?, [5.0]);
    assert!((x.norm()? - 91f64.sqrt()).abs() < 1e-14);
    assert!((x.t()?.norm()? - 91f64.sqrt()).abs() < 1e-14);
    let i = on::<D>(Tensor::from_slice(&[3i32, 4], &[2])?);
    assert_eq!(i.norm()?, 5.0);
    let z = on::<D>(Tensor::from_slice(&[c64::new(0.0, 1.0), c64::new(2.0, 0.0)], &[2])?);
    let w = on::<D>(Tensor::from_slice(&[c64::new(1.0, 0.0), c64::new(0.0, 3.0)], &[2])?);
    assert_eq!(
        z.vdot(&w)?.to_vec::<c64>()?,
        [c64::new(0.0, 5.0)]
    );
    assert_eq!(
        z.dot(&w)?.to_vec::<c64>()?,
        [c64::new(0.0, 7.0)]
    );
    let zi = on::<D>(Tensor::from_slice(&[2i64, 3], &[2])?);
    assert_eq!(zi.dot(&zi)?.to_vec::<i64>()?, [13]);
    assert!(z.max(&[0]).is_err(), "complex numbers have no order");
    // permute_copy with conjugation, stride and inflate.
    let m = on::<D>(Tensor::from_slice(
        &[
            c64::new(1.0, 1.0),
            c64::new(2.0, -1.0),
            c64::new(3.0, 0.5),
            c64::new(4.0, 2.0),
        ],
        &[2, 2],
    )?);
    let h = m.permute_copy(&[1, 0], true)?;
    assert!(h.is_contiguous());
    assert_eq!(h.get_value::<c64>(&[0, 1])?, c64::new(3.0, -0.5));
    let s = Tensor::arange(DataType::Int, D::TYPE, 0.0, 12.0, 1.0)
        ?
        .reshape(&[3, 4])
        ?;
    let st = s.stride(&[2, 3])?;
    assert_eq!(st.dims(), [2, 2]);
    assert_eq!(st.to_vec::<i32>()?, [0, 3, 8, 11]);
    let back = st.inflate(&[2, 3], &[3, 4])?;
    assert_eq!(
        back.to_vec::<i32>()?,
        [0, 0, 0, 3, 0, 0, 0, 0, 8, 0, 0, 11]
    );
    let e = x.sum(&[2]).unwrap_err();
    assert!(matches!(e, Error::OutOfRange { .. }), "{e}");
    let e = x.sum(&[1, 1]).unwrap_err();
    assert!(matches!(e, Error::OutOfRange { .. }), "{e}");
    Ok(())
});

/// The deprecated `eq_scalar`: `equal_scalar`'s mask in the tensor's dtype.
#[allow(deprecated)]
fn eq_scalar(t: &Tensor, s: impl Into<c64>) -> ctensor_aten::Result<Tensor> {
    t.eq_scalar(s)
}

device_test!(eq_scalar_marks_equal_elements_for_every_kind_of_dtype, D -> Result {
    let x = on::<D>(Tensor::from_slice(&[3.0f64, 8.0, f64::NAN, 3.0], &[2, 2])?);
    assert_eq!(
        eq_scalar(&x, 3.0)?.to_vec::<f64>()?,
        [1.0, 0.0, 0.0, 1.0]
    );
    let i = on::<D>(Tensor::from_slice(&[11i64, 4, 11], &[3])?);
    assert_eq!(
        eq_scalar(&i, 11.0)?.to_vec::<i64>()?,
        [1, 0, 1]
    );
    let z = on::<D>(Tensor::from_slice(&[c64::new(1.0, 1.0), c64::new(1.0, 0.0)], &[2])?);
    assert_eq!(
        eq_scalar(&z, c64::new(1.0, 1.0))
            ?
            .to_vec::<c64>()
            ?,
        [c64::new(1.0, 0.0), c64::new(0.0, 0.0)]
    );
    let t = x.t()?;
    assert_eq!(
        eq_scalar(&t, 8.0)?.to_vec::<f64>()?,
        [0.0, 0.0, 1.0, 0.0]
    );
    // The number is compared, not cast to the tensor's type: no integer equals 11.5.
    assert_eq!(eq_scalar(&i, 11.5)?.to_vec::<i64>()?, [0, 0, 0]);
    Ok(())
});

/// A tensor of `shape` whose memory is in the axis order `perm` (dense, not row-major
/// unless `perm` is the identity), holding the values of the row-major `vals`.
fn dense_in_order<D: ctensor_aten::Device>(vals: &Tensor, perm: &[usize]) -> Fallible<Tensor> {
    let physical = vals.permute(perm)?.contiguous()?;
    let mut inverse = vec![0; perm.len()];
    for (k, &p) in perm.iter().enumerate() {
        inverse[p] = k;
    }
    Ok(on::<D>(physical).permute(&inverse)?)
}

device_test!(in_place_ops_on_outputs_dense_in_another_axis_order, D -> Result {
    // Outputs in column-major and other axis orders are written where they lie; each
    // result is checked element by element against the same op on row-major copies,
    // with operands in the same order, in row-major order, broadcast, and aliasing
    // the output through another view of its memory.
    let mut r = rng(91);
    for dtype in [DataType::Double, DataType::ComplexDouble, DataType::Int] {
        for (shape, perm) in [
            (vec![7, 5], vec![1, 0]),
            (vec![6, 6], vec![1, 0]),
            (vec![1, 9], vec![1, 0]),
            (vec![3, 4, 5], vec![2, 0, 1]),
            (vec![3, 4, 5], vec![1, 2, 0]),
            (vec![0, 300], vec![1, 0]),
        ] {
            let n: usize = shape.iter().product();
            let rand = |r: &mut _| -> Fallible<Tensor> {
                let (t, _) = random_tensor::<f64>(r, &shape);
                Ok(t.mul_scalar(10.0)?.cast(dtype)?)
            };
            let (a, b) = (rand(&mut r)?, rand(&mut r)?);
            let last = *shape.last().unwrap();
            let row = Tensor::arange(dtype, DeviceType::Cpu, 1.0, last as f64 + 1.0, 1.0)?;
            let square = shape[0] == shape[1] && shape.len() == 2;
            for case in 0..5 {
                if case == 4 && !square {
                    continue;
                }
                let mut out = dense_in_order::<D>(&a, &perm)?;
                assert!(n == 0 || shape.contains(&1) || !out.is_contiguous());
                let want = match case {
                    0 => {
                        out.add_(&dense_in_order::<D>(&b, &perm)?)?;
                        a.add(&b)?
                    }
                    1 => {
                        out.mul_(&on::<D>(b.clone()))?;
                        a.mul(&b)?
                    }
                    2 => {
                        out.sub_(&on::<D>(row.clone()))?;
                        a.sub(&row)?
                    }
                    3 => {
                        let same = out.share();
                        out.mul_(&same)?;
                        a.mul(&a)?
                    }
                    _ => {
                        // out += outᵀ: the operand reads what the op writes.
                        let alias = out.t()?;
                        out.add_(&alias)?;
                        a.add(&a.t()?)?
                    }
                };
                assert_eq!(out.dims(), &shape[..]);
                let got = out.to_device(DeviceType::Cpu)?.cast(DataType::ComplexDouble)?;
                let want = want.cast(DataType::ComplexDouble)?;
                assert_eq!(
                    got.contiguous()?.to_vec::<c64>()?,
                    want.contiguous()?.to_vec::<c64>()?,
                    "{dtype:?} {shape:?} {perm:?} case {case}"
                );
            }
        }
    }
    Ok(())
});

device_test!(broadcast_operands_of_large_outputs_give_the_plain_loop_values, D -> Result {
    // Outputs above the slab size (2^19 elements), whose broadcast operands are made
    // dense one slab of rows at a time on the host: every element against a plain loop,
    // for a column, a row, a scalar-like [1, 1], three operands (fma), a comparison
    // (i32 mask output), a row count that is not a multiple of the slab, a 3-D output,
    // and a column-major output.
    let mut r = rng(93);
    let (m, n) = (1201, 487);
    let (x, xv) = random_on::<D, f64>(&mut r, &[m, n]);
    let (col, cv) = random_on::<D, f64>(&mut r, &[m, 1]);
    let (row, rv) = random_on::<D, f64>(&mut r, &[n]);
    let (one, ov) = random_on::<D, f64>(&mut r, &[1, 1]);
    let check = |got: &Tensor, f: &dyn Fn(usize, usize) -> f64, what: &str| -> Fallible<()> {
        let g = got.to_device(DeviceType::Cpu)?.cast(DataType::Double)?.contiguous()?.to_vec::<f64>()?;
        for i in 0..m {
            for j in 0..n {
                assert_eq!(g[i * n + j], f(i, j), "{what} at ({i}, {j})");
            }
        }
        Ok(())
    };
    check(&x.mul(&col)?, &|i, j| xv[i * n + j] * cv[i], "x * column")?;
    check(&x.sub(&row)?, &|i, j| xv[i * n + j] - rv[j], "x - row")?;
    check(&col.add(&row)?, &|i, j| cv[i] + rv[j], "column + row")?;
    check(&x.div(&one)?, &|i, j| xv[i * n + j] / ov[0], "x / [1, 1]")?;
    check(
        &x.fma(&col, &row, 2.0, -1.0)?,
        &|i, j| 2.0 * (xv[i * n + j] * cv[i]) - rv[j],
        "fma",
    )?;
    check(&x.lt(&col)?, &|i, j| f64::from(xv[i * n + j] < cv[i]), "x < column")?;
    let mut y = x.clone();
    y.mul_(&col)?;
    check(&y, &|i, j| xv[i * n + j] * cv[i], "x *= column")?;
    let mut z = on::<D>(x.to_device(DeviceType::Cpu)?.t()?.contiguous()?).t()?;
    z.sub_(&row)?;
    check(&z, &|i, j| xv[i * n + j] - rv[j], "column-major x -= row")?;
    // Promotion read slab by slab: complex / real of the full shape, real * integer
    // column, integer - real row.
    let (y, yv) = random_on::<D, f64>(&mut r, &[m, n]);
    let xc = x.cast(DataType::ComplexDouble)?.mul_scalar(c64::new(0.5, 2.0))?;
    let q = xc.div(&y)?.to_device(DeviceType::Cpu)?.contiguous()?.to_vec::<c64>()?;
    for (k, z) in q.iter().enumerate() {
        assert_eq!(*z, xv[k] * c64::new(0.5, 2.0) / yv[k], "complex / real at {k}");
    }
    let icol = col.mul_scalar(100.0)?.cast(DataType::Int)?;
    let iv = icol.to_device(DeviceType::Cpu)?.to_vec::<i32>()?;
    check(&x.mul(&icol)?, &|i, j| xv[i * n + j] * f64::from(iv[i]), "x * int column")?;
    check(&icol.sub(&row)?, &|i, j| f64::from(iv[i]) - rv[j], "int column - row")?;
    // 3-D: [3, m, n] minus an [m, 1] column.
    let x3 = x.unsqueeze(0)?.broadcast_to(&[3, m, n])?.contiguous()?;
    let d3 = x3.sub(&col)?;
    for k in 0..3 {
        check(&d3.index(k)?, &|i, j| xv[i * n + j] - cv[i], "3-D x - column")?;
    }
    Ok(())
});

device_test!(large_strided_outputs_computed_by_slabs_give_the_plain_loop_values, D -> Result {
    // Outputs above the slab size (2^19 elements) that are dense in no axis order — a
    // window of columns of a wider block, a window of a 3-D block in its middle axis —
    // go a slab along their outermost axis at a time: every element against a plain
    // loop, in place and into the window, with a broadcast column and row, a strided
    // operand, promotion (an i32 mask into f64), an operand that
    // overlaps the output other than as itself (computed whole, as before), and the
    // block's other columns left as they were (NaN).
    let mut r = rng(97);
    let (m, n, wide) = (1201, 487, 500);
    let (x, xv) = random_on::<D, f64>(&mut r, &[m, n]);
    let (col, cv) = random_on::<D, f64>(&mut r, &[m, 1]);
    let (row, rv) = random_on::<D, f64>(&mut r, &[n]);
    let nan = |dims: &[usize]| -> Fallible<Tensor> {
        Ok(on::<D>(Tensor::full(f64::NAN, DeviceType::Cpu, dims)?))
    };
    let window = |block: &Tensor| -> Fallible<Tensor> {
        let w = block.narrow(1, 5, n)?;
        assert!(!w.is_contiguous() && w.numel() > 1 << 19);
        Ok(w)
    };
    let check = |got: &Tensor, f: &dyn Fn(usize, usize) -> f64, what: &str| -> Fallible<()> {
        let g = got.to_device(DeviceType::Cpu)?.cast(DataType::Double)?.contiguous()?.to_vec::<f64>()?;
        for i in 0..m {
            for j in 0..n {
                let want = f(i, j);
                assert!(g[i * n + j] == want, "{what} at ({i}, {j}): {} against {want}", g[i * n + j]);
            }
        }
        Ok(())
    };
    let untouched = |block: &Tensor, what: &str| -> Fallible<()> {
        for (start, len) in [(0, 5), (5 + n, wide - 5 - n)] {
            let rest = block.narrow(1, start, len)?.to_device(DeviceType::Cpu)?.contiguous()?.to_vec::<f64>()?;
            assert!(rest.iter().all(|v| v.is_nan()), "{what}: a column outside the window written");
        }
        Ok(())
    };
    // In place: the window holds x, then *= column, -= row, scaled.
    let block = nan(&[m, wide])?;
    let mut w = window(&block)?;
    w.assign(&x)?;
    w.mul_(&col)?;
    w.sub_(&row)?;
    w.scale_(0.5)?;
    check(&w, &|i, j| ((xv[i * n + j] * cv[i]) - rv[j]) * 0.5, "in place")?;
    untouched(&block, "in place")?;
    // Into the window: a strided operand (a column-major copy) times a column.
    let xt = on::<D>(x.to_device(DeviceType::Cpu)?.t()?.contiguous()?).t()?;
    let block = nan(&[m, wide])?;
    xt.mul_into(&col, &mut window(&block)?)?;
    check(&window(&block)?, &|i, j| xv[i * n + j] * cv[i], "strided times column, into")?;
    untouched(&block, "into")?;
    // Promotion: an i32 mask added into the f64 window.
    let block = nan(&[m, wide])?;
    let mut w = window(&block)?;
    w.assign(&x)?;
    w.add_(&x.lt(&col)?)?;
    check(&w, &|i, j| xv[i * n + j] + f64::from(xv[i * n + j] < cv[i]), "mask added")?;
    // An operand overlapping the window one column over: read before anything is
    // written, as when computed whole.
    let block = nan(&[m, wide])?;
    block.narrow(1, 5, n + 1)?.assign(&ctensor_aten::cat(&[&x, &col], 1)?)?;
    let mut w = window(&block)?;
    let shifted = block.narrow(1, 6, n)?;
    w.add_(&shifted)?;
    let next = |i: usize, j: usize| if j + 1 < n { xv[i * n + j + 1] } else { cv[i] };
    check(&w, &|i, j| xv[i * n + j] + next(i, j), "overlapping operand")?;
    // 3-D: a window [3, m', n'] of a [3, wide, n'] block in its middle axis, minus a row.
    let (m3, n3) = (700, 300);
    let (y, yv) = random_on::<D, f64>(&mut r, &[3, m3, n3]);
    let (row3, r3) = random_on::<D, f64>(&mut r, &[n3]);
    let block3 = nan(&[3, m3 + 9, n3])?;
    let mut w3 = block3.narrow(1, 4, m3)?;
    assert!(!w3.is_contiguous() && w3.numel() > 1 << 19);
    w3.assign(&y)?;
    w3.sub_(&row3)?;
    let g = w3.to_device(DeviceType::Cpu)?.contiguous()?.to_vec::<f64>()?;
    for (k, v) in g.iter().enumerate() {
        assert!(*v == yv[k] - r3[k % n3], "3-D window at {k}");
    }
    Ok(())
});

/// Broadcast and row-strided operands read block by block on the host (2048 elements a
/// block; a broadcast row copied once per period): every element against a plain loop,
/// for one dtype, with shapes whose rows are shorter than a block (a column read in runs
/// of 3) and longer than one (a row of 2100), outputs that are not a whole number of
/// blocks, operands of which none is dense, a view of rows of a wider block, three
/// operands, and the real-only kinds (masks, maximum, NaN classes) on real types.
fn blocked_case<D: Device, T: Scalar>() -> TestResult {
    let mut r = rng(101);
    for (rows, m) in [(1501usize, 3usize), (3, 2100), (1, 1), (700, 1)] {
        let (a, av) = random_on::<D, T>(&mut r, &[rows, m]);
        // No zero divisors: a real x / 0 is ±inf where the complex reference gives NaN.
        let (_, mut cv) = random_on::<D, T>(&mut r, &[rows, 1]);
        for v in cv.iter_mut().filter(|v| c(**v).norm() == 0.0) {
            *v = T::one();
        }
        let col = on::<D>(Tensor::from_slice(&cv, &[rows, 1])?);
        let (row, rv) = random_on::<D, T>(&mut r, &[m]);
        let (wide, wv) = random_on::<D, T>(&mut r, &[rows, m + 3]);
        let view = wide.narrow(1, 2, m)?;
        let (ta, tcol, trow) = (a, col, row);
        let x = |i: usize, j: usize| c(av[i * m + j]);
        let cl = |i: usize| c(cv[i]);
        let rw = |j: usize| c(rv[j]);
        let vw = |i: usize, j: usize| c(wv[i * (m + 3) + 2 + j]);
        let b = |v: bool| c64::new(f64::from(u8::from(v)), 0.0);
        type F<'a> = Box<dyn Fn(usize, usize) -> c64 + 'a>;
        let mut cases: Vec<(&str, Tensor, F)> = vec![
            (
                "x * column",
                (&ta * &tcol)?,
                Box::new(|i, j| x(i, j) * cl(i)),
            ),
            ("x + row", (&ta + &trow)?, Box::new(|i, j| x(i, j) + rw(j))),
            (
                "x - view",
                (&ta - &view)?,
                Box::new(|i, j| x(i, j) - vw(i, j)),
            ),
            (
                "view * row",
                (&view * &trow)?,
                Box::new(|i, j| vw(i, j) * rw(j)),
            ),
            (
                "column + row",
                (&tcol + &trow)?,
                Box::new(|i, j| cl(i) + rw(j)),
            ),
            (
                "fma(x, column, row)",
                ta.fma(&tcol, &trow, 2.0, -1.0)?,
                Box::new(|i, j| x(i, j) * cl(i) * 2.0 - rw(j)),
            ),
        ];
        if !T::DTYPE.is_integer() {
            cases.push((
                "x / column",
                (&ta / &tcol)?,
                Box::new(|i, j| x(i, j) / cl(i)),
            ));
        }
        if !T::DTYPE.is_complex() {
            cases.push((
                "x < column",
                ta.lt(&tcol)?,
                Box::new(|i, j| b(x(i, j).re < cl(i).re)),
            ));
            cases.push((
                "maximum(view, column)",
                view.maximum(&tcol)?,
                Box::new(|i, j| {
                    if vw(i, j).re >= cl(i).re {
                        vw(i, j)
                    } else {
                        cl(i)
                    }
                }),
            ));
        }
        for (what, got, f) in cases {
            assert_eq!(got.dims(), &[rows, m], "{what}");
            let g = c64s(&got.to_device(DeviceType::Cpu)?)?;
            for i in 0..rows {
                for j in 0..m {
                    let want = c(T::cast_from(f(i, j)));
                    let what = format!("{} {what} [{rows}, {m}] at ({i}, {j})", T::DTYPE);
                    close(g[i * m + j], want, T::DTYPE, &what);
                }
            }
        }
        // In place and into an existing output, with a broadcast operand.
        let mut y = ta.clone();
        y.mul_(&tcol)?;
        let mut z = on::<D>(Tensor::zeros(T::DTYPE, DeviceType::Cpu, &[rows, m])?);
        view.add_into(&trow, &mut z)?;
        let (gy, gz) = (
            c64s(&y.to_device(DeviceType::Cpu)?)?,
            c64s(&z.to_device(DeviceType::Cpu)?)?,
        );
        for i in 0..rows {
            for j in 0..m {
                let at = format!("{} [{rows}, {m}] at ({i}, {j})", T::DTYPE);
                close(
                    gy[i * m + j],
                    c(T::cast_from(x(i, j) * cl(i))),
                    T::DTYPE,
                    &format!("x *= column {at}"),
                );
                close(
                    gz[i * m + j],
                    c(T::cast_from(vw(i, j) + rw(j))),
                    T::DTYPE,
                    &format!("view + row into {at}"),
                );
            }
        }
    }
    Ok(())
}

device_test!(blocked_broadcast_operands_match_loops_for_every_dtype, D -> Result {
    blocked_case::<D, f32>()?;
    blocked_case::<D, f64>()?;
    blocked_case::<D, i32>()?;
    blocked_case::<D, i64>()?;
    blocked_case::<D, ctensor_aten::c32>()?;
    blocked_case::<D, c64>()?;
    blocked_case::<D, ctensor_aten::f16>()?;
    blocked_case::<D, ctensor_aten::bf16>()?;
    Ok(())
});

device_test!(nan_in_broadcast_operands_and_integer_division_by_a_broadcast_zero, D -> Result {
    // NaN and infinities reach the kernel unchanged through the block copies.
    let col = on::<D>(Tensor::from_slice(&[f64::NAN, f64::INFINITY, -0.0, 1.5], &[4, 1])?);
    let x = on::<D>(Tensor::from_slice(&(0..4 * 900).map(f64::from).collect::<Vec<_>>(), &[4, 900])?);
    let p = x.mul(&col)?.to_device(DeviceType::Cpu)?.to_vec::<f64>()?;
    let n = x.isnan()?.add(&col.isnan()?)?.to_device(DeviceType::Cpu)?.to_vec::<i32>()?;
    for j in 0..900 {
        let v = j as f64;
        assert!(p[j].is_nan() && n[j] == 1, "NaN row at {j}");
        assert_eq!(p[900 + j], (900.0 + v) * f64::INFINITY, "inf row at {j}");
        assert_eq!(p[1800 + j].to_bits(), ((1800.0 + v) * -0.0f64).to_bits(), "-0 row at {j}");
        assert_eq!(p[2700 + j], (2700.0 + v) * 1.5, "last row at {j}");
        assert_eq!(n[900 + j] + n[1800 + j] + n[2700 + j], 0, "no NaN at {j}");
    }
    // Zero elements with a huge other dimension, against a broadcast [1, 1] and a view
    // of no columns: nothing is read, the shapes come out.
    let e = on::<D>(Tensor::zeros(DataType::Double, DeviceType::Cpu, &[0, 1 << 40])?);
    let s = on::<D>(Tensor::from_slice(&[2.0], &[1, 1])?);
    assert_eq!(e.mul(&s)?.dims(), [0, 1 << 40]);
    assert_eq!(s.sub(&e)?.dims(), [0, 1 << 40]);
    let none = x.narrow(1, 7, 0)?;
    assert_eq!(none.add(&col)?.dims(), [4, 0]);
    // A kernel's error from inside the blocks comes out whole, under the op's name:
    // complex numbers have no order, also against a broadcast column.
    let zc = x.cast(DataType::ComplexDouble)?;
    let cc = col.cast(DataType::ComplexDouble)?;
    let e = zc.maximum(&cc).unwrap_err();
    assert!(matches!(e, Error::UnsupportedDType { op: "maximum", .. }), "{e}");
    // Integer division by a broadcast column with one zero far down: an error naming the
    // zero divisor, and the in-place target left as it was (nothing written, not even
    // the rows before the zero).
    let rows = 3000;
    let mut cv: Vec<i32> = (0..rows as i32).map(|i| i % 7 + 1).collect();
    cv[rows - 5] = 0;
    let icol = on::<D>(Tensor::from_slice(&cv, &[rows, 1])?);
    let av: Vec<i32> = (0..rows as i32 * 40).collect();
    let mut a = on::<D>(Tensor::from_slice(&av, &[rows, 40])?);
    let e = a.div_(&icol).unwrap_err();
    assert!(e.to_string().contains("non-zero divisors"), "{e}");
    assert_eq!(a.to_device(DeviceType::Cpu)?.to_vec::<i32>()?, av, "div_ wrote before the error");
    Ok(())
});
