//! Element-wise ops against plain loops, and the table that sets the threading threshold.

use std::hint::black_box;

use ctensor::base::{c64, CpuDevice};
use ctensor::kernels::linalg::*;
use ctensor::kernels::parallel::{parallel_threshold, set_parallel_threshold};
use rand::rngs::StdRng;

use crate::harness::{compare, random, us, Table};

pub fn elementwise_vs_loops(rng: &mut StdRng) -> String {
    let mut t = Table::new(
        "Element-wise and transpose kernels vs plain loops (default threshold)",
        ["ours", "plain loop", "ratio"],
    );
    print!("{}", t.out);
    for n in [1000usize, 100_000, 4_000_000] {
        let x = random::<f64>(rng, n);
        let y = random::<f64>(rng, n);
        let mut z1 = vec![0.0; n];
        let mut z2 = z1.clone();
        t.row(
            "add f64 z = αx + βy",
            &n.to_string(),
            compare(
                // SAFETY: n elements each.
                || unsafe {
                    <CpuDevice as Add<f64>>::add(
                        n,
                        0.5,
                        x.as_ptr(),
                        2.0,
                        y.as_ptr(),
                        z1.as_mut_ptr(),
                    )
                    .unwrap()
                },
                || {
                    for ((z, x), y) in z2.iter_mut().zip(&x).zip(&y) {
                        *z = 0.5 * x + 2.0 * y;
                    }
                    black_box(&mut z2);
                },
            ),
        );
        let xc = random::<c64>(rng, n);
        let yc = random::<c64>(rng, n);
        let mut zc1 = vec![c64::default(); n];
        let mut zc2 = zc1.clone();
        let a = c64::new(0.5, 1.0);
        t.row(
            "mul c64 z = αx∘y",
            &n.to_string(),
            compare(
                // SAFETY: n elements each.
                || unsafe {
                    <CpuDevice as Mul<c64>>::mul(n, a, xc.as_ptr(), yc.as_ptr(), zc1.as_mut_ptr())
                        .unwrap()
                },
                || {
                    for ((z, x), y) in zc2.iter_mut().zip(&xc).zip(&yc) {
                        *z = a * x * y;
                    }
                    black_box(&mut zc2);
                },
            ),
        );
        // Smith's quotient (branches on which part of y is larger) against the textbook
        // x·conj(y)/|y|² that num_complex computes: the price of quotients that do not
        // overflow or underflow.
        t.row(
            "div c64 z = x / y (Smith) vs num_complex's textbook `/`",
            &n.to_string(),
            compare(
                // SAFETY: n elements each.
                || unsafe {
                    <CpuDevice as Div<c64>>::div(
                        n,
                        c64::new(1.0, 0.0),
                        xc.as_ptr(),
                        yc.as_ptr(),
                        zc1.as_mut_ptr(),
                    )
                    .unwrap()
                },
                || {
                    for ((z, x), y) in zc2.iter_mut().zip(&xc).zip(&yc) {
                        *z = x / y;
                    }
                    black_box(&mut zc2);
                },
            ),
        );
    }
    for (r, cdim) in [(64usize, 64usize), (1000, 1000), (2048, 2048), (4096, 1024)] {
        let n = r * cdim;
        let src = random::<f64>(rng, n);
        let mut d1 = vec![0.0; n];
        let mut d2 = d1.clone();
        t.row(
            "transpose f64 (2-D)",
            &format!("{r} × {cdim}"),
            compare(
                // SAFETY: n elements each.
                || unsafe {
                    <CpuDevice as Transpose<f64>>::transpose(
                        &[r, cdim],
                        &[1, 0],
                        src.as_ptr(),
                        d1.as_mut_ptr(),
                        false,
                    )
                    .unwrap()
                },
                || {
                    for i in 0..r {
                        for j in 0..cdim {
                            d2[j * r + i] = src[i * cdim + j];
                        }
                    }
                    black_box(&mut d2);
                },
            ),
        );
    }
    {
        let (a, b, cdim) = (64usize, 128usize, 256usize);
        let n = a * b * cdim;
        let src = random::<c64>(rng, n);
        let mut d1 = vec![c64::default(); n];
        let mut d2 = d1.clone();
        t.row(
            "transpose c64 (3-D, perm [2,0,1], conj)",
            &format!("{a} × {b} × {cdim}"),
            compare(
                // SAFETY: n elements each.
                || unsafe {
                    <CpuDevice as Transpose<c64>>::transpose(
                        &[a, b, cdim],
                        &[2, 0, 1],
                        src.as_ptr(),
                        d1.as_mut_ptr(),
                        true,
                    )
                    .unwrap()
                },
                || {
                    for i in 0..a {
                        for j in 0..b {
                            for k in 0..cdim {
                                d2[(k * a + i) * b + j] = src[(i * b + j) * cdim + k].conj();
                            }
                        }
                    }
                    black_box(&mut d2);
                },
            ),
        );
    }
    t.out
}

pub fn threshold_table(rng: &mut StdRng) -> String {
    let mut t = Table::new(
        &format!(
            "Parallel threshold: `add` f64 on one thread vs split across {} threads",
            rayon::current_num_threads()
        ),
        ["one thread", "split", "one/split"],
    );
    print!("{}", t.out);
    let before = parallel_threshold();
    for p in [10u32, 12, 14, 15, 16, 17, 18, 20, 22] {
        let n = 1usize << p;
        let x = random::<f64>(rng, n);
        let y = random::<f64>(rng, n);
        let mut z = vec![0.0; n];
        let zp = z.as_mut_ptr();
        let run = |threshold: usize| {
            set_parallel_threshold(threshold);
            // SAFETY: n elements each.
            unsafe {
                <CpuDevice as Add<f64>>::add(n, 0.5, x.as_ptr(), 2.0, y.as_ptr(), zp).unwrap()
            }
        };
        let (one, split) = compare(|| run(usize::MAX), || run(1));
        t.out.push_str(&format!(
            "| add f64 | 2^{p} | {} | {} | {:.2} |\n",
            us(one),
            us(split),
            one / split
        ));
        println!(
            "| add f64 | 2^{p} | {} | {} | {:.2} |",
            us(one),
            us(split),
            one / split
        );
    }
    set_parallel_threshold(before);
    t.out
}
