//! Random tensors: reproducible by seed, one stream across successive draws, values in
//! range for every float dtype, the statistics of their distributions, the first value
//! against Random123's known answer, and the same values on the GPU as on the CPU.
#![deny(unused_must_use)]

mod common;

use ctensor_aten::{c64, DataType, Device, DeviceType, Error, Generator, Tensor};
use DataType::*;

/// What a helper that can fail returns.
type Fallible<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// What a test returns: a failing step names its error.
type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

const FLOATS: [DataType; 6] = [Float, Double, ComplexFloat, ComplexDouble, Half, BFloat16];

fn values(t: &Tensor) -> Fallible<Vec<c64>> {
    Ok(t.cast(ComplexDouble)?.to_vec::<c64>()?)
}

#[test]
fn the_first_value_is_random123s_known_answer() -> TestResult {
    // philox4x32-10 of counter 0, key 0 starts with 6627e8d5 e169c58d (kat_vectors).
    let u = Tensor::rand(Double, DeviceType::Cpu, &[1], 0)?.item::<f64>()?;
    assert_eq!(
        u,
        (0x6627e8d5_e169c58d_u64 >> 11) as f64 / (1u64 << 53) as f64
    );
    // Lower precisions take the top bits of the same word.
    let f = Tensor::rand(Float, DeviceType::Cpu, &[1], 0)?.item::<f32>()?;
    assert_eq!(f as f64, (0x6627e8d5_u64 >> 8) as f64 / (1u64 << 24) as f64);
    Ok(())
}

device_test!(draws_are_reproducible_and_successive_draws_are_one_stream, D -> Result {
    let a = Tensor::randn(ComplexDouble, D::TYPE, &[4, 5], 7)?;
    let b = Tensor::randn(ComplexDouble, D::TYPE, &[4, 5], 7)?;
    assert_eq!(values(&a)?, values(&b)?);
    let c = Tensor::randn(ComplexDouble, D::TYPE, &[4, 5], 8)?;
    assert!(values(&a)?.iter().zip(values(&c)?).all(|(x, y)| *x != y), "another seed, other values");
    let mut g = Generator::new(7);
    let first = g.rand(Double, D::TYPE, &[3])?;
    assert_eq!(g.offset(), 3);
    let second = g.rand(Double, D::TYPE, &[2, 2])?;
    let all = Tensor::rand(Double, D::TYPE, &[7], 7)?.to_vec::<f64>()?;
    let got = [first.to_vec::<f64>()?, second.to_vec::<f64>()?].concat();
    assert_eq!(got, all);
    g.set_offset(3);
    assert_eq!(g.rand(Double, D::TYPE, &[4])?.to_vec::<f64>()?, all[3..]);
    assert_eq!(g.seed(), 7);
    // A complex draw takes two values per element.
    let mut g = Generator::new(1);
    g.randn(ComplexFloat, D::TYPE, &[5])?;
    assert_eq!(g.offset(), 10);
    Ok(())
});

device_test!(every_float_dtype_gets_values_in_range_and_integers_are_refused, D -> Result {
    for dt in FLOATS {
        let u = Tensor::rand(dt, D::TYPE, &[3, 1000], 3)?;
        assert_eq!((u.dtype(), u.device(), u.dims()), (dt, D::TYPE, &[3, 1000][..]));
        for v in values(&u)? {
            assert!((0.0..1.0).contains(&v.re), "{dt}: {v}");
            assert!(if dt.is_complex() { (0.0..1.0).contains(&v.im) } else { v.im == 0.0 }, "{dt}: {v}");
        }
        let n = Tensor::randn(dt, D::TYPE, &[7], 3)?;
        assert!(values(&n)?.iter().all(|v| v.re.is_finite() && v.im.is_finite()));
    }
    // Lower precisions are the same stream with fewer bits: f32 = f64 truncated to 24 bits.
    let u64s = Tensor::rand(Double, D::TYPE, &[500], 11)?.to_vec::<f64>()?;
    let u32s = Tensor::rand(Float, D::TYPE, &[500], 11)?.to_vec::<f32>()?;
    for (d, f) in u64s.iter().zip(&u32s) {
        assert_eq!(*f as f64, (d * (1u64 << 24) as f64).floor() / (1u64 << 24) as f64);
    }
    for dt in [Int, Int64] {
        let e = Tensor::rand(dt, D::TYPE, &[2], 0).unwrap_err();
        assert!(matches!(e, Error::UnsupportedDType { op: "rand", .. }), "{e}");
    }
    let z = Tensor::randn(Float, D::TYPE, &[0, 1 << 40], 0)?;
    assert_eq!(z.dims(), [0, 1 << 40]);
    assert!(Tensor::randn(Float, D::TYPE, &[1 << 62, 1 << 3], 0).is_err(), "overflow, not an abort");
    Ok(())
});

/// Mean and variance of `v`.
fn moments(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    (m, v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n)
}

device_test!(uniform_and_normal_values_have_their_moments, D -> Result {
    let n = 200_000;
    let tol = |sd: f64| 6.0 * sd / (n as f64).sqrt(); // six standard errors
    let u: Vec<f64> = Tensor::rand(Double, D::TYPE, &[n], 5)?.to_vec()?;
    let (m, v) = moments(&u);
    assert!((m - 0.5).abs() < tol((1.0f64 / 12.0).sqrt()), "uniform mean {m}");
    assert!((v - 1.0 / 12.0).abs() < tol(0.0745), "uniform variance {v}"); // sd of (u-½)² is √(1/180)
    let z: Vec<f64> = Tensor::randn(Double, D::TYPE, &[n], 5)?.to_vec()?;
    let (m, v) = moments(&z);
    assert!(m.abs() < tol(1.0), "normal mean {m}");
    assert!((v - 1.0).abs() < tol(2f64.sqrt()), "normal variance {v}");
    let below = z.iter().filter(|&&x| x < -1.0).count() as f64 / n as f64;
    assert!((below - 0.158_655_25).abs() < tol(0.37), "P(z < -1) = {below}");
    // Complex: E|z|² = 1, parts of variance 1/2 and uncorrelated.
    let c = values(&Tensor::randn(ComplexDouble, D::TYPE, &[n], 6)?)?;
    let (re, im): (Vec<f64>, Vec<f64>) = c.iter().map(|z| (z.re, z.im)).unzip();
    let (_, vr) = moments(&re);
    let (_, vi) = moments(&im);
    assert!((vr - 0.5).abs() < tol(0.71) && (vi - 0.5).abs() < tol(0.71), "{vr} {vi}");
    let corr = re.iter().zip(&im).map(|(a, b)| a * b).sum::<f64>() / n as f64;
    assert!(corr.abs() < tol(0.5), "correlation {corr}");
    Ok(())
});

device_test!(the_gpu_draws_the_cpus_values, D -> Result {
    for dt in FLOATS {
        let here = values(&Tensor::rand(dt, D::TYPE, &[3000], 99)?)?;
        let host = values(&Tensor::rand(dt, DeviceType::Cpu, &[3000], 99)?)?;
        assert_eq!(here, host, "{dt} uniform values are bit for bit the same");
        let here = values(&Tensor::randn(dt, D::TYPE, &[3000], 99)?)?;
        let host = values(&Tensor::randn(dt, DeviceType::Cpu, &[3000], 99)?)?;
        // Normal values go through each device's log and cos: a few units in the last
        // place of f64, which survive rounding to the dtype only at a rounding boundary.
        let unit = match dt.real_type() {
            Half => 9.8e-4,
            BFloat16 => 7.9e-3,
            Float => f32::EPSILON as f64,
            _ => f64::EPSILON,
        };
        for (a, b) in here.iter().zip(&host) {
            assert!((a - b).norm() <= unit * b.norm().max(1.0), "{dt}: {a} vs {b}");
        }
    }
    Ok(())
});
