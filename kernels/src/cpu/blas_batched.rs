//! The batched BLAS kernels on the host: one CBLAS call per matrix, over threads when
//! the batch is large.

use ctensor_base::{CpuDevice, Result};

use super::blas::{cblas_trans, plan_gemm};
use super::cblas::Cblas;
use crate::args as check;
use crate::blas::args::plan_gemv;
use crate::blas::*;

impl<T: Cblas> BlasGemvBatched<T> for CpuDevice {
    unsafe fn gemv_batched(
        trans: Trans,
        m: usize,
        n: usize,
        alpha: T,
        a: &[*const T],
        lda: usize,
        x: &[*const T],
        incx: isize,
        beta: T,
        y: &[*mut T],
        incy: isize,
    ) -> Result<()> {
        let op = "gemv_batched";
        check::same_len(
            op,
            "the pointer arrays a, x, y",
            &[a.len(), x.len(), y.len()],
        )?;
        let p = plan_gemv(op, trans, cblas_trans::<T>(trans), m, n, lda, incx, incy)?;
        // SAFETY: forwarded contract.
        unsafe { pointer_batch(op, ["a", "x", "y"], &p, alpha, a, x, beta, y) }
    }
}

/// One checked matrix product (a gemv or a gemm plan), run on pointers that were
/// checked against its spans; the batched forms of both share the loops below.
pub(super) trait Product {
    /// Elements spanned by the two inputs and the output.
    fn spans(&self) -> [usize; 3];

    /// The product on one set of operands.
    ///
    /// # Safety
    /// The pointers are valid for `spans()` and the output overlaps neither input.
    unsafe fn run<T: Cblas>(&self, alpha: T, a: *const T, b: *const T, beta: T, c: *mut T);
}

/// A batch given by three pointer arrays of one length (`names` for the messages).
///
/// # Safety
/// Every triple satisfies the contract of [`Product::run`]; no output overlaps another.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn pointer_batch<T: Cblas, P: Product>(
    op: &'static str,
    names: [&str; 3],
    p: &P,
    alpha: T,
    a: &[*const T],
    b: &[*const T],
    beta: T,
    c: &[*mut T],
) -> Result<()> {
    crate::blas::args::pointer_batch(op, names, p.spans(), a, b, c)?;
    for i in 0..a.len() {
        // SAFETY: arguments checked; the caller vouches for every triple.
        unsafe { p.run(alpha, a[i], b[i], beta, c[i]) };
    }
    Ok(())
}

/// A batch laid out with constant strides: `(name, pointer, stride)` per operand. The
/// last entry of each (`(batch-1)·stride + span`) must be addressable and a non-empty
/// operand non-null.
///
/// # Safety
/// Every entry satisfies the contract of [`Product::run`]; no output overlaps another.
pub(super) unsafe fn strided_batch<T: Cblas, P: Product>(
    op: &'static str,
    p: &P,
    alpha: T,
    operands: [(&str, *const T, usize); 3],
    beta: T,
    batch: usize,
) -> Result<()> {
    crate::blas::args::strided_batch(op, p.spans(), operands, batch)?;
    let [(_, a, sa), (_, b, sb), (_, c, sc)] = operands;
    for i in 0..batch {
        // SAFETY: offsets fit (checked above) and the caller vouches for every entry.
        unsafe {
            p.run(
                alpha,
                a.wrapping_add(i * sa),
                b.wrapping_add(i * sb),
                beta,
                (c as *mut T).wrapping_add(i * sc),
            )
        };
    }
    Ok(())
}

impl<T: Cblas> BlasGemvBatchedStrided<T> for CpuDevice {
    unsafe fn gemv_batched_strided(
        trans: Trans,
        m: usize,
        n: usize,
        alpha: T,
        a: *const T,
        lda: usize,
        stride_a: usize,
        x: *const T,
        incx: isize,
        stride_x: usize,
        beta: T,
        y: *mut T,
        incy: isize,
        stride_y: usize,
        batch: usize,
    ) -> Result<()> {
        let op = "gemv_batched_strided";
        let p = plan_gemv(op, trans, cblas_trans::<T>(trans), m, n, lda, incx, incy)?;
        let operands = [
            ("a", a, stride_a),
            ("x", x, stride_x),
            ("y", y as *const T, stride_y),
        ];
        // SAFETY: forwarded contract.
        unsafe { strided_batch(op, &p, alpha, operands, beta, batch) }
    }
}

impl<T: Cblas> BlasGemmBatched<T> for CpuDevice {
    unsafe fn gemm_batched(
        transa: Trans,
        transb: Trans,
        m: usize,
        n: usize,
        k: usize,
        alpha: T,
        a: &[*const T],
        lda: usize,
        b: &[*const T],
        ldb: usize,
        beta: T,
        c: &[*mut T],
        ldc: usize,
    ) -> Result<()> {
        let op = "gemm_batched";
        check::same_len(
            op,
            "the pointer arrays a, b, c",
            &[a.len(), b.len(), c.len()],
        )?;
        let p = plan_gemm::<T>(op, transa, transb, m, n, k, lda, ldb, ldc)?;
        // SAFETY: forwarded contract.
        unsafe { pointer_batch(op, ["a", "b", "c"], &p, alpha, a, b, beta, c) }
    }
}

impl<T: Cblas> BlasGemmBatchedStrided<T> for CpuDevice {
    unsafe fn gemm_batched_strided(
        transa: Trans,
        transb: Trans,
        m: usize,
        n: usize,
        k: usize,
        alpha: T,
        a: *const T,
        lda: usize,
        stride_a: usize,
        b: *const T,
        ldb: usize,
        stride_b: usize,
        beta: T,
        c: *mut T,
        ldc: usize,
        stride_c: usize,
        batch: usize,
    ) -> Result<()> {
        let op = "gemm_batched_strided";
        let p = plan_gemm::<T>(op, transa, transb, m, n, k, lda, ldb, ldc)?;
        let operands = [
            ("a", a, stride_a),
            ("b", b, stride_b),
            ("c", c as *const T, stride_c),
        ];
        // SAFETY: forwarded contract.
        unsafe { strided_batch(op, &p, alpha, operands, beta, batch) }
    }
}
