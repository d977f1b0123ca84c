//! Reductions of contiguous rows: sums ([`Reduce`]), extremes ([`ReduceExtreme`]),
//! their positions ([`ArgExtreme`]) and running sums ([`CumSum`]); `f16`/`bf16`
//! accumulate in `f32`.

use ctensor_base::{Device, Result, Scalar};

/// Sums of contiguous rows.
pub trait Reduce<T: Scalar>: Device {
    /// `dst[r] = Σ_{j < inner} src[r · inner + j]` for `r < rows` (zero when
    /// `inner == 0`); `f16`/`bf16` accumulate in `f32`.
    ///
    /// # Safety
    /// `src` is valid for reads of `rows · inner` elements and `dst` for writes of
    /// `rows`; `dst` starts at `src` (in place) or is disjoint from it.
    unsafe fn reduce(rows: usize, inner: usize, src: *const T, dst: *mut T) -> Result<()>;
}

/// Largest or smallest element of contiguous rows.
pub trait ReduceExtreme<T: Scalar>: Device {
    /// `dst[r] = max_j src[r · inner + j]` (`min` when `!max`) for `r < rows`. NaN wins
    /// (NumPy's `max`). Complex types have no order (`Error::UnsupportedDType`), and an
    /// empty row (`inner == 0` with `rows > 0`) has no extreme (`Error::InvalidArgument`).
    ///
    /// # Safety
    /// As for [`Reduce::reduce`].
    unsafe fn reduce_extreme(
        max: bool,
        rows: usize,
        inner: usize,
        src: *const T,
        dst: *mut T,
    ) -> Result<()>;
}

/// The position of the extreme of each row.
pub trait ArgExtreme<T: Scalar>: Device {
    /// `dst[r] = j`, the index in `0..inner` of the largest `src[r · inner + j]` (the
    /// smallest when `!max`) for `r < rows`: the first of equal values, and the first NaN
    /// when the row has one (NumPy's `argmax`). Complex types have no order
    /// (`Error::UnsupportedDType`); an empty row (`inner == 0` with `rows > 0`) has no
    /// extreme (`Error::InvalidArgument`).
    ///
    /// # Safety
    /// `src` is valid for reads of `rows · inner` elements and `dst` for writes of `rows`
    /// `i64`s.
    unsafe fn arg_extreme(
        max: bool,
        rows: usize,
        inner: usize,
        src: *const T,
        dst: *mut i64,
    ) -> Result<()>;
}

/// Running sums along rows.
pub trait CumSum<T: Scalar>: Device {
    /// `dst[r · inner + j] = Σ_{k ≤ j} src[r · inner + k]` for `r < rows`, `j < inner`;
    /// `f16`/`bf16` accumulate in `f32` (each output rounded once), integers wrap. The
    /// host adds in order; the GPU splits a row into 256 chunks (the same order, hence
    /// the same result, for rows of at most 256).
    ///
    /// # Safety
    /// `src` is valid for reads and `dst` for writes of `rows · inner` elements; they are
    /// identical (in place) or disjoint.
    unsafe fn cumsum(rows: usize, inner: usize, src: *const T, dst: *mut T) -> Result<()>;
}
