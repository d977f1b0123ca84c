//! Element-wise and layout kernels on raw memory, for all eight element types.
//!
//! Every one is correct when the output is the same memory as an input (in place): each
//! pointer argument is either identical to or disjoint from each other one. Arithmetic
//! follows [`Arith`](crate::arith::Arith): `f16`/`bf16` compute in `f32`, integers wrap,
//! integer division by zero is an error. Large arrays are split across threads above
//! [`parallel_threshold`](crate::parallel::parallel_threshold).

use ctensor_base::{Device, Result, Scalar};

/// Complex conjugation (a copy for real types).
pub trait Conj<T: Scalar>: Device {
    /// `dst[i] = conj(src[i])` for `i < n`; `dst == src` (in place) is allowed.
    ///
    /// # Safety
    /// `src` is valid for reads and `dst` for writes of `n` elements on this device; the
    /// two ranges are either identical or disjoint.
    unsafe fn conj(dst: *mut T, src: *const T, n: usize) -> Result<()>;
}

/// Linear combination.
pub trait Add<T: Scalar>: Device {
    /// `z[i] = alpha · x[i] + beta · y[i]` for `i < n`.
    ///
    /// # Safety
    /// `x`, `y` are valid for reads and `z` for writes of `n` elements; each pair of
    /// ranges is identical or disjoint.
    unsafe fn add(n: usize, alpha: T, x: *const T, beta: T, y: *const T, z: *mut T) -> Result<()>;
}

/// Scaling and the element-wise (Hadamard) product.
pub trait Mul<T: Scalar>: Device {
    /// `y[i] = alpha · x[i]` for `i < n`.
    ///
    /// # Safety
    /// `x` is valid for reads and `y` for writes of `n` elements; identical or disjoint.
    unsafe fn scale(n: usize, alpha: T, x: *const T, y: *mut T) -> Result<()>;

    /// `z[i] = alpha · x[i] · y[i]` for `i < n`.
    ///
    /// # Safety
    /// `x`, `y` are valid for reads and `z` for writes of `n` elements; each pair of
    /// ranges is identical or disjoint.
    unsafe fn mul(n: usize, alpha: T, x: *const T, y: *const T, z: *mut T) -> Result<()>;
}

/// Element-wise division.
pub trait Div<T: Scalar>: Device {
    /// `z[i] = alpha · x[i] / y[i]` for `i < n`. For integer types a zero in `y` is an
    /// error reported before anything is written; floats follow IEEE (±inf, NaN).
    ///
    /// # Safety
    /// `x`, `y` are valid for reads and `z` for writes of `n` elements; each pair of
    /// ranges is identical or disjoint.
    unsafe fn div(n: usize, alpha: T, x: *const T, y: *const T, z: *mut T) -> Result<()>;
}

/// Fused multiply–add of arrays.
pub trait Fma<T: Scalar>: Device {
    /// `out[i] = alpha · x[i] · y[i] + beta · z[i]` for `i < n`.
    ///
    /// # Safety
    /// `x`, `y`, `z` are valid for reads and `out` for writes of `n` elements; each pair
    /// of ranges is identical or disjoint.
    #[allow(clippy::too_many_arguments)]
    unsafe fn fma(
        n: usize,
        alpha: T,
        x: *const T,
        y: *const T,
        beta: T,
        z: *const T,
        out: *mut T,
    ) -> Result<()>;
}

/// Permutation of the axes of a dense row-major array (a transpose for rank 2).
pub trait Transpose<T: Scalar>: Device {
    /// Writes the row-major array of shape `[shape[perm[0]], shape[perm[1]], ...]` whose
    /// element `[i_0, i_1, ...]` is `src[j]` with `j[perm[d]] = i_d`, conjugated when
    /// `conj`. `perm` must be a permutation of `0..shape.len()`. Cache-blocked.
    ///
    /// # Safety
    /// `src` is valid for reads and `dst` for writes of `shape.iter().product()`
    /// elements; the two are identical (in place, through a temporary) or disjoint.
    unsafe fn transpose(
        shape: &[usize],
        perm: &[usize],
        src: *const T,
        dst: *mut T,
        conj: bool,
    ) -> Result<()>;
}

/// Sub-sampling of a dense row-major array with a step per axis.
pub trait Stride<T: Scalar>: Device {
    /// Writes the row-major array of shape `[ceil(shape[d] / steps[d])]` whose element
    /// `idx` is `src[idx · steps]` (every step ≥ 1).
    ///
    /// # Safety
    /// `src` is valid for reads of `shape.iter().product()` elements and `dst` for
    /// writes of the output's; the two start at the same address (in place) or are
    /// disjoint.
    unsafe fn stride(shape: &[usize], steps: &[usize], src: *const T, dst: *mut T) -> Result<()>;
}

/// The inverse of [`Stride`]: spreads an array onto a grid with a step per axis.
pub trait Inflate<T: Scalar>: Device {
    /// Writes the row-major array of shape `dst_shape` whose element `idx · steps` is
    /// `src[idx]` and every other element zero. Each `dst_shape[d]` must be at least
    /// `(shape[d] - 1) · steps[d] + 1` (every step ≥ 1).
    ///
    /// # Safety
    /// `src` is valid for reads of `shape.iter().product()` elements and `dst` for
    /// writes of `dst_shape.iter().product()`; the two start at the same address (in
    /// place) or are disjoint.
    unsafe fn inflate(
        shape: &[usize],
        steps: &[usize],
        src: *const T,
        dst_shape: &[usize],
        dst: *mut T,
    ) -> Result<()>;
}

/// Sums of contiguous rows.
pub trait Reduce<T: Scalar>: Device {
    /// `dst[r] = Σ_{j < inner} src[r · inner + j]` for `r < rows` (zero when
    /// `inner == 0`); `f16`/`bf16` accumulate in `f32`.
    ///
    /// # Safety
    /// `src` is valid for reads of `rows · inner` elements and `dst` for writes of
    /// `rows`; `dst` starts at `src` (in place) or is disjoint from it.
    unsafe fn reduce(rows: usize, inner: usize, src: *const T, dst: *mut T) -> Result<()>;
}

/// An element-wise function of one argument, see [`Unary`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-x` (wrapping for integers).
    Neg,
    /// `sqrt(x)` (principal branch for complex; NaN for negative reals); not for integers.
    Sqrt,
    /// `exp(x)`; not for integers.
    Exp,
}

/// Element-wise functions of one argument.
pub trait Unary<T: Scalar>: Device {
    /// `y[i] = op(x[i])` for `i < n`. An operation that is not defined for `T` (square
    /// root or exponential of an integer) is `Error::UnsupportedDType`.
    ///
    /// # Safety
    /// `x` is valid for reads and `y` for writes of `n` elements; identical or disjoint.
    unsafe fn unary(op: UnaryOp, n: usize, x: *const T, y: *mut T) -> Result<()>;
}

/// Modulus.
pub trait Abs<T: Scalar>: Device {
    /// `y[i] = |x[i]|` as the real type (`f64` for `c64`).
    ///
    /// # Safety
    /// `x` is valid for reads of `n` elements and `y` for writes of `n` real values; they
    /// do not overlap (unless `T` is real and they are identical).
    unsafe fn abs(n: usize, x: *const T, y: *mut T::Real) -> Result<()>;
}

/// Largest or smallest element of contiguous rows.
pub trait ReduceExtreme<T: Scalar>: Device {
    /// `dst[r] = max_j src[r · inner + j]` (`min` when `!max`) for `r < rows`. NaN wins
    /// (NumPy's `max`). Complex types have no order (`Error::UnsupportedDType`), and an
    /// empty row (`inner == 0` with `rows > 0`) has no extreme (`Error::InvalidArgument`).
    ///
    /// # Safety
    /// As for [`Reduce::reduce`].
    unsafe fn reduce_extreme(
        max: bool,
        rows: usize,
        inner: usize,
        src: *const T,
        dst: *mut T,
    ) -> Result<()>;
}

/// The position of the extreme of each row.
pub trait ArgExtreme<T: Scalar>: Device {
    /// `dst[r] = j`, the index in `0..inner` of the largest `src[r · inner + j]` (the
    /// smallest when `!max`) for `r < rows`: the first of equal values, and the first NaN
    /// when the row has one (NumPy's `argmax`). Complex types have no order
    /// (`Error::UnsupportedDType`); an empty row (`inner == 0` with `rows > 0`) has no
    /// extreme (`Error::InvalidArgument`).
    ///
    /// # Safety
    /// `src` is valid for reads of `rows · inner` elements and `dst` for writes of `rows`
    /// `i64`s.
    unsafe fn arg_extreme(
        max: bool,
        rows: usize,
        inner: usize,
        src: *const T,
        dst: *mut i64,
    ) -> Result<()>;
}

/// Running sums along rows.
pub trait CumSum<T: Scalar>: Device {
    /// `dst[r · inner + j] = Σ_{k ≤ j} src[r · inner + k]` for `r < rows`, `j < inner`;
    /// `f16`/`bf16` accumulate in `f32` (each output rounded once), integers wrap. The
    /// host adds in order; the GPU splits a row into 256 chunks (the same order, hence
    /// the same result, for rows of at most 256).
    ///
    /// # Safety
    /// `src` is valid for reads and `dst` for writes of `rows · inner` elements; they are
    /// identical (in place) or disjoint.
    unsafe fn cumsum(rows: usize, inner: usize, src: *const T, dst: *mut T) -> Result<()>;
}

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

/// Element-wise equality with a scalar.
pub trait EqScalar<T: Scalar>: Device {
    /// `y[i] = 1` where `x[i] == s` (IEEE equality, so NaN matches nothing) and `0`
    /// elsewhere, in `T`.
    ///
    /// # Safety
    /// `x` is valid for reads and `y` for writes of `n` elements; identical or disjoint.
    unsafe fn eq_scalar(n: usize, x: *const T, s: T, y: *mut T) -> Result<()>;
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
