//! The GPU kernels against plain host loops, on sizes past one block (n > 10⁶) and in
//! place, so a kernel that ignores `blockIdx` or races with itself fails. Each test runs
//! through `gpu_test!`: without a GPU it prints one `SKIP: <reason>` line and passes.
#![cfg(feature = "cuda")]
#![deny(unused_must_use)]

mod common;

use common::{Buf, TestResult};
use ctensor_base::gpu::unavailable_reason;
use ctensor_base::{bf16, c64, f16, CpuDevice, DeviceType, Error, GpuDevice, Scalar};
use ctensor_kernels::blas::{BlasDot, BlasGemm, BlasNrm2, Trans};
use ctensor_kernels::linalg::{Add, Div, Mul, Reduce, Transpose};
use ctensor_kernels::memory::{CastMemory, SetMemory, SyncMemory};
use rand::{Rng, SeedableRng};

/// A device copy of `host`.
fn dev<T: Scalar>(host: &[T]) -> Buf<T> {
    Buf::on::<GpuDevice>(host.to_vec())
}

/// `n` zeros on the device.
fn zeros<T: Scalar>(n: usize) -> Buf<T> {
    dev(&vec![T::zero(); n])
}

fn rng() -> rand::rngs::StdRng {
    rand::rngs::StdRng::seed_from_u64(5)
}

fn randn(n: usize) -> Vec<f64> {
    let mut r = rng();
    (0..n).map(|_| r.gen_range(-1.0..1.0)).collect()
}

const SIZES: [usize; 5] = [0, 1, 7, 257, 1_000_003];

gpu_test!(gpu_add_matches_a_loop_past_one_block_and_in_place, -> Result {
    for n in SIZES {
        let (x, y) = (randn(n), randn(n + 1)[1..].to_vec());
        let (mut dx, mut dy, mut dz) = (dev(&x), dev(&y), zeros::<f64>(n));
        // SAFETY: device buffers of `n` elements.
        unsafe {
            <GpuDevice as Add<f64>>::add(n, 2.0, dx.ptr(), -0.5, dy.ptr(), dz.ptr())?
        };
        let want: Vec<f64> = x.iter().zip(&y).map(|(a, b)| 2.0 * a - 0.5 * b).collect();
        assert_eq!(dz.get(), want, "n = {n}");
        // In place: x := 3 x.
        // SAFETY: as above; output identical to input.
        unsafe { <GpuDevice as Mul<f64>>::scale(n, 3.0, dx.ptr(), dx.ptr())? };
        assert_eq!(
            dx.get(),
            x.iter().map(|a| 3.0 * a).collect::<Vec<_>>(),
            "n = {n}"
        );
    }
    Ok(())
});

gpu_test!(gpu_integer_division_by_zero_is_an_error_before_writing, -> Result {
    let n = 1_000_003;
    let x: Vec<i32> = (0..n as i32).collect();
    let mut y: Vec<i32> = vec![3; n];
    y[n - 1] = 0;
    let (mut dx, mut dy, mut dz) = (dev(&x), dev(&y), dev(&vec![7i32; n]));
    // SAFETY: device buffers of `n` elements.
    let e =
        unsafe { <GpuDevice as Div<i32>>::div(n, 1, dx.ptr(), dy.ptr(), dz.ptr()) }.unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { op: "div", .. }), "{e}");
    assert!(dz.get().iter().all(|&v| v == 7), "nothing may be written");
    y[n - 1] = -1;
    let mut dy = dev(&y);
    // SAFETY: as above.
    unsafe { <GpuDevice as Div<i32>>::div(n, 1, dx.ptr(), dy.ptr(), dz.ptr())? };
    let want: Vec<i32> = x.iter().zip(&y).map(|(a, b)| a.wrapping_div(*b)).collect();
    assert_eq!(dz.get(), want);
    Ok(())
});

// The reference is ctensor's own host cast (`CastFrom`, rounded once through an f32
// rounded to odd, checked against an exact reference in prelude_host.rs), not the half
// crate's `from_f64`, which rounds twice through f32 where F16C is used.
gpu_test!(gpu_cast_to_half_types_rounds_once_like_the_host_cast, -> Result {
    let mut r = rng();
    let mut x: Vec<f64> = (0..100_001)
        .map(|_| r.gen_range(-70000.0..70000.0) * r.gen::<f64>().powi(12))
        .collect();
    x.extend([
        0.0,
        -0.0,
        65504.0,
        65520.0,
        1e-8,
        5.96e-8,
        f64::INFINITY,
        f64::NAN,
        1.0 + 1.0 / 2048.0,
    ]);
    let mut dx = dev(&x);
    let (mut dh, mut db) = (zeros::<f16>(x.len()), zeros::<bf16>(x.len()));
    // SAFETY: device buffers of `x.len()` elements, disjoint.
    unsafe {
        <GpuDevice as CastMemory<f16, f64>>::cast(dh.ptr(), dx.ptr(), x.len())?;
        <GpuDevice as CastMemory<bf16, f64>>::cast(db.ptr(), dx.ptr(), x.len())?;
    }
    for (i, (&v, (h, b))) in x.iter().zip(dh.get().into_iter().zip(db.get())).enumerate() {
        let (wh, wb) = (
            <f16 as ctensor_base::CastFrom<f64>>::cast_from(v),
            <bf16 as ctensor_base::CastFrom<f64>>::cast_from(v),
        );
        assert!(
            h.to_bits() == wh.to_bits() || (h.is_nan() && wh.is_nan()),
            "f16 of x[{i}] = {v}: {h} vs {wh}"
        );
        assert!(
            b.to_bits() == wb.to_bits() || (b.is_nan() && wb.is_nan()),
            "bf16 of x[{i}] = {v}: {b} vs {wb}"
        );
    }
    Ok(())
});

gpu_test!(gpu_transpose_with_conjugation_matches_a_loop, -> Result {
    for (rows, cols) in [(1, 1), (257, 300), (33, 1), (1000, 1001)] {
        let mut r = rng();
        let a: Vec<c64> = (0..rows * cols)
            .map(|_| c64::new(r.gen(), r.gen()))
            .collect();
        let (mut da, mut dt) = (dev(&a), zeros::<c64>(rows * cols));
        // SAFETY: device buffers of rows·cols elements.
        unsafe {
            <GpuDevice as Transpose<c64>>::transpose(
                &[rows, cols],
                &[1, 0],
                da.ptr(),
                dt.ptr(),
                true,
            )
            ?
        };
        let t = dt.get();
        for i in 0..rows {
            for j in 0..cols {
                assert_eq!(
                    t[j * rows + i],
                    a[i * cols + j].conj(),
                    "({i}, {j}) of {rows} x {cols}"
                );
            }
        }
        // Rank 3, in place.
        let shape = [rows.min(7), 3, cols.min(5)];
        let n: usize = shape.iter().product();
        let b: Vec<c64> = (0..n).map(|_| c64::new(r.gen(), r.gen())).collect();
        let mut db = dev(&b);
        // SAFETY: a device buffer of `n` elements, in place.
        unsafe {
            <GpuDevice as Transpose<c64>>::transpose(&shape, &[2, 0, 1], db.ptr(), db.ptr(), false)
                ?
        };
        let got = db.get();
        let [s0, s1, s2] = shape;
        for i in 0..s2 {
            for j in 0..s0 {
                for k in 0..s1 {
                    assert_eq!(got[(i * s0 + j) * s1 + k], b[(j * s1 + k) * s2 + i]);
                }
            }
        }
    }
    Ok(())
});

gpu_test!(gpu_reduce_sums_rows_past_one_block, -> Result {
    for (rows, inner) in [(3, 1_000_001), (70_000, 2), (1, 0), (5, 1)] {
        let x: Vec<i64> = (0..(rows * inner) as i64).map(|v| v % 1000 - 500).collect();
        let (mut dx, mut dy) = (dev(&x), zeros::<i64>(rows));
        // SAFETY: device buffers of rows·inner and rows elements.
        unsafe { <GpuDevice as Reduce<i64>>::reduce(rows, inner, dx.ptr(), dy.ptr())? };
        let want: Vec<i64> = (0..rows)
            .map(|r| x[r * inner..(r + 1) * inner].iter().sum())
            .collect();
        assert_eq!(dy.get(), want, "{rows} x {inner}");
    }
    Ok(())
});

gpu_test!(gpu_gemm_dot_nrm2_match_the_cpu_kernels, -> Result {
    let (m, n, k) = (257, 300, 17);
    let (a, b, c) = (randn(k * m), randn(k * n), randn(m * n));
    let (mut da, mut db, mut dc) = (dev(&a), dev(&b), dev(&c));
    let mut want = c.clone();
    // SAFETY: host and device buffers hold the column-major operands (A is k x m, op T).
    unsafe {
        <GpuDevice as BlasGemm<f64>>::gemm(
            Trans::T,
            Trans::N,
            m,
            n,
            k,
            1.5,
            da.ptr(),
            k,
            db.ptr(),
            k,
            -1.0,
            dc.ptr(),
            m,
        )
        ?;
        <CpuDevice as BlasGemm<f64>>::gemm(
            Trans::T,
            Trans::N,
            m,
            n,
            k,
            1.5,
            a.as_ptr(),
            k,
            b.as_ptr(),
            k,
            -1.0,
            want.as_mut_ptr(),
            m,
        )
        ?;
    }
    for (g, w) in dc.get().iter().zip(&want) {
        assert!((g - w).abs() <= 1e-12 * (1.0 + w.abs()), "{g} vs {w}");
    }
    let x = randn(1_000_003);
    let mut dx = dev(&x);
    // SAFETY: device buffers of the lengths given.
    let (dot, nrm) = unsafe {
        (
            <GpuDevice as BlasDot<f64>>::dot(x.len(), dx.ptr(), 1, dx.ptr(), 1)?,
            <GpuDevice as BlasNrm2<f64>>::nrm2(x.len(), dx.ptr(), 1)?,
        )
    };
    let want: f64 = x.iter().map(|v| v * v).sum();
    assert!((dot - want).abs() <= 1e-9 * want && (nrm - want.sqrt()).abs() <= 1e-9 * want.sqrt());
    Ok(())
});

gpu_test!(gpu_host_device_round_trip_and_set, -> Result {
    for n in SIZES {
        let x: Vec<f32> = randn(n).iter().map(|&v| v as f32).collect();
        let mut d = zeros::<f32>(n);
        let mut back = vec![0f32; n];
        // SAFETY: a device buffer and host vectors of `n` elements.
        unsafe {
            <GpuDevice as SyncMemory<f32, CpuDevice>>::sync(d.ptr(), x.as_ptr(), n)?;
            <CpuDevice as SyncMemory<f32, GpuDevice>>::sync(back.as_mut_ptr(), d.ptr(), n)?;
        }
        assert_eq!(back, x);
        // SAFETY: as above.
        unsafe { <GpuDevice as SetMemory<f32>>::set(d.ptr(), 2.5, n)? };
        assert!(d.get().iter().all(|&v| v == 2.5));
    }
    Ok(())
});

/// Without a GPU, the kernels answer DeviceUnavailable (with a GPU this checks nothing
/// and says so).
#[test]
fn gpu_kernels_without_a_gpu_report_device_unavailable() -> TestResult {
    if unavailable_reason().is_none() {
        println!("SKIP: a GPU is present; the no-GPU path is not reachable");
        return Ok(());
    }
    let fake = 256 as *mut f64; // never dereferenced: the context check fails first
                                // SAFETY: the call fails before touching memory (no GPU).
    let e = unsafe { <GpuDevice as Mul<f64>>::scale(4, 2.0, fake, fake) }.unwrap_err();
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
    // SAFETY: as above.
    let e = unsafe {
        <GpuDevice as BlasGemm<f64>>::gemm(
            Trans::N,
            Trans::N,
            2,
            2,
            2,
            1.0,
            fake,
            2,
            fake,
            2,
            0.0,
            fake,
            2,
        )
    }
    .unwrap_err();
    assert!(matches!(e, Error::DeviceUnavailable { .. }), "{e}");
    Ok(())
}

/// Argument errors that the GPU kernels raise before they look for a device, so they are
/// the same with or without one. The pointers are never dereferenced.
#[test]
fn gpu_kernels_reject_bad_arguments_before_touching_the_device() -> TestResult {
    use ctensor_kernels::elementwise::math::{Math, MathOp};
    let fake = 256 as *mut i32;
    // SAFETY: each call fails its argument checks before any memory is touched.
    let e = unsafe { <GpuDevice as Math<i32>>::math(MathOp::Sqrt, 4, fake, fake) }.unwrap_err();
    assert!(
        matches!(
            e,
            Error::UnsupportedDType {
                op: "sqrt",
                dtype: ctensor_base::DataType::Int,
                ..
            }
        ),
        "{e}"
    );
    assert!(
        e.to_string().contains("f32, f64, c32, c64, f16, bf16"),
        "{e}"
    );

    // 17 axes that no merging can join: more than a GPU kernel takes.
    let shape = [2usize; 17];
    let strides: Vec<usize> = (0..17).map(|k| 1 << k).collect();
    // SAFETY: as above.
    let e = unsafe { <GpuDevice as SetMemory<i32>>::set_strided(fake, &shape, &strides, 1) }
        .unwrap_err();
    assert!(
        matches!(e, Error::Unsupported { .. }) && e.to_string().contains("at most 16 axes"),
        "{e}"
    );

    // A cast whose source and destination overlap.
    let fake64 = 256 as *mut i64;
    // SAFETY: as above.
    let e = unsafe { <GpuDevice as CastMemory<i64, i32>>::cast(fake64, fake, 8) }.unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidArgument {
                op: "cast_memory",
                ..
            }
        ),
        "{e}"
    );
    Ok(())
}
