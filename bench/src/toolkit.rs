//! The solver toolkit: batched `eigh` (a stack of k-point Hamiltonians) against a loop of
//! single calls and against SciPy's loop and NumPy's stacked `eigh` on the same matrices,
//! and QR and SVD of a tall block against direct LAPACK and faer. The block Davidson
//! example is timed against dense `eigh` by `make bench` itself (it runs
//! `examples/davidson/`, which prints both times).
//!
//! The Python peers run when `CTENSOR_BENCH_PYTHON` names an interpreter with NumPy and
//! SciPy (`make bench` sets it from `scripts/py-env.sh`): the stack is written to a file
//! under `target/`, `bench/python/eigh_stack.py` times SciPy and NumPy on it with 2
//! threads, and ours is timed again right after with as many samples.

use std::hint::black_box;

use ctensor::base::c64;
use ctensor::{eigh, qr, set_num_threads, svd, EigBackend, EighRange, QrMode, Tensor};
use rand::rngs::StdRng;

use crate::harness::{compare, median_of, python_fields, random, Table};

/// Samples the Python peers and the matching run of ours take.
const PEER_SAMPLES: usize = 5;

/// SciPy's loop and NumPy's stacked `eigh` on `stack` (seconds per stack, medians), or
/// why they did not run.
fn python_peers(stack: &Tensor) -> Result<(f64, f64), String> {
    let dims = stack.dims().to_vec();
    let values = stack.to_vec::<c64>().map_err(|e| e.to_string())?;
    let f = python_fields(
        "eigh_stack.py",
        &format!("eigh_stack_{}x{}.bin", dims[0], dims[1]),
        &values,
        &[dims[0], dims[1], PEER_SAMPLES],
    )?;
    Ok((f("scipy_loop")?, f("numpy_stack")?))
}

/// A stack of `count` random Hermitian `n × n` c64 matrices.
fn hermitian_stack(rng: &mut StdRng, count: usize, n: usize) -> Tensor {
    let r = random::<c64>(rng, count * n * n);
    let mut h = vec![c64::default(); count * n * n];
    for k in 0..count {
        let o = k * n * n;
        for i in 0..n {
            for j in 0..n {
                h[o + i * n + j] = (r[o + i * n + j] + r[o + j * n + i].conj()) * 0.5;
            }
        }
    }
    Tensor::from_slice(&h, &[count, n, n]).unwrap()
}

/// The toolkit tables (2 threads).
pub fn toolkit_tables(rng: &mut StdRng) -> String {
    set_num_threads(2).unwrap();
    let mut t = Table::new(
        "Solver toolkit, c64, 2 threads (median of interleaved samples)",
        ["ours", "reference", "ours / reference"],
    );
    for n in [169usize, 531] {
        let stack = hermitian_stack(rng, 64, n);
        let batched = || {
            drop(black_box(
                eigh(&stack, EighRange::All, EigBackend::LapackEvd).unwrap(),
            ))
        };
        let looped = || {
            for k in 0..64 {
                let h = stack.index(k).unwrap();
                drop(black_box(
                    eigh(&h, EighRange::All, EigBackend::LapackEvd).unwrap(),
                ));
            }
        };
        t.row(
            "eigh of a stack [64, n, n] vs a loop of 64 eigh calls (LapackEvd)",
            &format!("n = {n}"),
            compare(batched, looped),
        );
        match python_peers(&stack) {
            Ok((scipy_loop, numpy_stack)) => {
                let ours = median_of(PEER_SAMPLES, batched);
                t.row(
                    "eigh of a stack vs SciPy's loop of scipy.linalg.eigh(driver=\"evd\")",
                    &format!("n = {n}"),
                    (ours, scipy_loop),
                );
                t.row(
                    "eigh of a stack vs NumPy's stacked numpy.linalg.eigh",
                    &format!("n = {n}"),
                    (ours, numpy_stack),
                );
            }
            Err(why) => println!("SKIP: the Python peers of the stacked eigh: {why}"),
        }
    }
    let (m, k) = (2000usize, 64usize);
    let v = random::<c64>(rng, m * k);
    let a = Tensor::from_slice(&v, &[m, k]).unwrap();
    // Column-major for the direct calls and faer (ours copies into LAPACK's order too).
    let col: Vec<c64> = (0..m * k).map(|f| v[(f % m) * k + f / m]).collect();
    let ours = || drop(black_box(qr(&a, QrMode::Reduced).unwrap()));
    let direct = || {
        let mut f = col.clone();
        let mut tau = vec![c64::default(); k];
        let mut work = vec![c64::default(); 64 * k];
        let mut info = 0;
        let (mi, ki) = (m as i32, k as i32);
        // SAFETY: `f` is m × k column-major (lda m), `tau` k, `work` 64·k elements.
        unsafe {
            lapack::zgeqrf(
                mi,
                ki,
                &mut f,
                mi,
                &mut tau,
                &mut work,
                (64 * k) as i32,
                &mut info,
            );
            let r: Vec<c64> = (0..k * k).map(|i| f[(i % k) + (i / k) * m]).collect();
            lapack::zungqr(
                mi,
                ki,
                ki,
                &mut f,
                mi,
                &tau,
                &mut work,
                (64 * k) as i32,
                &mut info,
            );
            black_box((r, &f));
        }
        assert_eq!(info, 0);
    };
    t.row(
        "qr (reduced Q and R) vs zgeqrf + zungqr",
        &format!("{m} × {k}"),
        compare(ours, direct),
    );
    // The same data in column-major order (a transposed view of the column-major copy):
    // no transposes into and out of LAPACK's order.
    let a_cm = Tensor::from_slice(&col, &[k, m]).unwrap().t().unwrap();
    let ours_cm = || drop(black_box(qr(&a_cm, QrMode::Reduced).unwrap()));
    t.row(
        "qr of a column-major input vs zgeqrf + zungqr",
        &format!("{m} × {k}"),
        compare(ours_cm, direct),
    );
    let fm = faer::Mat::<c64>::from_fn(m, k, |i, j| col[i + j * m]);
    let by_faer = || {
        let f = fm.qr();
        black_box((f.compute_thin_Q(), f.thin_R().to_owned()));
    };
    t.row(
        "qr (reduced Q and R) vs faer's qr",
        &format!("{m} × {k}"),
        compare(ours, by_faer),
    );
    // SVD, thin, of the same block.
    let ours = || drop(black_box(svd(&a, false).unwrap()));
    let direct = || {
        let mut f = col.clone();
        let (mut s, mut u, mut vt) = (
            vec![0.0f64; k],
            vec![c64::default(); m * k],
            vec![c64::default(); k * k],
        );
        let mut rwork = vec![0.0f64; (5 * k * k + 5 * k).max(2 * m * k + 2 * k * k + k)];
        let mut iwork = vec![0i32; 8 * k];
        let (mi, ki) = (m as i32, k as i32);
        let mut q = [c64::default()];
        let mut info = 0;
        // SAFETY: `f` m × k (lda m), `u` m × k, `vt` k × k, workspaces as documented.
        unsafe {
            lapack::zgesdd(
                b'S', mi, ki, &mut f, mi, &mut s, &mut u, mi, &mut vt, ki, &mut q, -1, &mut rwork,
                &mut iwork, &mut info,
            );
            let mut work = vec![c64::default(); q[0].re as usize];
            lapack::zgesdd(
                b'S',
                mi,
                ki,
                &mut f,
                mi,
                &mut s,
                &mut u,
                mi,
                &mut vt,
                ki,
                &mut work,
                q[0].re as i32,
                &mut rwork,
                &mut iwork,
                &mut info,
            );
        }
        assert_eq!(info, 0);
        black_box((s, u, vt));
    };
    t.row(
        "svd (thin U, S, Vᴴ) vs zgesdd",
        &format!("{m} × {k}"),
        compare(ours, direct),
    );
    let by_faer = || drop(black_box(fm.thin_svd().unwrap()));
    t.row(
        "svd (thin U, S, Vᴴ) vs faer's thin_svd",
        &format!("{m} × {k}"),
        compare(ours, by_faer),
    );
    t.out
}
