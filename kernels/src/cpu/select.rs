//! [`IndexSelect`] and [`IndexCopy`] on the host: one `memcpy` per gathered or scattered
//! row of `inner` elements, rows split across threads above the parallel threshold.

use ctensor_base::{CpuDevice, Result, Scalar};

use super::slice;
use crate::parallel::{for_each_range, SendPtr};
use crate::select::{
    check_distinct, check_indices, plan_index_copy, plan_index_select, IndexCopy, IndexSelect,
};

impl<T: Scalar> IndexSelect<T> for CpuDevice {
    unsafe fn index_select(
        outer: usize,
        size: usize,
        inner: usize,
        idx: *const i64,
        nidx: usize,
        src: *const T,
        dst: *mut T,
    ) -> Result<()> {
        let Some(_) = plan_index_select(outer, size, inner, idx, nidx, src, dst)? else {
            return Ok(());
        };
        // SAFETY: `idx` holds `nidx` readable indices (caller).
        let idx = unsafe { slice(idx, nidx) };
        check_indices(idx, size)?;
        let (src, dst) = (SendPtr(src as *mut T), SendPtr(dst));
        // Output rows r = o · nidx + j, each `inner` elements long.
        for_each_range(outer * nidx, inner, |rows| {
            for r in rows {
                let (o, j) = (r / nidx, r % nidx);
                let from = (o * size + idx[j] as usize) * inner;
                // SAFETY: the row lies inside `src` (outer·size·inner elements, the index
                // checked above) and `dst` (outer·nidx·inner); `dst` does not overlap `src`
                // (caller), and each row of `dst` is written by one range only.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        src.get().add(from),
                        dst.get().add(r * inner),
                        inner,
                    )
                };
            }
        });
        Ok(())
    }
}

impl<T: Scalar> IndexCopy<T> for CpuDevice {
    unsafe fn index_copy(
        outer: usize,
        size: usize,
        inner: usize,
        idx: *const i64,
        nidx: usize,
        src: *const T,
        dst: *mut T,
    ) -> Result<()> {
        let Some(_) = plan_index_copy(outer, size, inner, idx, nidx, src, dst)? else {
            return Ok(());
        };
        // SAFETY: `idx` holds `nidx` readable indices (caller).
        let idx = unsafe { slice(idx, nidx) };
        check_indices(idx, size).map_err(|e| e.in_op("index_copy"))?;
        check_distinct(idx)?;
        let (src, dst) = (SendPtr(src as *mut T), SendPtr(dst));
        // Source rows r = o · nidx + j, each `inner` elements long.
        for_each_range(outer * nidx, inner, |rows| {
            for r in rows {
                let (o, j) = (r / nidx, r % nidx);
                let to = (o * size + idx[j] as usize) * inner;
                // SAFETY: the rows lie inside `src` (outer·nidx·inner elements) and `dst`
                // (outer·size·inner, the index checked above); they do not overlap
                // (caller), and distinct indices give each source row its own `dst` row.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        src.get().add(r * inner),
                        dst.get().add(to),
                        inner,
                    )
                };
            }
        });
        Ok(())
    }
}
