//! Row reductions on the GPU (`cuda/reduce.cu`), through a device temporary when the
//! output is the input.

use ctensor_base::{GpuDevice, Result, Scalar};

use super::launch::{args, dev, reduce_grid, Scratch, BLOCK};
use super::source::{Kernel, ARG_EXTREME, CUMSUM, REDUCE_EXTREME, REDUCE_SUM};
use crate::args as check;
use crate::memory::SetMemory;
use crate::reduce::{ArgExtreme, CumSum, Reduce, ReduceExtreme};

/// Launches a row reduction: one block per row, walked grid-stride.
///
/// # Safety
/// `src` holds `rows · inner` device elements, `dst` `rows`, disjoint.
unsafe fn reduce_rows<T: Scalar>(
    k: &Kernel,
    max: Option<bool>,
    rows: usize,
    inner: usize,
    src: *const T,
    dst: *mut T,
) -> Result<()> {
    let (ctx, f) = k.get::<T>()?;
    let grid = reduce_grid(rows);
    let (r, i, sp, dp) = (rows as u64, inner as u64, dev(src), dev(dst));
    // SAFETY: forwarded contract.
    unsafe {
        match max {
            None => ctx.launch(
                f,
                (grid, 1, 1),
                (BLOCK, 1, 1),
                0,
                &mut args![&r, &i, &sp, &dp],
            ),
            Some(m) => {
                let m = m as i32;
                ctx.launch(
                    f,
                    (grid, 1, 1),
                    (BLOCK, 1, 1),
                    0,
                    &mut args![&m, &r, &i, &sp, &dp],
                )
            }
        }
    }
}

/// The reduction of `rows × inner` into `rows`, through a temporary when `dst == src`
/// (a row's result would overwrite elements of earlier rows before they are read).
///
/// # Safety
/// As for [`Reduce::reduce`].
unsafe fn reduce_any<T: Scalar>(
    k: &Kernel,
    op: &'static str,
    max: Option<bool>,
    rows: usize,
    inner: usize,
    src: *const T,
    dst: *mut T,
) -> Result<()> {
    let n = check::numel(op, &[rows, inner])?;
    check::non_null(op, "src", src, n)?;
    check::non_null(op, "dst", dst, rows)?;
    if rows == 0 {
        return Ok(());
    }
    if inner == 0 {
        // SAFETY: `dst` holds `rows` device elements.
        return unsafe { <GpuDevice as SetMemory<T>>::set(dst, T::zero(), rows) };
    }
    if std::ptr::eq(src, dst) && rows > 1 && inner > 1 {
        let tmp = Scratch::<T>::new(op, rows)?;
        // SAFETY: `tmp` holds `rows` device elements, disjoint from `src`.
        unsafe {
            reduce_rows(k, max, rows, inner, src, tmp.ptr())?;
            return ctensor_base::gpu::copy_d2d(
                dev(dst),
                dev(tmp.ptr()),
                rows * std::mem::size_of::<T>(),
            );
        }
    }
    // SAFETY: forwarded contract; with one row or one column in place, each block reads
    // its row before writing dst[r], which no other block reads.
    unsafe { reduce_rows(k, max, rows, inner, src, dst) }
}

impl<T: Scalar> Reduce<T> for GpuDevice {
    unsafe fn reduce(rows: usize, inner: usize, src: *const T, dst: *mut T) -> Result<()> {
        // SAFETY: forwarded contract.
        unsafe { reduce_any(&REDUCE_SUM, "reduce", None, rows, inner, src, dst) }
    }
}

impl<T: Scalar> ReduceExtreme<T> for GpuDevice {
    unsafe fn reduce_extreme(
        max: bool,
        rows: usize,
        inner: usize,
        src: *const T,
        dst: *mut T,
    ) -> Result<()> {
        let op = check::extreme(max, T::DTYPE, rows, inner)?;
        // SAFETY: forwarded contract.
        unsafe { reduce_any(&REDUCE_EXTREME, op, Some(max), rows, inner, src, dst) }
    }
}

impl<T: Scalar> ArgExtreme<T> for GpuDevice {
    unsafe fn arg_extreme(
        max: bool,
        rows: usize,
        inner: usize,
        src: *const T,
        dst: *mut i64,
    ) -> Result<()> {
        let op = check::arg_extreme(max, T::DTYPE, rows, inner)?;
        let n = check::numel(op, &[rows, inner])?;
        check::non_null(op, "src", src, n)?;
        check::non_null(op, "dst", dst, rows)?;
        if rows == 0 {
            return Ok(());
        }
        let (ctx, f) = ARG_EXTREME.get::<T>()?;
        let (m, r, i, sp, dp) = (max as i32, rows as u64, inner as u64, dev(src), dev(dst));
        // SAFETY: `src` holds rows·inner device elements and `dst` rows i64s (caller);
        // one block of BLOCK threads per row, walked grid-stride.
        unsafe {
            ctx.launch(
                f,
                (reduce_grid(rows), 1, 1),
                (BLOCK, 1, 1),
                0,
                &mut args![&m, &r, &i, &sp, &dp],
            )
        }
    }
}

impl<T: Scalar> CumSum<T> for GpuDevice {
    unsafe fn cumsum(rows: usize, inner: usize, src: *const T, dst: *mut T) -> Result<()> {
        let op = "cumsum";
        let n = check::numel(op, &[rows, inner])?;
        check::non_null(op, "src", src, n)?;
        check::non_null(op, "dst", dst, n)?;
        if n == 0 {
            return Ok(());
        }
        let (ctx, f) = CUMSUM.get::<T>()?;
        let (r, i, sp, dp) = (rows as u64, inner as u64, dev(src), dev(dst));
        // SAFETY: both hold rows·inner device elements (caller); each thread reads its
        // chunk of a row before writing it, so in place is fine.
        unsafe {
            ctx.launch(
                f,
                (reduce_grid(rows), 1, 1),
                (BLOCK, 1, 1),
                0,
                &mut args![&r, &i, &sp, &dp],
            )
        }
    }
}
