//! Mixed data types: the promotion table, every pair of dtypes through the binary ops
//! (against a plain complex-double loop over the promoted operands), weak numbers on
//! either side, operators that chain on results, in-place and `out` rules, einsum,
//! matmul and dot with mixed operands. On the CPU and, through `device_test!`, the GPU.
#![deny(unused_must_use)]

mod common;

use common::*;
use ctensor_aten::{
    c32, c64, can_cast, einsum, einsum_into, matmul, result_type, DataType, Device, EinsumOptions,
    Error, Number, Result, Tensor,
};
use rand::Rng;
use DataType::*;

/// What a helper that can fail returns.
type Fallible<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// The order of the table below.
const ORDER: [DataType; 8] = [
    Int,
    Int64,
    Half,
    BFloat16,
    Float,
    Double,
    ComplexFloat,
    ComplexDouble,
];

/// PyTorch's `promote_types` for these eight types, written out as the specification.
const TABLE: [[DataType; 8]; 8] = [
    [
        Int,
        Int64,
        Half,
        BFloat16,
        Float,
        Double,
        ComplexFloat,
        ComplexDouble,
    ],
    [
        Int64,
        Int64,
        Half,
        BFloat16,
        Float,
        Double,
        ComplexFloat,
        ComplexDouble,
    ],
    [
        Half,
        Half,
        Half,
        Float,
        Float,
        Double,
        ComplexFloat,
        ComplexDouble,
    ],
    [
        BFloat16,
        BFloat16,
        Float,
        BFloat16,
        Float,
        Double,
        ComplexFloat,
        ComplexDouble,
    ],
    [
        Float,
        Float,
        Float,
        Float,
        Float,
        Double,
        ComplexFloat,
        ComplexDouble,
    ],
    [
        Double,
        Double,
        Double,
        Double,
        Double,
        Double,
        ComplexDouble,
        ComplexDouble,
    ],
    [
        ComplexFloat,
        ComplexFloat,
        ComplexFloat,
        ComplexFloat,
        ComplexFloat,
        ComplexDouble,
        ComplexFloat,
        ComplexDouble,
    ],
    [
        ComplexDouble,
        ComplexDouble,
        ComplexDouble,
        ComplexDouble,
        ComplexDouble,
        ComplexDouble,
        ComplexDouble,
        ComplexDouble,
    ],
];

#[test]
fn result_type_matches_the_written_table() -> TestResult {
    for (i, &a) in ORDER.iter().enumerate() {
        for (j, &b) in ORDER.iter().enumerate() {
            assert_eq!(result_type(a, b), TABLE[i][j], "{a} with {b}");
        }
    }
    Ok(())
}

/// The unit roundoff of a dtype (0 for integers, which must be exact).
fn unit(dt: DataType) -> f64 {
    match dt {
        Half => 4.9e-4,
        BFloat16 => 3.9e-3,
        Float | ComplexFloat => f32::EPSILON as f64 / 2.0,
        Double | ComplexDouble => f64::EPSILON / 2.0,
        _ => 0.0,
    }
}

fn values(t: &Tensor) -> Fallible<Vec<c64>> {
    Ok(t.cast(ComplexDouble)?.to_vec::<c64>()?)
}

/// A random tensor of `dt` on `D`: small integers for integer types (so products and
/// quotients are exact), otherwise values with a fractional part; no zeros (divisors).
fn random_of<D: Device>(
    r: &mut rand::rngs::StdRng,
    dt: DataType,
    shape: &[usize],
) -> Fallible<Tensor> {
    Ok({
        let n: usize = shape.iter().product();
        let v: Vec<c64> = (0..n)
            .map(|_| {
                let mut re = r.gen_range(-40i32..40) as f64;
                if re == 0.0 {
                    re = 3.0;
                }
                let im = r.gen_range(-40i32..40) as f64;
                if dt.is_integer() {
                    c64::new(re, 0.0)
                } else {
                    c64::new(re / 4.0, im / 8.0)
                }
            })
            .collect();
        on::<D>(Tensor::from_slice(&v, shape)?.cast(dt)?)
    })
}

fn check_close(got: &[c64], want: &[c64], dt: DataType, what: &str) {
    check_within(got, want, dt, what, 2.0);
}

/// Units of roundoff a complex quotient may be off by: the textbook formula's normwise
/// bound is √2·γ₄ ≈ 5.7 (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd
/// ed., Lemma 3.5), and Smith's method, which ctensor uses so that no `|b|²` overflows,
/// has a bound of the same order; 2 units, enough for the other ops, is not.
const COMPLEX_DIV_UNITS: f64 = 8.0;

/// [`check_close`] to `units` units of roundoff.
fn check_within(got: &[c64], want: &[c64], dt: DataType, what: &str, units: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        let tol = units * unit(dt) * w.norm().max(1.0);
        assert!(
            (g - w).norm() <= tol,
            "{what}[{k}]: got {g}, want {w} (tolerance {tol:e})"
        );
    }
}

/// `x[i, j]` of a `[3, 1]` operand and `y[i, j]` of a `[1, 4]` one, broadcast to `[3, 4]`.
fn outer(x: &[c64], y: &[c64], f: impl Fn(c64, c64) -> c64) -> Vec<c64> {
    let mut out = Vec::new();
    for a in x {
        for b in y {
            out.push(f(*a, *b));
        }
    }
    out
}

fn trunc_div(a: c64, b: c64) -> c64 {
    c64::new((a.re / b.re).trunc(), 0.0)
}

device_test!(binary_ops_promote_every_pair_of_dtypes, D -> Result {
    let mut r = rng(5);
    for a_t in ORDER {
        for b_t in ORDER {
            let want_t = result_type(a_t, b_t);
            let a = random_of::<D>(&mut r, a_t, &[3, 1])?;
            let b = random_of::<D>(&mut r, b_t, &[1, 4])?;
            // The operands as the promoted type holds them, in complex double.
            let (av, bv) = (values(&a.cast(want_t)?)?, values(&b.cast(want_t)?)?);
            let cases: [(&str, Result<Tensor>, Vec<c64>); 4] = [
                ("add", &a + &b, outer(&av, &bv, |x, y| x + y)),
                ("sub", &a - &b, outer(&av, &bv, |x, y| x - y)),
                ("mul", &a * &b, outer(&av, &bv, |x, y| x * y)),
                (
                    "div",
                    &a / &b,
                    outer(&av, &bv, |x, y| if want_t.is_integer() { trunc_div(x, y) } else { x / y }),
                ),
            ];
            for (name, got, want) in cases {
                let what = format!("{name} {a_t} with {b_t}");
                let got = got.unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(got.dtype(), want_t, "{what}");
                assert_eq!(got.device(), D::TYPE, "{what}");
                assert_eq!(got.dims(), [3, 4], "{what}");
                let units = if name == "div" && want_t.is_complex() { COMPLEX_DIV_UNITS } else { 2.0 };
                check_within(&values(&got)?, &want, want_t, &what, units);
            }
        }
    }
    Ok(())
});

/// The type a weak number of each kind gives with each tensor type (NumPy's NEP 50 with
/// f64 as the floating default), written out.
fn weak(number: Number, t: DataType) -> DataType {
    match (number, t) {
        (Number::Int(_), t) => t,
        (Number::Float(_), Int | Int64) => Double,
        (Number::Float(_), t) => t,
        (Number::Complex(_), Int | Int64 | Double | ComplexDouble) => ComplexDouble,
        (Number::Complex(_), _) => ComplexFloat,
    }
}

device_test!(numbers_promote_weakly_on_either_side, D -> Result {
    let mut r = rng(6);
    let numbers = [Number::from(3), Number::from(2.5), Number::from(c64::new(0.5, -1.5))];
    for t in ORDER {
        for s in numbers {
            let x = random_of::<D>(&mut r, t, &[5])?;
            let want_t = weak(s, t);
            let xv = values(&x.cast(want_t)?)?;
            // The number as the result type holds it.
            let sv = values(&Tensor::from_slice(&[s.to_c64()], &[1])?.cast(want_t)?)?[0];
            let div = |p: c64, q: c64| if want_t.is_integer() { trunc_div(p, q) } else { p / q };
            let cases: [(&str, Result<Tensor>, Vec<c64>); 6] = [
                ("t + s", x.add_scalar(s), xv.iter().map(|&v| v + sv).collect()),
                ("t - s", x.sub_scalar(s), xv.iter().map(|&v| v - sv).collect()),
                ("s - t", x.rsub_scalar(s), xv.iter().map(|&v| sv - v).collect()),
                ("t * s", x.mul_scalar(s), xv.iter().map(|&v| v * sv).collect()),
                ("t / s", x.div_scalar(s), xv.iter().map(|&v| div(v, sv)).collect()),
                ("s / t", x.rdiv_scalar(s), xv.iter().map(|&v| div(sv, v)).collect()),
            ];
            for (name, got, want) in cases {
                let what = format!("{name} for {t} and {s:?}");
                let got = got.unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(got.dtype(), want_t, "{what}");
                let units = if name.contains('/') && want_t.is_complex() { COMPLEX_DIV_UNITS } else { 2.0 };
                check_within(&values(&got)?, &want, want_t, &what, units);
            }
        }
    }
    Ok(())
});

device_test!(operators_chain_on_results_and_take_numbers_on_either_side, D -> Result {
    let a = on::<D>(Tensor::from_slice(&[1.0f64, 2.0, 3.0], &[3])?);
    let b = on::<D>(Tensor::from_slice(&[4.0f32, 5.0, 6.0], &[3])?);
    let c = on::<D>(Tensor::from_slice(&[c64::new(0.0, 1.0); 3], &[3])?);
    // (a ∘ b) + c: f64 with f32 is f64, then with c64 is c64.
    let got = ((&a * &b) + &c)?;
    assert_eq!(got.dtype(), ComplexDouble);
    assert_eq!(values(&got)?, [c64::new(4.0, 1.0), c64::new(10.0, 1.0), c64::new(18.0, 1.0)]);
    // Numbers on the left and right, owned tensors, and unary minus of a result.
    let got = (2.0 * &a - (&b * 0.5)?)?;
    assert_eq!(got.dtype(), Double);
    assert_eq!(got.to_vec::<f64>()?, [0.0, 1.5, 3.0]);
    let got = (-(&a + &a)?)?;
    assert_eq!(got.to_vec::<f64>()?, [-2.0, -4.0, -6.0]);
    let got = (&b * c32::new(0.0, 2.0))?;
    assert_eq!(got.dtype(), ComplexFloat, "f32 times a complex number is c32, not f32");
    assert_eq!(values(&got)?[1], c64::new(0.0, 10.0));
    let got = (1.0 / &b)?;
    assert_eq!(got.dtype(), Float);
    assert_eq!(got.to_vec::<f32>()?, [0.25, 0.2, 1.0 / 6.0]);
    let got = (b.share() + a.share())?;
    assert_eq!(got.dtype(), Double);
    // An error anywhere in a chain comes out at its end, naming the op that failed.
    let wrong = on::<D>(Tensor::zeros(Double, D::TYPE, &[2])?);
    let err = ((&a + &wrong) * &b).unwrap_err();
    assert!(matches!(err, Error::Broadcast { op: "add", .. }), "{err}");
    Ok(())
});

device_test!(in_place_and_out_compute_in_the_output_type_and_refuse_dropping_a_kind, D -> Result {
    let mut f = on::<D>(Tensor::from_slice(&[1.5f32, 2.5], &[2])?);
    let d = on::<D>(Tensor::from_slice(&[0.25f64, 0.5], &[2])?);
    let i = on::<D>(Tensor::from_slice(&[2i32, 3], &[2])?);
    let z = on::<D>(Tensor::from_slice(&[c64::new(1.0, 1.0); 2], &[2])?);
    f.add_(&d)?;
    assert_eq!((f.dtype(), f.to_vec::<f32>()?), (Float, vec![1.75, 3.0]));
    f.mul_(&i)?;
    assert_eq!(f.to_vec::<f32>()?, [3.5, 9.0]);
    let refused: [(&str, Result<()>, DataType, DataType); 4] = [
        ("add_", f.add_(&z), ComplexDouble, Float),
        ("mul_", i.share().mul_(&f), Float, Int),
        ("scale_", f.scale_(c64::new(0.0, 1.0)), ComplexFloat, Float),
        ("scale_", i.share().scale_(0.5), Double, Int),
    ];
    for (op, got, from, to) in refused {
        let err = got.unwrap_err();
        assert_eq!(err, Error::CannotCast { op, from, to }, "{err}");
        assert!(err.to_string().contains("cannot be stored"), "{err}");
    }
    assert_eq!(f.to_vec::<f32>()?, [3.5, 9.0], "a refused op leaves the target as it was");
    // add_into: f64 output from f32 + i32 operands.
    let mut out = on::<D>(Tensor::zeros(Double, D::TYPE, &[2])?);
    f.add_into(&i, &mut out)?;
    assert_eq!(out.to_vec::<f64>()?, [5.5, 12.0]);
    let mut int_out = on::<D>(Tensor::zeros(Int, D::TYPE, &[2])?);
    assert!(matches!(f.add_into(&i, &mut int_out), Err(Error::CannotCast { op: "add_into", .. })));
    assert!(can_cast(Int, Half) && can_cast(Double, Float) && !can_cast(ComplexFloat, Double));
    Ok(())
});

device_test!(einsum_matmul_and_dot_promote_mixed_operands, D -> Result {
    let mut r = rng(7);
    let a = random_of::<D>(&mut r, Double, &[4, 3])?;
    let b = random_of::<D>(&mut r, ComplexFloat, &[3, 5])?;
    let want = matmul(&a.cast(ComplexDouble)?, &b.cast(ComplexDouble)?)?;
    let got = matmul(&a, &b)?;
    assert_eq!(got.dtype(), ComplexDouble, "f64 with c32 is c64");
    check_close(&values(&got)?, &values(&want)?, ComplexDouble, "matmul f64 · c32");
    let got = einsum("ij,jk->ik", &[&a, &b], &EinsumOptions::default())?;
    check_close(&values(&got)?, &values(&want)?, ComplexDouble, "einsum f64 · c32");
    // Into a c64 output from two real operands of different types.
    let ai = random_of::<D>(&mut r, Int, &[4, 3])?;
    let bf = random_of::<D>(&mut r, Float, &[3, 5])?;
    let mut out = on::<D>(Tensor::zeros(ComplexDouble, D::TYPE, &[4, 5])?);
    einsum_into("ij,jk->ik", &[&ai, &bf], &EinsumOptions::default(), &mut out)?;
    let want = matmul(&ai.cast(ComplexDouble)?, &bf.cast(ComplexDouble)?)?;
    check_close(&values(&out)?, &values(&want)?, ComplexDouble, "einsum_into c64 from i32 · f32");
    let mut real_out = on::<D>(Tensor::zeros(Double, D::TYPE, &[4, 5])?);
    let err = einsum_into("ij,jk->ik", &[&a, &b], &EinsumOptions::default(), &mut real_out)
        .unwrap_err();
    assert!(matches!(err, Error::CannotCast { op: "einsum", from: ComplexDouble, to: Double }), "{err}");
    let err = matmul(&a, &on::<D>(Tensor::zeros(Float, D::TYPE, &[4, 4])?)).unwrap_err();
    assert!(matches!(err, Error::ShapeMismatch { op: "matmul", .. }), "{err}");
    // vdot of a real and a complex vector.
    let x = on::<D>(Tensor::from_slice(&[1.0f32, 2.0], &[2])?);
    let y = on::<D>(Tensor::from_slice(&[c64::new(0.0, 1.0), c64::new(3.0, 0.0)], &[2])?);
    let v = x.vdot(&y)?;
    assert_eq!(v.dtype(), ComplexDouble);
    assert_eq!(values(&v)?, [c64::new(6.0, 1.0)]);
    Ok(())
});

#[test]
fn mixed_devices_are_still_refused_not_moved() -> TestResult {
    if ctensor_aten::gpu_available() {
        let a = Tensor::zeros(Double, ctensor_aten::DeviceType::Cpu, &[2])?;
        let b = Tensor::zeros(Float, ctensor_aten::DeviceType::Gpu, &[2])?;
        assert!(matches!(
            &a + &b,
            Err(Error::DeviceMismatch { op: "add", .. })
        ));
    } else {
        println!("SKIP: mixed_devices_are_still_refused_not_moved: no GPU");
    }
    Ok(())
}

/// `Error::Overflow` naming `value` and `dtype`, else a panic saying what came instead.
fn expect_overflow(what: &str, got: Result<Tensor>, value: i64, dtype: &str) {
    match got {
        Err(e @ Error::Overflow { .. }) => {
            let msg = e.to_string();
            assert!(
                msg.contains(&value.to_string()) && msg.contains(dtype),
                "{what}: {msg}"
            );
        }
        Err(e) => panic!("{what}: expected Overflow, got {e}"),
        Ok(t) => panic!("{what}: expected Overflow, got {t}"),
    }
}

device_test!(integers_out_of_an_integer_tensors_range_are_overflow_errors, D -> Result {
    let i = on::<D>(Tensor::from_slice(&[1i32, -7], &[2])?);
    for big in [1i64 << 40, i32::MAX as i64 + 1, i32::MIN as i64 - 1, i64::MIN] {
        let cases: [(&str, Result<Tensor>); 8] = [
            ("t + n", &i + big),
            ("t - n", &i - big),
            ("n - t", big - &i),
            ("t * n", &i * big),
            ("t / n", &i / big),
            ("n / t", big / &i),
            ("clamp(t, n, n)", i.clamp(Some(big), Some(big))),
            ("t *= n (scale_)", {
                let mut c = i.try_clone()?;
                c.scale_(big).map(|()| c)
            }),
        ];
        for (what, got) in cases {
            expect_overflow(&format!("{what} with n = {big}"), got, big, "i32");
        }
        if big > 0 {
            expect_overflow(&format!("t ** {big}"), i.pow_scalar(big), big, "i32");
        }
    }
    // The ends of the range are numbers like any other (the arithmetic itself wraps, as
    // NumPy's integer arrays do).
    assert_eq!((&i + i64::from(i32::MIN))?.to_vec::<i32>()?, [i32::MIN + 1, i32::MAX - 6]);
    assert_eq!((&i * i64::from(i32::MAX))?.to_vec::<i32>()?, [i32::MAX, (-7i32).wrapping_mul(i32::MAX)]);
    // An i64 tensor holds every i64; floating tensors round.
    let l = i.cast(Int64)?;
    assert_eq!((&l + (1i64 << 40))?.to_vec::<i64>()?, [(1 << 40) + 1, (1 << 40) - 7]);
    let f = i.cast(Float)?;
    assert_eq!((&f * (1i64 << 40))?.to_vec::<f32>()?, [2f32.powi(40), -7.0 * 2f32.powi(40)]);
    // A clamp bound beyond the range on its own side bounds nothing (NumPy 2's clip).
    let big = 1i64 << 40;
    assert_eq!(i.clamp(Some(0), Some(big))?.to_vec::<i32>()?, [1, 0]);
    assert_eq!(i.clamp(Some(-big), Some(0))?.to_vec::<i32>()?, [0, -7]);
    assert_eq!(i.clamp(Some(-big), Some(big))?.to_vec::<i32>()?, [1, -7]);
    // Comparisons answer rightly instead (NumPy 2 compares out-of-range integers so).
    assert_eq!(i.lt_scalar(big)?.to_vec::<i32>()?, [1, 1]);
    assert_eq!(i.gt_scalar(-big)?.to_vec::<i32>()?, [1, 1]);
    assert_eq!(i.equal_scalar(big)?.to_vec::<i32>()?, [0, 0]);
    assert_eq!(i.not_equal_scalar(big)?.to_vec::<i32>()?, [1, 1]);
    Ok(())
});
