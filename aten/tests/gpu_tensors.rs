//! Tensors on the GPU: creation, transfers both ways and within the device, views,
//! `sync`, `clone`, `cast` for every pair, `Display`, a `TensorMap` over a foreign
//! device pointer, ops, and the device-mismatch error, each against the same work on the
//! CPU. Without a GPU every test prints one `SKIP: <test>: <reason>` line and passes.
#![cfg(feature = "cuda")]
#![deny(unused_must_use)]

mod common;

use common::{random_vec, rng, TestResult};
use ctensor_aten::{
    eigh, matmul, solve, DataType, DeviceType, EigBackend, EighRange, Error, Order, Scalar, Tensor,
    TensorMap,
};
use ctensor_base::alloc::Allocation;
use ctensor_base::gpu::copy_d2h;

const GPU: DeviceType = DeviceType::Gpu;
const CPU: DeviceType = DeviceType::Cpu;

fn round_trip_case<T: Scalar>() -> TestResult {
    let mut r = rng(1);
    for shape in [&[][..], &[0], &[1], &[7], &[3, 257], &[1_000_003]] {
        let v = random_vec::<T>(&mut r, shape.iter().product());
        let host = Tensor::from_slice(&v, shape)?;
        let g = host.to_device(GPU)?;
        assert_eq!((g.device(), g.dtype(), g.dims()), (GPU, T::DTYPE, shape));
        assert!(g.owns_memory());
        assert_eq!(g.to_vec::<T>()?, v, "{} {shape:?}", T::DTYPE);
        let g2 = g.to_device(GPU)?; // GPU → GPU, a copy
        assert!(!g2.shares_memory_with(&g));
        let back = g2.to_device(CPU)?;
        assert_eq!(back.to_vec::<T>()?, v);
        assert_eq!(g.try_clone()?.to_vec::<T>()?, v);
    }
    Ok(())
}

gpu_test!(gpu_tensors_round_trip_every_dtype_and_size, -> Result {
    for_all_dtypes!(round_trip_case);
    Ok(())
});

fn views_case<T: Scalar>() -> TestResult {
    let mut r = rng(2);
    let shape = [5, 6, 7];
    let v = random_vec::<T>(&mut r, 210);
    let host = Tensor::from_slice(&v, &shape)?;
    let g = host.to_device(GPU)?;
    let views = |t: &Tensor| -> ctensor_aten::Result<Vec<Tensor>> {
        Ok(vec![
            t.narrow(1, 2, 3)?,
            t.permute(&[2, 0, 1])?,
            t.transpose(0, 2)?,
            t.slice(&[1, 0, 2], &[3, 4, 5])?,
            t.reshape(&[30, -1])?,
        ])
    };
    for (hv, gv) in views(&host)?.iter().zip(views(&g)?) {
        assert_eq!(gv.to_vec::<T>()?, hv.to_vec::<T>()?);
        assert_eq!(gv.try_clone()?.to_vec::<T>()?, hv.to_vec::<T>()?);
        assert_eq!(format!("{gv}").replace("gpu", "cpu"), format!("{hv}"));
    }
    Ok(())
}

gpu_test!(gpu_views_read_the_same_elements_as_on_the_host, -> Result {
    for_all_dtypes!(views_case);
    Ok(())
});

gpu_test!(gpu_cast_matches_the_host_cast_for_every_pair, -> Result {
    let mut r = rng(3);
    for from in DataType::ALL {
        let v = random_vec::<f64>(&mut r, 1001);
        let host = Tensor::from_slice(&v, &[7, 143])
            ?
            .cast(from)
            ?;
        let g = host.to_device(GPU)?;
        for to in DataType::ALL {
            let (hc, gc) = (host.cast(to)?, g.cast(to)?);
            assert_eq!(gc.device(), GPU);
            assert!(
                gc.to_device(CPU)?.allclose(&hc, 0.0, 0.0)?,
                "{from} -> {to}"
            );
        }
    }
    Ok(())
});

gpu_test!(gpu_fill_sync_and_shallow_copies, -> Result {
    let mut g = Tensor::zeros(DataType::Double, GPU, &[4, 5])?;
    g.set_value(2.5f64)?;
    assert_eq!(g.to_vec::<f64>()?, vec![2.5; 20]);
    // A shallow copy sees writes through the original.
    let mut alias = Tensor::zeros(DataType::Double, CPU, &[1])?;
    alias.copy_from(&g);
    g.narrow(0, 1, 1)?.zero()?;
    let want: Vec<f64> = (0..20)
        .map(|i| if (5..10).contains(&i) { 0.0 } else { 2.5 })
        .collect();
    assert_eq!(alias.to_vec::<f64>()?, want);
    // sync across devices, also the padded top-left form.
    let src: Vec<f64> = (0..6).map(f64::from).collect();
    let h = Tensor::from_slice(&src, &[2, 3])?;
    g.sync(&h)?;
    let got = g.to_vec::<f64>()?;
    assert_eq!(&got[..3], &[0.0, 1.0, 2.0]);
    assert_eq!(&got[5..8], &[3.0, 4.0, 5.0]);
    assert_eq!(got[3], 2.5);
    let mut back = Tensor::zeros(DataType::Double, CPU, &[4, 5])?;
    back.sync(&g)?;
    assert_eq!(back.to_vec::<f64>()?, got);
    g.set_at(&[3, 4], -1.0f64)?;
    assert_eq!(g.get_value::<f64>(&[3, 4])?, -1.0);
    Ok(())
});

gpu_test!(gpu_map_over_a_foreign_device_pointer_is_never_freed, -> Result {
    let n = 1000;
    let bytes = n * 8;
    let mem = Allocation::zeroed(GPU, bytes)?;
    {
        // SAFETY: `mem` holds n f64 on the GPU and outlives the map.
        let mut map =
            unsafe { TensorMap::new(mem.as_ptr() as *mut f64, GPU, &[n], Order::RowMajor) }
                ?;
        assert!(!map.owns_memory());
        let v: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
        map.sync(&Tensor::from_slice(&v, &[n])?)?;
        let twice = map.add(&map)?;
        assert_eq!(twice.device(), GPU);
        assert_eq!(twice.to_vec::<f64>()?[7], 7.0);
    }
    // The map is gone; the memory is still ours and holds what was written through it.
    let mut out = vec![0.0f64; n];
    // SAFETY: `mem` holds `bytes` device bytes; `out` as many host bytes.
    unsafe { copy_d2h(out.as_mut_ptr() as *mut u8, mem.as_ptr() as u64, bytes)? };
    assert_eq!(out[999], 499.5);
    Ok(())
});

gpu_test!(gpu_ops_match_the_host_and_mixing_devices_is_an_error, -> Result {
    let mut r = rng(4);
    let (a, b) = (
        random_vec::<f64>(&mut r, 1_000_003),
        random_vec::<f64>(&mut r, 1_000_003),
    );
    let (ha, hb) = (
        Tensor::from_slice(&a, &[a.len()])?,
        Tensor::from_slice(&b, &[b.len()])?,
    );
    let (ga, gb) = (ha.to_device(GPU)?, hb.to_device(GPU)?);
    let sum = ga.add(&gb)?;
    assert_eq!(
        sum.to_vec::<f64>()?,
        ha.add(&hb)?.to_vec::<f64>()?
    );
    let e = ga.add(&hb).unwrap_err();
    assert!(
        matches!(
            e,
            Error::DeviceMismatch {
                op: "add",
                expected: GPU,
                got: CPU
            }
        ),
        "{e}"
    );
    // matmul, eigh and solve against the host results.
    let m = Tensor::from_slice(&random_vec::<f64>(&mut r, 300 * 301), &[300, 301])?;
    let h = matmul(&m, &m.transpose(0, 1)?)?;
    let gh = matmul(
        &m.to_device(GPU)?,
        &m.to_device(GPU)?.transpose(0, 1)?,
    )
    ?;
    assert!(gh
        .to_device(CPU)
        ?
        .allclose(&h, 1e-12, 1e-9)
        ?);
    let (w, _) = eigh(&h, EighRange::All, EigBackend::LapackEvd)?;
    // Backward-stable solvers: eigenvalue errors of order n · eps · ‖H‖ on both devices.
    let wv = w.to_vec::<f64>()?;
    let atol = 30.0 * 300.0 * f64::EPSILON * wv[299].abs();
    for backend in [EigBackend::Faer, EigBackend::LapackEvd] {
        let (gw, gv) = eigh(&gh, EighRange::Index(0, 10), backend)?;
        assert_eq!(
            (gw.device(), gv.device(), gv.dims()),
            (GPU, GPU, &[300, 10][..])
        );
        let want = w.narrow(0, 0, 10)?;
        assert!(
            gw.to_device(CPU)
                ?
                .allclose(&want, 0.0, atol)
                ?,
            "{backend:?}"
        );
    }
    let (gw, gv) = eigh(&gh, EighRange::Index(290, 300), EigBackend::LapackEvr)?;
    assert_eq!(gv.dims(), &[300, 10]);
    let want = w.narrow(0, 290, 10)?;
    assert!(gw
        .to_device(CPU)
        ?
        .allclose(&want, 0.0, atol)
        ?);
    // Mixed precision (f32 solve on the device, f64 refinement): within its checked
    // tolerance of the full-precision values, on the device.
    let gw = ctensor_aten::eigvalsh(&gh, EighRange::Index(0, 10), EigBackend::Mixed)?;
    assert_eq!(gw.device(), GPU);
    let tol = ctensor_aten::MIXED_TOLERANCE * wv[299].abs();
    assert!(
        gw.to_device(CPU)?.allclose(&w.narrow(0, 0, 10)?, 0.0, tol)?,
        "Mixed on the GPU"
    );
    // solve: the residual ‖H x − b‖ is of order n · eps · ‖H‖ · ‖x‖.
    let rhs = Tensor::from_slice(&random_vec::<f64>(&mut r, 300), &[300])?;
    let gx = solve(&gh, &rhs.to_device(GPU)?)
        ?
        .to_device(CPU)
        ?;
    let hx = matmul(&h, &gx.reshape(&[300, 1])?)
        ?
        .reshape(&[300])
        ?;
    let residual = hx.sub(&rhs)?.norm()?;
    let bound = 30.0 * 300.0 * f64::EPSILON * wv[299].abs() * gx.norm()?;
    assert!(residual <= bound, "residual {residual:e} > {bound:e}");
    Ok(())
});
