//! Matrix product for every element type ([`MatMul`]): BLAS `gemm` for the four BLAS
//! types, a plain kernel for the others.

use ctensor_base::{Device, Result, Scalar};

/// Matrix product for every element type (BLAS covers only f32/f64/c32/c64).
pub trait MatMul<T: Scalar>: Device {
    /// `C := alpha · op(A) · op(B) + beta · C`, column-major, with the arguments and the
    /// checks of [`BlasGemm::gemm`](crate::blas::BlasGemm::gemm). The four BLAS types
    /// are handed to BLAS; the others run a plain loop in which half types accumulate in
    /// `f32` and integers wrap.
    ///
    /// # Safety
    /// As for [`BlasGemm::gemm`](crate::blas::BlasGemm::gemm).
    #[allow(clippy::too_many_arguments)]
    unsafe fn matmul(
        transa: crate::blas::Trans,
        transb: crate::blas::Trans,
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
    ) -> Result<()>;
}

/// In a `MatMul<T>` impl for device `$D`: when `T` is one of the four BLAS types, returns
/// the device's `BlasGemm` on the same arguments. `T` is exactly that type when the data
/// types agree, because `Scalar` is sealed and each type has its own tag.
macro_rules! matmul_via_gemm {
    ($D:ty, $T:ty, $ta:expr, $tb:expr, $m:expr, $n:expr, $k:expr, $alpha:expr, $a:expr, $lda:expr,
     $b:expr, $ldb:expr, $beta:expr, $c:expr, $ldc:expr) => {
        macro_rules! via_gemm {
            ($t:ty) => {
                if <$T as ctensor_base::Scalar>::DTYPE == <$t as ctensor_base::Scalar>::DTYPE {
                    // SAFETY: `$T` and `$t` are the same type (see above), so the
                    // reinterpretations are identities; the caller's contract is gemm's.
                    return unsafe {
                        <$D as $crate::blas::BlasGemm<$t>>::gemm(
                            $ta,
                            $tb,
                            $m,
                            $n,
                            $k,
                            std::mem::transmute_copy::<$T, $t>(&$alpha),
                            $a as *const $t,
                            $lda,
                            $b as *const $t,
                            $ldb,
                            std::mem::transmute_copy::<$T, $t>(&$beta),
                            $c as *mut $t,
                            $ldc,
                        )
                    };
                }
            };
        }
        via_gemm!(f32);
        via_gemm!(f64);
        via_gemm!(ctensor_base::c32);
        via_gemm!(ctensor_base::c64);
    };
}
pub(crate) use matmul_via_gemm;
