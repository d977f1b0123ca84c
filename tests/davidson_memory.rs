//! Davidson's working memory, counted by a global allocator: beside its basis and `H V`
//! (reserved once, `max_basis` columns each) it holds no block of the residual, of the
//! correction or of the Ritz vectors, only slabs of rows (the residual is formed in the
//! basis's spare columns, `H V` is reserved after the start block is freed and freed
//! before the Ritz vectors are formed). Before, the residual block made a fifth
//! block-pair-sized allocation at every step. One test in its own binary: the counter is
//! process-wide (worker threads' allocations count too) and so is the host cache's limit.
#![deny(unused_must_use)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use ctensor::solvers::{davidson_into, diagonal_preconditioner_in_place, SolverOptions};
use ctensor::Tensor;
use rand::{Rng, SeedableRng};

/// What a test returns: a failing step names its error.
type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

/// Bytes live through the global allocator, and their peak since the last reset.
static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

fn grow(delta: isize) {
    let now = LIVE.fetch_add(delta, Ordering::Relaxed) + delta;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

struct Counting;

// SAFETY: forwards to the system allocator; the counters are atomics, which allocate
// nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grow(layout.size() as isize);
        // SAFETY: the caller's layout, forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grow(layout.size() as isize);
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        grow(-(layout.size() as isize));
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        grow(new_size as isize - layout.size() as isize);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

#[test]
fn davidson_holds_its_basis_and_h_v_and_slabs_only() -> TestResult {
    ctensor::base::alloc::host_cache::set_limit(0);
    // 64 pairs of a diagonal operator on 64 000 coordinates: a block of 64 columns is
    // 32.8 MB, the basis and H V of 128 columns 65.5 MB each; a slab of rows is 2 MB.
    let (n, nev) = (64_000usize, 64usize);
    let block = n * nev * 8;
    let d: Vec<f64> = (0..n).map(|i| 1.0 + i as f64 * 0.01).collect();
    let diag = Tensor::from_slice(&d, &[n, 1])?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(0xda71d);
    let start: Vec<f64> = (0..n * nev).map(|_| rng.gen_range(-1.0..1.0)).collect();
    let mut opts = SolverOptions::new(nev);
    // Slow on purpose (a weak preconditioner), so that it steps, grows and restarts
    // within its 6 iterations.
    opts.max_iter = 6;
    opts.max_basis = 2 * nev;
    opts.tol = 1e-12;
    let mut steps = 0;
    let d_vec = Tensor::from_slice(&d, &[n])?;
    // A shift far above the spectrum's spacing: a weak preconditioner, a slow solve.
    let mut precond = diagonal_preconditioner_in_place(&d_vec, 50.0);
    let x0 = Tensor::from_vec(start, &[n, nev])?;
    // The start block is counted as the solver's: it is handed over and freed there.
    let base = LIVE.load(Ordering::Relaxed) - block as isize;
    PEAK.store(base, Ordering::Relaxed);
    let found = davidson_into(
        // The operator works a slab of rows at a time too: a strided window would
        // otherwise go through dense copies of its own.
        |x, out| {
            let rows = 4096;
            let mut start = 0;
            while start < n {
                let len = rows.min(n - start);
                out.narrow(0, start, len)?
                    .assign(&x.narrow(0, start, len)?.mul(&diag.narrow(0, start, len)?)?)?;
                start += len;
            }
            Ok(())
        },
        |r, theta| {
            steps += 1;
            precond(r, theta)
        },
        x0,
        opts,
    )?;
    let peak = (PEAK.load(Ordering::Relaxed) - base) as usize;
    println!(
        "peak {peak} bytes beyond what was live before (a block is {block}), {steps} corrections"
    );
    assert!(steps >= 4, "only {steps} correction steps");
    assert_eq!(found.iterations, 6);
    // The start block and the result are part of the count: at most the basis and H V
    // (4 blocks) and 16 MB of slabs and small matrices. Before, the start block beside
    // both and the residual block of its own each made 5 blocks.
    assert!(
        peak <= 4 * block + (16 << 20),
        "peak {peak} bytes: more than the basis, H V and slabs ({} bytes)",
        4 * block + (16 << 20)
    );
    // The counter sees the solver: the basis and H V were live at once.
    assert!(
        peak >= 4 * block,
        "peak {peak} bytes: the basis was not counted"
    );
    // And the pairs are right: the Ritz values are the lowest Rayleigh quotients found,
    // each at least the matching exact eigenvalue (Cauchy interlacing).
    let values = found.values.to_vec::<f64>()?;
    for (k, (&got, &exact)) in values.iter().zip(&d).enumerate() {
        assert!(
            got >= exact - 1e-9,
            "pair {k}: {got} below the eigenvalue {exact}"
        );
    }
    Ok(())
}
