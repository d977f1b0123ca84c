//! `argmax`/`argmin` and `cumsum` against plain loops over the same values, for every
//! dtype they take, every axis of awkward shapes (0, 1, odd, > 256), views, ties, NaN,
//! and empty tensors with huge other dimensions, on the CPU and (through
//! `device_test!`) the GPU.
#![deny(unused_must_use)]

mod common;

use common::*;
use ctensor_aten::{c64, DataType, Error, Tensor};
use rand::Rng;
use DataType::*;

/// What a helper that can fail returns.
type Fallible<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn values(t: &Tensor) -> Fallible<Vec<c64>> {
    Ok(t.cast(ComplexDouble)?.to_vec::<c64>()?)
}

const ORDERED: [DataType; 6] = [Double, Float, Int, Int64, Half, BFloat16];
const ALL: [DataType; 8] = [
    Double,
    Float,
    Int,
    Int64,
    Half,
    BFloat16,
    ComplexFloat,
    ComplexDouble,
];
const SHAPES: [&[usize]; 5] = [&[1], &[7], &[3, 300], &[4, 5, 6], &[260, 3]];

/// `(outer, len, inner)` of `axis`: the tensor as `[outer, len, inner]` row-major.
fn split(shape: &[usize], axis: usize) -> (usize, usize, usize) {
    (
        shape[..axis].iter().product(),
        shape[axis],
        shape[axis + 1..].iter().product(),
    )
}

/// Few distinct values (ties everywhere), a NaN here and there for float types.
fn tied(dt: DataType, n: usize, seed: u64) -> Fallible<Tensor> {
    Ok({
        let mut r = rng(seed);
        let v: Vec<f64> = (0..n)
            .map(|k| {
                if dt.is_float() && k % 97 == 41 {
                    f64::NAN
                } else {
                    r.gen_range(-3i32..4) as f64
                }
            })
            .collect();
        Tensor::from_slice(&v, &[n])?.cast(dt)?
    })
}

/// The index of the first maximum (minimum) of `row`, the first NaN winning.
fn first_extreme(row: &[f64], max: bool) -> i64 {
    let mut at = 0;
    for (j, &v) in row.iter().enumerate() {
        if row[at].is_nan() {
            break;
        }
        if v.is_nan() || (max && v > row[at]) || (!max && v < row[at]) {
            at = j;
        }
    }
    at as i64
}

device_test!(argmax_and_argmin_match_a_loop, D -> Result {
    for dt in ORDERED {
        for (s, shape) in SHAPES.iter().enumerate() {
            let n: usize = shape.iter().product();
            let x = on::<D>(tied(dt, n, 100 + s as u64)?.reshape(&shape.iter().map(|&d| d as i64).collect::<Vec<_>>())?);
            let xs: Vec<f64> = values(&x)?.iter().map(|z| z.re).collect();
            for axis in 0..shape.len() {
                let (outer, len, inner) = split(shape, axis);
                for max in [true, false] {
                    let got = if max { x.argmax(axis) } else { x.argmin(axis) }?;
                    assert_eq!(got.dtype(), Int64);
                    let mut kept = shape.to_vec();
                    kept.remove(axis);
                    assert_eq!(got.dims(), kept);
                    let got = got.to_vec::<i64>()?;
                    for o in 0..outer {
                        for i in 0..inner {
                            let row: Vec<f64> = (0..len).map(|j| xs[(o * len + j) * inner + i]).collect();
                            assert_eq!(got[o * inner + i], first_extreme(&row, max), "{dt} {shape:?} axis {axis} max {max} at ({o}, {i})");
                        }
                    }
                }
            }
            // The whole tensor: the flat index.
            let want = first_extreme(&xs, true) as usize;
            assert_eq!(x.argmax_all()?, want, "{dt} {shape:?} argmax_all");
        }
    }
    // A transposed view is read in its logical order.
    let m = on::<D>(tied(Double, 12, 7)?.reshape(&[3, 4])?);
    let t = m.t()?;
    assert_eq!(t.argmax(1)?.to_vec::<i64>()?, t.contiguous()?.argmax(1)?.to_vec::<i64>()?);
    assert_eq!(t.argmin_all()?, t.contiguous()?.argmin_all()?);
    Ok(())
});

device_test!(argmax_refuses_what_has_no_answer, D -> Result {
    let c = on::<D>(Tensor::from_slice(&[c64::new(1.0, 2.0)], &[1])?);
    assert!(matches!(c.argmax(0).unwrap_err(), Error::UnsupportedDType { op: "argmax", .. }));
    let x = on::<D>(Tensor::from_slice(&[1.0f64, 2.0], &[2])?);
    assert!(matches!(x.argmin(1).unwrap_err(), Error::OutOfRange { .. }));
    // An empty axis has no extreme; no rows to reduce is an empty answer.
    let e = on::<D>(Tensor::new(Double, ctensor_aten::DeviceType::Cpu, &[3, 0])?);
    let err = e.argmax(1).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { op: "argmax", .. }), "{err}");
    assert!(e.argmin_all().is_err());
    let huge = on::<D>(Tensor::new(Float, ctensor_aten::DeviceType::Cpu, &[0, 1 << 40])?);
    assert_eq!(huge.argmax(1)?.dims(), [0]);
    Ok(())
});

device_test!(cumsum_matches_a_loop, D -> Result {
    let mut r = rng(47);
    for dt in ALL {
        for shape in SHAPES {
            let n: usize = shape.iter().product();
            let v: Vec<c64> = (0..n).map(|_| c64::new(r.gen_range(-9i32..10) as f64, r.gen_range(-9i32..10) as f64)).collect();
            let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
            let x = on::<D>(Tensor::from_slice(&v, &[n])?.cast(dt)?.reshape(&dims)?);
            let xs = values(&x)?;
            for axis in 0..shape.len() {
                let (outer, len, inner) = split(shape, axis);
                let got = x.cumsum(axis)?;
                assert_eq!(got.dims(), shape);
                assert_eq!(got.dtype(), if dt == Int { Int64 } else { dt });
                let got = values(&got)?;
                for o in 0..outer {
                    for i in 0..inner {
                        let mut acc = c64::new(0.0, 0.0);
                        for j in 0..len {
                            let k = (o * len + j) * inner + i;
                            acc += xs[k];
                            // Small integers: partial sums are exact in f32 (the sum of
                            // f16/bf16), so the result is the exact sum rounded once.
                            let want = values(&Tensor::from_slice(&[acc], &[1])?.cast(dt)?)?[0];
                            assert_eq!(got[k], want, "{dt} {shape:?} axis {axis} at {k}");
                        }
                    }
                }
            }
        }
    }
    Ok(())
});

device_test!(cumsum_of_views_empties_and_wrapping_integers, D -> Result {
    // A transposed view sums along its logical axis.
    let m = on::<D>(Tensor::from_slice(&[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?);
    let t = m.t()?;
    assert_eq!(t.cumsum(1)?.to_vec::<f64>()?, [1.0, 5.0, 2.0, 7.0, 3.0, 9.0]);
    assert_eq!(t.cumsum(0)?.to_vec::<f64>()?, [1.0, 4.0, 3.0, 9.0, 6.0, 15.0]);
    // f16 accumulates in f32: 3000 ones reach 3000 (an f16 running sum stops at 2048).
    let ones = on::<D>(Tensor::from_slice(&vec![1.0f64; 3000], &[3000])?.cast(Half)?);
    let s = values(&ones.cumsum(0)?)?;
    for (k, z) in s.iter().enumerate() {
        let want = values(&Tensor::from_slice(&[(k + 1) as f64], &[1])?.cast(Half)?)?[0];
        assert_eq!(*z, want, "f16 cumsum of ones at {k}");
    }
    // i64 wraps; i32 sums in i64 and so does not.
    let big = on::<D>(Tensor::from_slice(&[i64::MAX, 1], &[2])?);
    assert_eq!(big.cumsum(0)?.to_vec::<i64>()?, [i64::MAX, i64::MIN]);
    let i = on::<D>(Tensor::from_slice(&[i32::MAX, 1], &[2])?);
    assert_eq!(i.cumsum(0)?.to_vec::<i64>()?, [i32::MAX as i64, i32::MAX as i64 + 1]);
    // Empty with a huge other dimension, along either axis.
    let huge = on::<D>(Tensor::new(Double, ctensor_aten::DeviceType::Cpu, &[0, 1 << 40])?);
    assert_eq!(huge.cumsum(0)?.dims(), [0, 1 << 40]);
    assert_eq!(huge.cumsum(1)?.dims(), [0, 1 << 40]);
    assert!(matches!(huge.cumsum(2).unwrap_err(), Error::OutOfRange { .. }));
    // NaN and infinities propagate from where they stand, and only forward along the axis.
    let v = [1.0f64, f64::NAN, 2.0, 3.0, f64::INFINITY, 1.0, f64::NEG_INFINITY, 4.0];
    let h = on::<D>(Tensor::from_slice(&v, &[2, 4])?);
    let rows = h.cumsum(1)?.to_vec::<f64>()?;
    assert_eq!(rows[0], 1.0);
    assert!(rows[1..4].iter().all(|x| x.is_nan()), "{rows:?}");
    assert_eq!(rows[4..6], [f64::INFINITY, f64::INFINITY]);
    assert!(rows[6..].iter().all(|x| x.is_nan()), "inf - inf: {rows:?}");
    let cols = h.cumsum(0)?.to_vec::<f64>()?;
    assert_eq!(cols[..4].iter().filter(|x| x.is_nan()).count(), 1);
    assert!(cols[5].is_nan() && cols[6].is_infinite() && cols[7] == 7.0, "{cols:?}");
    // Large floats to rounding: a 5 000-long row of random values.
    let v: Vec<f64> = random_vec(&mut rng(5), 5000);
    let x = on::<D>(Tensor::from_slice(&v, &[5000])?);
    let got = x.cumsum(0)?.to_vec::<f64>()?;
    let (mut acc, mut mag) = (0.0f64, 0.0f64);
    for (k, a) in v.iter().enumerate() {
        acc += a;
        mag += a.abs();
        assert!((got[k] - acc).abs() <= 1e-15 * (k as f64 + 2.0) * mag, "f64 cumsum at {k}");
    }
    Ok(())
});
