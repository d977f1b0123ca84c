//! Every constructor, for every data type, and the errors creation can give; the
//! constructors also on the GPU through `device_test!` (one `SKIP` line without one).
#![deny(unused_must_use)]

mod common;

use common::{on, random_vec, rng, TestResult};
use ctensor_aten::{DataType, Device, DeviceType, Error, Order, Scalar, Tensor};

const CPU: DeviceType = DeviceType::Cpu;

fn constructors_give_the_values_they_promise<D: Device, T: Scalar>() -> TestResult {
    let dt = T::DTYPE;
    for shape in [
        &[][..],
        &[0],
        &[1],
        &[7],
        &[3, 5],
        &[2, 3, 4],
        &[2, 1, 3, 2],
    ] {
        let n: usize = shape.iter().product();
        for t in [
            Tensor::new(dt, D::TYPE, shape)?,
            Tensor::zeros(dt, D::TYPE, shape)?,
            Tensor::empty(dt, D::TYPE, shape)?,
        ] {
            assert_eq!((t.dtype(), t.device(), t.dims()), (dt, D::TYPE, shape));
            assert!(t.is_contiguous() && t.owns_memory());
            assert!(t.to_vec::<T>()? == vec![T::zero(); n], "{dt} {shape:?}");
        }
        let ones = Tensor::ones(dt, D::TYPE, shape)?;
        assert!(ones.to_vec::<T>()? == vec![T::one(); n]);
        let v = random_vec::<T>(&mut rng(n as u64), 1)[0];
        let full = Tensor::full(v, D::TYPE, shape)?;
        assert_eq!(full.dtype(), dt);
        assert!(full.to_vec::<T>()? == vec![v; n]);
        let data = random_vec::<T>(&mut rng(7), n);
        let a = on::<D>(Tensor::from_slice(&data, shape)?);
        let b = on::<D>(Tensor::from_vec(data.clone(), shape)?);
        assert!(a.to_vec::<T>()? == data && b.to_vec::<T>()? == data);
        assert_eq!(a.as_ptr::<T>()? as usize % 64, 0, "64-byte aligned");
        let f = Tensor::new_in_order(dt, D::TYPE, shape, Order::ColMajor)?;
        assert!(f.is_fortran_contiguous());
    }
    let s = on::<D>(Tensor::scalar(T::one())?);
    assert_eq!(s.ndim(), 0);
    assert!(s.get_value::<T>(&[])? == T::one());
    for n in [0, 1, 4, 300] {
        let eye = Tensor::eye(dt, D::TYPE, n)?;
        assert_eq!(eye.dims(), [n, n]);
        let v = eye.to_vec::<T>()?;
        for i in 0..n {
            for j in 0..n {
                let want = if i == j { T::one() } else { T::zero() };
                assert!(v[i * n + j] == want, "{dt} eye({n})[{i},{j}]");
            }
        }
    }
    let r = Tensor::arange(dt, D::TYPE, 0.0, 5.0, 1.0)?;
    let want: Vec<T> = (0..5).map(|i| T::cast_from(i as f64)).collect();
    assert!(r.to_vec::<T>()? == want, "{dt}");
    Ok(())
}

device_test!(constructors_every_dtype, D -> Result {
    for_all_dtypes!(constructors_give_the_values_they_promise, D);
    Ok(())
});

device_test!(arange_counts_like_numpy, D -> Result {
    let a = Tensor::arange(DataType::Double, D::TYPE, 1.0, 2.0, 0.25)?;
    assert_eq!(a.to_vec::<f64>()?, [1.0, 1.25, 1.5, 1.75]);
    let b = Tensor::arange(DataType::Double, D::TYPE, 5.0, 0.0, -2.0)?;
    assert_eq!(b.to_vec::<f64>()?, [5.0, 3.0, 1.0]);
    assert_eq!(
        Tensor::arange(DataType::Int, D::TYPE, 3.0, 1.0, 1.0)
            ?
            .numel(),
        0
    );
    let e = Tensor::arange(DataType::Double, D::TYPE, 0.0, 1e300, 1.0).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Overflow {
                op: "Tensor::arange",
                ..
            }
        ),
        "{e}"
    );
    for step in [0.0, f64::NAN, f64::INFINITY] {
        let e = Tensor::arange(DataType::Float, D::TYPE, 0.0, 1.0, step).unwrap_err();
        assert!(
            matches!(
                e,
                Error::InvalidArgument {
                    op: "Tensor::arange",
                    ..
                }
            ),
            "{e}"
        );
    }
    Ok(())
});

#[test]
fn from_slice_with_the_wrong_shape_is_a_shape_mismatch() -> TestResult {
    let e = Tensor::from_slice(&[1.0f64, 2.0, 3.0], &[2, 2]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::ShapeMismatch {
                op: "Tensor::from_slice",
                ..
            }
        ),
        "{e}"
    );
    assert!(
        e.to_string().contains("3 elements") && e.to_string().contains("4 elements"),
        "{e}"
    );
    Ok(())
}

#[test]
fn gpu_requests_without_a_gpu_are_device_unavailable_not_silent() -> TestResult {
    if ctensor_aten::gpu_available() {
        println!("SKIP: a GPU is usable here; tests/gpu_tensors.rs covers GPU tensors");
        return Ok(());
    }
    for dt in DataType::ALL {
        let e = Tensor::new(dt, DeviceType::Gpu, &[4]).unwrap_err();
        assert!(
            matches!(
                e,
                Error::DeviceUnavailable {
                    device: DeviceType::Gpu,
                    ..
                }
            ),
            "{e}"
        );
    }
    let e = Tensor::ones(DataType::Double, DeviceType::Gpu, &[2]).unwrap_err();
    assert!(matches!(e, Error::DeviceUnavailable { .. }));
    let t = Tensor::ones(DataType::Double, CPU, &[2])?;
    assert!(matches!(
        t.to_device(DeviceType::Gpu),
        Err(Error::DeviceUnavailable { .. })
    ));
    Ok(())
}

#[test]
fn impossible_sizes_are_overflow_or_alloc_errors() -> TestResult {
    let e = Tensor::new(DataType::Float, CPU, &[usize::MAX, 2]).unwrap_err();
    assert!(matches!(e, Error::Overflow { .. }), "{e}");
    let e = Tensor::new(DataType::ComplexDouble, CPU, &[usize::MAX / 8]).unwrap_err();
    assert!(matches!(e, Error::Overflow { .. }), "{e}");
    // 2^48 bytes is more than the 2^47-byte user address space of x86-64 and arm64.
    let e = Tensor::new(DataType::Double, CPU, &[1 << 45]).unwrap_err();
    assert!(
        matches!(e, Error::Alloc { bytes, .. } if bytes == 1 << 48),
        "{e}"
    );
    Ok(())
}

#[test]
fn tensor_is_send_and_sync() -> TestResult {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Tensor>();
    assert_send_sync::<ctensor_aten::TensorMap>();
    // And it really is used from several threads at once.
    let t = std::sync::Arc::new(Tensor::arange(DataType::Double, CPU, 0.0, 1000.0, 1.0)?);
    let sums: Vec<f64> = (0..4)
        .map(|_| {
            let t = t.clone();
            std::thread::spawn(move || t.to_vec::<f64>().unwrap().iter().sum::<f64>())
        })
        .map(|h| h.join().unwrap())
        .collect();
    assert_eq!(sums, [499500.0; 4]);
    Ok(())
}
