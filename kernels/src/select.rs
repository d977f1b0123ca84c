//! Gathering slices of an array by an index list: the kernel behind `index_select`,
//! `take`, boolean-mask selection and the plane-wave sphere ↔ grid maps of a DFT code.

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
