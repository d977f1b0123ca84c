//! Casts between all 64 dtype pairs, conj/real/imag, element access, allclose and ==;
//! all but the host accessors also on the GPU through `device_test!` (one `SKIP` line
//! per test without one).
#![deny(unused_must_use)]

mod common;

use common::{on, random_on, random_vec, rng, TestResult};
use ctensor_aten::{bf16, c32, c64, f16, DataType, Device, DeviceType, Error, Scalar, Tensor};

const CPU: DeviceType = DeviceType::Cpu;

/// Values exact in all eight types (bf16 keeps 8 significant bits).
const EXACT: [f64; 9] = [0.0, 1.0, -3.0, 42.0, 100.0, -128.0, 255.0, 7.0, -64.0];
/// Values exact in the six floating-point types but not in integers.
const FRACTIONS: [f64; 9] = [0.5, -0.25, 1.5, 3.125, -0.0078125, 96.5, 0.0, -1.75, 254.0];

fn round_trip_through<D: Device, S: Scalar>() -> TestResult {
    let values = if S::DTYPE.is_integer() {
        EXACT
    } else {
        FRACTIONS
    };
    let src_vals: Vec<S> = EXACT.iter().map(|&x| S::cast_from(x)).collect();
    let frac: Vec<S> = values.iter().map(|&x| S::cast_from(x)).collect();
    let src = on::<D>(Tensor::from_slice(&src_vals, &[3, 3])?);
    let frac = on::<D>(Tensor::from_slice(&frac, &[3, 3])?);
    for dt in DataType::ALL {
        if dt.is_float() {
            let back = frac.cast(dt)?.cast(S::DTYPE)?;
            assert!(
                back == frac,
                "{} -> {dt} -> {} (fractions)",
                S::DTYPE,
                S::DTYPE
            );
        }
        let there = src.cast(dt)?;
        assert_eq!((there.dtype(), there.dims()), (dt, &[3usize, 3][..]));
        let back = there.cast(S::DTYPE)?;
        assert!(back == src, "{} -> {dt} -> {}", S::DTYPE, S::DTYPE);
        // And the intermediate holds the same numbers.
        assert!(there.allclose(&src, 0.0, 0.0)?, "{} -> {dt}", S::DTYPE);
    }
    Ok(())
}

device_test!(cast_round_trips_for_all_64_pairs, D -> Result {
    for_all_dtypes!(round_trip_through, D);
    Ok(())
});

device_test!(cast_rounding_follows_the_documented_rules, D -> Result {
    let t = on::<D>(Tensor::from_slice(&[2.7f64, -2.7, 1e10, f64::NAN, 0.1, 1.0 + 1e-12], &[6])?);
    assert_eq!(
        t.cast(DataType::Int)?.to_vec::<i32>()?,
        [2, -2, i32::MAX, 0, 0, 1]
    );
    let h = t.cast(DataType::Half)?.to_vec::<f16>()?;
    assert_eq!(
        h[4].to_f64(),
        1638.0 / 16384.0,
        "0.1 rounds to the nearest f16"
    );
    assert_eq!(h[5], f16::ONE);
    assert!(h[2].is_infinite());
    let f = t.cast(DataType::Float)?.to_vec::<f32>()?;
    assert_eq!(f[5], 1.0f32);
    let big = on::<D>(Tensor::from_slice(&[(1i64 << 53) + 1, (1i64 << 32) + 5], &[2])?);
    assert_eq!(
        big.cast(DataType::Double)?.to_vec::<f64>()?[0],
        (1u64 << 53) as f64
    );
    assert_eq!(
        big.cast(DataType::Int)?.to_vec::<i32>()?[1],
        5,
        "i64 -> i32 wraps"
    );
    let b = on::<D>(Tensor::from_slice(&[257i32, 259], &[2])?)
        .cast(DataType::BFloat16)
        ?;
    assert_eq!(
        b.to_vec::<bf16>()
            ?
            .iter()
            .map(|x| x.to_f32())
            .collect::<Vec<_>>(),
        [256.0, 260.0]
    );
    let z = on::<D>(Tensor::from_slice(&[c64::new(1.5, -2.5)], &[1])?);
    assert_eq!(
        z.cast(DataType::Double)?.to_vec::<f64>()?,
        [1.5],
        "complex -> real keeps re"
    );
    assert_eq!(
        z.cast(DataType::ComplexFloat)
            ?
            .to_vec::<c32>()
            ?,
        [c32::new(1.5, -2.5)]
    );
    let r = on::<D>(Tensor::from_slice(&[3i32], &[1])?)
        .cast(DataType::ComplexDouble)
        ?;
    assert_eq!(r.to_vec::<c64>()?, [c64::new(3.0, 0.0)]);
    Ok(())
});

device_test!(cast_of_views_and_column_major, D -> Result {
    let (t, v) = random_on::<D, f64>(&mut rng(31), &[4, 5]);
    let view = t.t()?.narrow(0, 1, 3)?;
    let c = view.cast(DataType::Float)?;
    let want: Vec<f32> = (1..4)
        .flat_map(|j| (0..4).map(move |i| (i, j)))
        .map(|(i, j)| v[i * 5 + j] as f32)
        .collect();
    assert_eq!(c.to_vec::<f32>()?, want);
    assert!(t
        .t()
        ?
        .cast(DataType::Int64)
        ?
        .is_fortran_contiguous());
        Ok(())
});

device_test!(conj_real_imag, D -> Result {
    let (z, v) = random_on::<D, c64>(&mut rng(32), &[3, 4]);
    let cz = z.conj()?;
    assert!(!cz.shares_memory_with(&z));
    assert_eq!(
        cz.to_vec::<c64>()?,
        v.iter().map(|x| x.conj()).collect::<Vec<_>>()
    );
    let re = z.real()?;
    let im = z.imag()?;
    assert_eq!(re.dtype(), DataType::Double);
    assert_eq!(
        re.to_vec::<f64>()?,
        v.iter().map(|x| x.re).collect::<Vec<_>>()
    );
    assert_eq!(
        im.to_vec::<f64>()?,
        v.iter().map(|x| x.im).collect::<Vec<_>>()
    );
    // Views: writing the imaginary parts of a transposed view changes z.
    let mut im_t = z.t()?.imag()?;
    im_t.zero()?;
    assert_eq!(
        z.to_vec::<c64>()?,
        v.iter().map(|x| c64::new(x.re, 0.0)).collect::<Vec<_>>()
    );
    let (x, xv) = random_on::<D, f32>(&mut rng(33), &[5]);
    assert_eq!(x.conj()?.to_vec::<f32>()?, xv);
    assert!(x.real()?.shares_memory_with(&x));
    assert_eq!(x.imag()?.to_vec::<f32>()?, [0.0; 5]);
    let cf = on::<D>(Tensor::from_slice(&[c32::new(1.0, 2.0)], &[1])?);
    assert_eq!(cf.imag()?.to_vec::<f32>()?, [2.0]);
    Ok(())
});

#[test]
fn element_access_and_its_errors() -> TestResult {
    let mut t = Tensor::zeros(DataType::Int64, CPU, &[2, 3])?;
    t.set_at(&[1, 2], 9i64)?;
    assert_eq!(t.get_value::<i64>(&[1, 2])?, 9);
    let e = t.get_value::<f64>(&[0, 0]).unwrap_err();
    assert!(matches!(
        e,
        Error::DTypeMismatch {
            op: "get_value",
            expected: DataType::Int64,
            got: DataType::Double
        }
    ));
    assert!(matches!(
        t.get_value::<i64>(&[0]),
        Err(Error::ShapeMismatch {
            op: "get_value",
            ..
        })
    ));
    let e = t.get_value::<i64>(&[0, 3]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::OutOfRange {
                op: "get_value",
                given: 3,
                ..
            }
        ),
        "{e}"
    );
    assert!(matches!(
        t.set_at(&[2, 0], 1i64),
        Err(Error::OutOfRange { .. })
    ));
    assert!(matches!(
        t.set_value(1i32),
        Err(Error::DTypeMismatch { .. })
    ));
    assert!(matches!(
        t.to_vec::<i32>(),
        Err(Error::DTypeMismatch { .. })
    ));
    assert!(matches!(
        t.as_ptr::<f32>(),
        Err(Error::DTypeMismatch { .. })
    ));
    {
        let mut acc = t.accessor_mut::<i64, 2>()?;
        acc[[0, 1]] = 4;
        acc.set([0, 0], 1)?;
        assert!(matches!(
            acc.set([5, 0], 1),
            Err(Error::OutOfRange { op: "accessor", .. })
        ));
    }
    let acc = t.accessor::<i64, 2>()?;
    assert_eq!((acc[[0, 0]], acc[[0, 1]], acc.get([1, 2])?), (1, 4, 9));
    assert!(matches!(acc.get([0, 3]), Err(Error::OutOfRange { .. })));
    drop(acc);
    assert!(matches!(
        t.accessor::<i64, 3>().map(|_| ()),
        Err(Error::ShapeMismatch { op: "accessor", .. })
    ));
    // A transposed accessor uses the strides.
    let tt = t.t()?;
    assert_eq!(tt.accessor::<i64, 2>()?[[2, 1]], 9);
    // data() needs a dense tensor.
    let e = t.narrow(1, 0, 2)?.data::<i64>().map(|_| ()).unwrap_err();
    assert!(matches!(e, Error::NotContiguous { op: "data", .. }), "{e}");
    assert_eq!(
        &*tt.data::<i64>()?,
        &[1, 4, 0, 0, 0, 9],
        "column-major data in memory order"
    );
    Ok(())
}

#[test]
#[should_panic(expected = "out of range")]
fn accessor_index_out_of_range_panics_like_a_slice() {
    let t = Tensor::zeros(DataType::Float, CPU, &[2, 2]).unwrap();
    let acc = t.accessor::<f32, 2>().unwrap();
    let _ = acc[[2, 0]];
}

device_test!(allclose_and_exact_equality, D -> Result {
    let v = random_vec::<f64>(&mut rng(34), 300);
    let a = on::<D>(Tensor::from_slice(&v, &[300])?);
    let bumped: Vec<f64> = v.iter().map(|x| x + 1e-9 * (1.0 + x.abs())).collect();
    let b = on::<D>(Tensor::from_slice(&bumped, &[300])?);
    assert!(a != b);
    assert!(a.allclose(&b, 1e-8, 1e-8)?);
    assert!(!a.allclose(&b, 1e-12, 0.0)?);
    let f = a.cast(DataType::Float)?;
    assert!(
        f.allclose(&a, f32::EPSILON as f64, 0.0)?,
        "mixed dtypes compare by value"
    );
    let nan = on::<D>(Tensor::from_slice(&[f64::NAN], &[1])?);
    assert!(!nan.allclose(&nan, 1.0, 1.0)? && nan != nan);
    let inf = on::<D>(Tensor::from_slice(&[f64::INFINITY], &[1])?);
    assert!(inf.allclose(&inf, 0.0, 0.0)?);
    let big = on::<D>(Tensor::from_slice(&[i64::MAX], &[1])?);
    let big1 = on::<D>(Tensor::from_slice(&[i64::MAX - 1], &[1])?);
    assert!(
        !big.allclose(&big1, 0.0, 0.0)?,
        "integers compare exactly"
    );
    assert!(big.allclose(&big1, 0.0, 1.0)?);
    assert!(matches!(
        a.allclose(&a.reshape(&[3, 100])?, 0.0, 0.0),
        Err(Error::ShapeMismatch { .. })
    ));
    assert!(matches!(
        a.allclose(&a, -1.0, 0.0),
        Err(Error::InvalidArgument { op: "allclose", .. })
    ));
    assert!(a == a.t()?.contiguous()?);
    assert!(
        a != a.cast(DataType::Float)?,
        "== requires the same dtype"
    );
    Ok(())
});
