//! BLAS on the GPU through cuBLAS ([`super::cublas`]). Column-major, reference-BLAS
//! conventions (a vector with a negative increment is passed by its lowest address, as
//! to the CPU's BLAS: cuBLAS on an H100 reads it so), host scalars; the arguments are checked by the same plans as on the CPU
//! (`blas/args.rs`), so a bad argument reads the same on both devices.

use ctensor_base::gpu::copy_h2d;
use ctensor_base::{GpuDevice, Result, Scalar};
use cudarc::cublas::sys::cublasOperation_t;

use super::cublas::{call, op, Cublas};
use super::launch::{args, dev, launch_1d, Scratch};
use super::source::MATMUL_LOOP;
use crate::args as check;
use crate::blas::args::{self as plan, plan_gemv, vector_one, vector_pair, GemmPlan, GemvPlan};
use crate::blas::*;
use crate::memory::SetMemory;

/// A host array of device pointers, copied to the device for the batched routines.
fn pointer_array<P>(op: &'static str, ptrs: &[*const P]) -> Result<Scratch<i64>> {
    let dev = Scratch::<i64>::new(op, ptrs.len())?;
    let vals: Vec<i64> = ptrs.iter().map(|&p| p as i64).collect();
    // SAFETY: `dev` holds `ptrs.len()` i64 values; `vals` as many.
    unsafe { copy_h2d(dev.ptr() as u64, vals.as_ptr() as *const u8, vals.len() * 8)? };
    Ok(dev)
}

impl<T: Cublas> BlasDot<T> for GpuDevice {
    unsafe fn dot(n: usize, x: *const T, incx: isize, y: *const T, incy: isize) -> Result<T> {
        // SAFETY: forwarded contract.
        unsafe { dot_any(n, x, incx, y, incy, true) }
    }

    unsafe fn dotu(n: usize, x: *const T, incx: isize, y: *const T, incy: isize) -> Result<T> {
        // SAFETY: forwarded contract.
        unsafe { dot_any(n, x, incx, y, incy, false) }
    }
}

/// `dotc` (conjugating `x`) or `dotu`; the result is read back to the host.
///
/// # Safety
/// As for [`BlasDot::dot`].
unsafe fn dot_any<T: Cublas>(
    n: usize,
    x: *const T,
    incx: isize,
    y: *const T,
    incy: isize,
    conj: bool,
) -> Result<T> {
    let o = if conj { "dot" } else { "dotu" };
    let mut r = T::zero();
    let Some((ni, vx, vy)) = vector_pair(o, n, x, incx, y, incy)? else {
        return Ok(r);
    };
    let name = match (T::DTYPE.is_complex(), conj) {
        (false, _) => "dot",
        (true, true) => "dotc",
        (true, false) => "dotu",
    };
    // SAFETY: the vectors are valid device memory (caller); `r` is a host result, which
    // cuBLAS writes before returning in host pointer mode.
    call::<T>(name, |h| unsafe {
        if conj {
            T::dotc(h, ni, x, vx.inc, y, vy.inc, &mut r)
        } else {
            T::dotu(h, ni, x, vx.inc, y, vy.inc, &mut r)
        }
    })?;
    Ok(r)
}

impl<T: Cublas> BlasNrm2<T> for GpuDevice {
    unsafe fn nrm2(n: usize, x: *const T, incx: isize) -> Result<T::Real> {
        let mut r = <T::Real as Scalar>::zero();
        let Some((ni, vx)) = vector_one("nrm2", n, x, incx)? else {
            return Ok(r);
        };
        // SAFETY: as in `dot_any`. A negative increment acts as |inc| (as on the CPU).
        call::<T>("nrm2", |h| unsafe {
            T::nrm2(h, ni, x, vx.inc.abs(), &mut r)
        })?;
        Ok(r)
    }
}

impl<T: Cublas> BlasScal<T> for GpuDevice {
    unsafe fn scal(n: usize, alpha: T, x: *mut T, incx: isize) -> Result<()> {
        let Some((ni, vx)) = vector_one("scal", n, x, incx)? else {
            return Ok(());
        };
        // SAFETY: `x` is valid device memory (caller); `alpha` a host scalar.
        call::<T>("scal", |h| unsafe {
            T::scal(h, ni, &alpha, x, vx.inc.abs())
        })
    }

    unsafe fn scal_real(n: usize, alpha: T::Real, x: *mut T, incx: isize) -> Result<()> {
        let Some((ni, vx)) = vector_one("scal_real", n, x, incx)? else {
            return Ok(());
        };
        // SAFETY: as for `scal`.
        call::<T>("scal", |h| unsafe {
            T::scal_real(h, ni, &alpha, x, vx.inc.abs())
        })
    }
}

impl<T: Cublas> BlasAxpy<T> for GpuDevice {
    unsafe fn axpy(
        n: usize,
        alpha: T,
        x: *const T,
        incx: isize,
        y: *mut T,
        incy: isize,
    ) -> Result<()> {
        let Some((ni, vx, vy)) = vector_pair("axpy", n, x, incx, y, incy)? else {
            return Ok(());
        };
        // SAFETY: the vectors are valid device memory (caller).
        call::<T>("axpy", |h| unsafe {
            T::axpy(h, ni, &alpha, x, vx.inc, y, vy.inc)
        })
    }
}

impl<T: Cublas> BlasCopy<T> for GpuDevice {
    unsafe fn copy(n: usize, x: *const T, incx: isize, y: *mut T, incy: isize) -> Result<()> {
        let Some((ni, vx, vy)) = vector_pair("copy", n, x, incx, y, incy)? else {
            return Ok(());
        };
        // SAFETY: the vectors are valid device memory (caller).
        call::<T>("copy", |h| unsafe { T::copy(h, ni, x, vx.inc, y, vy.inc) })
    }
}

type Gemv = GemvPlan<cublasOperation_t>;
type Gemm = GemmPlan<cublasOperation_t>;

/// With an empty output there is nothing to do; with an empty inner dimension cuBLAS
/// (like reference BLAS) returns without touching y, and ctensor gives the mathematical
/// `y := βy` on both devices. Returns whether the call is finished.
///
/// # Safety
/// Every `y` is device memory valid for the plan's span.
unsafe fn gemv_degenerate<T: Cublas>(
    p: &Gemv,
    beta: T,
    ys: impl Iterator<Item = *mut T>,
) -> Result<bool> {
    if p.ly == 0 {
        return Ok(true);
    }
    if p.lx > 0 {
        return Ok(false);
    }
    for y in ys {
        // SAFETY: forwarded contract.
        unsafe { scale_or_zero(p.ly, beta, y, p.incy)? };
    }
    Ok(true)
}

/// `y := beta · y` over `n` elements with increment `inc`; exactly zero when beta is 0
/// (so NaN in y does not survive, as BLAS's β = 0 rule says).
///
/// # Safety
/// `y` is device memory valid for the vector's span.
unsafe fn scale_or_zero<T: Cublas>(n: usize, beta: T, y: *mut T, inc: i32) -> Result<()> {
    let step = inc.unsigned_abs() as usize;
    if beta == T::zero() {
        // SAFETY: the vector's elements lie at multiples of |inc| from `y` (caller).
        unsafe { <GpuDevice as SetMemory<T>>::set_strided(y, &[n], &[step], T::zero()) }
    } else {
        // SAFETY: as above.
        call::<T>("scal", |h| unsafe {
            T::scal(h, n as i32, &beta, y, step as i32)
        })
    }
}

fn gemv_plan(
    o: &'static str,
    trans: Trans,
    m: usize,
    n: usize,
    lda: usize,
    incx: isize,
    incy: isize,
) -> Result<Gemv> {
    plan_gemv(o, trans, op(trans), m, n, lda, incx, incy)
}

impl<T: Cublas> BlasGemv<T> for GpuDevice {
    unsafe fn gemv(
        trans: Trans,
        m: usize,
        n: usize,
        alpha: T,
        a: *const T,
        lda: usize,
        x: *const T,
        incx: isize,
        beta: T,
        y: *mut T,
        incy: isize,
    ) -> Result<()> {
        let p = gemv_plan("gemv", trans, m, n, lda, incx, incy)?;
        let [sa, sx, sy] = p.spans;
        plan::operands(
            "gemv",
            [("a", a, sa), ("x", x, sx), ("y", y as *const T, sy)],
        )?;
        // SAFETY: the operands are valid device memory for their spans (caller).
        unsafe {
            if gemv_degenerate(&p, beta, std::iter::once(y))? {
                return Ok(());
            }
            call::<T>("gemv", |h| {
                T::gemv(
                    h, p.trans, p.m, p.n, &alpha, a, p.lda, x, p.incx, &beta, y, p.incy,
                )
            })
        }
    }
}

impl<T: Cublas> BlasGemvBatched<T> for GpuDevice {
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
        const OP: &str = "gemv_batched";
        check::same_len(
            OP,
            "the pointer arrays a, x, y",
            &[a.len(), x.len(), y.len()],
        )?;
        let p = gemv_plan(OP, trans, m, n, lda, incx, incy)?;
        plan::pointer_batch(OP, ["a", "x", "y"], p.spans, a, x, y)?;
        // SAFETY: each y[k] is valid device memory for its span (caller).
        if a.is_empty() || unsafe { gemv_degenerate(&p, beta, y.iter().copied())? } {
            return Ok(());
        }
        let batch = check::blas_int(OP, "batch", a.len())?;
        let ys: Vec<*const T> = y.iter().map(|&q| q as *const T).collect();
        let (da, dx, dy) = (
            pointer_array(OP, a)?,
            pointer_array(OP, x)?,
            pointer_array(OP, &ys)?,
        );
        // SAFETY: the pointer arrays hold `batch` device pointers, each valid (caller).
        call::<T>("gemvBatched", |h| unsafe {
            T::gemv_batched(
                h,
                p.trans,
                p.m,
                p.n,
                &alpha,
                da.ptr() as _,
                p.lda,
                dx.ptr() as _,
                p.incx,
                &beta,
                dy.ptr() as _,
                p.incy,
                batch,
            )
        })
    }
}

/// A batch stride as cuBLAS's 64-bit integer.
fn stride64(op: &'static str, stride: usize) -> Result<i64> {
    i64::try_from(stride).map_err(|_| ctensor_base::Error::Overflow {
        op,
        what: format!("batch stride {stride} does not fit cuBLAS's 64-bit integer"),
    })
}

impl<T: Cublas> BlasGemvBatchedStrided<T> for GpuDevice {
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
        const OP: &str = "gemv_batched_strided";
        let p = gemv_plan(OP, trans, m, n, lda, incx, incy)?;
        let operands = [
            ("a", a, stride_a),
            ("x", x, stride_x),
            ("y", y as *const T, stride_y),
        ];
        plan::strided_batch(OP, p.spans, operands, batch)?;
        let ys = (0..batch).map(|k| y.wrapping_add(k * stride_y));
        // SAFETY: entry k of y lies inside its checked span (caller).
        if batch == 0 || unsafe { gemv_degenerate(&p, beta, ys)? } {
            return Ok(());
        }
        let b = check::blas_int(OP, "batch", batch)?;
        let (sa, sx, sy) = (
            stride64(OP, stride_a)?,
            stride64(OP, stride_x)?,
            stride64(OP, stride_y)?,
        );
        // SAFETY: the operands are valid device memory for their spans (caller).
        call::<T>("gemvStridedBatched", |h| unsafe {
            T::gemv_strided(
                h, p.trans, p.m, p.n, &alpha, a, p.lda, sa, x, p.incx, sx, &beta, y, p.incy, sy, b,
            )
        })
    }
}

#[allow(clippy::too_many_arguments)]
fn gemm_plan(
    o: &'static str,
    transa: Trans,
    transb: Trans,
    m: usize,
    n: usize,
    k: usize,
    lda: usize,
    ldb: usize,
    ldc: usize,
) -> Result<Gemm> {
    plan::plan_gemm(
        o,
        (transa, transb),
        (op(transa), op(transb)),
        m,
        n,
        k,
        lda,
        ldb,
        ldc,
    )
}

impl<T: Cublas> BlasGemm<T> for GpuDevice {
    unsafe fn gemm(
        transa: Trans,
        transb: Trans,
        m: usize,
        n: usize,
        k: usize,
        alpha: T,
        a: *const T,
        lda: usize,
        b: *const T,
        ldb: usize,
        beta: T,
        c: *mut T,
        ldc: usize,
    ) -> Result<()> {
        let p = gemm_plan("gemm", transa, transb, m, n, k, lda, ldb, ldc)?;
        let [sa, sb, sc] = p.spans;
        plan::operands(
            "gemm",
            [("a", a, sa), ("b", b, sb), ("c", c as *const T, sc)],
        )?;
        if m == 0 || n == 0 {
            return Ok(());
        }
        // SAFETY: the operands are valid device memory for their spans (caller). With
        // k = 0 cuBLAS computes C := βC, and with β = 0 it does not read C.
        call::<T>("gemm", |h| unsafe {
            T::gemm(
                h, p.ta, p.tb, p.m, p.n, p.k, &alpha, a, p.lda, b, p.ldb, &beta, c, p.ldc,
            )
        })
    }
}

impl<T: Cublas> BlasGemmBatched<T> for GpuDevice {
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
        const OP: &str = "gemm_batched";
        check::same_len(
            OP,
            "the pointer arrays a, b, c",
            &[a.len(), b.len(), c.len()],
        )?;
        let p = gemm_plan(OP, transa, transb, m, n, k, lda, ldb, ldc)?;
        plan::pointer_batch(OP, ["a", "b", "c"], p.spans, a, b, c)?;
        if a.is_empty() || m == 0 || n == 0 {
            return Ok(());
        }
        let batch = check::blas_int(OP, "batch", a.len())?;
        let cs: Vec<*const T> = c.iter().map(|&p| p as *const T).collect();
        let (da, db, dc) = (
            pointer_array(OP, a)?,
            pointer_array(OP, b)?,
            pointer_array(OP, &cs)?,
        );
        // SAFETY: the pointer arrays hold `batch` valid device pointers (caller).
        call::<T>("gemmBatched", |h| unsafe {
            T::gemm_batched(
                h,
                p.ta,
                p.tb,
                p.m,
                p.n,
                p.k,
                &alpha,
                da.ptr() as _,
                p.lda,
                db.ptr() as _,
                p.ldb,
                &beta,
                dc.ptr() as _,
                p.ldc,
                batch,
            )
        })
    }
}

impl<T: Cublas> BlasGemmBatchedStrided<T> for GpuDevice {
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
        const OP: &str = "gemm_batched_strided";
        let p = gemm_plan(OP, transa, transb, m, n, k, lda, ldb, ldc)?;
        let operands = [
            ("a", a, stride_a),
            ("b", b, stride_b),
            ("c", c as *const T, stride_c),
        ];
        plan::strided_batch(OP, p.spans, operands, batch)?;
        if batch == 0 || m == 0 || n == 0 {
            return Ok(());
        }
        let bt = check::blas_int(OP, "batch", batch)?;
        let (sa, sb, sc) = (
            stride64(OP, stride_a)?,
            stride64(OP, stride_b)?,
            stride64(OP, stride_c)?,
        );
        // SAFETY: the operands are valid device memory for their spans (caller).
        call::<T>("gemmStridedBatched", |h| unsafe {
            T::gemm_strided(
                h, p.ta, p.tb, p.m, p.n, p.k, &alpha, a, p.lda, sa, b, p.ldb, sb, &beta, c, p.ldc,
                sc, bt,
            )
        })
    }
}

impl<T: Scalar> crate::blas::matmul::MatMul<T> for GpuDevice {
    unsafe fn matmul(
        transa: Trans,
        transb: Trans,
        m: usize,
        n: usize,
        k: usize,
        alpha: T,
        a: *const T,
        lda: usize,
        b: *const T,
        ldb: usize,
        beta: T,
        c: *mut T,
        ldc: usize,
    ) -> Result<()> {
        crate::blas::matmul::matmul_via_gemm!(
            GpuDevice, T, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc
        );
        const OP: &str = "matmul";
        // The remaining types are real, so `C` means `T`; the kernel takes 0/1 flags.
        let flags = ((transa != Trans::N) as i32, (transb != Trans::N) as i32);
        let p = plan::plan_gemm(OP, (transa, transb), flags, m, n, k, lda, ldb, ldc)?;
        let [sa, sb, sc] = p.spans;
        plan::operands(OP, [("a", a, sa), ("b", b, sb), ("c", c as *const T, sc)])?;
        if m == 0 || n == 0 {
            return Ok(());
        }
        let (m, n, k) = (m as u64, n as u64, k as u64);
        let (lda, ldb, ldc) = (lda as u64, ldb as u64, ldc as u64);
        let (ap, bp, cp) = (dev(a), dev(b), dev(c));
        let beta_zero = (beta == T::zero()) as i32;
        let kernel = MATMUL_LOOP.get::<T>()?;
        // SAFETY: the operands are valid device memory for their checked spans (caller).
        unsafe {
            launch_1d(
                kernel,
                (m * n) as usize,
                &mut args![
                    &p.ta, &p.tb, &m, &n, &k, &alpha, &ap, &lda, &bp, &ldb, &beta, &cp, &ldc,
                    &beta_zero
                ],
            )
        }
    }
}
