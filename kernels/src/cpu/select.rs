//! [`IndexSelect`] on the host: one `memcpy` per gathered row of `inner` elements, rows
//! split across threads above the parallel threshold.

use ctensor_base::{CpuDevice, Result, Scalar};

use super::slice;
use crate::parallel::{for_each_range, SendPtr};
use crate::select::{check_indices, plan_index_select, IndexSelect};

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
