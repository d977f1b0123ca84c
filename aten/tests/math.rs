//! Element-wise math functions on both devices against independent references:
//! num_complex's implementations for complex arguments (other code than ours), power
//! series near 0 for `log1p`/`expm1`, closed forms (tan's limit ±i, signs, half-to-even
//! rounding), f32 math rounded once for f16/bf16, integers computed in f64, and the
//! functions a type does not have.
#![deny(unused_must_use)]

mod common;

use common::*;
use ctensor_aten::{bf16, c64, f16, DataType, Error, Tensor};
use DataType::*;

/// What a helper that can fail returns.
type Fallible<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn values(t: &Tensor) -> Fallible<Vec<c64>> {
    Ok(t.cast(ComplexDouble)?.to_vec::<c64>()?)
}

type Op = fn(&Tensor) -> ctensor_aten::Result<Tensor>;
/// A reference for complex arguments.
type Reference = fn(c64) -> c64;
/// A reference for real arguments.
type RealReference<'a> = Box<dyn Fn(f64) -> f64 + 'a>;

const OPS: [(&str, Op, Reference); 9] = [
    ("sin", Tensor::sin, |z| z.sin()),
    ("cos", Tensor::cos, |z| z.cos()),
    ("tan", Tensor::tan, |z| z.tan()),
    ("log", Tensor::log, |z| z.ln()),
    ("log1p", Tensor::log1p, |z| (z + 1.0).ln()),
    ("expm1", Tensor::expm1, |z| z.exp() - 1.0),
    ("square", Tensor::square, |z| z * z),
    ("reciprocal", Tensor::reciprocal, |z| z.inv()),
    ("rsqrt", Tensor::rsqrt, |z| z.sqrt().inv()),
];

fn close(got: c64, want: c64, tol: f64, what: &str) {
    let ok =
        (got - want).norm() <= tol * want.norm().max(1.0) || (got.re.is_nan() && want.re.is_nan());
    assert!(ok, "{what}: got {got}, want {want}");
}

device_test!(complex_functions_match_num_complex, D -> Result {
    let pts = [c64::new(0.3, -1.2), c64::new(-2.5, 0.7), c64::new(4.0, 3.0), c64::new(-0.8, -0.1), c64::new(1.7, 0.0)];
    for (dt, tol) in [(ComplexDouble, 1e-14), (ComplexFloat, 2e-6)] {
        let x = on::<D>(Tensor::from_slice(&pts, &[5])?.cast(dt)?);
        let xs = values(&x)?;
        for (name, f, reference) in OPS {
            let got = values(&f(&x)?)?;
            for (k, z) in xs.iter().enumerate() {
                close(got[k], reference(*z), tol, &format!("{dt} {name}({z})"));
            }
        }
        // sign(z) = z / |z|, 0 for 0.
        let s = values(&on::<D>(Tensor::from_slice(&[c64::new(3.0, -4.0), c64::new(0.0, 0.0)], &[2])?.cast(dt)?).sign()?)?;
        close(s[0], c64::new(0.6, -0.8), tol, "sign");
        assert_eq!(s[1], c64::new(0.0, 0.0));
        // No floor, ceiling or rounding for complex numbers.
        assert!(matches!(x.floor().unwrap_err(), Error::UnsupportedDType { op: "floor", .. }));
    }
    Ok(())
});

device_test!(small_and_large_arguments_keep_their_accuracy, D -> Result {
    // Near 0 the series z − z²/2 (log1p) and z + z²/2 (expm1) are exact to f64 here,
    // where ln(1 + z) and exp(z) − 1 would cancel.
    let z = c64::new(1e-9, -3e-10);
    let x = on::<D>(Tensor::from_slice(&[z], &[1])?);
    close(values(&x.log1p()?)?[0], z - z * z * 0.5, 1e-15, "log1p near 0");
    close(values(&x.expm1()?)?[0], z + z * z * 0.5, 1e-15, "expm1 near 0");
    let r = on::<D>(Tensor::from_slice(&[1e-12f64], &[1])?);
    assert!((r.log1p()?.to_vec::<f64>()?[0] - (1e-12 - 5e-25)).abs() < 1e-27);
    // tan(x + iy) → ±i for large |y|, where cosh(2y) overflows.
    let t = values(&on::<D>(Tensor::from_slice(&[c64::new(1.0, 400.0), c64::new(-2.0, -400.0)], &[2])?).tan()?)?;
    close(t[0], c64::new(0.0, 1.0), 1e-15, "tan(1 + 400i)");
    close(t[1], c64::new(0.0, -1.0), 1e-15, "tan(-2 - 400i)");
    Ok(())
});

device_test!(real_functions_for_every_real_dtype, D -> Result {
    let v = [0.5f64, -1.5, 2.5, -0.5, 0.0, -0.0, 3.25, f64::NAN, 7.0];
    for dt in [Double, Float, Half, BFloat16] {
        let x = on::<D>(Tensor::from_slice(&v, &[9])?.cast(dt)?);
        let xs: Vec<f64> = values(&x)?.iter().map(|z| z.re).collect();
        // f16/bf16 compute in f32 and round once; f32 in f32.
        let store = |w: f64| -> f64 {
            match dt {
                Half => f16::from_f64(w).to_f64(),
                BFloat16 => bf16::from_f64(w).to_f64(),
                Float => w as f32 as f64,
                _ => w,
            }
        };
        let in32 = |f: fn(f32) -> f32, a: f64| store(f(a as f32) as f64);
        let checks: [(&str, Op, RealReference<'_>); 6] = [
            ("sin", Tensor::sin, Box::new(move |a| if dt == Double { a.sin() } else { in32(f32::sin, a) })),
            ("round", Tensor::round, Box::new(|a: f64| a.round_ties_even())),
            ("floor", Tensor::floor, Box::new(|a: f64| a.floor())),
            ("ceil", Tensor::ceil, Box::new(|a: f64| a.ceil())),
            ("sign", Tensor::sign, Box::new(|a: f64| if a > 0.0 { 1.0 } else if a < 0.0 { -1.0 } else if a == 0.0 { 0.0 } else { a })),
            ("square", Tensor::square, Box::new(move |a| store(a * a))),
        ];
        for (name, f, want) in checks {
            let got = f(&x)?;
            assert_eq!(got.dtype(), dt);
            for (g, a) in values(&got)?.iter().zip(&xs) {
                let w = want(*a);
                let ok = (g.re - w).abs() <= 4.0 * eps(dt).max(f64::EPSILON) * w.abs().max(1.0)
                    || (g.re.is_nan() && w.is_nan());
                assert!(ok, "{dt} {name}({a}) = {}, want {w}", g.re);
                if *name == *"sign" && *a == 0.0 {
                    assert!(g.re.is_sign_positive(), "sign of either zero is +0, as NumPy's");
                }
            }
        }
    }
    // log of 0 and of a negative number.
    let l = on::<D>(Tensor::from_slice(&[0.0f64, -1.0], &[2])?).log()?.to_vec::<f64>()?;
    assert!(l[0] == f64::NEG_INFINITY && l[1].is_nan());
    Ok(())
});

device_test!(integers_keep_their_type_or_compute_in_f64, D -> Result {
    let i = on::<D>(Tensor::from_slice(&[-3i32, 0, 46341], &[3])?);
    assert_eq!(i.sign()?.to_vec::<i32>()?, [-1, 0, 1]);
    assert_eq!(i.round()?.to_vec::<i32>()?, [-3, 0, 46341]);
    // 46341² wraps in i32, as integer arithmetic does everywhere in ctensor.
    assert_eq!(i.square()?.to_vec::<i32>()?, [9, 0, 46341i32.wrapping_mul(46341)]);
    let s = i.sin()?;
    assert_eq!(s.dtype(), Double);
    assert_eq!(s.to_vec::<f64>()?[0], (-3.0f64).sin());
    let r = on::<D>(Tensor::from_slice(&[4i64], &[1])?).rsqrt()?;
    assert_eq!(r.to_vec::<f64>()?, [0.5]);
    Ok(())
});

// Real powers against f64 `powf` on the same (already rounded) values, rounded once to
// the dtype: random bases of both signs against integer and fractional exponents, C's
// special cases, and broadcasting `[3, 1] ^ [1, 4]`.
device_test!(real_powers_match_powf, D -> Result {
    let mut r = rng(41);
    use rand::Rng;
    let n = 301;
    let base: Vec<f64> = (0..n).map(|_| r.gen_range(-4.0..4.0)).collect();
    let expo: Vec<f64> = (0..n).map(|k| if k % 2 == 0 { r.gen_range(-6i32..7) as f64 } else { r.gen_range(-3.0..3.0) }).collect();
    for dt in [Double, Float, Half, BFloat16] {
        let x = on::<D>(Tensor::from_slice(&base, &[n])?.cast(dt)?);
        let e = on::<D>(Tensor::from_slice(&expo, &[n])?.cast(dt)?);
        let got = x.pow(&e)?;
        assert_eq!(got.dtype(), dt);
        let (xs, es) = (values(&x)?, values(&e)?);
        let want = Tensor::from_slice(&xs.iter().zip(&es).map(|(a, b)| a.re.powf(b.re)).collect::<Vec<_>>(), &[n])?.cast(dt)?;
        // f32/f16/bf16 compute in f32: within an ulp of the dtype of the f64 value.
        let tol = if dt == Double { 1e-15 } else { eps(Float).max(if dt == Float { 0.0 } else { 1.0 / 128.0 }) * 2.0 };
        for (k, (g, w)) in values(&got)?.iter().zip(values(&want)?).enumerate() {
            let ok = g.re == w.re || (g.re - w.re).abs() <= tol * w.re.abs() || (g.re.is_nan() && w.re.is_nan());
            assert!(ok, "{dt} {}^{} = {} (want {})", xs[k].re, es[k].re, g.re, w.re);
        }
    }
    // C's special cases: x^0 = 1 for NaN x, 1^NaN = 1, a negative base to a fraction is
    // NaN, 0^-1 = inf.
    let x = on::<D>(Tensor::from_slice(&[f64::NAN, 1.0, -8.0, 0.0, -0.0], &[5])?);
    let e = on::<D>(Tensor::from_slice(&[0.0, f64::NAN, 1.0 / 3.0, -1.0, -1.0], &[5])?);
    let p = x.pow(&e)?.to_vec::<f64>()?;
    assert_eq!(p[..2], [1.0, 1.0]);
    assert!(p[2].is_nan());
    assert_eq!(p[3..], [f64::INFINITY, f64::NEG_INFINITY]);
    // Broadcasting: [3, 1] ^ [1, 4] is [3, 4].
    let b = on::<D>(Tensor::from_slice(&[1.0f64, 2.0, 3.0], &[3, 1])?);
    let k = on::<D>(Tensor::from_slice(&[0.0f64, 1.0, 2.0, 0.5], &[1, 4])?);
    let t = b.pow(&k)?;
    assert_eq!(t.dims(), [3, 4]);
    let v = t.to_vec::<f64>()?;
    for i in 0..3 {
        for j in 0..4 {
            assert_eq!(v[i * 4 + j], ((i + 1) as f64).powf([0.0, 1.0, 2.0, 0.5][j]));
        }
    }
    // A transposed view is read in its logical order.
    let m = on::<D>(Tensor::from_slice(&base[..12], &[3, 4])?);
    let via_view = m.t()?.pow_scalar(3)?.to_vec::<f64>()?;
    let via_copy = m.t()?.contiguous()?.pow_scalar(3)?.to_vec::<f64>()?;
    assert_eq!(via_view, via_copy);
    Ok(())
});

// Integer powers are exact and wrap (against std's `wrapping_pow`); a negative integer
// exponent is an error naming it, as in NumPy.
device_test!(integer_powers_are_exact_and_refuse_negative_exponents, D -> Result {
    let mut r = rng(43);
    use rand::Rng;
    let n = 257;
    let base: Vec<i64> = (0..n).map(|_| r.gen_range(-40i64..40)).collect();
    let expo: Vec<i64> = (0..n).map(|_| r.gen_range(0i64..45)).collect();
    let x = on::<D>(Tensor::from_slice(&base, &[n])?);
    let e = on::<D>(Tensor::from_slice(&expo, &[n])?);
    let got = x.pow(&e)?.to_vec::<i64>()?;
    for k in 0..n {
        assert_eq!(got[k], base[k].wrapping_pow(expo[k] as u32), "{}^{}", base[k], expo[k]);
    }
    let x32 = x.cast(Int)?;
    let got = x32.pow(&e.cast(Int)?)?;
    assert_eq!(got.dtype(), Int);
    let got = got.to_vec::<i32>()?;
    for k in 0..n {
        assert_eq!(got[k], (base[k] as i32).wrapping_pow(expo[k] as u32), "i32 {}^{}", base[k], expo[k]);
    }
    // Weak promotion: an integer number keeps the type, a real one gives f64.
    assert_eq!(x32.pow_scalar(2)?.dtype(), Int);
    let h = x32.pow_scalar(0.5)?;
    assert_eq!(h.dtype(), Double);
    assert_eq!(h.to_vec::<f64>()?[0], (base[0] as f64).powf(0.5));
    // A negative exponent anywhere is refused, with its value and position.
    let mut bad = expo.clone();
    bad[200] = -3;
    let err = x.pow(&on::<D>(Tensor::from_slice(&bad, &[n])?)).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, Error::InvalidArgument { op: "pow", .. }), "{msg}");
    assert!(msg.contains("-3") && msg.contains("200"), "{msg}");
    assert!(matches!(x32.pow_scalar(-1).unwrap_err(), Error::InvalidArgument { op: "pow_scalar", .. }));
    Ok(())
});

// Complex powers: real integer exponents up to 100 by repeated multiplication (checked
// against products written out), others against num_complex's `powc`; powers of 0.
device_test!(complex_powers, D -> Result {
    let zs = [c64::new(0.3, -1.2), c64::new(-2.5, 0.7), c64::new(1.1, 0.9), c64::new(-0.8, -0.1)];
    for (dt, tol) in [(ComplexDouble, 1e-14), (ComplexFloat, 1e-5)] {
        let x = on::<D>(Tensor::from_slice(&zs, &[4])?.cast(dt)?);
        let xs = values(&x)?;
        for n in [0i32, 1, 2, 3, 7, -1, -2, 100] {
            let got = values(&x.pow_scalar(n)?)?;
            for (k, z) in xs.iter().enumerate() {
                let mut want = c64::new(1.0, 0.0);
                for _ in 0..n.unsigned_abs() {
                    want *= z;
                }
                if n < 0 {
                    want = want.inv();
                }
                if dt == ComplexFloat && want.norm() > f32::MAX as f64 / 4.0 {
                    continue; // overflows c32 on the way (as in NumPy)
                }
                // Repeated products accumulate rounding in the dtype: ~|n| ulps.
                close(got[k], want, tol * (n.unsigned_abs() as f64 + 1.0), &format!("{dt} ({z})^{n}"));
            }
        }
        for w in [c64::new(0.5, 0.0), c64::new(1.5, -2.0), c64::new(-0.7, 0.3), c64::new(101.0, 0.0)] {
            let got = values(&x.pow_scalar(w)?)?;
            for (k, z) in xs.iter().enumerate() {
                if dt == ComplexFloat && z.powc(w).norm() > f32::MAX as f64 / 4.0 {
                    continue; // beyond c32
                }
                close(got[k], z.powc(w), tol * 30.0, &format!("{dt} ({z})^({w})"));
            }
        }
        // Powers of zero: 0^0 = 1, 0^w = 0 for Re w > 0, NaN otherwise.
        let zero = on::<D>(Tensor::from_slice(&[c64::new(0.0, 0.0); 3], &[3])?.cast(dt)?);
        let w = on::<D>(Tensor::from_slice(&[c64::new(0.0, 0.0), c64::new(2.0, 1.0), c64::new(-1.0, 0.5)], &[3])?.cast(dt)?);
        let p = values(&zero.pow(&w)?)?;
        assert_eq!(p[..2], [c64::new(1.0, 0.0), c64::new(0.0, 0.0)]);
        assert!(p[2].re.is_nan() && p[2].im.is_nan());
    }
    // A negative real base to a fraction: NaN for reals, the principal value for complex.
    let neg = on::<D>(Tensor::from_slice(&[-4.0f64], &[1])?);
    assert!(neg.pow_scalar(0.5)?.to_vec::<f64>()?[0].is_nan());
    let principal = values(&neg.pow_scalar(c64::new(0.5, 0.0))?)?[0];
    close(principal, c64::new(0.0, 2.0), 1e-15, "(-4)^0.5 as complex");
    // Mixed types promote: f32 ^ c64 tensor is c64.
    let f = on::<D>(Tensor::from_slice(&[2.0f32], &[1])?);
    let c = on::<D>(Tensor::from_slice(&[c64::new(2.0, 0.0)], &[1])?);
    assert_eq!(f.pow(&c)?.dtype(), ComplexDouble);
    // Empty with a huge other dimension: the shape survives, nothing is touched.
    let empty = on::<D>(Tensor::new(Double, ctensor_aten::DeviceType::Cpu, &[0, 1 << 40])?);
    assert_eq!(empty.pow_scalar(2.5)?.dims(), [0, 1 << 40]);
    Ok(())
});

/// The bits of a value, so that signed zeros and NaN compare exactly.
fn bits(z: c64) -> (u64, u64) {
    let canon = |v: f64| {
        if v.is_nan() {
            f64::NAN.to_bits()
        } else {
            v.to_bits()
        }
    };
    (canon(z.re), canon(z.im))
}

// expm1 at C99's special values (the array API standard's): a real argument stays real
// (the imaginary zero kept with its sign), e^-inf - 1 is -1, e^(+inf + i inf) - 1 and
// e^(+inf + i NaN) - 1 are inf + NaN i; and sign of either zero is +0 (real and complex,
// as NumPy and the standard). NumPy's expm1 gives inf + NaN i at +inf + 0i, which these
// values are not.
device_test!(expm1_and_sign_at_special_values, D -> Result {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let cases = [
        (c64::new(inf, 0.0), c64::new(inf, 0.0)),
        (c64::new(inf, -0.0), c64::new(inf, -0.0)),
        (c64::new(-inf, 0.0), c64::new(-1.0, 0.0)),
        (c64::new(nan, 0.0), c64::new(nan, 0.0)),
        (c64::new(0.0, -0.0), c64::new(0.0, -0.0)),
        (c64::new(-0.0, 0.0), c64::new(-0.0, 0.0)),
        (c64::new(-inf, inf), c64::new(-1.0, 0.0)),
        (c64::new(-inf, nan), c64::new(-1.0, 0.0)),
        (c64::new(-inf, 2.0), c64::new(-1.0, 0.0)),
        (c64::new(-inf, -2.0), c64::new(-1.0, -0.0)),
        (c64::new(inf, inf), c64::new(inf, nan)),
        (c64::new(inf, nan), c64::new(inf, nan)),
        (c64::new(nan, 1.0), c64::new(nan, nan)),
        (c64::new(1.0, inf), c64::new(nan, nan)),
    ];
    let args: Vec<c64> = cases.iter().map(|c| c.0).collect();
    for dt in [ComplexDouble, ComplexFloat] {
        let x = on::<D>(Tensor::from_slice(&args, &[args.len()])?.cast(dt)?);
        let got = values(&x.expm1()?)?;
        for (k, (z, want)) in cases.iter().enumerate() {
            // Next to -1 the zero imaginary part has the sign of sin(y).
            assert_eq!(bits(got[k]), bits(*want), "{dt} expm1({z}): got {}", got[k]);
        }
        let zeros = [c64::new(0.0, 0.0), c64::new(-0.0, 0.0), c64::new(0.0, -0.0), c64::new(-0.0, -0.0)];
        let s = values(&on::<D>(Tensor::from_slice(&zeros, &[4])?.cast(dt)?).sign()?)?;
        for (z, g) in zeros.iter().zip(&s) {
            assert_eq!(bits(*g), bits(c64::new(0.0, 0.0)), "{dt} sign({z}): got {g}");
        }
    }
    for dt in [Double, Float, Half, BFloat16] {
        let x = on::<D>(Tensor::from_slice(&[-0.0f64, 0.0, nan, -3.0], &[4])?.cast(dt)?);
        let s = values(&x.sign()?)?;
        assert_eq!(s[0].re.to_bits(), 0.0f64.to_bits(), "{dt} sign(-0) is +0");
        assert_eq!(s[1].re.to_bits(), 0.0f64.to_bits(), "{dt} sign(+0)");
        assert!(s[2].re.is_nan() && s[3].re == -1.0, "{dt}: {s:?}");
    }
    Ok(())
});
