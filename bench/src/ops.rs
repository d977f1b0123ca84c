//! Ops tables: matmul/einsum vs direct `cblas_zgemm`, `eigh` vs faer and `zheevd`,
//! a large element-wise add vs a plain loop and ndarray, and a large permute vs a
//! tiled loop.

use std::hint::black_box;
use std::time::Instant;

use ctensor::ops::einsum::{einsum_into, EinsumOptions};
use ctensor::{
    c64, eigh, matmul, set_num_threads, DataType, DeviceType, EigBackend, EighRange, Tensor,
};
use rand::rngs::StdRng;

use crate::harness::{compare, random, us, Table};

pub fn gemm_vs_zgemm(rng: &mut StdRng) -> String {
    let mut t = Table::new(
        "matmul / einsum vs direct `cblas_zgemm` (c64, row-major operands)",
        ["ours", "zgemm", "ratio"],
    );
    print!("{}", t.out);
    use cblas::{Layout::RowMajor, Transpose::None as NoT};
    for n in [128usize, 256, 512] {
        let av = random::<c64>(rng, n * n);
        let bv = random::<c64>(rng, n * n);
        let (a, b) = (
            Tensor::from_slice(&av, &[n, n]).unwrap(),
            Tensor::from_slice(&bv, &[n, n]).unwrap(),
        );
        let mut out = Tensor::zeros(DataType::ComplexDouble, DeviceType::Cpu, &[n, n]).unwrap();
        let mut c = vec![c64::default(); n * n];
        let ni = n as i32;
        let (one, zero) = (c64::new(1.0, 0.0), c64::new(0.0, 0.0));
        let mut direct = || {
            // SAFETY: n × n buffers.
            unsafe {
                cblas::zgemm(
                    RowMajor, NoT, NoT, ni, ni, ni, one, &av, ni, &bv, ni, zero, &mut c, ni,
                )
            };
        };
        let opts = EinsumOptions::default();
        t.row(
            "einsum_into \"ij,jk->ik\"",
            &format!("{n}³"),
            compare(
                || einsum_into("ij,jk->ik", &[&a, &b], &opts, &mut out).unwrap(),
                &mut direct,
            ),
        );
        t.row(
            "matmul (allocates C)",
            &format!("{n}³"),
            compare(|| drop(black_box(matmul(&a, &b).unwrap())), &mut direct),
        );
        let conj = EinsumOptions::conj_y();
        let mut direct_c = || {
            // SAFETY: n × n buffers.
            unsafe {
                cblas::zgemm(
                    RowMajor,
                    NoT,
                    cblas::Transpose::Conjugate,
                    ni,
                    ni,
                    ni,
                    one,
                    &av,
                    ni,
                    &bv,
                    ni,
                    zero,
                    &mut c,
                    ni,
                )
            };
        };
        t.row(
            "einsum_into \"ij,kj->ik\" conj_y",
            &format!("{n}³"),
            compare(
                || einsum_into("ij,kj->ik", &[&a, &b], &conj, &mut out).unwrap(),
                &mut direct_c,
            ),
        );
    }
    t.out
}

fn median_time(runs: usize, mut f: impl FnMut()) -> f64 {
    f(); // warm up (page faults, thread pools)
    let mut v: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[runs / 2]
}

trait ColMajorCopy {
    fn copy_to_col_major_for_bench(&self) -> Tensor;
}
impl ColMajorCopy for Tensor {
    fn copy_to_col_major_for_bench(&self) -> Tensor {
        let mut out = Tensor::new_in_order(
            self.dtype(),
            self.device(),
            self.dims(),
            ctensor::Order::ColMajor,
        )
        .unwrap();
        out.sync(self).unwrap();
        out
    }
}

pub fn eigh_table(rng: &mut StdRng) -> String {
    let mut out = String::from(
        "\n### eigh: c64 Hermitian, eigenvalues and eigenvectors (median of 3)\n\n\
         | n | threads | ours LapackEvd | ours LapackEvr | ours Faer | ours Faer, column-major input | direct zheevd | direct faer |\n\
         |---|---|---:|---:|---:|---:|---:|---:|\n",
    );
    print!("{out}");
    for n in [500usize, 1000] {
        let h = crate::harness::hermitian(rng, n);
        let a = Tensor::from_slice(&h, &[n, n]).unwrap();
        for threads in [1usize, 2] {
            set_num_threads(threads).unwrap();
            let par = if threads > 1 {
                faer::Par::rayon(threads)
            } else {
                faer::Par::Seq
            };
            faer::set_global_parallelism(par);
            let ours = |b: EigBackend| {
                median_time(3, || drop(black_box(eigh(&a, EighRange::All, b).unwrap())))
            };
            let (evd, evr, fa) = (
                ours(EigBackend::LapackEvd),
                ours(EigBackend::LapackEvr),
                ours(EigBackend::Faer),
            );
            let acm = a.copy_to_col_major_for_bench();
            let fa_cm = median_time(3, || {
                drop(black_box(
                    eigh(&acm, EighRange::All, EigBackend::Faer).unwrap(),
                ))
            });
            let ni = n as i32;
            let zheevd = median_time(3, || {
                let mut m = h.clone();
                let mut w = vec![0.0; n];
                let (mut wq, mut rq, mut iq, mut info) = ([c64::default()], [0.0], [0], 0);
                // SAFETY: a workspace query, then the call with what it asked for.
                unsafe {
                    lapack::zheevd(
                        b'V', b'L', ni, &mut m, ni, &mut w, &mut wq, -1, &mut rq, -1, &mut iq, -1,
                        &mut info,
                    );
                    let (lw, lr, li) = (wq[0].re as i32, rq[0] as i32, iq[0]);
                    let mut work = vec![c64::default(); lw as usize];
                    let mut rwork = vec![0.0; lr as usize];
                    let mut iwork = vec![0; li as usize];
                    lapack::zheevd(
                        b'V', b'L', ni, &mut m, ni, &mut w, &mut work, lw, &mut rwork, lr,
                        &mut iwork, li, &mut info,
                    );
                }
                assert_eq!(info, 0);
            });
            let fm = faer::Mat::<c64>::from_fn(n, n, |i, j| h[i * n + j]);
            let direct_faer = median_time(3, || {
                drop(black_box(fm.self_adjoint_eigen(faer::Side::Lower).unwrap()))
            });

            let line = format!(
                "| {n} | {threads} | {} | {} | {} | {} | {} | {} |\n",
                us(evd),
                us(evr),
                us(fa),
                us(fa_cm),
                us(zheevd),
                us(direct_faer)
            );
            print!("{line}");
            out.push_str(&line);
        }
    }
    out
}

pub fn add_and_permute(rng: &mut StdRng) -> String {
    set_num_threads(2).unwrap();
    let mut t = Table::new(
        "Large element-wise add (1e7 f64) and transpose (8192² f64); threads per row",
        ["ours", "peer", "ours/peer"],
    );
    print!("{}", t.out);
    let n = 10_000_000;
    let (xv, yv) = (random::<f64>(rng, n), random::<f64>(rng, n));
    let (x, y) = (
        Tensor::from_slice(&xv, &[n]).unwrap(),
        Tensor::from_slice(&yv, &[n]).unwrap(),
    );
    let mut out = Tensor::zeros(DataType::Double, DeviceType::Cpu, &[n]).unwrap();
    let mut z = vec![0.0; n];
    set_num_threads(1).unwrap();
    t.row(
        "add_into vs plain loop (both 1 thread)",
        "1e7",
        compare(
            || x.add_into(&y, &mut out).unwrap(),
            || {
                for ((z, a), b) in z.iter_mut().zip(&xv).zip(&yv) {
                    *z = a + b;
                }
                black_box(&mut z);
            },
        ),
    );
    set_num_threads(2).unwrap();
    let (xa, ya) = (
        ndarray::Array1::from(xv.clone()),
        ndarray::Array1::from(yv.clone()),
    );
    let mut za = ndarray::Array1::<f64>::zeros(n);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    t.row(
        "add_into vs ndarray Zip::par_for_each (both 2 threads)",
        "1e7",
        compare(
            || x.add_into(&y, &mut out).unwrap(),
            || {
                pool.install(|| {
                    ndarray::Zip::from(&mut za)
                        .and(&xa)
                        .and(&ya)
                        .par_for_each(|z, &a, &b| *z = a + b)
                })
            },
        ),
    );
    t.row(
        "x + y (allocating, 2 threads) vs ndarray &x + &y (1 thread, its only mode)",
        "1e7",
        compare(
            || drop(black_box((&x + &y).unwrap())),
            || drop(black_box(&xa + &ya)),
        ),
    );
    // Broadcast operands: a row [1, m] and a column [r, 1] against an [r, m] block (the
    // shapes of `x * kinetic` and `x * occupations`) into an existing output, with
    // ndarray's `Zip::and_broadcast`, which reads the operand through its zero stride and
    // never copies it, as the peer. Both 1 thread.
    set_num_threads(1).unwrap();
    for (r, m) in [(4000usize, 2500usize), (100_000, 64), (1_000_000, 3)] {
        let xv = random::<c64>(rng, r * m);
        let x = Tensor::from_slice(&xv, &[r, m]).unwrap();
        let xa = ndarray::Array2::from_shape_vec((r, m), xv).unwrap();
        let mut out = Tensor::zeros(DataType::ComplexDouble, DeviceType::Cpu, &[r, m]).unwrap();
        let mut za = ndarray::Array2::<c64>::zeros((r, m));
        for (what, shape) in [("row", (1, m)), ("column", (r, 1)), ("dense", (r, m))] {
            let v = random::<c64>(rng, shape.0 * shape.1);
            let y = Tensor::from_slice(&v, &[shape.0, shape.1]).unwrap();
            let ya = ndarray::Array2::from_shape_vec(shape, v).unwrap();
            t.row(
                &format!("x.mul_into({what}) c64 vs ndarray Zip::and_broadcast (1 thread)"),
                &format!("{r}×{m}"),
                compare(
                    || x.mul_into(&y, &mut out).unwrap(),
                    || {
                        ndarray::Zip::from(&mut za)
                            .and(&xa)
                            .and_broadcast(&ya)
                            .for_each(|z, &a, &b| *z = a * b)
                    },
                ),
            );
        }
    }
    set_num_threads(2).unwrap();
    let m = 8192;
    let src = random::<f64>(rng, m * m);
    let a = Tensor::from_slice(&src, &[m, m]).unwrap();
    set_num_threads(1).unwrap();
    t.row(
        "a.t().contiguous() vs 32×32 tiled loop (both 1 thread)",
        "8192²",
        compare(
            || drop(black_box(a.t().unwrap().contiguous().unwrap())),
            || {
                let mut d = vec![0.0f64; m * m];
                for i0 in (0..m).step_by(32) {
                    for j0 in (0..m).step_by(32) {
                        for i in i0..i0 + 32 {
                            for j in j0..j0 + 32 {
                                d[j * m + i] = src[i * m + j];
                            }
                        }
                    }
                }
                black_box(d);
            },
        ),
    );
    set_num_threads(2).unwrap();
    t.out
}
