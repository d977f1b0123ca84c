//! [`IndexSelect`] on the host: one `memcpy` per gathered row of `inner` elements, rows
//! split across threads above the parallel threshold.

use ctensor_base::{CpuDevice, Result, Scalar};

use super::slice;
use crate::check;
use crate::parallel::{for_each_range, SendPtr};
use crate::select::{check_indices, index_select_sizes, IndexSelect};

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
        const OP: &str = "index_select";
        let (ns, nd) = index_select_sizes(outer, size, inner, nidx)?;
        check::non_null(OP, "idx", idx, nidx)?;
        check::non_null(OP, "dst", dst, nd)?;
        if nd == 0 {
            return Ok(());
        }
        check::non_null(OP, "src", src, ns)?;
        // SAFETY: `idx` holds `nidx` readable indices (caller).
        let idx = unsafe { slice(idx, nidx) };
        check_indices(idx, size)?;
        let (src, dst) = (SendPtr(src as *mut T), SendPtr(dst));
        // Output rows r = o · nidx + j, each `inner` elements long.
        for_each_range(outer * nidx, inner, |rows| {
            for r in rows {
                let (o, j) = (r / nidx, r % nidx);
                let from = (o * size + idx[j] as usize) * inner;
                // SAFETY: `from + inner <= ns` and `r · inner + inner <= nd` (indices
                // checked above); `dst` does not overlap `src` (caller), and each row of
                // `dst` is written by one range only.
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
