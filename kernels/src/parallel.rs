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
    let threads = rayon::current_num_threads();
    if work < threshold || threads < 2 || n < 2 {
        f(0..n);
        return;
    }
    // A few chunks per thread balance uneven progress; none smaller than the threshold.
    let min_items = threshold.div_ceil(cost.max(1)).max(1);
    let chunk = n.div_ceil(threads * 4).max(min_items);
    let chunks = n.div_ceil(chunk);
    (0..chunks)
        .into_par_iter()
        .for_each(|c| f(c * chunk..((c + 1) * chunk).min(n)));
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
