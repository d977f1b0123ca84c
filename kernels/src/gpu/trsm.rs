//! [`BlasTrsm`] on the GPU: cuBLAS `?trsm`, the host `alpha` passed 16-byte aligned.

use ctensor_base::{c32, c64, GpuDevice, Result};
use cudarc::cublas::sys::{
    self as cb, cublasDiagType_t as DiagT, cublasFillMode_t as Fill, cublasHandle_t as H,
    cublasOperation_t as Op, cublasSideMode_t as SideT, cublasStatus_t as Status,
};

use super::cublas::{call, op, Cublas, Host};
use crate::blas::{plan_trsm, BlasTrsm, Side, Trans};
use crate::lapack::{Diag, Uplo};

/// cuBLAS `?trsm` of one element type.
#[allow(clippy::too_many_arguments, missing_docs)]
pub trait CublasTrsm: Cublas {
    unsafe fn trsm(
        h: H,
        side: SideT,
        uplo: Fill,
        trans: Op,
        diag: DiagT,
        m: i32,
        n: i32,
        alpha: *const Self,
        a: *const Self,
        lda: i32,
        b: *mut Self,
        ldb: i32,
    ) -> Status;
}

macro_rules! impl_trsm {
    ($($t:ty => $f:ident),*) => {$(
        impl CublasTrsm for $t {
            unsafe fn trsm(
                h: H,
                side: SideT,
                uplo: Fill,
                trans: Op,
                diag: DiagT,
                m: i32,
                n: i32,
                alpha: *const Self,
                a: *const Self,
                lda: i32,
                b: *mut Self,
                ldb: i32,
            ) -> Status {
                // SAFETY: forwarded; `Self` has the layout of the cuBLAS type, and the
                // host scalar is copied to 16-byte alignment.
                unsafe {
                    cb::$f(h, side, uplo, trans, diag, m, n, Host::of(alpha).ptr() as _, a as _, lda, b as _, ldb)
                }
            }
        }
    )*};
}
impl_trsm!(f32 => cublasStrsm_v2, f64 => cublasDtrsm_v2, c32 => cublasCtrsm_v2, c64 => cublasZtrsm_v2);

impl<T: CublasTrsm> BlasTrsm<T> for GpuDevice {
    unsafe fn trsm(
        side: Side,
        uplo: Uplo,
        trans: Trans,
        diag: Diag,
        m: usize,
        n: usize,
        alpha: T,
        a: *const T,
        lda: usize,
        b: *mut T,
        ldb: usize,
    ) -> Result<()> {
        let Some(([m32, n32, lda32, ldb32], _, _)) = plan_trsm(side, m, n, a, lda, b, ldb)? else {
            return Ok(());
        };
        let side = match side {
            Side::Left => SideT::CUBLAS_SIDE_LEFT,
            Side::Right => SideT::CUBLAS_SIDE_RIGHT,
        };
        let fill = match uplo {
            Uplo::Upper => Fill::CUBLAS_FILL_MODE_UPPER,
            Uplo::Lower => Fill::CUBLAS_FILL_MODE_LOWER,
        };
        // For real types `C` is `T`, as in BLAS.
        let t = match trans {
            Trans::C if !T::DTYPE.is_complex() => op(Trans::T),
            t => op(t),
        };
        let d = match diag {
            Diag::Unit => DiagT::CUBLAS_DIAG_UNIT,
            Diag::NonUnit => DiagT::CUBLAS_DIAG_NON_UNIT,
        };
        // SAFETY: `a` and `b` are device memory of the checked spans (caller).
        call::<T>("trsm", |h| unsafe {
            T::trsm(h, side, fill, t, d, m32, n32, &alpha, a, lda32, b, ldb32)
        })
    }
}
