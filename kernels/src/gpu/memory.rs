//! Memory kernels on the GPU: fill, copies within and between host and device, strided
//! copies, casts.

use ctensor_base::gpu::{copy_d2d, copy_d2h, copy_h2d};
use ctensor_base::{CastFrom, CpuDevice, GpuDevice, Result, Scalar};

use super::launch::{args, bytes_of, dev, launch_1d, overlaps, Dims};
use super::source::{CAST_PAIRS, COPY_STRIDED, SET, SET_STRIDED};
use crate::args as check;
use crate::memory::{CastMemory, SetMemory, SyncMemory, SyncMemoryStrided};
use crate::strides::{is_row_major, row_major_strides};

impl<T: Scalar> SetMemory<T> for GpuDevice {
    unsafe fn set(dst: *mut T, value: T, n: usize) -> Result<()> {
        check::non_null("set_memory", "dst", dst, n)?;
        if n == 0 {
            return Ok(());
        }
        let (n64, d) = (n as u64, dev(dst));
        // SAFETY: `dst` is device memory valid for `n` writes (caller).
        unsafe { launch_1d(SET.get::<T>()?, n, &mut args![&n64, &value, &d]) }
    }

    unsafe fn set_strided(dst: *mut T, shape: &[usize], strides: &[usize], value: T) -> Result<()> {
        const OP: &str = "set_memory_strided";
        check::strides_rank(OP, "dst", strides, shape)?;
        let n = check::numel(OP, shape)?;
        check::non_null(OP, "dst", dst, n)?;
        if n == 0 {
            return Ok(());
        }
        let dims = Dims::new(OP, shape, strides, strides)?;
        let (n64, d) = (n as u64, dev(dst));
        // SAFETY: every offset of the view is valid for writes (caller).
        unsafe {
            launch_1d(
                SET_STRIDED.get::<T>()?,
                n,
                &mut args![&n64, &dims, &value, &d],
            )
        }
    }
}

impl<T: Scalar> SyncMemory<T, CpuDevice> for GpuDevice {
    unsafe fn sync(dst: *mut T, src: *const T, n: usize) -> Result<()> {
        check::non_null("sync_memory", "dst", dst, n)?;
        check::non_null("sync_memory", "src", src, n)?;
        // SAFETY: host `src` and device `dst` are valid for `n` elements (caller).
        unsafe { copy_h2d(dev(dst), src as *const u8, bytes_of::<T>("sync_memory", n)?) }
    }
}

impl<T: Scalar> SyncMemory<T, GpuDevice> for CpuDevice {
    unsafe fn sync(dst: *mut T, src: *const T, n: usize) -> Result<()> {
        check::non_null("sync_memory", "dst", dst, n)?;
        check::non_null("sync_memory", "src", src, n)?;
        // SAFETY: device `src` and host `dst` are valid for `n` elements (caller).
        unsafe { copy_d2h(dst as *mut u8, dev(src), bytes_of::<T>("sync_memory", n)?) }
    }
}

impl<T: Scalar> SyncMemory<T, GpuDevice> for GpuDevice {
    unsafe fn sync(dst: *mut T, src: *const T, n: usize) -> Result<()> {
        check::non_null("sync_memory", "dst", dst, n)?;
        check::non_null("sync_memory", "src", src, n)?;
        // SAFETY: both are device memory valid for `n` elements (caller); overlap is
        // handled by `copy_d2d`.
        unsafe { copy_d2d(dev(dst), dev(src), bytes_of::<T>("sync_memory", n)?) }
    }
}

impl<T: Scalar> SyncMemoryStrided<T, GpuDevice> for GpuDevice {
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
        if n == 0 {
            return Ok(());
        }
        // SAFETY: both views are valid device memory and do not overlap (caller).
        unsafe { copy_strided(OP, shape, dst_strides, dst, src_strides, src, false) }
    }
}

/// `dst[view a] = src[view b]` (conjugated when `conj`) on the device.
///
/// # Safety
/// Both views are valid device memory at every offset they reach, and do not overlap.
pub(crate) unsafe fn copy_strided<T: Scalar>(
    op: &'static str,
    shape: &[usize],
    dst_strides: &[usize],
    dst: *mut T,
    src_strides: &[usize],
    src: *const T,
    conj: bool,
) -> Result<()> {
    let n = check::numel(op, shape)?;
    let dims = Dims::new(op, shape, dst_strides, src_strides)?;
    // SAFETY: forwarded contract.
    unsafe { copy_dims(&dims, n, dst, src, conj) }
}

/// `dst[view a] = src[view b]` over the `n` elements of `dims` (the strided-copy kernel).
///
/// # Safety
/// As for [`copy_strided`].
pub(crate) unsafe fn copy_dims<T: Scalar>(
    dims: &Dims,
    n: usize,
    dst: *mut T,
    src: *const T,
    conj: bool,
) -> Result<()> {
    let (n64, s, d, c) = (n as u64, dev(src), dev(dst), conj as i32);
    // SAFETY: forwarded contract.
    unsafe {
        launch_1d(
            COPY_STRIDED.get::<T>()?,
            n,
            &mut args![&n64, dims, &s, &d, &c],
        )
    }
}

/// Host views to and from the device: a dense row-major view is copied as it is; any
/// other is packed into a dense buffer on its own side first (on the host by the CPU
/// kernel, on the device by the strided-copy kernel), so one contiguous transfer
/// crosses the bus.
impl<T: Scalar> SyncMemoryStrided<T, CpuDevice> for GpuDevice {
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
        if n == 0 {
            return Ok(());
        }
        let dense = row_major_strides(shape);
        let mut packed = Vec::new();
        let host = if is_row_major(shape, src_strides) {
            src
        } else {
            packed.resize(n, T::zero());
            // SAFETY: the host view is valid (caller); `packed` holds `n` elements.
            unsafe {
                <CpuDevice as SyncMemoryStrided<T, CpuDevice>>::sync_strided(
                    packed.as_mut_ptr(),
                    &dense,
                    src,
                    src_strides,
                    shape,
                )?
            };
            packed.as_ptr()
        };
        let bytes = bytes_of::<T>(OP, n)?;
        if is_row_major(shape, dst_strides) {
            // SAFETY: `host` holds `n` dense elements; so does the device view (caller).
            return unsafe { copy_h2d(dst as u64, host as *const u8, bytes) };
        }
        let tmp = super::launch::Scratch::<T>::new(OP, n)?;
        // SAFETY: `tmp` holds `n` device elements; the device view is valid (caller).
        unsafe {
            copy_h2d(tmp.ptr() as u64, host as *const u8, bytes)?;
            copy_strided(OP, shape, dst_strides, dst, &dense, tmp.ptr(), false)
        }
    }
}

impl<T: Scalar> SyncMemoryStrided<T, GpuDevice> for CpuDevice {
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
        if n == 0 {
            return Ok(());
        }
        let dense = row_major_strides(shape);
        let bytes = bytes_of::<T>(OP, n)?;
        let tmp;
        let device = if is_row_major(shape, src_strides) {
            src
        } else {
            tmp = super::launch::Scratch::<T>::new(OP, n)?;
            // SAFETY: the device view is valid (caller); `tmp` holds `n` elements.
            unsafe { copy_strided(OP, shape, &dense, tmp.ptr(), src_strides, src, false)? };
            tmp.ptr() as *const T
        };
        if is_row_major(shape, dst_strides) {
            // SAFETY: `device` holds `n` dense elements; so does the host view (caller).
            return unsafe { copy_d2h(dst as *mut u8, device as u64, bytes) };
        }
        let mut packed = vec![T::zero(); n];
        // SAFETY: `device` holds `n` dense elements, `packed` as many; the host view is
        // valid (caller).
        unsafe {
            copy_d2h(packed.as_mut_ptr() as *mut u8, device as u64, bytes)?;
            <CpuDevice as SyncMemoryStrided<T, CpuDevice>>::sync_strided(
                dst,
                dst_strides,
                packed.as_ptr(),
                &dense,
                shape,
            )
        }
    }
}

impl<D: Scalar + CastFrom<S>, S: Scalar> CastMemory<D, S> for GpuDevice {
    unsafe fn cast(dst: *mut D, src: *const S, n: usize) -> Result<()> {
        check::non_null("cast_memory", "dst", dst, n)?;
        check::non_null("cast_memory", "src", src, n)?;
        if n == 0 {
            return Ok(());
        }
        if overlaps(
            src as *const u8,
            n * std::mem::size_of::<S>(),
            dst as *const u8,
            n * std::mem::size_of::<D>(),
        ) {
            return Err(ctensor_base::Error::InvalidArgument {
                op: "cast_memory",
                expected: "non-overlapping source and destination".into(),
                given: "overlapping device ranges".into(),
            });
        }
        let (n64, s, d) = (n as u64, dev(src), dev(dst));
        // SAFETY: device ranges of `n` elements, not overlapping (checked above).
        unsafe { launch_1d(CAST_PAIRS.get_pair::<D, S>()?, n, &mut args![&n64, &s, &d]) }
    }
}
