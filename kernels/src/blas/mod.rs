//! BLAS kernels: one trait per routine, with the reference BLAS conventions.
//!
//! Matrices are column-major with a leading dimension (`lda >= max(1, rows)`), vectors
//! have an increment (`inc != 0`; a negative increment walks the vector backwards from
//! its last element, and the pointer is then the lowest address, as in reference BLAS),
//! `trans` is one of N, T, C ([`Trans`]), and scalars are host values. Complex
//! [`BlasDot::dot`] is the conjugated `dotc`; [`BlasDot::dotu`] does not conjugate.
//!
//! Two deliberate departures from reference BLAS, both toward the mathematical result:
//! `nrm2` and `scal` with a negative increment act on the same elements as with `|inc|`
//! (reference BLAS returns 0 / does nothing), and `gemv` with an empty inner dimension
//! sets `y := beta · y` (reference BLAS returns before scaling).
//!
//! Every argument that can be checked is checked before the backend is called; sizes
//! are `usize` and batch strides 64-bit, and a size the backend cannot represent (more
//! than `i32::MAX` for an LP64 BLAS) is an [`Error::Overflow`](ctensor_base::Error),
//! never a silent truncation.
//!
//! Implemented for `f32`, `f64`, `c32` and `c64`.

pub(crate) mod args;
pub mod matmul;

pub use matmul::MatMul;

use ctensor_base::{Device, Result, Scalar};

pub use crate::flags::{Side, Trans};

/// Dot products.
pub trait BlasDot<T: Scalar>: Device {
    /// `Σ conj(x[i]) · y[i]` (`?dotc`; `?dot` for real types).
    ///
    /// # Safety
    /// `x` is valid for reads of `1 + (n-1)|incx|` elements and `y` of `1 + (n-1)|incy|`
    /// elements on this device (nothing when `n == 0`).
    unsafe fn dot(n: usize, x: *const T, incx: isize, y: *const T, incy: isize) -> Result<T>;

    /// `Σ x[i] · y[i]`, unconjugated (`?dotu`; the same as [`dot`](Self::dot) for real types).
    ///
    /// # Safety
    /// As for [`dot`](Self::dot).
    unsafe fn dotu(n: usize, x: *const T, incx: isize, y: *const T, incy: isize) -> Result<T>;
}

/// Euclidean norm.
pub trait BlasNrm2<T: Scalar>: Device {
    /// `sqrt(Σ |x[i]|²)`, computed without overflow as `?nrm2` does.
    ///
    /// # Safety
    /// `x` is valid for reads of `1 + (n-1)|incx|` elements (nothing when `n == 0`).
    unsafe fn nrm2(n: usize, x: *const T, incx: isize) -> Result<T::Real>;
}

/// Scaling in place.
pub trait BlasScal<T: Scalar>: Device {
    /// `x := alpha · x` (`?scal`).
    ///
    /// # Safety
    /// `x` is valid for reads and writes of `1 + (n-1)|incx|` elements.
    unsafe fn scal(n: usize, alpha: T, x: *mut T, incx: isize) -> Result<()>;

    /// `x := alpha · x` with a real `alpha` (`zdscal`, `csscal`; `?scal` for real types).
    ///
    /// # Safety
    /// As for [`scal`](Self::scal).
    unsafe fn scal_real(n: usize, alpha: T::Real, x: *mut T, incx: isize) -> Result<()>;
}

/// `y := alpha · x + y`.
pub trait BlasAxpy<T: Scalar>: Device {
    /// `y := alpha · x + y` (`?axpy`).
    ///
    /// # Safety
    /// `x` is valid for reads of `1 + (n-1)|incx|` elements, `y` for reads and writes of
    /// `1 + (n-1)|incy|`, and the two do not overlap.
    unsafe fn axpy(
        n: usize,
        alpha: T,
        x: *const T,
        incx: isize,
        y: *mut T,
        incy: isize,
    ) -> Result<()>;
}

/// `y := x`.
pub trait BlasCopy<T: Scalar>: Device {
    /// `y := x` element by element with increments (`?copy`).
    ///
    /// # Safety
    /// `x` is valid for reads of `1 + (n-1)|incx|` elements, `y` for writes of
    /// `1 + (n-1)|incy|`, and the two do not overlap.
    unsafe fn copy(n: usize, x: *const T, incx: isize, y: *mut T, incy: isize) -> Result<()>;
}

/// Matrix–vector product.
pub trait BlasGemv<T: Scalar>: Device {
    /// `y := alpha · op(A) · x + beta · y`, `A` stored `m × n` column-major (`?gemv`).
    /// When `beta` is zero `y` is not read (NaN in `y` does not propagate).
    ///
    /// # Safety
    /// `a` is valid for `lda · (n-1) + m` elements, `x` for the length of `op(A)`'s
    /// columns (`n` for `N`, `m` otherwise) with `incx`, `y` for its rows with `incy`;
    /// `y` does not overlap `a` or `x`.
    #[allow(clippy::too_many_arguments)]
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
    ) -> Result<()>;
}

/// A batch of matrix–vector products given by arrays of pointers.
pub trait BlasGemvBatched<T: Scalar>: Device {
    /// `y[b] := alpha · op(A[b]) · x[b] + beta · y[b]` for every `b`; the three pointer
    /// arrays must have the same length.
    ///
    /// # Safety
    /// Every `(a[b], x[b], y[b])` satisfies the contract of [`BlasGemv::gemv`], and no
    /// `y[b]` overlaps another `y`, any `a` or any `x`.
    #[allow(clippy::too_many_arguments)]
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
    ) -> Result<()>;
}

/// A batch of matrix–vector products laid out with constant strides.
pub trait BlasGemvBatchedStrided<T: Scalar>: Device {
    /// `y_b := alpha · op(A_b) · x_b + beta · y_b` for `b < batch`, where
    /// `A_b = a + b·stride_a`, `x_b = x + b·stride_x`, `y_b = y + b·stride_y` (in elements).
    ///
    /// # Safety
    /// Every `(A_b, x_b, y_b)` satisfies the contract of [`BlasGemv::gemv`] and the `y_b`
    /// do not overlap each other, any `A_b` or any `x_b`.
    #[allow(clippy::too_many_arguments)]
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
    ) -> Result<()>;
}

/// Matrix–matrix product.
pub trait BlasGemm<T: Scalar>: Device {
    /// `C := alpha · op(A) · op(B) + beta · C` with `op(A)` `m × k`, `op(B)` `k × n` and
    /// `C` `m × n`, all column-major (`?gemm`). When `beta` is zero `C` is not read.
    ///
    /// # Safety
    /// `a` is valid for `lda · (cols-1) + rows` elements of its stored shape
    /// (`m × k` for `N`, `k × m` otherwise), likewise `b` (`k × n` or `n × k`), and `c`
    /// for reads and writes of `ldc · (n-1) + m`; `c` overlaps neither `a` nor `b`.
    #[allow(clippy::too_many_arguments)]
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
    ) -> Result<()>;
}

/// A batch of matrix–matrix products given by arrays of pointers.
pub trait BlasGemmBatched<T: Scalar>: Device {
    /// `C[i] := alpha · op(A[i]) · op(B[i]) + beta · C[i]` for every `i`; the three
    /// pointer arrays must have the same length.
    ///
    /// # Safety
    /// Every `(a[i], b[i], c[i])` satisfies the contract of [`BlasGemm::gemm`], and no
    /// `c[i]` overlaps another `c`, any `a` or any `b`.
    #[allow(clippy::too_many_arguments)]
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
    ) -> Result<()>;
}

/// A batch of matrix–matrix products laid out with constant strides.
pub trait BlasGemmBatchedStrided<T: Scalar>: Device {
    /// `C_i := alpha · op(A_i) · op(B_i) + beta · C_i` for `i < batch`, with
    /// `A_i = a + i·stride_a` and likewise for `B` and `C` (strides in elements).
    ///
    /// # Safety
    /// Every `(A_i, B_i, C_i)` satisfies the contract of [`BlasGemm::gemm`] and the `C_i`
    /// do not overlap each other, any `A_i` or any `B_i`.
    #[allow(clippy::too_many_arguments)]
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
    ) -> Result<()>;
}

/// Triangular solve with many right-hand sides (`?trsm`).
pub trait BlasTrsm<T: Scalar>: Device {
    /// Overwrites the `m × n` column-major `b` with `X` solving `op(A) X = alpha B`
    /// ([`Side::Left`], `A` is `m × m`) or `X op(A) = alpha B` ([`Side::Right`], `A` is
    /// `n × n`), where `A` is the `uplo` triangle of `a` (its other triangle is not read)
    /// with a unit diagonal when `diag` is [`Diag::Unit`](crate::flags::Diag::Unit). As
    /// in reference BLAS there is no singularity check: a zero on the diagonal gives
    /// infinities or NaN (the tensor op `solve_triangular` checks first).
    ///
    /// # Safety
    /// `a` is valid for reads of `lda·(k-1) + k` elements (`k` = `m` or `n` by `side`),
    /// `b` for reads and writes of `ldb·(n-1) + m`, on this device; they do not overlap.
    #[allow(clippy::too_many_arguments)]
    unsafe fn trsm(
        side: Side,
        uplo: crate::flags::Uplo,
        trans: Trans,
        diag: crate::flags::Diag,
        m: usize,
        n: usize,
        alpha: T,
        a: *const T,
        lda: usize,
        b: *mut T,
        ldb: usize,
    ) -> Result<()>;
}

/// Checked `trsm` arguments: LAPACK integers `[m, n, lda, ldb]` and the spans of `a`
/// and `b`; `None` when `B` is empty.
#[allow(clippy::type_complexity)]
pub(crate) fn plan_trsm<T>(
    side: Side,
    m: usize,
    n: usize,
    a: *const T,
    lda: usize,
    b: *const T,
    ldb: usize,
) -> Result<Option<([i32; 4], usize, usize)>> {
    let op = "trsm";
    let k = if side == Side::Left { m } else { n };
    crate::args::leading_dim(op, "lda", lda, k)?;
    crate::args::leading_dim(op, "ldb", ldb, m)?;
    let sa = crate::args::matrix_span(op, "a", k, k, lda)?;
    let sb = crate::args::matrix_span(op, "b", m, n, ldb)?;
    if m == 0 || n == 0 {
        return Ok(None);
    }
    crate::args::non_null(op, "a", a, sa)?;
    crate::args::non_null(op, "b", b, sb)?;
    let ints = [
        crate::args::blas_int(op, "m", m)?,
        crate::args::blas_int(op, "n", n)?,
        crate::args::blas_int(op, "lda", lda)?,
        crate::args::blas_int(op, "ldb", ldb)?,
    ];
    Ok(Some((ints, sa, sb)))
}
