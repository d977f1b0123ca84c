//! The per-type table of cuBLAS entry points (cudarc's `sys` bindings, so the complex
//! routines are reachable too), and the one place a cuBLAS status becomes an error.

use ctensor_base::gpu::context;
use ctensor_base::{c32, c64, Error, Result, Scalar};
use cudarc::cublas::sys::{self as cb, cublasHandle_t, cublasOperation_t, cublasStatus_t};

use crate::blas::Trans;

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
                        h,
                        ta,
                        tb,
                        m,
                        n,
                        k,
                        Host::of(alpha).ptr() as _,
                        a as _,
                        lda,
                        b as _,
                        ldb,
                        Host::of(beta).ptr() as _,
                        c as _,
                        ldc,
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
                        h,
                        ta,
                        tb,
                        m,
                        n,
                        k,
                        Host::of(alpha).ptr() as _,
                        a as _,
                        lda,
                        sa,
                        b as _,
                        ldb,
                        sb,
                        Host::of(beta).ptr() as _,
                        c as _,
                        ldc,
                        sc,
                        batch,
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
                        h,
                        ta,
                        tb,
                        m,
                        n,
                        k,
                        Host::of(alpha).ptr() as _,
                        a as _,
                        lda,
                        b as _,
                        ldb,
                        Host::of(beta).ptr() as _,
                        c as _,
                        ldc,
                        batch,
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
                        h,
                        t,
                        m,
                        n,
                        Host::of(alpha).ptr() as _,
                        a as _,
                        lda,
                        x as _,
                        incx,
                        Host::of(beta).ptr() as _,
                        y as _,
                        incy,
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
                        h,
                        t,
                        m,
                        n,
                        Host::of(alpha).ptr() as _,
                        a as _,
                        lda,
                        sa,
                        x as _,
                        incx,
                        sx,
                        Host::of(beta).ptr() as _,
                        y as _,
                        incy,
                        sy,
                        batch,
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
                        h,
                        t,
                        m,
                        n,
                        Host::of(alpha).ptr() as _,
                        a as _,
                        lda,
                        x as _,
                        incx,
                        Host::of(beta).ptr() as _,
                        y as _,
                        incy,
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
                unsafe {
                    let mut out = Host(r.read());
                    let s = cb::$dotc(
                        h,
                        n,
                        x as _,
                        incx,
                        y as _,
                        incy,
                        &mut out.0 as *mut Self as _,
                    );
                    r.write(out.0);
                    s
                }
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
                unsafe {
                    let mut out = Host(r.read());
                    let s = cb::$dotu(
                        h,
                        n,
                        x as _,
                        incx,
                        y as _,
                        incy,
                        &mut out.0 as *mut Self as _,
                    );
                    r.write(out.0);
                    s
                }
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
                unsafe { cb::$scal(h, n, Host::of(alpha).ptr() as _, x as _, incx) }
            }
            unsafe fn scal_real(
                h: cublasHandle_t,
                n: i32,
                alpha: *const Self::Real,
                x: *mut Self,
                incx: i32,
            ) -> cublasStatus_t {
                // SAFETY: as above.
                unsafe { cb::$scalr(h, n, Host::of(alpha).ptr() as _, x as _, incx) }
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
                unsafe { cb::$axpy(h, n, Host::of(alpha).ptr() as _, x as _, incx, y as _, incy) }
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
pub(crate) fn call<T: Cublas>(
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

/// A host scalar copied to 16-byte alignment for cuBLAS. CUDA's `cuDoubleComplex` is
/// `double2`, aligned to 16 bytes, and cuBLAS's host code loads complex host scalars with
/// aligned vector loads; `c64` in Rust is aligned to 8 only. On an H100 (cuBLAS 13.1)
/// `cublasZaxpy_v2` segfaulted in the host code on an `alpha` at an address ≡ 8 mod 16.
#[repr(C, align(16))]
pub(crate) struct Host<T>(T);

impl<T> Host<T> {
    /// A copy of `*p`.
    ///
    /// # Safety
    /// `p` is valid for a read of `T`.
    pub(crate) unsafe fn of(p: *const T) -> Host<T> {
        // SAFETY: the caller's promise.
        Host(unsafe { p.read() })
    }

    pub(crate) fn ptr(&self) -> *const T {
        &self.0
    }
}

/// cuBLAS's flag for `t`.
pub(crate) fn op(t: Trans) -> cublasOperation_t {
    match t {
        Trans::N => cublasOperation_t::CUBLAS_OP_N,
        Trans::T => cublasOperation_t::CUBLAS_OP_T,
        Trans::C => cublasOperation_t::CUBLAS_OP_C,
    }
}
