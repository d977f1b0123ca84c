//! Gathering slices of an array by an index list, and scattering them back: the kernels
//! behind `index_select`, `take`, boolean-mask selection, `index_copy_` and the
//! plane-wave sphere ↔ grid maps of a DFT code.

use ctensor_base::{Device, Error, Result, Scalar};

/// Gathers slices along one axis of a dense row-major array (PyTorch's `index_select`,
/// NumPy's `take` with an axis).
pub trait IndexSelect<T: Scalar>: Device {
    /// Viewing `src` as the dense row-major array `[outer, size, inner]` and `dst` as
    /// `[outer, nidx, inner]`, writes `dst[o, j, i] = src[o, idx[j], i]`. Indices may
    /// repeat and come in any order. The host implementation checks every index
    /// (`Error::OutOfRange`); the GPU cannot read them without a transfer, so there the
    /// range is the caller's promise.
    ///
    /// # Safety
    /// `src` is valid for reads of `outer · size · inner` elements, `idx` for reads of
    /// `nidx` indices and `dst` for writes of `outer · nidx · inner` elements, all on this
    /// device; `dst` overlaps neither `src` nor `idx`; every `idx[j]` is in `0..size`.
    #[allow(clippy::too_many_arguments)]
    unsafe fn index_select(
        outer: usize,
        size: usize,
        inner: usize,
        idx: *const i64,
        nidx: usize,
        src: *const T,
        dst: *mut T,
    ) -> Result<()>;
}

/// Scatters slices along one axis (PyTorch's `index_copy_`), the inverse of
/// [`IndexSelect`].
pub trait IndexCopy<T: Scalar>: Device {
    /// Viewing `dst` as the dense row-major array `[outer, size, inner]` and `src` as
    /// `[outer, nidx, inner]`, writes `dst[o, idx[j], i] = src[o, j, i]`; the other
    /// entries of `dst` keep their values. Indices must be distinct (a repeat would make
    /// the result depend on the order of the writes): the host implementation checks the
    /// range (`Error::OutOfRange`) and distinctness (`Error::InvalidArgument`); on the
    /// GPU both are the caller's promise.
    ///
    /// # Safety
    /// `dst` is valid for reads and writes of `outer · size · inner` elements, `idx` for
    /// reads of `nidx` indices and `src` for reads of `outer · nidx · inner` elements, all
    /// on this device; `dst` overlaps neither `src` nor `idx`; the indices are distinct
    /// and in `0..size`.
    #[allow(clippy::too_many_arguments)]
    unsafe fn index_copy(
        outer: usize,
        size: usize,
        inner: usize,
        idx: *const i64,
        nidx: usize,
        src: *const T,
        dst: *mut T,
    ) -> Result<()>;
}

/// Checks that the indices are distinct; the first repeat (by position of its second
/// occurrence) is `Error::InvalidArgument`, naming both positions. Sorts a copy: memory
/// and time follow the number of indices, not the axis length (which may be 2^40).
pub fn check_distinct(idx: &[i64]) -> Result<()> {
    let mut order: Vec<(i64, usize)> = idx.iter().copied().zip(0..).collect();
    order.sort_unstable();
    let repeat = order
        .windows(2)
        .filter(|w| w[0].0 == w[1].0)
        .map(|w| (w[0].1, w[1].1, w[0].0))
        .min_by_key(|&(_, second, _)| second);
    match repeat {
        None => Ok(()),
        Some((first, second, j)) => Err(Error::InvalidArgument {
            op: "index_copy",
            expected: "distinct indices (a repeat makes the result depend on the order \
                       of the writes)"
                .into(),
            given: format!("index {j} at positions {first} and {second}"),
        }),
    }
}

/// Checked arguments of a row move between the large `[outer, size, inner]` array and
/// the small `[outer, nidx, inner]` one (sizes and pointers, not the index values): a
/// gather (`index_select`, `src` large) or, with `scatter`, a scatter (`index_copy`,
/// `dst` large). Returns the small array's element count, or `None` when nothing moves.
#[allow(clippy::too_many_arguments)]
pub(crate) fn plan_rows<T>(
    scatter: bool,
    outer: usize,
    size: usize,
    inner: usize,
    idx: *const i64,
    nidx: usize,
    src: *const T,
    dst: *const T,
) -> Result<Option<usize>> {
    let (op, (large, large_name), (small, small_name)) = if scatter {
        ("index_copy", (dst, "dst"), (src, "src"))
    } else {
        ("index_select", (src, "src"), (dst, "dst"))
    };
    let count = |a: usize, b: usize, c: usize| a.checked_mul(b).and_then(|x| x.checked_mul(c));
    let (Some(nl), Some(ns)) = (count(outer, size, inner), count(outer, nidx, inner)) else {
        return Err(Error::Overflow {
            op,
            what: format!(
                "[{outer}, {size}, {inner}] and [{outer}, {nidx}, {inner}] exceed usize elements"
            ),
        });
    };
    crate::args::non_null(op, "idx", idx, nidx)?;
    crate::args::non_null(op, small_name, small, ns)?;
    if ns == 0 {
        return Ok(None);
    }
    crate::args::non_null(op, large_name, large, nl)?;
    Ok(Some(ns))
}

/// Checks that every index is in `0..size`; the first one outside is `Error::OutOfRange`
/// (for `index_select`), naming its position.
pub fn check_indices(idx: &[i64], size: usize) -> Result<()> {
    match idx.iter().position(|&j| j < 0 || j as u64 >= size as u64) {
        None => Ok(()),
        Some(p) => Err(Error::OutOfRange {
            op: "index_select",
            what: format!("index at position {p}:"),
            given: idx[p],
            valid: format!("0..{size}"),
        }),
    }
}
