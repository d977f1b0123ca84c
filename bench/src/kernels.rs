//! Kernel tables: each kernel through its trait against the direct CBLAS/LAPACK call on
//! the same data (the overhead we add), and the element-wise and transpose kernels
//! against plain loops.

use std::hint::black_box;

use ctensor::base::{c64, CpuDevice};
use ctensor::kernels::blas::*;
use ctensor::kernels::lapack::*;
use rand::rngs::StdRng;

use crate::harness::{compare, random, Table};

pub fn blas_overhead(rng: &mut StdRng) -> String {
    let mut t = Table::new(
        "BLAS: our trait vs the direct `cblas` call",
        ["ours", "direct", "ratio"],
    );
    print!("{}", t.out);
    use cblas::{Layout::ColumnMajor, Transpose::None as NoT};
    for n in [128usize, 256, 512] {
        let a = random::<f64>(rng, n * n);
        let b = random::<f64>(rng, n * n);
        let mut c1 = vec![0.0f64; n * n];
        let mut c2 = c1.clone();
        let ni = n as i32;
        t.row(
            "gemm f64",
            &format!("{n}³"),
            compare(
                // SAFETY: n × n buffers.
                || unsafe {
                    <CpuDevice as BlasGemm<f64>>::gemm(
                        Trans::N,
                        Trans::N,
                        n,
                        n,
                        n,
                        1.0,
                        a.as_ptr(),
                        n,
                        b.as_ptr(),
                        n,
                        0.0,
                        c1.as_mut_ptr(),
                        n,
                    )
                    .unwrap()
                },
                // SAFETY: n × n buffers.
                || unsafe {
                    cblas::dgemm(
                        ColumnMajor,
                        NoT,
                        NoT,
                        ni,
                        ni,
                        ni,
                        1.0,
                        &a,
                        ni,
                        &b,
                        ni,
                        0.0,
                        &mut c2,
                        ni,
                    )
                },
            ),
        );
    }
    for n in [128usize, 256] {
        let a = random::<c64>(rng, n * n);
        let b = random::<c64>(rng, n * n);
        let mut c1 = vec![c64::default(); n * n];
        let mut c2 = c1.clone();
        let ni = n as i32;
        let (one, zero) = (c64::new(1.0, 0.0), c64::new(0.0, 0.0));
        t.row(
            "gemm c64",
            &format!("{n}³"),
            compare(
                // SAFETY: n × n buffers.
                || unsafe {
                    <CpuDevice as BlasGemm<c64>>::gemm(
                        Trans::N,
                        Trans::C,
                        n,
                        n,
                        n,
                        one,
                        a.as_ptr(),
                        n,
                        b.as_ptr(),
                        n,
                        zero,
                        c1.as_mut_ptr(),
                        n,
                    )
                    .unwrap()
                },
                // SAFETY: n × n buffers.
                || unsafe {
                    cblas::zgemm(
                        ColumnMajor,
                        NoT,
                        cblas::Transpose::Conjugate,
                        ni,
                        ni,
                        ni,
                        one,
                        &a,
                        ni,
                        &b,
                        ni,
                        zero,
                        &mut c2,
                        ni,
                    )
                },
            ),
        );
    }
    for (n, batch) in [(128usize, 16usize), (32, 256)] {
        let a = random::<f64>(rng, n * n * batch);
        let b = random::<f64>(rng, n * n * batch);
        let mut c1 = vec![0.0f64; n * n * batch];
        let mut c2 = c1.clone();
        let ni = n as i32;
        let s = n * n;
        t.row(
            "gemm_batched_strided f64",
            &format!("{batch} × {n}³"),
            compare(
                // SAFETY: batch × n × n buffers.
                || unsafe {
                    <CpuDevice as BlasGemmBatchedStrided<f64>>::gemm_batched_strided(
                        Trans::N,
                        Trans::N,
                        n,
                        n,
                        n,
                        1.0,
                        a.as_ptr(),
                        n,
                        s,
                        b.as_ptr(),
                        n,
                        s,
                        0.0,
                        c1.as_mut_ptr(),
                        n,
                        s,
                        batch,
                    )
                    .unwrap()
                },
                || {
                    for i in 0..batch {
                        // SAFETY: each slice is one n × n matrix.
                        unsafe {
                            cblas::dgemm(
                                ColumnMajor,
                                NoT,
                                NoT,
                                ni,
                                ni,
                                ni,
                                1.0,
                                &a[i * s..(i + 1) * s],
                                ni,
                                &b[i * s..(i + 1) * s],
                                ni,
                                0.0,
                                &mut c2[i * s..(i + 1) * s],
                                ni,
                            )
                        }
                    }
                },
            ),
        );
    }
    for n in [128usize, 1024, 4096] {
        let a = random::<f64>(rng, n * n);
        let x = random::<f64>(rng, n);
        let mut y1 = vec![0.0f64; n];
        let mut y2 = y1.clone();
        let ni = n as i32;
        t.row(
            "gemv f64",
            &format!("{n}²"),
            compare(
                // SAFETY: n × n matrix, n-vectors.
                || unsafe {
                    <CpuDevice as BlasGemv<f64>>::gemv(
                        Trans::T,
                        n,
                        n,
                        1.0,
                        a.as_ptr(),
                        n,
                        x.as_ptr(),
                        1,
                        0.0,
                        y1.as_mut_ptr(),
                        1,
                    )
                    .unwrap()
                },
                // SAFETY: as above.
                || unsafe {
                    cblas::dgemv(
                        ColumnMajor,
                        cblas::Transpose::Ordinary,
                        ni,
                        ni,
                        1.0,
                        &a,
                        ni,
                        &x,
                        1,
                        0.0,
                        &mut y2,
                        1,
                    )
                },
            ),
        );
    }
    for n in [128usize, 100_000] {
        let x = random::<c64>(rng, n);
        let y = random::<c64>(rng, n);
        let ni = n as i32;
        t.row(
            "dot (zdotc) c64",
            &n.to_string(),
            compare(
                // SAFETY: n-vectors.
                || {
                    black_box(
                        unsafe {
                            <CpuDevice as BlasDot<c64>>::dot(n, x.as_ptr(), 1, y.as_ptr(), 1)
                        }
                        .unwrap(),
                    );
                },
                || {
                    let mut out = [c64::default()];
                    // SAFETY: n-vectors.
                    unsafe { cblas::zdotc_sub(ni, &x, 1, &y, 1, &mut out) };
                    black_box(out);
                },
            ),
        );
        let xf = random::<f64>(rng, n);
        let mut y1 = random::<f64>(rng, n);
        let mut y2 = y1.clone();
        t.row(
            "axpy f64",
            &n.to_string(),
            compare(
                // SAFETY: n-vectors.
                || unsafe {
                    <CpuDevice as BlasAxpy<f64>>::axpy(n, 1e-9, xf.as_ptr(), 1, y1.as_mut_ptr(), 1)
                        .unwrap()
                },
                // SAFETY: n-vectors.
                || unsafe { cblas::daxpy(ni, 1e-9, &xf, 1, &mut y2, 1) },
            ),
        );
        t.row(
            "nrm2 f64",
            &n.to_string(),
            compare(
                // SAFETY: n-vector.
                || {
                    black_box(
                        unsafe { <CpuDevice as BlasNrm2<f64>>::nrm2(n, xf.as_ptr(), 1) }.unwrap(),
                    );
                },
                // SAFETY: n-vector.
                || {
                    black_box(unsafe { cblas::dnrm2(ni, &xf, 1) });
                },
            ),
        );
    }
    t.out
}

/// A random Hermitian positive definite matrix of order `n` (real part symmetric).
fn hpd(rng: &mut StdRng, n: usize) -> Vec<f64> {
    let r = random::<f64>(rng, n * n);
    let mut a = vec![0.0; n * n];
    for j in 0..n {
        for i in 0..n {
            a[i + j * n] = (r[i + j * n] + r[j + i * n]) / 2.0;
        }
        a[j + j * n] += n as f64;
    }
    a
}

pub fn lapack_overhead(rng: &mut StdRng) -> String {
    let mut t = Table::new(
        "LAPACK: our trait vs the direct `lapack` call (both query the workspace and allocate it)",
        ["ours", "direct", "ratio"],
    );
    print!("{}", t.out);
    for n in [128usize, 256, 512] {
        let a0 = hpd(rng, n);
        let ni = n as i32;
        let (mut a1, mut a2) = (a0.clone(), a0.clone());
        let (mut w1, mut w2) = (vec![0.0; n], vec![0.0; n]);
        t.row(
            "heevd (dsyevd) f64",
            &n.to_string(),
            compare(
                || {
                    a1.copy_from_slice(&a0);
                    // SAFETY: n × n and n.
                    unsafe {
                        <CpuDevice as LapackHeevd<f64>>::heevd(
                            Jobz::Vectors,
                            Uplo::Lower,
                            n,
                            a1.as_mut_ptr(),
                            n,
                            w1.as_mut_ptr(),
                        )
                        .unwrap()
                    }
                },
                || {
                    a2.copy_from_slice(&a0);
                    let (mut wq, mut iq, mut info) = ([0.0], [0], 0);
                    // SAFETY: a workspace query, then the call with what it asked for.
                    unsafe {
                        lapack::dsyevd(
                            b'V', b'L', ni, &mut a2, ni, &mut w2, &mut wq, -1, &mut iq, -1,
                            &mut info,
                        );
                        let (lw, li) = (wq[0] as i32, iq[0]);
                        let (mut work, mut iwork) = (vec![0.0; lw as usize], vec![0; li as usize]);
                        lapack::dsyevd(
                            b'V', b'L', ni, &mut a2, ni, &mut w2, &mut work, lw, &mut iwork, li,
                            &mut info,
                        );
                    }
                    assert_eq!(info, 0);
                },
            ),
        );
        t.row(
            "potrf f64",
            &n.to_string(),
            compare(
                || {
                    a1.copy_from_slice(&a0);
                    // SAFETY: n × n.
                    unsafe {
                        <CpuDevice as LapackPotrf<f64>>::potrf(Uplo::Lower, n, a1.as_mut_ptr(), n)
                            .unwrap()
                    }
                },
                || {
                    a2.copy_from_slice(&a0);
                    let mut info = 0;
                    // SAFETY: n × n.
                    unsafe { lapack::dpotrf(b'L', ni, &mut a2, ni, &mut info) };
                    assert_eq!(info, 0);
                },
            ),
        );
        let mut ip1 = vec![0i32; n];
        let mut ip2 = ip1.clone();
        t.row(
            "getrf f64",
            &n.to_string(),
            compare(
                || {
                    a1.copy_from_slice(&a0);
                    // SAFETY: n × n and n pivots.
                    unsafe {
                        <CpuDevice as LapackGetrf<f64>>::getrf(
                            n,
                            n,
                            a1.as_mut_ptr(),
                            n,
                            ip1.as_mut_ptr(),
                        )
                        .unwrap()
                    }
                },
                || {
                    a2.copy_from_slice(&a0);
                    let mut info = 0;
                    // SAFETY: n × n and n pivots.
                    unsafe { lapack::dgetrf(ni, ni, &mut a2, ni, &mut ip2, &mut info) };
                    assert_eq!(info, 0);
                },
            ),
        );
    }
    for n in [128usize, 256] {
        let a0 = random::<c64>(rng, n * n);
        let (mut a1, mut a2) = (a0.clone(), a0.clone());
        let (mut w1, mut w2) = (vec![0.0; n], vec![0.0; n]);
        let k = n / 8;
        let mut z1 = vec![c64::default(); n * k];
        let mut z2 = z1.clone();
        t.row(
            "heevr (zheevr) c64, lowest n/8",
            &n.to_string(),
            compare(
                || {
                    a1.copy_from_slice(&a0);
                    // SAFETY: n × n, n values, n × k vectors.
                    unsafe {
                        <CpuDevice as LapackHeevr<c64>>::heevr(
                            Uplo::Lower,
                            n,
                            a1.as_mut_ptr(),
                            n,
                            EigRange::Index(0..k),
                            w1.as_mut_ptr(),
                            z1.as_mut_ptr(),
                            n,
                        )
                        .unwrap();
                    }
                },
                || {
                    a2.copy_from_slice(&a0);
                    crate::harness::zheevr_lowest(&mut a2, n, k, &mut w2, &mut z2);
                },
            ),
        );
    }
    t.out
}
