//! When host kernels split their work across threads.
//!
//! Element-wise kernels run on the calling thread below a threshold and on rayon's pool
//! above it. The default comes from `make bench` (the threshold table): on the
//! 2-core development machine, splitting the memory-bound `z = αx + βy` in `f64` costs
//! 3–5× at 2¹⁴ elements (waking the pool takes ~15 µs), breaks even at 2¹⁷–2¹⁸, and
//! gains 1.3× at 2²⁰ and 1.8× at 2²². The threshold counts elements in every kernel:
//! row-wise kernels (reduce, transpose) weigh each row by its length.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use ctensor_base::{Error, Result, Scalar};

use crate::openblas;

/// The pool set by [`set_num_threads`]; `None` means rayon's global pool.
static POOL: RwLock<Option<Arc<rayon::ThreadPool>>> = RwLock::new(None);

extern "C" {
    // OpenBLAS's own thread count (linked through openblas-src in ctensor-base).
    fn openblas_set_num_threads(n: std::ffi::c_int);
    fn openblas_get_num_threads() -> std::ffi::c_int;
}

/// The most threads [`set_num_threads`] accepts: far beyond any useful count on one node
/// (OpenBLAS itself is built for at most 64 or 512), and small enough that a typo such as
/// `usize::MAX` is an error rather than an attempt to start that many threads.
pub const MAX_THREADS: usize = 1024;

/// Sets how many threads ctensor uses: both OpenBLAS's (BLAS and LAPACK calls) and the
/// pool that runs ctensor's own parallel kernels (and the faer eigensolver), so the two
/// never oversubscribe the cores by adding up. `n` is 1 to [`MAX_THREADS`]; anything else
/// is `Error::OutOfRange`.
pub fn set_num_threads(n: usize) -> Result<()> {
    if n == 0 || n > MAX_THREADS {
        return Err(Error::OutOfRange {
            op: "set_num_threads",
            what: "thread count".into(),
            given: i64::try_from(n).unwrap_or(i64::MAX),
            valid: format!("1..={MAX_THREADS}"),
        });
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .thread_name(|i| format!("ctensor-{i}"))
        .build()
        .map_err(|e| Error::InvalidArgument {
            op: "set_num_threads",
            expected: format!("a pool of {n} threads"),
            given: format!("failure to start it: {e}"),
        })?;
    let n_c = std::ffi::c_int::try_from(n).unwrap_or(std::ffi::c_int::MAX);
    set_blas_threads(n_c);
    let mut slot = POOL.write().unwrap_or_else(|p| p.into_inner());
    *slot = Some(Arc::new(pool));
    Ok(())
}

/// The number of threads ctensor's own kernels use (rayon's default, one per core,
/// until [`set_num_threads`]).
pub fn num_threads() -> usize {
    match &*POOL.read().unwrap_or_else(|p| p.into_inner()) {
        Some(pool) => pool.current_num_threads(),
        None => rayon::current_num_threads(),
    }
}

/// OpenBLAS's current thread count.
pub fn blas_num_threads() -> usize {
    // SAFETY: a plain getter.
    unsafe { openblas_get_num_threads() }.max(1) as usize
}

/// Who may call into OpenBLAS now. Two kinds of concurrent call give wrong answers:
/// - any, while OpenBLAS runs more than one thread of its own: its threaded level-3
///   drivers are not all safe for several callers at once (OpenBLAS issue #5620: `?syrk`
///   lacked the locks that the `?gemm` driver has; Debian's 0.3.21 predates the fix);
/// - real-type calls under the `Prescott` kernels (which OpenBLAS picks on a CPU it does
///   not know, as on this project's 2-core VM), even at one OpenBLAS thread: measured on
///   0.3.21, `ssyevr` from four threads at once returned `m = 0` eigenpairs and
///   `info = 0` in 16–27 % of the calls, and the same test with
///   `OPENBLAS_CORETYPE=Haswell` on the same CPU had no failure (`tests/blas_threads.rs`).
///
/// So such a call holds this lock alone. Any other call (complex types, or real ones
/// under other kernels, while OpenBLAS has one thread, as in [`map_batch`]) holds it
/// shared, which also keeps the thread count from changing under it: the count changes
/// only under the lock held alone. Level-1 calls on few elements skip the lock
/// (`cpu/cblas.rs`): OpenBLAS runs them on the caller's thread alone.
static BLAS: RwLock<()> = RwLock::new(());

/// Runs `f`, one call into OpenBLAS (BLAS or LAPACK) on elements of type `T`, under
/// [`BLAS`]: alone where concurrent calls are unsafe, beside other calls elsewhere. `f`
/// must not call `blas_call` itself.
pub(crate) fn blas_call<T: Scalar, R>(f: impl FnOnce() -> R) -> R {
    let shared = BLAS.read().unwrap_or_else(|p| p.into_inner());
    if blas_num_threads() == 1 && !openblas::calls_alone::<T>() {
        return f();
    }
    drop(shared);
    let _alone = BLAS.write().unwrap_or_else(|p| p.into_inner());
    f()
}

/// Sets OpenBLAS's thread count once no call into it is running (see [`BLAS`]).
fn set_blas_threads(n: std::ffi::c_int) {
    let _alone = BLAS.write().unwrap_or_else(|p| p.into_inner());
    // SAFETY: a plain setter of OpenBLAS's global thread count.
    unsafe { openblas_set_num_threads(n) };
}

/// Runs `f` inside the pool chosen by [`set_num_threads`] (rayon's global pool
/// otherwise), so that parallel iterators and rayon-based libraries inside it use that
/// many threads.
pub fn install<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    let pool = POOL.read().unwrap_or_else(|p| p.into_inner()).clone();
    match pool {
        Some(pool) => pool.install(f),
        None => f(),
    }
}

/// `f(0), f(1), …, f(n-1)` in order, computed on ctensor's pool with OpenBLAS set to one
/// thread meanwhile (restored after): for a batch of independent LAPACK problems (the
/// eigensolves of many k-points), splitting the batch across cores beats threading each
/// small matrix. Runs on the calling thread when `n < 2` or the pool has one thread.
///
/// The OpenBLAS thread count is process-wide: a BLAS call made meanwhile from another
/// thread of the program also runs single-threaded. Real-type calls under OpenBLAS's
/// `Prescott` kernels still run one at a time (see `blas_call`): they are unsafe together.
pub fn map_batch<R: Send>(n: usize, f: impl Fn(usize) -> R + Sync + Send) -> Vec<R> {
    use rayon::prelude::*;
    if n < 2 || num_threads() < 2 {
        return (0..n).map(f).collect();
    }
    let _single = BlasSingleThreaded::enter();
    install(|| (0..n).into_par_iter().map(f).collect())
}

/// Batches running now, and OpenBLAS's thread count from before the first of them: the
/// first to enter saves it and sets one thread, the last to leave restores it, so
/// overlapping batches (from several threads) never restore each other's setting.
static BATCHES: std::sync::Mutex<(usize, std::ffi::c_int)> = std::sync::Mutex::new((0, 1));

/// OpenBLAS at one thread while at least one of these lives.
struct BlasSingleThreaded;

impl BlasSingleThreaded {
    fn enter() -> BlasSingleThreaded {
        let mut b = BATCHES.lock().unwrap_or_else(|p| p.into_inner());
        if b.0 == 0 {
            // SAFETY: a plain getter of OpenBLAS's global thread count.
            b.1 = unsafe { openblas_get_num_threads() }.max(1);
            set_blas_threads(1);
        }
        b.0 += 1;
        BlasSingleThreaded
    }
}

impl Drop for BlasSingleThreaded {
    fn drop(&mut self) {
        let mut b = BATCHES.lock().unwrap_or_else(|p| p.into_inner());
        b.0 -= 1;
        if b.0 == 0 {
            set_blas_threads(b.1);
        }
    }
}

/// Default number of elements from which host element-wise kernels go parallel.
pub const DEFAULT_PARALLEL_THRESHOLD: usize = 1 << 18;

static THRESHOLD: AtomicUsize = AtomicUsize::new(DEFAULT_PARALLEL_THRESHOLD);

/// The current threshold (elements) above which host element-wise kernels use threads.
pub fn parallel_threshold() -> usize {
    THRESHOLD.load(Ordering::Relaxed)
}

/// Sets the threshold (elements) above which host element-wise kernels use threads;
/// `usize::MAX` keeps every kernel on the calling thread. Returns the previous value.
pub fn set_parallel_threshold(elements: usize) -> usize {
    THRESHOLD.swap(elements.max(1), Ordering::Relaxed)
}

/// Calls `f` on disjoint sub-ranges covering `0..n`: once with `0..n` on this thread
/// when `n · cost` (elements of work) is below the threshold, else on rayon's pool in
/// chunks of at least that much work.
pub(crate) fn for_each_range(n: usize, cost: usize, f: impl Fn(Range<usize>) + Sync) {
    use rayon::prelude::*;
    let threshold = parallel_threshold();
    let work = n.saturating_mul(cost.max(1));
    let threads = num_threads();
    if work < threshold || threads < 2 || n < 2 {
        f(0..n);
        return;
    }
    // A few chunks per thread balance uneven progress; none smaller than the threshold.
    let min_items = threshold.div_ceil(cost.max(1)).max(1);
    let chunk = n.div_ceil(threads * 4).max(min_items);
    let chunks = n.div_ceil(chunk);
    install(|| {
        (0..chunks)
            .into_par_iter()
            .for_each(|c| f(c * chunk..((c + 1) * chunk).min(n)))
    });
}

/// A raw pointer that may cross threads: the kernels that use it hand each thread a
/// disjoint range of elements.
#[derive(Clone, Copy)]
pub(crate) struct SendPtr<T>(pub *mut T);

// SAFETY: a `SendPtr` is only dereferenced on disjoint element ranges (see
// `for_each_range`), and the element types are `Send + Sync` scalars.
unsafe impl<T: Send> Send for SendPtr<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for SendPtr<T> {}

impl<T> SendPtr<T> {
    /// The pointer (a method, so closures capture the whole `SendPtr`).
    #[inline(always)]
    pub fn get(self) -> *mut T {
        self.0
    }
}
