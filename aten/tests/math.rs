//! Element-wise math functions on both devices against independent references:
//! num_complex's implementations for complex arguments (other code than ours), power
//! series near 0 for `log1p`/`expm1`, closed forms (tan's limit ±i, signs, half-to-even
//! rounding), f32 math rounded once for f16/bf16, integers computed in f64, and the
//! functions a type does not have.

mod common;

use common::*;
use ctensor_aten::{bf16, c64, f16, DataType, Error, Tensor};
use DataType::*;

fn values(t: &Tensor) -> Vec<c64> {
    t.cast(ComplexDouble).unwrap().to_vec::<c64>().unwrap()
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

device_test!(complex_functions_match_num_complex, D => {
    let pts = [c64::new(0.3, -1.2), c64::new(-2.5, 0.7), c64::new(4.0, 3.0), c64::new(-0.8, -0.1), c64::new(1.7, 0.0)];
    for (dt, tol) in [(ComplexDouble, 1e-14), (ComplexFloat, 2e-6)] {
        let x = on::<D>(Tensor::from_slice(&pts, &[5]).unwrap().cast(dt).unwrap());
        let xs = values(&x);
        for (name, f, reference) in OPS {
            let got = values(&f(&x).unwrap());
            for (k, z) in xs.iter().enumerate() {
                close(got[k], reference(*z), tol, &format!("{dt} {name}({z})"));
            }
        }
        // sign(z) = z / |z|, 0 for 0.
        let s = values(&on::<D>(Tensor::from_slice(&[c64::new(3.0, -4.0), c64::new(0.0, 0.0)], &[2]).unwrap().cast(dt).unwrap()).sign().unwrap());
        close(s[0], c64::new(0.6, -0.8), tol, "sign");
        assert_eq!(s[1], c64::new(0.0, 0.0));
        // No floor, ceiling or rounding for complex numbers.
        assert!(matches!(x.floor().unwrap_err(), Error::UnsupportedDType { op: "floor", .. }));
    }
});

device_test!(small_and_large_arguments_keep_their_accuracy, D => {
    // Near 0 the series z − z²/2 (log1p) and z + z²/2 (expm1) are exact to f64 here,
    // where ln(1 + z) and exp(z) − 1 would cancel.
    let z = c64::new(1e-9, -3e-10);
    let x = on::<D>(Tensor::from_slice(&[z], &[1]).unwrap());
    close(values(&x.log1p().unwrap())[0], z - z * z * 0.5, 1e-15, "log1p near 0");
    close(values(&x.expm1().unwrap())[0], z + z * z * 0.5, 1e-15, "expm1 near 0");
    let r = on::<D>(Tensor::from_slice(&[1e-12f64], &[1]).unwrap());
    assert!((r.log1p().unwrap().to_vec::<f64>().unwrap()[0] - (1e-12 - 5e-25)).abs() < 1e-27);
    // tan(x + iy) → ±i for large |y|, where cosh(2y) overflows.
    let t = values(&on::<D>(Tensor::from_slice(&[c64::new(1.0, 400.0), c64::new(-2.0, -400.0)], &[2]).unwrap()).tan().unwrap());
    close(t[0], c64::new(0.0, 1.0), 1e-15, "tan(1 + 400i)");
    close(t[1], c64::new(0.0, -1.0), 1e-15, "tan(-2 - 400i)");
});

device_test!(real_functions_for_every_real_dtype, D => {
    let v = [0.5f64, -1.5, 2.5, -0.5, 0.0, -0.0, 3.25, f64::NAN, 7.0];
    for dt in [Double, Float, Half, BFloat16] {
        let x = on::<D>(Tensor::from_slice(&v, &[9]).unwrap().cast(dt).unwrap());
        let xs: Vec<f64> = values(&x).iter().map(|z| z.re).collect();
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
            ("sign", Tensor::sign, Box::new(|a: f64| if a > 0.0 { 1.0 } else if a < 0.0 { -1.0 } else { a })),
            ("square", Tensor::square, Box::new(move |a| store(a * a))),
        ];
        for (name, f, want) in checks {
            let got = f(&x).unwrap();
            assert_eq!(got.dtype(), dt);
            for (g, a) in values(&got).iter().zip(&xs) {
                let w = want(*a);
                let ok = (g.re - w).abs() <= 4.0 * eps(dt).max(f64::EPSILON) * w.abs().max(1.0)
                    || (g.re.is_nan() && w.is_nan());
                assert!(ok, "{dt} {name}({a}) = {}, want {w}", g.re);
                if *name == *"sign" && *a == 0.0 {
                    assert_eq!(g.re.is_sign_negative(), a.is_sign_negative(), "sign keeps the sign of zero");
                }
            }
        }
    }
    // log of 0 and of a negative number.
    let l = on::<D>(Tensor::from_slice(&[0.0f64, -1.0], &[2]).unwrap()).log().unwrap().to_vec::<f64>().unwrap();
    assert!(l[0] == f64::NEG_INFINITY && l[1].is_nan());
});

device_test!(integers_keep_their_type_or_compute_in_f64, D => {
    let i = on::<D>(Tensor::from_slice(&[-3i32, 0, 46341], &[3]).unwrap());
    assert_eq!(i.sign().unwrap().to_vec::<i32>().unwrap(), [-1, 0, 1]);
    assert_eq!(i.round().unwrap().to_vec::<i32>().unwrap(), [-3, 0, 46341]);
    // 46341² wraps in i32, as integer arithmetic does everywhere in ctensor.
    assert_eq!(i.square().unwrap().to_vec::<i32>().unwrap(), [9, 0, 46341i32.wrapping_mul(46341)]);
    let s = i.sin().unwrap();
    assert_eq!(s.dtype(), Double);
    assert_eq!(s.to_vec::<f64>().unwrap()[0], (-3.0f64).sin());
    let r = on::<D>(Tensor::from_slice(&[4i64], &[1]).unwrap()).rsqrt().unwrap();
    assert_eq!(r.to_vec::<f64>().unwrap(), [0.5]);
});
