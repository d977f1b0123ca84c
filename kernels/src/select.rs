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

/// Checked `index_copy` arguments: the element count of `src` (the scattered part), or
/// `None` when there is nothing to write.
#[allow(clippy::too_many_arguments)]
pub(crate) fn plan_index_copy<T>(
    outer: usize,
    size: usize,
    inner: usize,
    idx: *const i64,
    nidx: usize,
    src: *const T,
    dst: *const T,
) -> Result<Option<usize>> {
    const OP: &str = "index_copy";
    let (nd, ns) = index_select_sizes(outer, size, inner, nidx)?;
    crate::check::non_null(OP, "idx", idx, nidx)?;
    crate::check::non_null(OP, "src", src, ns)?;
    if ns == 0 {
        return Ok(None);
    }
    crate::check::non_null(OP, "dst", dst, nd)?;
    Ok(Some(ns))
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

/// Checked `index_select` arguments (sizes and pointers, not the index values): the
/// element counts of `src` and `dst`, or `None` when there is nothing to write.
#[allow(clippy::too_many_arguments)]
pub(crate) fn plan_index_select<T>(
    outer: usize,
    size: usize,
    inner: usize,
    idx: *const i64,
    nidx: usize,
    src: *const T,
    dst: *const T,
) -> Result<Option<(usize, usize)>> {
    const OP: &str = "index_select";
    let (ns, nd) = index_select_sizes(outer, size, inner, nidx)?;
    crate::check::non_null(OP, "idx", idx, nidx)?;
    crate::check::non_null(OP, "dst", dst, nd)?;
    if nd == 0 {
        return Ok(None);
    }
    crate::check::non_null(OP, "src", src, ns)?;
    Ok(Some((ns, nd)))
}

/// The element counts of an `index_select` call, overflow-checked:
/// `(outer · size · inner, outer · nidx · inner)`.
fn index_select_sizes(
    outer: usize,
    size: usize,
    inner: usize,
    nidx: usize,
) -> Result<(usize, usize)> {
    let count = |a: usize, b: usize, c: usize| a.checked_mul(b).and_then(|x| x.checked_mul(c));
    match (count(outer, size, inner), count(outer, nidx, inner)) {
        (Some(s), Some(d)) => Ok((s, d)),
        _ => Err(Error::Overflow {
            op: "index_select",
            what: format!(
                "[{outer}, {size}, {inner}] gathered to [{outer}, {nidx}, {inner}] exceeds usize elements"
            ),
        }),
    }
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
