//! Memory kernels on the host.

use ctensor_base::{CastFrom, CpuDevice, Result, Scalar};

use crate::args as check;
use crate::memory::{CastMemory, SetMemory, SyncMemory, SyncMemoryStrided};
use crate::strides::walk_rows;

impl<T: Scalar> SetMemory<T> for CpuDevice {
    unsafe fn set(dst: *mut T, value: T, n: usize) -> Result<()> {
        check::non_null("set_memory", "dst", dst, n)?;
        if n > 0 {
            // SAFETY: the caller promises `dst` is valid and unaliased for `n` elements.
            unsafe { std::slice::from_raw_parts_mut(dst, n) }.fill(value);
        }
        Ok(())
    }

    unsafe fn set_strided(dst: *mut T, shape: &[usize], strides: &[usize], value: T) -> Result<()> {
        check::strides_rank("set_memory_strided", "dst", strides, shape)?;
        let n = check::numel("set_memory_strided", shape)?;
        check::non_null("set_memory_strided", "dst", dst, n)?;
        walk_rows(shape, [strides], |[off], len, [step]| {
            for i in 0..len {
                // SAFETY: every offset the view reaches is valid for writes (caller).
                unsafe { dst.add(off + i * step).write(value) };
            }
        });
        Ok(())
    }
}

impl<T: Scalar> SyncMemory<T, CpuDevice> for CpuDevice {
    unsafe fn sync(dst: *mut T, src: *const T, n: usize) -> Result<()> {
        check::non_null("sync_memory", "dst", dst, n)?;
        check::non_null("sync_memory", "src", src, n)?;
        if n > 0 {
            // SAFETY: both ranges are valid for `n` elements (caller); `copy` allows overlap.
            unsafe { std::ptr::copy(src, dst, n) };
        }
        Ok(())
    }
}

impl<T: Scalar> SyncMemoryStrided<T, CpuDevice> for CpuDevice {
    unsafe fn sync_strided(
        dst: *mut T,
        dst_strides: &[usize],
        src: *const T,
        src_strides: &[usize],
        shape: &[usize],
    ) -> Result<()> {
        const OP: &str = "sync_memory_strided";
        check::strides_rank(OP, "dst", dst_strides, shape)?;
        check::strides_rank(OP, "src", src_strides, shape)?;
        let n = check::numel(OP, shape)?;
        check::non_null(OP, "dst", dst, n)?;
        check::non_null(OP, "src", src, n)?;
        walk_rows(
            shape,
            [dst_strides, src_strides],
            |[d, s], len, [ds, ss]| {
                if ds == 1 && ss == 1 {
                    // SAFETY: both rows are valid (caller) and the views do not overlap.
                    unsafe { std::ptr::copy_nonoverlapping(src.add(s), dst.add(d), len) };
                } else {
                    for i in 0..len {
                        // SAFETY: as above, element by element.
                        unsafe { dst.add(d + i * ds).write(src.add(s + i * ss).read()) };
                    }
                }
            },
        );
        Ok(())
    }
}

impl<D: Scalar + CastFrom<S>, S: Scalar> CastMemory<D, S> for CpuDevice {
    unsafe fn cast(dst: *mut D, src: *const S, n: usize) -> Result<()> {
        check::non_null("cast_memory", "dst", dst, n)?;
        check::non_null("cast_memory", "src", src, n)?;
        if n == 0 {
            return Ok(());
        }
        // SAFETY: the caller promises valid, non-overlapping ranges of `n` elements.
        let (dst, src) = unsafe {
            (
                std::slice::from_raw_parts_mut(dst, n),
                std::slice::from_raw_parts(src, n),
            )
        };
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = D::cast_from(s);
        }
        Ok(())
    }
}
