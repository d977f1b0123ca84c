//! GPU tables (only where a GPU is usable): the custom kernels against a device-to-device
//! copy that moves the same bytes (the goal is ≥ 85 % of copy bandwidth, i.e. a
//! ratio ≤ 1.18), gemm and heevd through our traits against the direct cuBLAS/cuSOLVER
//! call on the same handle and data (goal ≤ 1.02), and host↔device transfers through
//! our staged copies against the driver's own pageable and pinned copies.
//!
//! Every timed call waits for the stream (`synchronize`), so a time is the work's, not
//! the time to queue it.

use std::ffi::c_void;

use ctensor::base::alloc::Allocation;
use ctensor::base::gpu::{context, copy_d2d, copy_d2h, copy_h2d, synchronize, unavailable_reason};
use ctensor::base::{c64, DeviceType, GpuDevice, Scalar};
use ctensor::kernels::blas::{BlasGemm, Trans};
use ctensor::kernels::lapack::{Jobz, LapackHeevd, Uplo};
use ctensor::kernels::linalg::{Add, Mul, Transpose};
use ctensor::kernels::memory::CastMemory;
use cudarc::cublas::sys as cb;
use cudarc::cusolver::sys as cs;
use cudarc::driver::sys as drv;
use rand::rngs::StdRng;

use crate::harness::{compare, random, Table};

/// A device array of `n` elements of `T` holding `host`'s values (or zeros).
struct Dev<T> {
    mem: Allocation,
    _t: std::marker::PhantomData<T>,
}

impl<T: Scalar> Dev<T> {
    fn zeros(n: usize) -> Dev<T> {
        Dev {
            mem: Allocation::zeroed(DeviceType::Gpu, n * std::mem::size_of::<T>()).unwrap(),
            _t: std::marker::PhantomData,
        }
    }
    fn from(host: &[T]) -> Dev<T> {
        let d = Dev::zeros(host.len());
        // SAFETY: both hold `host.len()` elements.
        unsafe {
            copy_h2d(
                d.mem.as_ptr() as u64,
                host.as_ptr() as *const u8,
                d.mem.bytes(),
            )
            .unwrap()
        };
        d
    }
    fn ptr(&self) -> *mut T {
        self.mem.as_ptr() as *mut T
    }
    fn addr(&self) -> u64 {
        self.mem.as_ptr() as u64
    }
}

/// Runs `f` and waits for the GPU.
fn sync(f: impl Fn()) -> impl FnMut() {
    move || {
        f();
        synchronize().unwrap();
    }
}

pub fn gpu_tables(rng: &mut StdRng) -> String {
    if let Some(reason) = unavailable_reason() {
        let line = format!("\n### GPU\n\nskipped: {reason}\n");
        print!("{line}");
        return line;
    }
    let ctx = context().unwrap();
    let mut md = format!(
        "\n### GPU: {} (compute capability {}.{})\n",
        ctx.name(),
        ctx.compute_capability().0,
        ctx.compute_capability().1
    );
    print!("{md}");
    md += &kernels_vs_copy(rng);
    md += &libraries(rng);
    md += &transfers(rng);
    md += &memory_layer(rng);
    md
}

fn kernels_vs_copy(rng: &mut StdRng) -> String {
    let mut t = Table::new(
        "GPU custom kernels vs a D2D copy of the same bytes (goal: ratio ≤ 1.18)",
        ["ours", "copy", "ours/copy"],
    );
    print!("{}", t.out);
    let n = 1 << 26; // 64 Mi elements
    let x = Dev::from(&random::<f32>(rng, n));
    let y = Dev::from(&random::<f32>(rng, n));
    let z = Dev::<f32>::zeros(n);
    // The reference: copying `elems` f32 (≤ 1.5 n) between two disjoint ranges of `big`.
    let big = Dev::<f32>::zeros(3 * n);
    let copy = |elems: usize| {
        let base = big.addr();
        // SAFETY: `big` holds 3n f32; [0, elems) and [1.5n, 1.5n + elems) are inside it
        // and disjoint.
        sync(move || unsafe { copy_d2d(base + (3 * n / 2 * 4) as u64, base, elems * 4).unwrap() })
    };
    // scale in place: reads and writes n (as a copy of n).
    t.row(
        "scale f32 (in place)",
        "2²⁶",
        compare(
            // SAFETY: n device elements, in place.
            sync(|| unsafe {
                <GpuDevice as Mul<f32>>::scale(n, 1.0001, x.ptr(), x.ptr()).unwrap()
            }),
            copy(n),
        ),
    );
    // add: reads 2n, writes n = a copy of 1.5 n elements.
    t.row(
        "add f32",
        "2²⁶",
        compare(
            // SAFETY: n device elements each.
            sync(|| unsafe {
                <GpuDevice as Add<f32>>::add(n, 1.0, x.ptr(), 0.5, y.ptr(), z.ptr()).unwrap()
            }),
            copy(3 * n / 2),
        ),
    );
    // cast f32 → f64: reads 4n bytes and writes 8n, as a copy of 1.5 n f32 does.
    let w = Dev::<f64>::zeros(n);
    t.row(
        "cast f32→f64",
        "2²⁶",
        compare(
            // SAFETY: n device elements each.
            sync(|| unsafe {
                <GpuDevice as CastMemory<f64, f32>>::cast(w.ptr(), x.ptr(), n).unwrap()
            }),
            copy(3 * n / 2),
        ),
    );
    // 2-D transpose 8192²: reads and writes n.
    let side = 1 << 13;
    t.row(
        "transpose f32 (tiled)",
        "8192²",
        compare(
            // SAFETY: side² = n device elements each.
            sync(|| unsafe {
                <GpuDevice as Transpose<f32>>::transpose(
                    &[side, side],
                    &[1, 0],
                    x.ptr(),
                    z.ptr(),
                    false,
                )
                .unwrap()
            }),
            copy(n),
        ),
    );
    t.out
}

fn libraries(rng: &mut StdRng) -> String {
    let mut t = Table::new(
        "GPU gemm and heevd: our trait vs the direct cuBLAS/cuSOLVER call (goal ≤ 1.02)",
        ["ours", "direct", "ratio"],
    );
    print!("{}", t.out);
    let ctx = context().unwrap();
    for n in [1024usize, 4096] {
        let a = Dev::from(&random::<f64>(rng, n * n));
        let b = Dev::from(&random::<f64>(rng, n * n));
        let c = Dev::<f64>::zeros(n * n);
        let ni = n as i32;
        t.row(
            "dgemm",
            &format!("{n}³"),
            compare(
                // SAFETY: n × n device matrices.
                sync(|| unsafe {
                    <GpuDevice as BlasGemm<f64>>::gemm(
                        Trans::N,
                        Trans::N,
                        n,
                        n,
                        n,
                        1.0,
                        a.ptr(),
                        n,
                        b.ptr(),
                        n,
                        0.0,
                        c.ptr(),
                        n,
                    )
                    .unwrap()
                }),
                sync(|| {
                    ctx.with_cublas(|h| {
                        let (al, be) = (1.0f64, 0.0f64);
                        // SAFETY: as above, on the same handle and stream.
                        let s = unsafe {
                            cb::cublasDgemm_v2(
                                h,
                                cb::cublasOperation_t::CUBLAS_OP_N,
                                cb::cublasOperation_t::CUBLAS_OP_N,
                                ni,
                                ni,
                                ni,
                                &al,
                                a.ptr(),
                                ni,
                                b.ptr(),
                                ni,
                                &be,
                                c.ptr(),
                                ni,
                            )
                        };
                        assert_eq!(s, cb::cublasStatus_t::CUBLAS_STATUS_SUCCESS);
                        Ok(())
                    })
                    .unwrap()
                }),
            ),
        );
    }
    for n in [512usize, 2048] {
        // A Hermitian matrix; both sides start from a fresh copy each call.
        let r = random::<c64>(rng, n * n);
        let mut h = vec![c64::new(0.0, 0.0); n * n];
        for j in 0..n {
            for i in 0..n {
                h[i + j * n] = (r[i + j * n] + r[j + i * n].conj()) * 0.5;
            }
        }
        let src = Dev::from(&h);
        let a = Dev::<c64>::zeros(n * n);
        let w = Dev::<f64>::zeros(n);
        let bytes = n * n * 16;
        let ni = n as i32;
        t.row(
            "zheevd (vectors)",
            &format!("{n}²"),
            compare(
                sync(|| {
                    // SAFETY: n × n device matrices and n eigenvalues.
                    unsafe {
                        copy_d2d(a.addr(), src.addr(), bytes).unwrap();
                        <GpuDevice as LapackHeevd<c64>>::heevd(
                            Jobz::Vectors,
                            Uplo::Lower,
                            n,
                            a.ptr(),
                            n,
                            w.ptr(),
                        )
                        .unwrap()
                    }
                }),
                sync(|| {
                    // SAFETY: as above; the workspace is what cuSOLVER asks for.
                    unsafe { copy_d2d(a.addr(), src.addr(), bytes).unwrap() };
                    ctx.with_cusolver(|hd| {
                        let (mode, fill) = (
                            cs::cusolverEigMode_t::CUSOLVER_EIG_MODE_VECTOR,
                            cs::cublasFillMode_t::CUBLAS_FILL_MODE_LOWER,
                        );
                        let mut lw = 0i32;
                        // SAFETY: as above.
                        unsafe {
                            cs::cusolverDnZheevd_bufferSize(
                                hd,
                                mode,
                                fill,
                                ni,
                                a.ptr() as _,
                                ni,
                                w.ptr(),
                                &mut lw,
                            );
                            let work = Dev::<c64>::zeros(lw.max(1) as usize);
                            let info = Dev::<i32>::zeros(1);
                            cs::cusolverDnZheevd(
                                hd,
                                mode,
                                fill,
                                ni,
                                a.ptr() as _,
                                ni,
                                w.ptr(),
                                work.ptr() as _,
                                lw,
                                info.ptr(),
                            );
                            let mut i = 0i32;
                            copy_d2h(&mut i as *mut i32 as *mut u8, info.addr(), 4).unwrap();
                            assert_eq!(i, 0);
                        }
                        Ok(())
                    })
                    .unwrap()
                }),
            ),
        );
    }
    t.out
}

fn transfers(rng: &mut StdRng) -> String {
    let mut t = Table::new(
        "Host↔device, 256 MiB: our staged copy from pageable memory vs the driver's copy",
        ["ours", "driver", "ours/driver"],
    );
    print!("{}", t.out);
    let n = 1 << 25; // 32 Mi f64 = 256 MiB
    let bytes = n * 8;
    let host = random::<f64>(rng, n);
    let mut back = vec![0.0f64; n];
    let d = Dev::<f64>::zeros(n);
    let ctx = context().unwrap();
    ctx.bind().unwrap();
    let mut pinned: *mut c_void = std::ptr::null_mut();
    // SAFETY: a plain pinned allocation, freed below.
    unsafe { drv::cuMemAllocHost_v2(&mut pinned, bytes) }
        .result()
        .unwrap();
    let back_ptr = back.as_mut_ptr() as usize;
    for (label, src) in [
        ("pageable", host.as_ptr() as usize),
        ("pinned", pinned as usize),
    ] {
        t.row(
            &format!("H2D: ours (pageable source) vs driver ({label} source)"),
            "256 MiB",
            compare(
                // SAFETY: `host` and `d` hold `bytes` bytes.
                sync(|| unsafe { copy_h2d(d.addr(), host.as_ptr() as *const u8, bytes).unwrap() }),
                // SAFETY: `src` holds `bytes` bytes (host or pinned).
                sync(|| unsafe {
                    ctx.bind().unwrap();
                    drv::cuMemcpyHtoD_v2(d.addr(), src as *const c_void, bytes)
                        .result()
                        .unwrap()
                }),
            ),
        );
        let dst = if label == "pinned" {
            pinned as usize
        } else {
            back_ptr
        };
        t.row(
            &format!("D2H: ours (pageable target) vs driver ({label} target)"),
            "256 MiB",
            compare(
                // SAFETY: `back` and `d` hold `bytes` bytes.
                sync(|| unsafe { copy_d2h(back_ptr as *mut u8, d.addr(), bytes).unwrap() }),
                // SAFETY: `dst` holds `bytes` bytes (host or pinned).
                sync(|| unsafe {
                    ctx.bind().unwrap();
                    drv::cuMemcpyDtoH_v2(dst as *mut c_void, d.addr(), bytes)
                        .result()
                        .unwrap()
                }),
            ),
        );
    }
    let s = 1.0 / (1u64 << 30) as f64 * bytes as f64;
    let note = format!(
        "\n(256 MiB at 1 ms is {:.0} GiB/s: GiB/s = {s:.3} / seconds.)\n",
        s / 1e-3
    );
    print!("{note}");
    // SAFETY: allocated above, no longer used.
    unsafe { drv::cuMemFreeHost(pinned) }.result().unwrap();
    t.out + &note
}

/// The memory layer (issue 17): pinned vs pageable transfers through the tensor API, a
/// copy overlapped with a kernel on another stream vs the two in sequence, and the
/// caching pool vs the driver's allocation for a loop of short-lived device tensors.
fn memory_layer(rng: &mut StdRng) -> String {
    use ctensor::{DataType, Order, Stream, Tensor};
    let mut t = Table::new(
        "Memory layer on the GPU (each call waits for the GPU)",
        ["ours", "reference", "ours/reference"],
    );
    print!("{}", t.out);
    let n = 1 << 25; // 256 MiB of f64
    let pageable = Tensor::from_vec(random::<f64>(rng, n), &[n]).unwrap();
    let mut pinned = Tensor::pinned(DataType::Double, &[n], Order::RowMajor).unwrap();
    pinned.sync(&pageable).unwrap();
    let stream = Stream::new().unwrap();
    t.row(
        "H2D Tensor: to_device_async from pinned vs to_device from pageable",
        "256 MiB",
        compare(
            || {
                let d = pinned.to_device_async(DeviceType::Gpu, &stream).unwrap();
                stream.synchronize().unwrap();
                drop(d);
            },
            sync(|| drop(pageable.to_device(DeviceType::Gpu).unwrap())),
        ),
    );
    let dev = pageable.to_device(DeviceType::Gpu).unwrap();
    t.row(
        "D2H Tensor: to_device_async into pinned vs to_device into pageable",
        "256 MiB",
        compare(
            || {
                let h = dev.to_device_async(DeviceType::Cpu, &stream).unwrap();
                stream.synchronize().unwrap();
                drop(h);
            },
            || drop(dev.to_device(DeviceType::Cpu).unwrap()),
        ),
    );
    // A kernel of about the copy's duration: a 2048² f64 product on the default stream.
    let m = 2048;
    let a = Tensor::from_vec(random::<f64>(rng, m * m), &[m, m])
        .unwrap()
        .to_device(DeviceType::Gpu)
        .unwrap();
    let mut target = Tensor::zeros(DataType::Double, DeviceType::Gpu, &[n]).unwrap();
    let mut target2 = Tensor::zeros(DataType::Double, DeviceType::Gpu, &[n]).unwrap();
    t.row(
        "H2D from pinned on a stream while a gemm runs vs the two in sequence",
        "256 MiB + 2048² dgemm",
        compare(
            || {
                target.sync_async(&pinned, &stream).unwrap();
                let c = ctensor::matmul(&a, &a).unwrap();
                stream.synchronize().unwrap();
                synchronize().unwrap();
                drop(c);
            },
            || {
                target2.sync(&pinned).unwrap();
                let c = ctensor::matmul(&a, &a).unwrap();
                synchronize().unwrap();
                drop(c);
            },
        ),
    );
    // Short-lived device tensors of mixed sizes (64 B to 1 MiB): the pool vs the
    // driver's allocate + zero + free, which is what the pool saves.
    let sizes: Vec<usize> = (0..1024).map(|i| 8usize << (i % 15)).collect();
    let ctx = context().unwrap();
    let (mut i, mut j) = (0usize, 0usize);
    t.row(
        "Tensor::zeros on the GPU + drop, cached vs cuMemAlloc + cuMemsetD8 + cuMemFree",
        "64 B - 1 MiB",
        compare(
            || {
                i = (i + 1) % sizes.len();
                drop(Tensor::zeros(DataType::Double, DeviceType::Gpu, &[sizes[i] / 8]).unwrap());
            },
            || {
                j = (j + 1) % sizes.len();
                ctx.bind().unwrap();
                let mut p: drv::CUdeviceptr = 0;
                // SAFETY: a plain allocation of `sizes[j]` bytes, zeroed, then freed.
                unsafe {
                    drv::cuMemAlloc_v2(&mut p, sizes[j]).result().unwrap();
                    drv::cuMemsetD8_v2(p, 0, sizes[j]).result().unwrap();
                    drv::cuMemFree_v2(p).result().unwrap();
                }
            },
        ),
    );
    let stats = ctensor::memory_stats().unwrap();
    let note = format!(
        "\n(The pool after the loop: {} allocations, {} cache hits, {} MiB reserved.)\n",
        stats.allocations,
        stats.cache_hits,
        stats.reserved >> 20
    );
    print!("{note}");
    t.out + &note
}
