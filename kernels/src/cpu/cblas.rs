//! The per-type table of the CBLAS routines the host BLAS kernels call ([`Cblas`]),
//! beside `gpu/cublas.rs` for the GPU.

use crate::parallel::blas_call;
use cblas::{Layout, Transpose};
use ctensor_base::{c32, c64, Scalar};

/// The CBLAS entry points of one element type, with the BLAS integer sizes already
/// checked. Implemented for `f32`, `f64`, `c32` and `c64`.
pub trait Cblas: Scalar {
    /// `?dotc` (`?dot` for real types).
    unsafe fn dotc(n: i32, x: &[Self], incx: i32, y: &[Self], incy: i32) -> Self;
    /// `?dotu` (`?dot` for real types).
    unsafe fn dotu(n: i32, x: &[Self], incx: i32, y: &[Self], incy: i32) -> Self;
    /// `?nrm2`.
    unsafe fn nrm2(n: i32, x: &[Self], incx: i32) -> Self::Real;
    /// `?scal`.
    unsafe fn scal(n: i32, alpha: Self, x: &mut [Self], incx: i32);
    /// `?dscal` / `?sscal` with a real factor.
    unsafe fn scal_real(n: i32, alpha: Self::Real, x: &mut [Self], incx: i32);
    /// `?axpy`.
    unsafe fn axpy(n: i32, alpha: Self, x: &[Self], incx: i32, y: &mut [Self], incy: i32);
    /// `?copy`.
    unsafe fn copy(n: i32, x: &[Self], incx: i32, y: &mut [Self], incy: i32);
    /// `?gemv`, column-major.
    #[allow(clippy::too_many_arguments)]
    unsafe fn gemv(
        trans: Transpose,
        m: i32,
        n: i32,
        alpha: Self,
        a: &[Self],
        lda: i32,
        x: &[Self],
        incx: i32,
        beta: Self,
        y: &mut [Self],
        incy: i32,
    );
    /// `?gemm`, column-major.
    #[allow(clippy::too_many_arguments)]
    unsafe fn gemm(
        ta: Transpose,
        tb: Transpose,
        m: i32,
        n: i32,
        k: i32,
        alpha: Self,
        a: &[Self],
        lda: i32,
        b: &[Self],
        ldb: i32,
        beta: Self,
        c: &mut [Self],
        ldc: i32,
    );
}

/// Level-1 calls of at most this many elements run outside the lock of
/// `parallel::blas_call`: OpenBLAS runs them on the caller's thread without its memory
/// pool (it threads level-1 routines only from about 10 000 elements), and the hazards
/// the lock guards against are in its threaded drivers and its `Prescott` `?symv`. The
/// lock's two to four atomic operations would cost 15–30 ns on calls that take 25–70 ns
/// at n = 128 (`make bench`, table "goals").
const LEVEL1_UNLOCKED: i32 = 4096;

/// Runs `f`, a level-1 call on `n` elements, directly when `n` is small
/// ([`LEVEL1_UNLOCKED`]), else under `parallel::blas_call`.
#[inline(always)]
fn level1<T: Scalar, R>(n: i32, f: impl FnOnce() -> R) -> R {
    if n <= LEVEL1_UNLOCKED {
        f()
    } else {
        blas_call::<T, R>(f)
    }
}

macro_rules! impl_cblas_common {
    ($scal:ident, $axpy:ident, $copy:ident, $gemv:ident, $gemm:ident) => {
        #[inline]
        unsafe fn scal(n: i32, alpha: Self, x: &mut [Self], incx: i32) {
            // SAFETY: sizes and slice lengths were checked by the caller.
            level1::<Self, _>(n, || unsafe { cblas::$scal(n, alpha, x, incx) })
        }
        #[inline]
        unsafe fn axpy(n: i32, alpha: Self, x: &[Self], incx: i32, y: &mut [Self], incy: i32) {
            // SAFETY: sizes and slice lengths were checked by the caller.
            level1::<Self, _>(n, || unsafe { cblas::$axpy(n, alpha, x, incx, y, incy) })
        }
        #[inline]
        unsafe fn copy(n: i32, x: &[Self], incx: i32, y: &mut [Self], incy: i32) {
            // SAFETY: sizes and slice lengths were checked by the caller.
            level1::<Self, _>(n, || unsafe { cblas::$copy(n, x, incx, y, incy) })
        }
        #[inline]
        unsafe fn gemv(
            trans: Transpose,
            m: i32,
            n: i32,
            alpha: Self,
            a: &[Self],
            lda: i32,
            x: &[Self],
            incx: i32,
            beta: Self,
            y: &mut [Self],
            incy: i32,
        ) {
            // SAFETY: sizes, leading dimension and slice lengths were checked by the caller.
            blas_call::<Self, _>(|| unsafe {
                cblas::$gemv(
                    Layout::ColumnMajor,
                    trans,
                    m,
                    n,
                    alpha,
                    a,
                    lda,
                    x,
                    incx,
                    beta,
                    y,
                    incy,
                )
            })
        }
        #[inline]
        unsafe fn gemm(
            ta: Transpose,
            tb: Transpose,
            m: i32,
            n: i32,
            k: i32,
            alpha: Self,
            a: &[Self],
            lda: i32,
            b: &[Self],
            ldb: i32,
            beta: Self,
            c: &mut [Self],
            ldc: i32,
        ) {
            // SAFETY: sizes, leading dimensions and slice lengths were checked by the caller.
            blas_call::<Self, _>(|| unsafe {
                cblas::$gemm(
                    Layout::ColumnMajor,
                    ta,
                    tb,
                    m,
                    n,
                    k,
                    alpha,
                    a,
                    lda,
                    b,
                    ldb,
                    beta,
                    c,
                    ldc,
                )
            })
        }
    };
}

macro_rules! impl_cblas_real {
    ($t:ty, $dot:ident, $nrm2:ident, $scal:ident, $axpy:ident, $copy:ident, $gemv:ident, $gemm:ident) => {
        impl Cblas for $t {
            #[inline]
            unsafe fn dotc(n: i32, x: &[Self], incx: i32, y: &[Self], incy: i32) -> Self {
                // SAFETY: sizes and slice lengths were checked by the caller.
                level1::<Self, _>(n, || unsafe { cblas::$dot(n, x, incx, y, incy) })
            }
            #[inline]
            unsafe fn dotu(n: i32, x: &[Self], incx: i32, y: &[Self], incy: i32) -> Self {
                // SAFETY: as for `dotc`.
                level1::<Self, _>(n, || unsafe { cblas::$dot(n, x, incx, y, incy) })
            }
            #[inline]
            unsafe fn nrm2(n: i32, x: &[Self], incx: i32) -> Self {
                // SAFETY: sizes and slice lengths were checked by the caller.
                level1::<Self, _>(n, || unsafe { cblas::$nrm2(n, x, incx) })
            }
            #[inline]
            unsafe fn scal_real(n: i32, alpha: Self, x: &mut [Self], incx: i32) {
                // SAFETY: sizes and slice lengths were checked by the caller.
                level1::<Self, _>(n, || unsafe { cblas::$scal(n, alpha, x, incx) })
            }
            impl_cblas_common!($scal, $axpy, $copy, $gemv, $gemm);
        }
    };
}

/// A complex number that a CBLAS `*_sub` routine has just stored, read back part by part.
///
/// The routines store the real and the imaginary part separately; one load of the whole
/// number right after (what `out[0]` compiles to) cannot be forwarded from two smaller
/// stores and waits for them to reach the cache, about 4 ns on a 40 ns `zdotc` of 128
/// elements (`make bench`, table "goals"). Two loads of the parts are forwarded.
#[inline(always)]
fn read_parts<R: Copy>(z: &ctensor_base::Complex<R>) -> ctensor_base::Complex<R> {
    // SAFETY: both parts are initialised values behind a valid reference; volatile only
    // keeps the compiler from merging the two loads into one.
    unsafe {
        ctensor_base::Complex::new(
            std::ptr::read_volatile(&z.re),
            std::ptr::read_volatile(&z.im),
        )
    }
}

macro_rules! impl_cblas_complex {
    ($t:ty, $dotc:ident, $dotu:ident, $nrm2:ident, $rscal:ident,
     $scal:ident, $axpy:ident, $copy:ident, $gemv:ident, $gemm:ident) => {
        impl Cblas for $t {
            #[inline]
            unsafe fn dotc(n: i32, x: &[Self], incx: i32, y: &[Self], incy: i32) -> Self {
                let mut out = [<$t>::default()];
                // SAFETY: sizes and slice lengths were checked by the caller.
                level1::<Self, _>(n, || unsafe { cblas::$dotc(n, x, incx, y, incy, &mut out) });
                read_parts(&out[0])
            }
            #[inline]
            unsafe fn dotu(n: i32, x: &[Self], incx: i32, y: &[Self], incy: i32) -> Self {
                let mut out = [<$t>::default()];
                // SAFETY: sizes and slice lengths were checked by the caller.
                level1::<Self, _>(n, || unsafe { cblas::$dotu(n, x, incx, y, incy, &mut out) });
                read_parts(&out[0])
            }
            #[inline]
            unsafe fn nrm2(n: i32, x: &[Self], incx: i32) -> Self::Real {
                // SAFETY: sizes and slice lengths were checked by the caller.
                level1::<Self, _>(n, || unsafe { cblas::$nrm2(n, x, incx) })
            }
            #[inline]
            unsafe fn scal_real(n: i32, alpha: Self::Real, x: &mut [Self], incx: i32) {
                // SAFETY: sizes and slice lengths were checked by the caller.
                level1::<Self, _>(n, || unsafe { cblas::$rscal(n, alpha, x, incx) })
            }
            impl_cblas_common!($scal, $axpy, $copy, $gemv, $gemm);
        }
    };
}

impl_cblas_real!(f32, sdot, snrm2, sscal, saxpy, scopy, sgemv, sgemm);
impl_cblas_real!(f64, ddot, dnrm2, dscal, daxpy, dcopy, dgemv, dgemm);
impl_cblas_complex!(c32, cdotc_sub, cdotu_sub, scnrm2, csscal, cscal, caxpy, ccopy, cgemv, cgemm);
impl_cblas_complex!(c64, zdotc_sub, zdotu_sub, dznrm2, zdscal, zscal, zaxpy, zcopy, zgemv, zgemm);
