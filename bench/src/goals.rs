//! The performance goals of issue 14, one row per case: ctensor against the peer named in
//! the row, on the thread count in the row for both sides (ctensor's pool and OpenBLAS
//! set with `set_num_threads`, the peers' rayon pools built with the same count), the
//! ratio ours/peer of the median times, the goal, and whether this run met it.

use std::hint::black_box;

use ctensor::kernels::blas::{BlasAxpy, BlasDot};
use ctensor::{
    c64, eigh, matmul, matmul_into, set_num_threads, CpuDevice, DataType, DeviceType, EigBackend,
    EighRange, Tensor, Trans,
};
use rand::rngs::StdRng;

use crate::harness::{compare, compare_samples, random, us};

/// The table being printed and collected.
struct Goals {
    out: String,
}

impl Goals {
    fn new() -> Goals {
        let out = String::from(
            "\n### Issue 14's goals: ours vs the peer, same data, same thread count\n\n\
             | case | threads | ours | peer | ours/peer | goal | met |\n\
             |---|---:|---:|---:|---:|---|---|\n",
        );
        print!("{out}");
        Goals { out }
    }

    /// One row; `max_ratio` is the goal (ours/peer at most this).
    fn row(&mut self, case: &str, threads: usize, (a, b): (f64, f64), max_ratio: f64) {
        let ratio = a / b;
        let line = format!(
            "| {case} | {threads} | {} | {} | {ratio:.3} | ≤ {max_ratio:.2} | {} |\n",
            us(a),
            us(b),
            if ratio <= max_ratio { "yes" } else { "**no**" }
        );
        print!("{line}");
        self.out.push_str(&line);
    }
}

/// A rayon pool of `n` threads for the peers.
fn pool(n: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .unwrap()
}

pub fn goal_table(rng: &mut StdRng) -> String {
    let mut g = Goals::new();
    small_products(&mut g, rng);
    large_arrays(&mut g, rng);
    level1(&mut g, rng);
    eigensolver(&mut g, rng);
    set_num_threads(2).unwrap();
    g.out
}

fn small_products(g: &mut Goals, rng: &mut StdRng) {
    set_num_threads(1).unwrap();
    let n = 4;
    let (av, bv) = (random::<f64>(rng, n * n), random::<f64>(rng, n * n));
    let (a, b) = (
        Tensor::from_slice(&av, &[n, n]).unwrap(),
        Tensor::from_slice(&bv, &[n, n]).unwrap(),
    );
    let fa = faer::Mat::<f64>::from_fn(n, n, |i, j| av[i * n + j]);
    let fb = faer::Mat::<f64>::from_fn(n, n, |i, j| bv[i * n + j]);
    let na = ndarray::Array2::from_shape_vec((n, n), av.clone()).unwrap();
    let nb = ndarray::Array2::from_shape_vec((n, n), bv.clone()).unwrap();
    let ours_zeros_into = || {
        let mut c = Tensor::zeros(DataType::Double, DeviceType::Cpu, &[n, n]).unwrap();
        matmul_into(&a, Trans::N, &b, Trans::N, 1.0, 0.0, &mut c).unwrap();
        black_box(c);
    };
    g.row(
        "4×4 f64: `zeros` + `matmul_into` vs faer `Mat::zeros` + `matmul`",
        1,
        compare(ours_zeros_into, || {
            let mut c = faer::Mat::<f64>::zeros(n, n);
            faer::linalg::matmul::matmul(
                c.as_mut(),
                faer::Accum::Replace,
                fa.as_ref(),
                fb.as_ref(),
                1.0,
                faer::Par::Seq,
            );
            black_box(c);
        }),
        3.0,
    );
    g.row(
        "4×4 f64: `zeros` + `matmul_into` vs ndarray `zeros` + `general_mat_mul`",
        1,
        compare(ours_zeros_into, || {
            let mut c = ndarray::Array2::<f64>::zeros((n, n));
            ndarray::linalg::general_mat_mul(1.0, &na, &nb, 0.0, &mut c);
            black_box(c);
        }),
        3.0,
    );
    g.row(
        "4×4 f64: `matmul` (allocating) vs faer `&a * &b`",
        1,
        compare(
            || drop(black_box(matmul(&a, &b).unwrap())),
            || drop(black_box(&fa * &fb)),
        ),
        3.0,
    );
    g.row(
        "4×4 f64: `matmul` (allocating) vs ndarray `a.dot(&b)`",
        1,
        compare(
            || drop(black_box(matmul(&a, &b).unwrap())),
            || drop(black_box(na.dot(&nb))),
        ),
        3.0,
    );
    set_num_threads(2).unwrap();
    let n = 128;
    let (av, bv) = (random::<f64>(rng, n * n), random::<f64>(rng, n * n));
    let (a, b) = (
        Tensor::from_slice(&av, &[n, n]).unwrap(),
        Tensor::from_slice(&bv, &[n, n]).unwrap(),
    );
    let mut c = vec![0.0; n * n];
    let ni = n as i32;
    g.row(
        "128² f64: `matmul` (allocating C) vs `cblas_dgemm` into a C it was given",
        2,
        compare(
            || drop(black_box(matmul(&a, &b).unwrap())),
            || {
                use cblas::{Layout::RowMajor, Transpose::None as NoT};
                // SAFETY: n × n buffers.
                unsafe {
                    cblas::dgemm(
                        RowMajor, NoT, NoT, ni, ni, ni, 1.0, &av, ni, &bv, ni, 0.0, &mut c, ni,
                    )
                };
                black_box(&mut c);
            },
        ),
        1.02,
    );
}

fn large_arrays(g: &mut Goals, rng: &mut StdRng) {
    let n = 10_000_000;
    let (xv, yv) = (random::<f64>(rng, n), random::<f64>(rng, n));
    let (x, y) = (
        Tensor::from_slice(&xv, &[n]).unwrap(),
        Tensor::from_slice(&yv, &[n]).unwrap(),
    );
    let (xa, ya) = (
        ndarray::Array1::from(xv.clone()),
        ndarray::Array1::from(yv.clone()),
    );
    set_num_threads(2).unwrap();
    let two = pool(2);
    // ndarray's `&a + &b` is single-threaded; the goal is to beat it with 2 threads.
    g.row(
        "1e7 f64 `&x + &y` (ours on 2 threads) vs ndarray `&x + &y` (1 thread, it has no other)",
        2,
        compare(
            || drop(black_box((&x + &y).unwrap())),
            || drop(black_box(&xa + &ya)),
        ),
        0.67,
    );
    g.row(
        "1e7 f64 `&x + &y` vs ndarray `par_azip!` into a fresh uninitialised array",
        2,
        compare(
            || drop(black_box((&x + &y).unwrap())),
            || {
                two.install(|| {
                    let mut z = ndarray::Array1::<f64>::uninit(n);
                    ndarray::par_azip!((z in &mut z, &a in &xa, &b in &ya) { z.write(a + b); });
                    // SAFETY: every element was written above.
                    black_box(unsafe { z.assume_init() });
                })
            },
        ),
        1.0,
    );
    // Both sides add into the same memory: the peer works on ndarray views of `acc`'s and
    // `y`'s buffers. Two arrays of the same size can run at different speeds on this
    // machine (two clones of one tensor, added to in place, once measured 3.0 and 7.3 ms
    // in one run), which would be the pages' difference, not the code's.
    let mut acc = x.try_clone().unwrap();
    let (pa, py) = (acc.data_ptr() as *mut f64, y.data_ptr() as *const f64);
    g.row(
        "1e7 f64 `a.add_(&b)` vs ndarray `par_azip!((a in &mut a, &b in &b) *a += b)` on the same memory",
        2,
        compare(
            || acc.add_(&y).unwrap(),
            || {
                // SAFETY: `acc` and `y` hold `n` f64 each and live to the end of this
                // function; the two sides never run at once, so nothing else reads or
                // writes them while these views exist.
                let (mut a, b) = unsafe {
                    (
                        ndarray::ArrayViewMut1::from_shape_ptr(n, pa),
                        ndarray::ArrayView1::from_shape_ptr(n, py),
                    )
                };
                two.install(|| ndarray::par_azip!((a in &mut a, &b in &b) *a += b))
            },
        ),
        1.05,
    );
    transposes(g, rng, &two);
}

/// `t().contiguous()` of an 8192² f64 matrix against the copy a C programmer writes: a
/// fresh `malloc`'d destination (no zero fill), 32×32 tiles, raw pointers, the destination's
/// row blocks split over the same number of threads. Twice: with ctensor's host cache
/// (its steady state: the result's block comes back already mapped) and with the cache
/// off, where both sides pay the same first-touch page faults.
fn transposes(g: &mut Goals, rng: &mut StdRng, two: &rayon::ThreadPool) {
    use ctensor::base::alloc::host_cache::set_limit;
    let m = 8192;
    let src = random::<f64>(rng, m * m);
    let a = Tensor::from_slice(&src, &[m, m]).unwrap();
    let peer = || {
        use rayon::prelude::*;
        const TILE: usize = 32;
        let mut d: Vec<f64> = Vec::with_capacity(m * m);
        let (sp, dp) = (src.as_ptr() as usize, d.as_mut_ptr() as usize);
        two.install(|| {
            (0..m / TILE).into_par_iter().for_each(|bj| {
                let (s, d) = (sp as *const f64, dp as *mut f64);
                for i0 in (0..m).step_by(TILE) {
                    for j in bj * TILE..(bj + 1) * TILE {
                        for i in i0..i0 + TILE {
                            // SAFETY: i, j < m; each task writes only its own rows j of
                            // the destination, which holds m² elements.
                            unsafe { *d.add(j * m + i) = *s.add(i * m + j) };
                        }
                    }
                }
            })
        });
        // SAFETY: every element of the m² was written above.
        unsafe { d.set_len(m * m) };
        black_box(d);
    };
    g.row(
        "8192² f64 `a.t()?.contiguous()` vs a C-style 32×32-tiled copy into fresh `malloc` memory, same threads",
        2,
        compare(|| drop(black_box(a.t().unwrap().contiguous().unwrap())), peer),
        1.02,
    );
    let old = set_limit(0);
    g.row(
        "the same with ctensor's host cache off (both sides fault in fresh pages)",
        2,
        compare(
            || drop(black_box(a.t().unwrap().contiguous().unwrap())),
            peer,
        ),
        1.02,
    );
    set_limit(old);
}

/// Moves the code after it `K` bytes on (x86-64: `K` bytes of the longest no-ops), so a
/// function can be timed at several places in memory; nothing elsewhere.
#[inline(always)]
fn shift<const K: usize>() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: no-ops: no memory, stack or flags touched.
    unsafe {
        std::arch::asm!(".if {k}", ".nops {k}", ".endif", k = const K,
                        options(nomem, nostack, preserves_flags));
    }
}

/// `compare` of `$a::<K>` against `$b::<K>` at eight placements `K` of both functions'
/// code and of the data (`$run(f, K)` builds one side's call; it puts the vectors `64·K`
/// bytes into their buffers), and the medians over the placements.
///
/// At 15–40 ns a call, where code and data happen to land moves the time by more than the
/// checks under test cost: two copies of the same `cblas_daxpy` call measured 13.6 and
/// 15.5 ns in one run, and one build's `zdotc` row gave 0.99, 1.12 and 0.99 in three runs
/// (the heap moves between runs). Shifting the code by 0–56 bytes of no-ops and the
/// vectors by 0–3.5 KiB samples that spread on both sides alike, and the medians say what
/// the code costs rather than where it landed. Both sides run in one timing loop (one
/// closure type, so one piece of machine code) that calls them through a function pointer.
macro_rules! placed {
    ($run:expr, $a:ident, $b:ident) => {{
        let t = [
            compare($run($a::<0>, 0), $run($b::<0>, 0)),
            compare($run($a::<8>, 8), $run($b::<8>, 8)),
            compare($run($a::<16>, 16), $run($b::<16>, 16)),
            compare($run($a::<24>, 24), $run($b::<24>, 24)),
            compare($run($a::<32>, 32), $run($b::<32>, 32)),
            compare($run($a::<40>, 40), $run($b::<40>, 40)),
            compare($run($a::<48>, 48), $run($b::<48>, 48)),
            compare($run($a::<56>, 56), $run($b::<56>, 56)),
        ];
        let median = |v: &mut [f64]| {
            v.sort_by(f64::total_cmp);
            (v[3] + v[4]) / 2.0
        };
        let (mut a, mut b) = (t.map(|p| p.0), t.map(|p| p.1));
        (median(&mut a), median(&mut b))
    }};
}

/// The level-1 rows: ours and the direct CBLAS call as functions of their own, each timed
/// at eight code placements (`placed!`). The control row times `cblas_daxpy` against a
/// second copy of its own caller, which shows what is left of the placement spread.
fn level1(g: &mut Goals, rng: &mut StdRng) {
    set_num_threads(1).unwrap();
    let n = 128;
    type Dot = fn(usize, &[c64], &[c64]) -> c64;
    #[inline(never)]
    fn ours_dot<const K: usize>(n: usize, x: &[c64], y: &[c64]) -> c64 {
        shift::<K>();
        // SAFETY: `x` and `y` hold `n` elements.
        unsafe { <CpuDevice as BlasDot<c64>>::dot(n, x.as_ptr(), 1, y.as_ptr(), 1) }.unwrap()
    }
    #[inline(never)]
    fn peer_dot<const K: usize>(n: usize, x: &[c64], y: &[c64]) -> c64 {
        shift::<K>();
        let mut out = [c64::default()];
        // SAFETY: `x` and `y` hold `n` elements.
        unsafe { cblas::zdotc_sub(n as i32, x, 1, y, 1, &mut out) };
        out[0]
    }
    // Room for the vectors at 0–3.5 KiB into their buffers (4 c64 = 64 bytes per unit of K).
    let (xv, yv) = (
        random::<c64>(rng, n + 4 * 56),
        random::<c64>(rng, n + 4 * 56),
    );
    let dot = |f: Dot, k: usize| {
        let f = black_box(f);
        let (x, y) = (&xv[4 * k..4 * k + n], &yv[4 * k..4 * k + n]);
        move || {
            black_box(f(n, x, y));
        }
    };
    g.row(
        "`BlasDot` (zdotc) c64, n = 128, vs `cblas_zdotc_sub`",
        1,
        placed!(dot, ours_dot, peer_dot),
        1.1,
    );

    type Axpy = fn(usize, &[f64], *mut f64);
    #[inline(never)]
    fn ours_axpy<const K: usize>(n: usize, x: &[f64], y: *mut f64) {
        shift::<K>();
        // SAFETY: `x` holds `n` elements, `y` points to `n` that nothing else uses.
        unsafe { <CpuDevice as BlasAxpy<f64>>::axpy(n, 1e-9, x.as_ptr(), 1, y, 1) }.unwrap()
    }
    #[inline(never)]
    fn peer_axpy<const K: usize>(n: usize, x: &[f64], y: *mut f64) {
        shift::<K>();
        // SAFETY: as above.
        unsafe {
            cblas::daxpy(
                n as i32,
                1e-9,
                x,
                1,
                std::slice::from_raw_parts_mut(y, n),
                1,
            )
        }
    }
    /// `peer_axpy` again (another factor, so the compiler keeps it a function of its own).
    #[inline(never)]
    fn peer_axpy_again<const K: usize>(n: usize, x: &[f64], y: *mut f64) {
        shift::<K>();
        // SAFETY: as above.
        unsafe {
            cblas::daxpy(
                n as i32,
                2e-9,
                x,
                1,
                std::slice::from_raw_parts_mut(y, n),
                1,
            )
        }
    }
    // As for the dots: 8 f64 = 64 bytes per unit of K.
    let xv = random::<f64>(rng, n + 8 * 56);
    // One y for both sides, so neither gets a better-aligned array; the calls never
    // overlap, so the raw pointer is never used by two at once.
    let mut yv = random::<f64>(rng, n + 8 * 56);
    let y0 = yv.as_mut_ptr();
    let axpy = |f: Axpy, k: usize| {
        let f = black_box(f);
        let x = &xv[8 * k..8 * k + n];
        // SAFETY: `8 * k + n` is within `yv`.
        let y = unsafe { y0.add(8 * k) };
        move || f(n, x, y)
    };
    g.row(
        "`BlasAxpy` f64, n = 128, vs `cblas_daxpy`",
        1,
        placed!(axpy, ours_axpy, peer_axpy),
        1.1,
    );
    g.row(
        "control: `cblas_daxpy` vs itself from another caller",
        1,
        placed!(axpy, peer_axpy_again, peer_axpy),
        1.1,
    );
    black_box(&mut yv);
}

fn eigensolver(g: &mut Goals, rng: &mut StdRng) {
    set_num_threads(1).unwrap();
    faer::set_global_parallelism(faer::Par::Seq);
    let n = 500;
    let h = crate::harness::hermitian(rng, n);
    let a = Tensor::from_slice(&h, &[n, n]).unwrap();
    let k = n / 10;
    let range = EighRange::Index(0, k);
    let time = |b: EigBackend| {
        crate::harness::median_of(5, || drop(black_box(eigh(&a, range, b).unwrap())))
    };
    let explicit = [
        EigBackend::LapackEvd,
        EigBackend::LapackEvr,
        EigBackend::Faer,
    ]
    .map(|b| (time(b), b));
    let which = explicit
        .iter()
        .min_by(|p, q| p.0.total_cmp(&q.0))
        .map(|p| p.1)
        .unwrap();
    // The default against the fastest, interleaved (when `Auto` picks that same solver
    // the ratio is the noise of the measurement, which 7 samples of one 45 ms call left at
    // up to 4.5 %; 21 take it under the 2 % goal).
    let both = compare_samples(
        21,
        || drop(black_box(eigh(&a, range, EigBackend::default()).unwrap())),
        || drop(black_box(eigh(&a, range, which).unwrap())),
    );
    g.row(
        &format!(
            "`eigh` c64 n = 500, lowest 10 %, default backend vs the fastest explicit one ({which:?})"
        ),
        1,
        both,
        1.02,
    );
    // The same lowest 10 % against `zheevr` called directly with an index range, on a
    // column-major copy (as LAPACK overwrites its input, the peer copies it every call).
    let col: Vec<c64> = (0..n * n).map(|p| h[(p % n) * n + p / n]).collect();
    let (mut work, mut w, mut z) = (col.clone(), vec![0.0; n], vec![c64::default(); n * k]);
    g.row(
        "`eigh` c64 n = 500, lowest 10 %, default backend vs `zheevr` called directly (index range)",
        1,
        compare_samples(
            21,
            || drop(black_box(eigh(&a, range, EigBackend::default()).unwrap())),
            || {
                work.copy_from_slice(&col);
                crate::harness::zheevr_lowest(&mut work, n, k, &mut w, &mut z);
                black_box((&w, &z));
            },
        ),
        1.02,
    );
    // Eigenvalues only, the lowest 8 (the band-structure demo's solve): ctensor's
    // full-precision `LapackEvr` and its mixed-precision `Mixed` against `zheevr('N')`
    // called directly, as SciPy's `eigh(eigvals_only=True, driver="evr")` does.
    for n in [169, 531] {
        let h = crate::harness::hermitian(rng, n);
        let a = Tensor::from_slice(&h, &[n, n]).unwrap();
        let col: Vec<c64> = (0..n * n).map(|p| h[(p % n) * n + p / n]).collect();
        let (mut work, mut w) = (col.clone(), vec![0.0; n]);
        let range = EighRange::Index(0, 8);
        for (backend, goal) in [(EigBackend::LapackEvr, 1.05), (EigBackend::Mixed, 1.0)] {
            g.row(
                &format!("`eigvalsh` c64 n = {n}, lowest 8, `{backend:?}` vs `zheevr('N')` called directly"),
                1,
                compare_samples(
                    21,
                    || drop(black_box(ctensor::eigvalsh(&a, range, backend).unwrap())),
                    || {
                        work.copy_from_slice(&col);
                        crate::harness::zheevr_lowest_values(&mut work, n, 8, &mut w);
                        black_box(&w);
                    },
                ),
                goal,
            );
        }
    }
    // All pairs on two threads against faer's own solver on the same thread count.
    set_num_threads(2).unwrap();
    faer::set_global_parallelism(faer::Par::rayon(2));
    let fm = faer::Mat::<c64>::from_fn(n, n, |i, j| h[i * n + j]);
    g.row(
        "`eigh` c64 n = 500, all pairs, default backend vs faer's `self_adjoint_eigen` called directly",
        2,
        compare_samples(
            21,
            || drop(black_box(eigh(&a, EighRange::All, EigBackend::default()).unwrap())),
            || drop(black_box(fm.self_adjoint_eigen(faer::Side::Lower).unwrap())),
        ),
        1.02,
    );
    faer::set_global_parallelism(faer::Par::Seq);
}
