//! The functions of two arguments (`atan2`, `hypot`, `copysign`, `fmod`) and the in-place
//! and `_into` forms of the math functions, on both devices, against the standard
//! library's `f64`/`f32` functions element by element (for f16/bf16: the f32 function,
//! rounded once). Random data of sizes 0, 1, odd and > 256, with NaN, infinities and
//! signed zeros; broadcasting, strided operands, an aliased output, integers, complex
//! numbers refused, and weak promotion of numbers.

mod common;

use common::*;
use ctensor_aten::{bf16, f16, BinaryMathOp, DataType, Device, Error, MathOp, Tensor};
use rand::Rng;
use DataType::*;

type R = std::result::Result<(), Box<dyn std::error::Error>>;
/// A named binary method of `Tensor`.
type Method = fn(&Tensor, &Tensor) -> ctensor_aten::Result<Tensor>;

/// The reference of `op` in `f64` (C's functions; Rust's `%` is `fmod`).
fn reference(op: BinaryMathOp, a: f64, b: f64) -> f64 {
    match op {
        BinaryMathOp::Pow => a.powf(b),
        BinaryMathOp::Atan2 => a.atan2(b),
        BinaryMathOp::Hypot => a.hypot(b),
        BinaryMathOp::Copysign => a.copysign(b),
        BinaryMathOp::Fmod => a % b,
        BinaryMathOp::Logaddexp => logaddexp(a, b),
    }
}

/// NumPy's `logaddexp` written out: the larger plus `ln(1 + e^(smaller − larger))`.
fn logaddexp(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a == b {
        a + std::f64::consts::LN_2
    } else {
        let (hi, lo) = if a > b { (a, b) } else { (b, a) };
        hi + (lo - hi).exp().ln_1p()
    }
}

/// The same in `f32`, for f32, f16 and bf16 (which compute in f32).
fn reference32(op: BinaryMathOp, a: f32, b: f32) -> f32 {
    match op {
        BinaryMathOp::Pow => a.powf(b),
        BinaryMathOp::Atan2 => a.atan2(b),
        BinaryMathOp::Hypot => a.hypot(b),
        BinaryMathOp::Copysign => a.copysign(b),
        BinaryMathOp::Fmod => a % b,
        BinaryMathOp::Logaddexp => {
            if a.is_nan() || b.is_nan() {
                f32::NAN
            } else if a == b {
                a + std::f32::consts::LN_2
            } else {
                let (hi, lo) = if a > b { (a, b) } else { (b, a) };
                hi + (lo - hi).exp().ln_1p()
            }
        }
    }
}

const OPS: [BinaryMathOp; 5] = [
    BinaryMathOp::Atan2,
    BinaryMathOp::Hypot,
    BinaryMathOp::Copysign,
    BinaryMathOp::Fmod,
    BinaryMathOp::Logaddexp,
];

/// `n` values: random magnitudes over many decades and both signs, then the hostile ones.
fn operand(rng: &mut rand::rngs::StdRng, n: usize) -> Vec<f64> {
    let special = [
        0.0,
        -0.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1.0,
        -1.0,
    ];
    (0..n)
        .map(|i| {
            if i % 5 == 4 {
                special[(i / 5) % special.len()]
            } else {
                rng.gen_range(-1.0..1.0) * 10f64.powi(rng.gen_range(-5..6))
            }
        })
        .collect()
}

/// Same bits, or both NaN.
fn same(got: f64, want: f64) -> bool {
    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan())
}

device_test!(real_binary_functions_match_the_standard_library, D -> Result {
    let mut r = rng(7);
    for n in [0usize, 1, 7, 301] {
        let (a, b) = (operand(&mut r, n), operand(&mut r, n));
        for dt in [Double, Float, Half, BFloat16] {
            let x = on::<D>(Tensor::from_slice(&a, &[n])?.cast(dt)?);
            let y = on::<D>(Tensor::from_slice(&b, &[n])?.cast(dt)?);
            // The operands as the dtype holds them.
            let (xa, yb) = (x.cast(Double)?.to_vec::<f64>()?, y.cast(Double)?.to_vec::<f64>()?);
            for op in OPS {
                let got = x.binary_math(&y, op)?;
                assert_eq!(got.dtype(), dt, "{op:?} keeps {dt}");
                let got = got.cast(Double)?.to_vec::<f64>()?;
                for i in 0..n {
                    let want = match dt {
                        Double => reference(op, xa[i], yb[i]),
                        Float => reference32(op, xa[i] as f32, yb[i] as f32) as f64,
                        Half => f16::from_f32(reference32(op, xa[i] as f32, yb[i] as f32)).to_f64(),
                        _ => bf16::from_f32(reference32(op, xa[i] as f32, yb[i] as f32)).to_f64(),
                    };
                    assert!(same(got[i], want), "{dt} {op:?}({}, {}) = {}, want {want}", xa[i], yb[i], got[i]);
                }
            }
        }
    }
    Ok(())
});

device_test!(named_methods_broadcast_and_take_strided_operands, D -> Result {
    let mut r = rng(11);
    let (a, b) = (operand(&mut r, 5 * 3), operand(&mut r, 3));
    // x is the transpose of a 3 × 5 array (a strided view); y a row that broadcasts.
    let x = on::<D>(Tensor::from_slice(&a, &[3, 5])?).t()?;
    let y = on::<D>(Tensor::from_slice(&b, &[1, 3])?);
    let methods: [(BinaryMathOp, Method); 5] = [
        (BinaryMathOp::Atan2, Tensor::atan2),
        (BinaryMathOp::Hypot, Tensor::hypot),
        (BinaryMathOp::Copysign, Tensor::copysign),
        (BinaryMathOp::Fmod, Tensor::fmod),
        (BinaryMathOp::Logaddexp, Tensor::logaddexp),
    ];
    for (op, f) in methods {
        let got = f(&x, &y)?;
        assert_eq!(got.dims(), [5, 3]);
        let got = got.to_vec::<f64>()?;
        for i in 0..5 {
            for j in 0..3 {
                let want = reference(op, a[j * 5 + i], b[j]);
                assert!(same(got[i * 3 + j], want), "{op:?} at ({i}, {j})");
            }
        }
    }
    // A shape that does not broadcast.
    let z = on::<D>(Tensor::zeros(Double, D::TYPE, &[4])?);
    assert!(matches!(x.atan2(&z).unwrap_err(), Error::Broadcast { op: "atan2", .. }));
    Ok(())
});

device_test!(integers_compute_in_f64_except_fmod_which_stays_exact, D -> Result {
    let a = [7i32, -7, 7, -7, i32::MIN, 5, 0, 9];
    let b = [3i32, 3, -3, -3, -1, 0, 4, i32::MAX];
    let x = on::<D>(Tensor::from_slice(&a, &[8])?);
    let y = on::<D>(Tensor::from_slice(&b, &[8])?);
    let m = x.fmod(&y)?;
    assert_eq!(m.dtype(), Int);
    // C's remainder of truncated division; MIN % -1 is 0 and a divisor of 0 gives 0
    // (NumPy's integer fmod), never a trap.
    assert_eq!(m.to_vec::<i32>()?, [1, -1, 1, -1, 0, 0, 0, 9]);
    let x64 = x.cast(Int64)?;
    let y64 = y.cast(Int64)?;
    assert_eq!(x64.fmod(&y64)?.to_vec::<i64>()?, [1, -1, 1, -1, 0, 0, 0, 9]);
    for op in [BinaryMathOp::Atan2, BinaryMathOp::Hypot, BinaryMathOp::Copysign, BinaryMathOp::Logaddexp] {
        let got = x.binary_math(&y, op)?;
        assert_eq!(got.dtype(), Double, "{op:?} of integers is f64");
        let got = got.to_vec::<f64>()?;
        for i in 0..8 {
            assert!(same(got[i], reference(op, a[i] as f64, b[i] as f64)), "{op:?} {i}");
        }
    }
    Ok(())
});

device_test!(complex_numbers_have_only_pow, D -> Result {
    let z = on::<D>(Tensor::from_slice(&[ctensor_aten::c64::new(1.0, 2.0)], &[1])?);
    for op in OPS {
        let e = z.binary_math(&z, op).unwrap_err();
        assert!(matches!(e, Error::UnsupportedDType { .. }), "{op:?}: {e}");
        assert!(e.to_string().contains(op.name()), "{e}");
    }
    Ok(())
});

device_test!(numbers_promote_weakly, D -> Result {
    let x = on::<D>(Tensor::from_slice(&[3.5f32, -3.5, 0.0], &[3])?);
    let m = x.fmod_scalar(2)?;
    assert_eq!(m.dtype(), Float);
    assert_eq!(m.to_vec::<f32>()?, [1.5, -1.5, 0.0]);
    let c = x.copysign_scalar(-1.0)?;
    assert_eq!(c.dtype(), Float);
    assert_eq!(c.to_vec::<f32>()?, [-3.5, -3.5, -0.0]);
    let h = x.hypot_scalar(0)?;
    assert_eq!(h.to_vec::<f32>()?, [3.5, 3.5, 0.0]);
    let i = on::<D>(Tensor::from_slice(&[10i64, -10], &[2])?);
    assert_eq!(i.fmod_scalar(3)?.to_vec::<i64>()?, [1, -1]);
    assert_eq!(i.atan2_scalar(0)?.dtype(), Double);
    // A number an integer tensor cannot hold is an error, not a wrapped value.
    let small = on::<D>(Tensor::from_slice(&[1i32], &[1])?);
    assert!(matches!(small.fmod_scalar(1i64 << 40).unwrap_err(), Error::Overflow { .. }));
    Ok(())
});

device_test!(in_place_and_into_forms, D -> Result {
    let mut r = rng(19);
    let n = 257;
    let a: Vec<f64> = (0..n).map(|_| r.gen_range(0.1..4.0)).collect();
    let b: Vec<f64> = (0..n).map(|_| r.gen_range(-3.0..3.0)).collect();
    let x = on::<D>(Tensor::from_slice(&a, &[n])?);
    let y = on::<D>(Tensor::from_slice(&b, &[n])?);
    // In place: the output is the first operand (aliasing by design).
    let mut t = x.try_clone()?;
    t.math_(MathOp::Sqrt)?;
    let got = t.to_vec::<f64>()?;
    for i in 0..n {
        assert_eq!(got[i], a[i].sqrt());
    }
    let mut u = x.try_clone()?;
    let alias = u.share();
    alias.binary_math_into(&y, BinaryMathOp::Atan2, &mut u)?;
    let got = u.to_vec::<f64>()?;
    for i in 0..n {
        assert_eq!(got[i], a[i].atan2(b[i]));
    }
    // Into a transposed (strided) output of a wider type: computed in the output's type.
    let x2 = on::<D>(Tensor::from_slice(&a[..6], &[2, 3])?.cast(Float)?);
    let mut out = on::<D>(Tensor::zeros(Double, D::TYPE, &[3, 2])?).t()?;
    x2.math_into(MathOp::Log, &mut out)?;
    for i in 0..2 {
        for j in 0..3 {
            let want = ((a[i * 3 + j] as f32) as f64).ln();
            assert_eq!(out.get_value::<f64>(&[i, j])?, want);
        }
    }
    // An output of a lower kind is refused (complex into real), as a wrong shape is.
    let mut real = on::<D>(Tensor::zeros(Double, D::TYPE, &[n])?);
    let z = x.cast(ComplexDouble)?;
    assert!(matches!(z.math_into(MathOp::Exp, &mut real).unwrap_err(), Error::CannotCast { .. }));
    let mut short = on::<D>(Tensor::zeros(Double, D::TYPE, &[n - 1])?);
    assert!(matches!(x.math_into(MathOp::Exp, &mut short).unwrap_err(), Error::ShapeMismatch { .. }));
    // Empty tensors with a huge other dimension.
    let e = on::<D>(Tensor::zeros(Double, D::TYPE, &[0, 1 << 40])?);
    assert_eq!(e.hypot(&e)?.dims(), [0, 1 << 40]);
    Ok(())
});

#[test]
fn every_op_has_a_distinct_code_and_name() -> R {
    let codes: Vec<i32> = BinaryMathOp::ALL.iter().map(|o| o.code()).collect();
    assert_eq!(
        codes,
        (0..BinaryMathOp::ALL.len() as i32).collect::<Vec<_>>()
    );
    let codes: Vec<i32> = MathOp::ALL.iter().map(|o| o.code()).collect();
    assert_eq!(codes, (0..MathOp::ALL.len() as i32).collect::<Vec<_>>());
    let mut names: Vec<&str> = MathOp::ALL.iter().map(|o| o.name()).collect();
    names.extend(BinaryMathOp::ALL.iter().map(|o| o.name()));
    let n = names.len();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), n);
    Ok(())
}

device_test!(engine_routed_comparisons_classes_and_math_take_hostile_input, D -> Result {
    // A transposed (strided) operand against a broadcast row, with NaN, ±inf and ±0:
    // each result element checked against Rust's own comparison on the same pair.
    let a = [f64::NAN, -0.0, 0.0, f64::INFINITY, -1.5, f64::NEG_INFINITY, 2.0, 7.0, f64::NAN];
    let x = on::<D>(Tensor::from_slice(&a, &[3, 3])?).t()?;
    let row = [0.0, f64::NAN, -1.5];
    let y = on::<D>(Tensor::from_slice(&row, &[1, 3])?);
    let xv = |i: usize, j: usize| a[j * 3 + i];
    let lt = x.lt(&y)?.to_vec::<i32>()?;
    let ne = x.not_equal(&y)?.to_vec::<i32>()?;
    let mx = x.maximum(&y)?.to_vec::<f64>()?;
    let mn = x.minimum(&y)?.to_vec::<f64>()?;
    let nan = x.isnan()?.to_vec::<i32>()?;
    let sq = x.math(MathOp::Sqrt)?.to_vec::<f64>()?;
    for i in 0..3 {
        for (j, &q) in row.iter().enumerate() {
            let (p, k) = (xv(i, j), i * 3 + j);
            assert_eq!(lt[k], (p < q) as i32, "lt({p}, {q})");
            assert_eq!(ne[k], (p != q) as i32, "ne({p}, {q})");
            // NumPy's rule written out (Rust's f64::max may return either zero for ±0):
            // NaN wins, else the second only when strictly beyond the first.
            let either = p.is_nan() || q.is_nan();
            let want = if either { f64::NAN } else if q > p { q } else { p };
            assert!(same(mx[k], want), "max({p}, {q}) = {}", mx[k]);
            let want = if either { f64::NAN } else if q < p { q } else { p };
            assert!(same(mn[k], want), "min({p}, {q}) = {}", mn[k]);
            assert_eq!(nan[k], p.is_nan() as i32);
            assert!(same(sq[k], p.sqrt()), "sqrt({p})");
        }
    }
    // Zero elements with a huge other dimension: nothing is read, the shapes come out.
    let e = on::<D>(Tensor::zeros(Double, D::TYPE, &[1 << 40, 0])?);
    assert_eq!(e.lt(&e)?.dims(), [1 << 40, 0]);
    assert_eq!(e.isinf()?.dims(), [1 << 40, 0]);
    assert_eq!(e.minimum(&e)?.dims(), [1 << 40, 0]);
    assert_eq!(e.sin()?.dims(), [1 << 40, 0]);
    let mut m = e.share();
    m.math_(MathOp::Exp)?;
    // Complex numbers have no order, and say so under the name the caller used.
    let z = on::<D>(Tensor::from_slice(&[ctensor_aten::c64::new(1.0, 1.0)], &[1])?);
    assert!(matches!(z.lt(&z).unwrap_err(), Error::UnsupportedDType { op: "lt", .. }));
    assert!(matches!(z.maximum(&z).unwrap_err(), Error::UnsupportedDType { op: "maximum", .. }));
    Ok(())
});
