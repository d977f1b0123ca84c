//! Element-wise kernels on the host.

use ctensor_base::{CpuDevice, Result, Scalar};

use crate::check;
use crate::linalg::Conj;

impl<T: Scalar> Conj<T> for CpuDevice {
    unsafe fn conj(dst: *mut T, src: *const T, n: usize) -> Result<()> {
        check::non_null("conj", "dst", dst, n)?;
        check::non_null("conj", "src", src, n)?;
        for i in 0..n {
            // SAFETY: `src` and `dst` are valid for `n` elements and either identical or
            // disjoint (caller); reading before writing each element makes in place safe.
            unsafe { dst.add(i).write(src.add(i).read().conj()) };
        }
        Ok(())
    }
}
