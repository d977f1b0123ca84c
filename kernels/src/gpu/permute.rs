//! Layout kernels on the GPU (`cuda/layout.cu`): transpose, stride, inflate, and the
//! triangle clean-up of `SetMatrix`. They are not correct in place as they are; when the
//! output is the input they go through a device temporary.

use ctensor_base::{GpuDevice, Result, Scalar};

use super::launch::{args, dev, launch_1d, transpose_plan, unaliased, TransposePlan};
use super::memory::{copy_dims, copy_strided};
use super::source::{SET_MATRIX, TRANSPOSE2D};
use crate::args as check;
use crate::lapack::{SetMatrix, Uplo};
use crate::memory::SetMemory;
use crate::permute::{Inflate, Stride, Transpose};
use crate::strides::row_major_strides;

impl<T: Scalar> Transpose<T> for GpuDevice {
    unsafe fn transpose(
        shape: &[usize],
        perm: &[usize],
        src: *const T,
        dst: *mut T,
        conj: bool,
    ) -> Result<()> {
        const OP: &str = "transpose";
        check::perm(OP, perm, shape.len())?;
        let n = check::numel(OP, shape)?;
        check::non_null(OP, "src", src, n)?;
        check::non_null(OP, "dst", dst, n)?;
        if n == 0 {
            return Ok(());
        }
        // In place: read from a copy.
        // SAFETY: `src` holds `n` device elements (caller).
        let tmp = unsafe { unaliased(OP, src, dst, n)? };
        let src = tmp.as_ref().map_or(src, |t| t.ptr() as *const T);
        match transpose_plan(OP, shape, perm)? {
            TransposePlan::Tiled {
                rows,
                cols,
                grid,
                block,
            } => {
                let (ctx, f) = TRANSPOSE2D.get::<T>()?;
                let (sp, dp, cj) = (dev(src), dev(dst), conj as i32);
                // SAFETY: source and destination hold `n` device elements each and are
                // disjoint (a temporary was made above for in place).
                unsafe { ctx.launch(f, grid, block, 0, &mut args![&rows, &cols, &sp, &dp, &cj]) }
            }
            // SAFETY: as above; every offset lies inside the `n` elements.
            TransposePlan::Strided(dims) => unsafe { copy_dims(&dims, n, dst, src, conj) },
        }
    }
}

impl<T: Scalar> Stride<T> for GpuDevice {
    unsafe fn stride(shape: &[usize], steps: &[usize], src: *const T, dst: *mut T) -> Result<()> {
        const OP: &str = "stride";
        let p = crate::permute::plan_stride(OP, shape, steps, src, dst)?;
        if p.n_out == 0 {
            return Ok(());
        }
        // SAFETY: `src` holds `n_in` device elements (caller).
        let tmp = unsafe { unaliased(OP, src, dst, p.n_in)? };
        let src = tmp.as_ref().map_or(src, |t| t.ptr() as *const T);
        // SAFETY: offsets stay inside both arrays; they are disjoint (temporary above).
        unsafe {
            copy_strided(
                OP,
                &p.out_shape,
                &p.dst_strides,
                dst,
                &p.src_strides,
                src,
                false,
            )
        }
    }
}

impl<T: Scalar> Inflate<T> for GpuDevice {
    unsafe fn inflate(
        shape: &[usize],
        steps: &[usize],
        src: *const T,
        dst_shape: &[usize],
        dst: *mut T,
    ) -> Result<()> {
        const OP: &str = "inflate";
        check::steps(OP, shape, steps)?;
        check::inflate_shape(OP, shape, steps, dst_shape)?;
        let n_in = check::numel(OP, shape)?;
        let n_out = check::numel(OP, dst_shape)?;
        check::non_null(OP, "src", src, n_in)?;
        check::non_null(OP, "dst", dst, n_out)?;
        if n_out == 0 {
            return Ok(());
        }
        // SAFETY: `src` holds `n_in` device elements (caller).
        let tmp = unsafe { unaliased(OP, src, dst, n_in)? };
        let src = tmp.as_ref().map_or(src, |t| t.ptr() as *const T);
        let dst_strides = crate::permute::stepped_strides(dst_shape, steps);
        // SAFETY: `dst` holds `n_out` device elements; the grid points lie inside it
        // (checked shapes), and `src` is disjoint from it (temporary above).
        unsafe {
            <GpuDevice as SetMemory<T>>::set(dst, T::zero(), n_out)?;
            copy_strided(
                OP,
                shape,
                &dst_strides,
                dst,
                &row_major_strides(shape),
                src,
                false,
            )
        }
    }
}

impl<T: Scalar> SetMatrix<T> for GpuDevice {
    unsafe fn set_matrix(keep: Uplo, n: usize, a: *mut T, lda: usize) -> Result<()> {
        const OP: &str = "set_matrix";
        if crate::lapack::args::plan_square(OP, "a", n, a, lda)?.is_none() {
            return Ok(());
        }
        let nn = check::numel(OP, &[n, n])?;
        let (up, n64, ap, ld) = ((keep == Uplo::Upper) as i32, n as u64, dev(a), lda as u64);
        // SAFETY: `a` holds the n × n matrix with leading dimension `lda` (caller).
        unsafe { launch_1d(SET_MATRIX.get::<T>()?, nn, &mut args![&up, &n64, &ap, &ld]) }
    }
}
