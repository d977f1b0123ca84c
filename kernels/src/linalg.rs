//! Element-wise kernels on raw memory. Every one is correct when the output is the same
//! memory as an input.

use ctensor_base::{Device, Result, Scalar};

/// Complex conjugation (a copy for real types).
pub trait Conj<T: Scalar>: Device {
    /// `dst[i] = conj(src[i])` for `i < n`; `dst == src` (in place) is allowed.
    ///
    /// # Safety
    /// `src` is valid for reads and `dst` for writes of `n` elements on this device; the
    /// two ranges are either identical or disjoint.
    unsafe fn conj(dst: *mut T, src: *const T, n: usize) -> Result<()>;
}
