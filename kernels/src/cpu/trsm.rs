//! [`BlasTrsm`] on the host: CBLAS `?trsm` on OpenBLAS, column-major.

use cblas::{Diagonal, Layout, Part, Transpose};
use ctensor_base::{c32, c64, CpuDevice, Result, Scalar};

use super::{slice, slice_mut};
use crate::blas::{plan_trsm, BlasTrsm, Side, Trans};
use crate::lapack::{Diag, Uplo};
use crate::parallel::blas_call;

/// CBLAS `?trsm` of one element type, arguments checked.
#[allow(clippy::too_many_arguments, missing_docs)]
pub trait CblasTrsm: Scalar {
    unsafe fn trsm(
        side: cblas::Side,
        uplo: Part,
        trans: Transpose,
        diag: Diagonal,
        m: i32,
        n: i32,
        alpha: Self,
        a: &[Self],
        lda: i32,
        b: &mut [Self],
        ldb: i32,
    );
}

macro_rules! impl_trsm {
    ($($t:ty => $f:ident),*) => {$(
        impl CblasTrsm for $t {
            unsafe fn trsm(
                side: cblas::Side,
                uplo: Part,
                trans: Transpose,
                diag: Diagonal,
                m: i32,
                n: i32,
                alpha: Self,
                a: &[Self],
                lda: i32,
                b: &mut [Self],
                ldb: i32,
            ) {
                // SAFETY: arguments checked by the caller.
                blas_call::<Self, _>(|| unsafe { cblas::$f(Layout::ColumnMajor, side, uplo, trans, diag, m, n, alpha, a, lda, b, ldb) })
            }
        }
    )*};
}
impl_trsm!(f32 => strsm, f64 => dtrsm, c32 => ctrsm, c64 => ztrsm);

impl<T: CblasTrsm> BlasTrsm<T> for CpuDevice {
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
        let Some(([m32, n32, lda32, ldb32], sa, sb)) = plan_trsm(side, m, n, a, lda, b, ldb)?
        else {
            return Ok(());
        };
        // SAFETY: the caller vouches for the spans checked above.
        let (a, b) = unsafe { (slice(a, sa), slice_mut(b, sb)) };
        let side = match side {
            Side::Left => cblas::Side::Left,
            Side::Right => cblas::Side::Right,
        };
        let uplo = match uplo {
            Uplo::Upper => Part::Upper,
            Uplo::Lower => Part::Lower,
        };
        // For real types `C` is `T`, as in BLAS.
        let trans = match trans {
            Trans::N => Transpose::None,
            Trans::T => Transpose::Ordinary,
            Trans::C if T::DTYPE.is_complex() => Transpose::Conjugate,
            Trans::C => Transpose::Ordinary,
        };
        let diag = match diag {
            Diag::Unit => Diagonal::Unit,
            Diag::NonUnit => Diagonal::Generic,
        };
        // SAFETY: sizes checked; the slices hold what BLAS reads and writes.
        unsafe { T::trsm(side, uplo, trans, diag, m32, n32, alpha, a, lda32, b, ldb32) };
        Ok(())
    }
}
