//! BLAS on the GPU through cuBLAS (cudarc's `sys` bindings, so the complex routines are
//! reachable too). Column-major, reference-BLAS conventions, host scalars; the checks
//! are the CPU kernels' (`check.rs`), so a bad argument reads the same on both devices.

use ctensor_base::gpu::{context, copy_h2d};
use ctensor_base::{c32, c64, Error, GpuDevice, Result, Scalar};
use cudarc::cublas::sys::{self as cb, cublasHandle_t, cublasOperation_t, cublasStatus_t};

use super::launch::Scratch;
use crate::blas::*;
use crate::check;
use crate::memory::SetMemory;

/// The element types cuBLAS computes with, and their entry points.
#[allow(clippy::too_many_arguments, missing_docs)]
pub trait Cublas: Scalar {
    /// Name prefix of the routines (`S`, `D`, `C`, `Z`) for messages.
    const PREFIX: &'static str;
    unsafe fn gemm(
        h: cublasHandle_t,
        ta: cublasOperation_t,
        tb: cublasOperation_t,
        m: i32,
        n: i32,
        k: i32,
        alpha: *const Self,
        a: *const Self,
        lda: i32,
        b: *const Self,
        ldb: i32,
        beta: *const Self,
        c: *mut Self,
        ldc: i32,
    ) -> cublasStatus_t;
    unsafe fn gemm_strided(
        h: cublasHandle_t,
        ta: cublasOperation_t,
        tb: cublasOperation_t,
        m: i32,
        n: i32,
        k: i32,
        alpha: *const Self,
        a: *const Self,
        lda: i32,
        sa: i64,
        b: *const Self,
        ldb: i32,
        sb: i64,
        beta: *const Self,
        c: *mut Self,
        ldc: i32,
        sc: i64,
        batch: i32,
    ) -> cublasStatus_t;
    unsafe fn gemm_batched(
        h: cublasHandle_t,
        ta: cublasOperation_t,
        tb: cublasOperation_t,
        m: i32,
        n: i32,
        k: i32,
        alpha: *const Self,
        a: *const *const Self,
        lda: i32,
        b: *const *const Self,
        ldb: i32,
        beta: *const Self,
        c: *const *mut Self,
        ldc: i32,
        batch: i32,
    ) -> cublasStatus_t;
    unsafe fn gemv(
        h: cublasHandle_t,
        t: cublasOperation_t,
        m: i32,
        n: i32,
        alpha: *const Self,
        a: *const Self,
        lda: i32,
        x: *const Self,
        incx: i32,
        beta: *const Self,
        y: *mut Self,
        incy: i32,
    ) -> cublasStatus_t;
    unsafe fn gemv_strided(
        h: cublasHandle_t,
        t: cublasOperation_t,
        m: i32,
        n: i32,
        alpha: *const Self,
        a: *const Self,
        lda: i32,
        sa: i64,
        x: *const Self,
        incx: i32,
        sx: i64,
        beta: *const Self,
        y: *mut Self,
        incy: i32,
        sy: i64,
        batch: i32,
    ) -> cublasStatus_t;
    unsafe fn gemv_batched(
        h: cublasHandle_t,
        t: cublasOperation_t,
        m: i32,
        n: i32,
        alpha: *const Self,
        a: *const *const Self,
        lda: i32,
        x: *const *const Self,
        incx: i32,
        beta: *const Self,
        y: *const *mut Self,
        incy: i32,
        batch: i32,
    ) -> cublasStatus_t;
    unsafe fn dotc(
        h: cublasHandle_t,
        n: i32,
        x: *const Self,
        incx: i32,
        y: *const Self,
        incy: i32,
        r: *mut Self,
    ) -> cublasStatus_t;
    unsafe fn dotu(
        h: cublasHandle_t,
        n: i32,
        x: *const Self,
        incx: i32,
        y: *const Self,
        incy: i32,
        r: *mut Self,
    ) -> cublasStatus_t;
    unsafe fn nrm2(
        h: cublasHandle_t,
        n: i32,
        x: *const Self,
        incx: i32,
        r: *mut Self::Real,
    ) -> cublasStatus_t;
    unsafe fn scal(
        h: cublasHandle_t,
        n: i32,
        alpha: *const Self,
        x: *mut Self,
        incx: i32,
    ) -> cublasStatus_t;
    unsafe fn scal_real(
        h: cublasHandle_t,
        n: i32,
        alpha: *const Self::Real,
        x: *mut Self,
        incx: i32,
    ) -> cublasStatus_t;
    unsafe fn axpy(
        h: cublasHandle_t,
        n: i32,
        alpha: *const Self,
        x: *const Self,
        incx: i32,
        y: *mut Self,
        incy: i32,
    ) -> cublasStatus_t;
    unsafe fn copy(
        h: cublasHandle_t,
        n: i32,
        x: *const Self,
        incx: i32,
        y: *mut Self,
        incy: i32,
    ) -> cublasStatus_t;
}

macro_rules! cublas_impl {
    ($t:ty, $p:literal, $gemm:ident, $gemms:ident, $gemmb:ident, $gemv:ident, $gemvs:ident, $gemvb:ident,
     $dotc:ident, $dotu:ident, $nrm2:ident, $scal:ident, $scalr:ident, $axpy:ident, $copy:ident) => {
        impl Cublas for $t {
            const PREFIX: &'static str = $p;
            unsafe fn gemm(
                h: cublasHandle_t,
                ta: cublasOperation_t,
                tb: cublasOperation_t,
                m: i32,
                n: i32,
                k: i32,
                alpha: *const Self,
                a: *const Self,
                lda: i32,
                b: *const Self,
                ldb: i32,
                beta: *const Self,
                c: *mut Self,
                ldc: i32,
            ) -> cublasStatus_t {
                // SAFETY: forwarded; `Self` has the layout of the cuBLAS type.
                unsafe {
                    cb::$gemm(
                        h, ta, tb, m, n, k, alpha as _, a as _, lda, b as _, ldb, beta as _,
                        c as _, ldc,
                    )
                }
            }
            unsafe fn gemm_strided(
                h: cublasHandle_t,
                ta: cublasOperation_t,
                tb: cublasOperation_t,
                m: i32,
                n: i32,
                k: i32,
                alpha: *const Self,
                a: *const Self,
                lda: i32,
                sa: i64,
                b: *const Self,
                ldb: i32,
                sb: i64,
                beta: *const Self,
                c: *mut Self,
                ldc: i32,
                sc: i64,
                batch: i32,
            ) -> cublasStatus_t {
                // SAFETY: as above.
                unsafe {
                    cb::$gemms(
                        h, ta, tb, m, n, k, alpha as _, a as _, lda, sa, b as _, ldb, sb,
                        beta as _, c as _, ldc, sc, batch,
                    )
                }
            }
            unsafe fn gemm_batched(
                h: cublasHandle_t,
                ta: cublasOperation_t,
                tb: cublasOperation_t,
                m: i32,
                n: i32,
                k: i32,
                alpha: *const Self,
                a: *const *const Self,
                lda: i32,
                b: *const *const Self,
                ldb: i32,
                beta: *const Self,
                c: *const *mut Self,
                ldc: i32,
                batch: i32,
            ) -> cublasStatus_t {
                // SAFETY: as above.
                unsafe {
                    cb::$gemmb(
                        h, ta, tb, m, n, k, alpha as _, a as _, lda, b as _, ldb, beta as _,
                        c as _, ldc, batch,
                    )
                }
            }
            unsafe fn gemv(
                h: cublasHandle_t,
                t: cublasOperation_t,
                m: i32,
                n: i32,
                alpha: *const Self,
                a: *const Self,
                lda: i32,
                x: *const Self,
                incx: i32,
                beta: *const Self,
                y: *mut Self,
                incy: i32,
            ) -> cublasStatus_t {
                // SAFETY: as above.
                unsafe {
                    cb::$gemv(
                        h, t, m, n, alpha as _, a as _, lda, x as _, incx, beta as _, y as _, incy,
                    )
                }
            }
            unsafe fn gemv_strided(
                h: cublasHandle_t,
                t: cublasOperation_t,
                m: i32,
                n: i32,
                alpha: *const Self,
                a: *const Self,
                lda: i32,
                sa: i64,
                x: *const Self,
                incx: i32,
                sx: i64,
                beta: *const Self,
                y: *mut Self,
                incy: i32,
                sy: i64,
                batch: i32,
            ) -> cublasStatus_t {
                // SAFETY: as above.
                unsafe {
                    cb::$gemvs(
                        h, t, m, n, alpha as _, a as _, lda, sa, x as _, incx, sx, beta as _,
                        y as _, incy, sy, batch,
                    )
                }
            }
            unsafe fn gemv_batched(
                h: cublasHandle_t,
                t: cublasOperation_t,
                m: i32,
                n: i32,
                alpha: *const Self,
                a: *const *const Self,
                lda: i32,
                x: *const *const Self,
                incx: i32,
                beta: *const Self,
                y: *const *mut Self,
                incy: i32,
                batch: i32,
            ) -> cublasStatus_t {
                // SAFETY: as above.
                unsafe {
                    cb::$gemvb(
                        h, t, m, n, alpha as _, a as _, lda, x as _, incx, beta as _, y as _, incy,
                        batch,
                    )
                }
            }
            unsafe fn dotc(
                h: cublasHandle_t,
                n: i32,
                x: *const Self,
                incx: i32,
                y: *const Self,
                incy: i32,
                r: *mut Self,
            ) -> cublasStatus_t {
                // SAFETY: as above.
                unsafe { cb::$dotc(h, n, x as _, incx, y as _, incy, r as _) }
            }
            unsafe fn dotu(
                h: cublasHandle_t,
                n: i32,
                x: *const Self,
                incx: i32,
                y: *const Self,
                incy: i32,
                r: *mut Self,
            ) -> cublasStatus_t {
                // SAFETY: as above.
                unsafe { cb::$dotu(h, n, x as _, incx, y as _, incy, r as _) }
            }
            unsafe fn nrm2(
                h: cublasHandle_t,
                n: i32,
                x: *const Self,
                incx: i32,
                r: *mut Self::Real,
            ) -> cublasStatus_t {
                // SAFETY: as above.
                unsafe { cb::$nrm2(h, n, x as _, incx, r as _) }
            }
            unsafe fn scal(
                h: cublasHandle_t,
                n: i32,
                alpha: *const Self,
                x: *mut Self,
                incx: i32,
            ) -> cublasStatus_t {
                // SAFETY: as above.
                unsafe { cb::$scal(h, n, alpha as _, x as _, incx) }
            }
            unsafe fn scal_real(
                h: cublasHandle_t,
                n: i32,
                alpha: *const Self::Real,
                x: *mut Self,
                incx: i32,
            ) -> cublasStatus_t {
                // SAFETY: as above.
                unsafe { cb::$scalr(h, n, alpha as _, x as _, incx) }
            }
            unsafe fn axpy(
                h: cublasHandle_t,
                n: i32,
                alpha: *const Self,
                x: *const Self,
                incx: i32,
                y: *mut Self,
                incy: i32,
            ) -> cublasStatus_t {
                // SAFETY: as above.
                unsafe { cb::$axpy(h, n, alpha as _, x as _, incx, y as _, incy) }
            }
            unsafe fn copy(
                h: cublasHandle_t,
                n: i32,
                x: *const Self,
                incx: i32,
                y: *mut Self,
                incy: i32,
            ) -> cublasStatus_t {
                // SAFETY: as above.
                unsafe { cb::$copy(h, n, x as _, incx, y as _, incy) }
            }
        }
    };
}

cublas_impl!(
    f32,
    "S",
    cublasSgemm_v2,
    cublasSgemmStridedBatched,
    cublasSgemmBatched,
    cublasSgemv_v2,
    cublasSgemvStridedBatched,
    cublasSgemvBatched,
    cublasSdot_v2,
    cublasSdot_v2,
    cublasSnrm2_v2,
    cublasSscal_v2,
    cublasSscal_v2,
    cublasSaxpy_v2,
    cublasScopy_v2
);
cublas_impl!(
    f64,
    "D",
    cublasDgemm_v2,
    cublasDgemmStridedBatched,
    cublasDgemmBatched,
    cublasDgemv_v2,
    cublasDgemvStridedBatched,
    cublasDgemvBatched,
    cublasDdot_v2,
    cublasDdot_v2,
    cublasDnrm2_v2,
    cublasDscal_v2,
    cublasDscal_v2,
    cublasDaxpy_v2,
    cublasDcopy_v2
);
cublas_impl!(
    c32,
    "C",
    cublasCgemm_v2,
    cublasCgemmStridedBatched,
    cublasCgemmBatched,
    cublasCgemv_v2,
    cublasCgemvStridedBatched,
    cublasCgemvBatched,
    cublasCdotc_v2,
    cublasCdotu_v2,
    cublasScnrm2_v2,
    cublasCscal_v2,
    cublasCsscal_v2,
    cublasCaxpy_v2,
    cublasCcopy_v2
);
cublas_impl!(
    c64,
    "Z",
    cublasZgemm_v2,
    cublasZgemmStridedBatched,
    cublasZgemmBatched,
    cublasZgemv_v2,
    cublasZgemvStridedBatched,
    cublasZgemvBatched,
    cublasZdotc_v2,
    cublasZdotu_v2,
    cublasDznrm2_v2,
    cublasZscal_v2,
    cublasZdscal_v2,
    cublasZaxpy_v2,
    cublasZcopy_v2
);

/// Runs one cuBLAS call with the context's handle and turns its status into an error.
fn call<T: Cublas>(
    routine: &str,
    body: impl FnOnce(cublasHandle_t) -> cublasStatus_t,
) -> Result<()> {
    context()?.with_cublas(|h| match body(h) {
        cublasStatus_t::CUBLAS_STATUS_SUCCESS => Ok(()),
        s => Err(Error::Cuda {
            library: "cuBLAS",
            call: format!("cublas{}{routine}", T::PREFIX),
            detail: format!("{s:?}"),
        }),
    })
}

fn op(t: Trans) -> cublasOperation_t {
    match t {
        Trans::N => cublasOperation_t::CUBLAS_OP_N,
        Trans::T => cublasOperation_t::CUBLAS_OP_T,
        Trans::C => cublasOperation_t::CUBLAS_OP_C,
    }
}

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
    let ni = check::blas_int(o, "n", n)?;
    let (ix, iy) = (
        check::blas_inc(o, "incx", incx)?,
        check::blas_inc(o, "incy", incy)?,
    );
    check::non_null(o, "x", x, check::vector_span(o, "x", n, incx)?)?;
    check::non_null(o, "y", y, check::vector_span(o, "y", n, incy)?)?;
    let mut r = T::zero();
    if n == 0 {
        return Ok(r);
    }
    let name = if T::DTYPE.is_complex() {
        if conj {
            "dotc"
        } else {
            "dotu"
        }
    } else {
        "dot"
    };
    // SAFETY: the vectors are valid device memory (caller); `r` is a host result, which
    // cuBLAS writes before returning in host pointer mode.
    call::<T>(name, |h| unsafe {
        if conj {
            T::dotc(h, ni, x, ix, y, iy, &mut r)
        } else {
            T::dotu(h, ni, x, ix, y, iy, &mut r)
        }
    })?;
    Ok(r)
}

impl<T: Cublas> BlasNrm2<T> for GpuDevice {
    unsafe fn nrm2(n: usize, x: *const T, incx: isize) -> Result<T::Real> {
        let ni = check::blas_int("nrm2", "n", n)?;
        let ix = check::blas_inc("nrm2", "incx", incx)?.abs();
        check::non_null("nrm2", "x", x, check::vector_span("nrm2", "x", n, incx)?)?;
        let mut r = <T::Real as Scalar>::zero();
        if n == 0 {
            return Ok(r);
        }
        // SAFETY: as in `dot_any`.
        call::<T>("nrm2", |h| unsafe { T::nrm2(h, ni, x, ix, &mut r) })?;
        Ok(r)
    }
}

impl<T: Cublas> BlasScal<T> for GpuDevice {
    unsafe fn scal(n: usize, alpha: T, x: *mut T, incx: isize) -> Result<()> {
        let ni = check::blas_int("scal", "n", n)?;
        let ix = check::blas_inc("scal", "incx", incx)?.abs();
        check::non_null("scal", "x", x, check::vector_span("scal", "x", n, incx)?)?;
        if n == 0 {
            return Ok(());
        }
        // SAFETY: `x` is valid device memory (caller); `alpha` a host scalar.
        call::<T>("scal", |h| unsafe { T::scal(h, ni, &alpha, x, ix) })
    }

    unsafe fn scal_real(n: usize, alpha: T::Real, x: *mut T, incx: isize) -> Result<()> {
        let ni = check::blas_int("scal_real", "n", n)?;
        let ix = check::blas_inc("scal_real", "incx", incx)?.abs();
        check::non_null(
            "scal_real",
            "x",
            x,
            check::vector_span("scal_real", "x", n, incx)?,
        )?;
        if n == 0 {
            return Ok(());
        }
        // SAFETY: as for `scal`.
        call::<T>("scal", |h| unsafe { T::scal_real(h, ni, &alpha, x, ix) })
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
        let ni = check::blas_int("axpy", "n", n)?;
        let (ix, iy) = (
            check::blas_inc("axpy", "incx", incx)?,
            check::blas_inc("axpy", "incy", incy)?,
        );
        check::non_null("axpy", "x", x, check::vector_span("axpy", "x", n, incx)?)?;
        check::non_null("axpy", "y", y, check::vector_span("axpy", "y", n, incy)?)?;
        if n == 0 {
            return Ok(());
        }
        // SAFETY: the vectors are valid device memory (caller).
        call::<T>("axpy", |h| unsafe { T::axpy(h, ni, &alpha, x, ix, y, iy) })
    }
}

impl<T: Cublas> BlasCopy<T> for GpuDevice {
    unsafe fn copy(n: usize, x: *const T, incx: isize, y: *mut T, incy: isize) -> Result<()> {
        let ni = check::blas_int("copy", "n", n)?;
        let (ix, iy) = (
            check::blas_inc("copy", "incx", incx)?,
            check::blas_inc("copy", "incy", incy)?,
        );
        check::non_null("copy", "x", x, check::vector_span("copy", "x", n, incx)?)?;
        check::non_null("copy", "y", y, check::vector_span("copy", "y", n, incy)?)?;
        if n == 0 {
            return Ok(());
        }
        // SAFETY: the vectors are valid device memory (caller).
        call::<T>("copy", |h| unsafe { T::copy(h, ni, x, ix, y, iy) })
    }
}

/// Checked gemv arguments.
struct Gemv {
    t: cublasOperation_t,
    m: i32,
    n: i32,
    lda: i32,
    incx: i32,
    incy: i32,
    /// Lengths of x and y.
    lx: usize,
    ly: usize,
    /// Elements spanned by a, x, y.
    spans: [usize; 3],
}

fn plan_gemv(
    o: &'static str,
    trans: Trans,
    m: usize,
    n: usize,
    lda: usize,
    incx: isize,
    incy: isize,
) -> Result<Gemv> {
    check::leading_dim(o, "lda", lda, m)?;
    let (ly, lx) = match trans {
        Trans::N => (m, n),
        _ => (n, m),
    };
    Ok(Gemv {
        t: op(trans),
        m: check::blas_int(o, "m", m)?,
        n: check::blas_int(o, "n", n)?,
        lda: check::blas_int(o, "lda", lda)?,
        incx: check::blas_inc(o, "incx", incx)?,
        incy: check::blas_inc(o, "incy", incy)?,
        lx,
        ly,
        spans: [
            check::matrix_span(o, "a", m, n, lda)?,
            check::vector_span(o, "x", lx, incx)?,
            check::vector_span(o, "y", ly, incy)?,
        ],
    })
}

impl Gemv {
    /// With an empty inner dimension cuBLAS (like reference BLAS) returns without
    /// touching y; ctensor gives the mathematical `y := βy` on both devices.
    ///
    /// # Safety
    /// `y` is device memory valid for this plan's span.
    unsafe fn empty_inner<T: Cublas>(&self, beta: T, y: *mut T) -> Result<bool> {
        if self.ly == 0 {
            return Ok(true);
        }
        if self.lx > 0 {
            return Ok(false);
        }
        // SAFETY: forwarded contract.
        unsafe { scale_or_zero(self.ly, beta, y, self.incy) }?;
        Ok(true)
    }
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
        let p = plan_gemv("gemv", trans, m, n, lda, incx, incy)?;
        for (name, ptr, span) in [
            ("a", a, p.spans[0]),
            ("x", x, p.spans[1]),
            ("y", y as *const T, p.spans[2]),
        ] {
            check::non_null("gemv", name, ptr, span)?;
        }
        // SAFETY: the operands are valid device memory for their spans (caller).
        unsafe {
            if p.empty_inner(beta, y)? {
                return Ok(());
            }
            call::<T>("gemv", |h| {
                T::gemv(
                    h, p.t, p.m, p.n, &alpha, a, p.lda, x, p.incx, &beta, y, p.incy,
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
        check::same_len(OP, "a, x, y", &[a.len(), x.len(), y.len()])?;
        let p = plan_gemv(OP, trans, m, n, lda, incx, incy)?;
        for k in 0..a.len() {
            check::non_null(OP, "a[k]", a[k], p.spans[0])?;
            check::non_null(OP, "x[k]", x[k], p.spans[1])?;
            check::non_null(OP, "y[k]", y[k], p.spans[2])?;
        }
        if a.is_empty() || p.ly == 0 {
            return Ok(());
        }
        if p.lx == 0 {
            for &yk in y {
                // SAFETY: each y[k] is valid device memory for its span (caller).
                unsafe { scale_or_zero(p.ly, beta, yk, p.incy)? };
            }
            return Ok(());
        }
        let batch = check::blas_int(OP, "batch", a.len())?;
        let ys: Vec<*const T> = y.iter().map(|&p| p as *const T).collect();
        let (da, dx, dy) = (
            pointer_array(OP, a)?,
            pointer_array(OP, x)?,
            pointer_array(OP, &ys)?,
        );
        // SAFETY: the pointer arrays hold `batch` device pointers, each valid (caller).
        call::<T>("gemvBatched", |h| unsafe {
            T::gemv_batched(
                h,
                p.t,
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
        let p = plan_gemv(OP, trans, m, n, lda, incx, incy)?;
        let spans = batch_spans(OP, p.spans, [stride_a, stride_x, stride_y], batch)?;
        for (name, ptr, span) in [
            ("a", a, spans[0]),
            ("x", x, spans[1]),
            ("y", y as *const T, spans[2]),
        ] {
            check::non_null(OP, name, ptr, span)?;
        }
        if batch == 0 || p.ly == 0 {
            return Ok(());
        }
        if p.lx == 0 {
            for k in 0..batch {
                // SAFETY: entry k of y lies inside its checked span (caller).
                unsafe { scale_or_zero(p.ly, beta, y.add(k * stride_y), p.incy)? };
            }
            return Ok(());
        }
        let b = check::blas_int(OP, "batch", batch)?;
        let (sa, sx, sy) = (stride_a as i64, stride_x as i64, stride_y as i64);
        // SAFETY: the operands are valid device memory for their spans (caller).
        call::<T>("gemvStridedBatched", |h| unsafe {
            T::gemv_strided(
                h, p.t, p.m, p.n, &alpha, a, p.lda, sa, x, p.incx, sx, &beta, y, p.incy, sy, b,
            )
        })
    }
}

/// Elements spanned by `batch` entries at the given strides (0 for no entries).
fn batch_spans(
    op: &'static str,
    spans: [usize; 3],
    strides: [usize; 3],
    batch: usize,
) -> Result<[usize; 3]> {
    let mut out = [0; 3];
    for k in 0..3 {
        if batch > 0 && spans[k] > 0 {
            out[k] = (batch - 1)
                .checked_mul(strides[k])
                .and_then(|v| v.checked_add(spans[k]))
                .filter(|&v| i64::try_from(v).is_ok())
                .ok_or_else(|| Error::Overflow {
                    op,
                    what: format!("{batch} batch entries at stride {} overflow", strides[k]),
                })?;
        }
    }
    Ok(out)
}

/// Checked gemm arguments.
struct Gemm {
    ta: cublasOperation_t,
    tb: cublasOperation_t,
    m: i32,
    n: i32,
    k: i32,
    lda: i32,
    ldb: i32,
    ldc: i32,
    spans: [usize; 3],
}

#[allow(clippy::too_many_arguments)]
fn plan_gemm(
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
    let (ar, ac) = transa.stored(m, k);
    let (br, bc) = transb.stored(k, n);
    check::leading_dim(o, "lda", lda, ar)?;
    check::leading_dim(o, "ldb", ldb, br)?;
    check::leading_dim(o, "ldc", ldc, m)?;
    Ok(Gemm {
        ta: op(transa),
        tb: op(transb),
        m: check::blas_int(o, "m", m)?,
        n: check::blas_int(o, "n", n)?,
        k: check::blas_int(o, "k", k)?,
        lda: check::blas_int(o, "lda", lda)?,
        ldb: check::blas_int(o, "ldb", ldb)?,
        ldc: check::blas_int(o, "ldc", ldc)?,
        spans: [
            check::matrix_span(o, "a", ar, ac, lda)?,
            check::matrix_span(o, "b", br, bc, ldb)?,
            check::matrix_span(o, "c", m, n, ldc)?,
        ],
    })
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
        let p = plan_gemm("gemm", transa, transb, m, n, k, lda, ldb, ldc)?;
        for (name, ptr, span) in [
            ("a", a, p.spans[0]),
            ("b", b, p.spans[1]),
            ("c", c as *const T, p.spans[2]),
        ] {
            check::non_null("gemm", name, ptr, span)?;
        }
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
        check::same_len(OP, "a, b, c", &[a.len(), b.len(), c.len()])?;
        let p = plan_gemm(OP, transa, transb, m, n, k, lda, ldb, ldc)?;
        for j in 0..a.len() {
            check::non_null(OP, "a[k]", a[j], p.spans[0])?;
            check::non_null(OP, "b[k]", b[j], p.spans[1])?;
            check::non_null(OP, "c[k]", c[j], p.spans[2])?;
        }
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
        let p = plan_gemm(OP, transa, transb, m, n, k, lda, ldb, ldc)?;
        let spans = batch_spans(OP, p.spans, [stride_a, stride_b, stride_c], batch)?;
        for (name, ptr, span) in [
            ("a", a, spans[0]),
            ("b", b, spans[1]),
            ("c", c as *const T, spans[2]),
        ] {
            check::non_null(OP, name, ptr, span)?;
        }
        if batch == 0 || m == 0 || n == 0 {
            return Ok(());
        }
        let bt = check::blas_int(OP, "batch", batch)?;
        let (sa, sb, sc) = (stride_a as i64, stride_b as i64, stride_c as i64);
        // SAFETY: the operands are valid device memory for their spans (caller).
        call::<T>("gemmStridedBatched", |h| unsafe {
            T::gemm_strided(
                h, p.ta, p.tb, p.m, p.n, p.k, &alpha, a, p.lda, sa, b, p.ldb, sb, &beta, c, p.ldc,
                sc, bt,
            )
        })
    }
}

impl<T: Scalar> crate::linalg::MatMul<T> for GpuDevice {
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
        macro_rules! via_cublas {
            ($t:ty) => {
                if T::DTYPE == <$t as Scalar>::DTYPE {
                    // SAFETY: `T` is `$t` (same DTYPE, so the same type); forwarded contract.
                    return unsafe {
                        <GpuDevice as BlasGemm<$t>>::gemm(
                            transa,
                            transb,
                            m,
                            n,
                            k,
                            std::mem::transmute_copy::<T, $t>(&alpha),
                            a as *const $t,
                            lda,
                            b as *const $t,
                            ldb,
                            std::mem::transmute_copy::<T, $t>(&beta),
                            c as *mut $t,
                            ldc,
                        )
                    };
                }
            };
        }
        via_cublas!(f32);
        via_cublas!(f64);
        via_cublas!(c32);
        via_cublas!(c64);
        const OP: &str = "matmul";
        let p = plan_gemm(OP, transa, transb, m, n, k, lda, ldb, ldc)?;
        for (name, ptr, span) in [
            ("a", a, p.spans[0]),
            ("b", b, p.spans[1]),
            ("c", c as *const T, p.spans[2]),
        ] {
            check::non_null(OP, name, ptr, span)?;
        }
        if m == 0 || n == 0 {
            return Ok(());
        }
        // The remaining types are real, so `C` means `T`.
        let (ta, tb) = ((transa != Trans::N) as i32, (transb != Trans::N) as i32);
        let (m, n, k) = (m as u64, n as u64, k as u64);
        let (lda, ldb, ldc) = (lda as u64, ldb as u64, ldc as u64);
        let (ap, bp, cp) = (
            super::launch::dev(a),
            super::launch::dev(b),
            super::launch::dev(c),
        );
        let beta_zero = (beta == T::zero()) as i32;
        let kernel = super::source::MATMUL_LOOP.get::<T>()?;
        // SAFETY: the operands are valid device memory for their checked spans (caller).
        unsafe {
            super::launch::launch_1d(
                kernel,
                (m * n) as usize,
                &mut super::launch::args![
                    &ta, &tb, &m, &n, &k, &alpha, &ap, &lda, &bp, &ldb, &beta, &cp, &ldc,
                    &beta_zero
                ],
            )
        }
    }
}
