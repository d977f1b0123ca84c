//! LAPACK kernels: one trait per routine family, column-major, reference conventions.
//!
//! Every routine sizes its workspace with the LAPACK query (`lwork = -1`) and turns any
//! non-zero `info` into [`Error::Lapack`] with the routine's
//! name and what the code means (not positive definite, failed to converge, illegal
//! argument k). Arguments that can be checked beforehand (sizes, leading dimensions,
//! ranges, null pointers) are, so an illegal-argument `info` means a bug in this crate.
//!
//! Symmetric real matrices use the `sy*` routines and Hermitian complex ones the `he*`
//! routines under the same trait: `heevd` on `f64` is `dsyevd`. Implemented for `f32`,
//! `f64`, `c32` and `c64` ([`SetMatrix`] for every element type).

pub(crate) mod args;
pub mod qr;
pub mod svd;

pub use qr::{LapackGeqrf, LapackOrgqr};
pub use svd::{LapackSvd, SvdJob};

use std::ops::Range;

use ctensor_base::{Device, Error, Result, Scalar};

use crate::flags::Trans;
pub use crate::flags::{Diag, Jobz, Uplo};

/// Which eigenpairs [`LapackHeevr::heevr`] computes.
#[derive(Debug, Clone, PartialEq)]
pub enum EigRange<R> {
    /// All `n` eigenpairs.
    All,
    /// The eigenpairs with these 0-based indices in ascending order of eigenvalue, e.g.
    /// `0..nbands` for the lowest bands (LAPACK's `il = start + 1`, `iu = end`).
    Index(Range<usize>),
    /// The eigenpairs whose eigenvalue lies in the half-open interval `(lower, upper]`.
    Value {
        /// Exclusive lower bound.
        lower: R,
        /// Inclusive upper bound.
        upper: R,
    },
}

/// Keeps one triangle of a square matrix and zeroes the other (strictly off-diagonal)
/// one, e.g. to clean a Cholesky factor or an inverse from `potri`.
pub trait SetMatrix<T: Scalar>: Device {
    /// Zeroes the strict triangle of the `n × n` column-major `a` opposite to `keep`.
    ///
    /// # Safety
    /// `a` is valid for reads and writes of `lda·(n-1) + n` elements.
    unsafe fn set_matrix(keep: Uplo, n: usize, a: *mut T, lda: usize) -> Result<()>;
}

/// Cholesky factorization `A = U^H U` or `A = L L^H` (`?potrf`).
pub trait LapackPotrf<T: Scalar>: Device {
    /// Overwrites the `uplo` triangle of the Hermitian positive definite `a` with its
    /// Cholesky factor; the other triangle is not touched. A matrix that is not positive
    /// definite gives `Error::Lapack` with the order of the failing leading minor.
    ///
    /// # Safety
    /// `a` is valid for reads and writes of `lda·(n-1) + n` elements.
    unsafe fn potrf(uplo: Uplo, n: usize, a: *mut T, lda: usize) -> Result<()>;
}

/// Inverse of a Hermitian positive definite matrix from its Cholesky factor (`?potri`).
pub trait LapackPotri<T: Scalar>: Device {
    /// Overwrites the `uplo` triangle of `a`, which holds the factor from
    /// [`LapackPotrf::potrf`], with the same triangle of `A⁻¹`.
    ///
    /// # Safety
    /// `a` is valid for reads and writes of `lda·(n-1) + n` elements.
    unsafe fn potri(uplo: Uplo, n: usize, a: *mut T, lda: usize) -> Result<()>;
}

/// Inverse of a triangular matrix (`?trtri`).
pub trait LapackTrtri<T: Scalar>: Device {
    /// Overwrites the `uplo` triangle of `a` with its inverse; with [`Diag::Unit`] the
    /// diagonal is taken as ones and not referenced.
    ///
    /// # Safety
    /// `a` is valid for reads and writes of `lda·(n-1) + n` elements.
    unsafe fn trtri(uplo: Uplo, diag: Diag, n: usize, a: *mut T, lda: usize) -> Result<()>;
}

/// All eigenvalues (and eigenvectors) of a Hermitian matrix, divide and conquer
/// (`?syevd` / `?heevd`).
pub trait LapackHeevd<T: Scalar>: Device {
    /// Eigenvalues into `w` in ascending order; with [`Jobz::Vectors`] the orthonormal
    /// eigenvectors overwrite `a` column by column, otherwise `a` is destroyed.
    ///
    /// # Safety
    /// `a` is valid for reads and writes of `lda·(n-1) + n` elements and `w` for writes
    /// of `n` values; they do not overlap.
    unsafe fn heevd(
        jobz: Jobz,
        uplo: Uplo,
        n: usize,
        a: *mut T,
        lda: usize,
        w: *mut T::Real,
    ) -> Result<()>;
}

/// Selected eigenpairs of a Hermitian matrix by the MRRR algorithm (`?syevr` / `?heevr`).
pub trait LapackHeevr<T: Scalar>: Device {
    /// Computes the eigenpairs selected by `range`, returns how many (`m`): eigenvalues
    /// ascending in `w[..m]`, eigenvectors in the first `m` columns of `z`. `a` is
    /// destroyed.
    ///
    /// # Safety
    /// `a` is valid for reads and writes of `lda·(n-1) + n` elements; `w` for writes of
    /// `n` values; `z` for writes of `ldz·(cols-1) + n` elements, where `cols` is
    /// `range.len()` for [`EigRange::Index`] and `n` otherwise. None overlap.
    #[allow(clippy::too_many_arguments)]
    unsafe fn heevr(
        uplo: Uplo,
        n: usize,
        a: *mut T,
        lda: usize,
        range: EigRange<T::Real>,
        w: *mut T::Real,
        z: *mut T,
        ldz: usize,
    ) -> Result<usize>;
}

/// Selected eigenvalues of a Hermitian matrix, without eigenvectors, by LAPACK's
/// `?syevr` / `?heevr` in its values-only mode (the host only; the GPU computes values
/// through [`LapackHeevd`]).
pub trait LapackHeevrValues<T: Scalar>: Device {
    /// The eigenvalues selected by `range`, ascending in `w[..m]`; returns `m`. `a` is
    /// destroyed.
    ///
    /// # Safety
    /// `a` is valid for reads and writes of `lda·(n-1) + n` elements and `w` for writes
    /// of `n` values; they do not overlap.
    unsafe fn heevr_values(
        uplo: Uplo,
        n: usize,
        a: *mut T,
        lda: usize,
        range: EigRange<T::Real>,
        w: *mut T::Real,
    ) -> Result<usize>;
}

/// Selected eigenpairs of the generalized Hermitian-definite eigenproblem (`?sygvx` /
/// `?hegvx` on the host, cuSOLVER's `?sygvdx` / `?hegvdx` on the GPU).
pub trait LapackHegvx<T: Scalar>: Device {
    /// As [`LapackHegvd::hegvd`] for the eigenpairs selected by `range` only (reading the
    /// `uplo` triangles of `a` and `b`): returns how many (`m`), eigenvalues ascending in
    /// `w[..m]`, eigenvectors in the first `m` columns of `z`. `a` and `b` are destroyed.
    ///
    /// # Safety
    /// `a`, `b` are valid for reads and writes of `ld·(n-1) + n` elements with their
    /// leading dimensions; `w` for writes of `n` values; `z` for writes of
    /// `ldz·(cols-1) + n` elements (`cols` as for [`LapackHeevr::heevr`]). None overlap.
    #[allow(clippy::too_many_arguments)]
    unsafe fn hegvx(
        itype: i32,
        uplo: Uplo,
        n: usize,
        a: *mut T,
        lda: usize,
        b: *mut T,
        ldb: usize,
        range: EigRange<T::Real>,
        w: *mut T::Real,
        z: *mut T,
        ldz: usize,
    ) -> Result<usize>;
}

/// The generalized Hermitian-definite eigenproblem (`?sygvd` / `?hegvd`).
pub trait LapackHegvd<T: Scalar>: Device {
    /// Solves `A x = λ B x` (`itype` 1), `A B x = λ x` (2) or `B A x = λ x` (3) with `B`
    /// positive definite: eigenvalues ascending into `w`, eigenvectors (normalized so
    /// that `Zᴴ B Z = I` for 1 and 2, `Zᴴ B⁻¹ Z = I` for 3) over `a`; `b` is overwritten
    /// by its Cholesky factor. A `B` that is not positive definite gives `Error::Lapack`.
    ///
    /// # Safety
    /// `a` and `b` are valid for reads and writes of `ld·(n-1) + n` elements with their
    /// leading dimensions, `w` for writes of `n` values; none overlap.
    #[allow(clippy::too_many_arguments)]
    unsafe fn hegvd(
        itype: i32,
        jobz: Jobz,
        uplo: Uplo,
        n: usize,
        a: *mut T,
        lda: usize,
        b: *mut T,
        ldb: usize,
        w: *mut T::Real,
    ) -> Result<()>;
}

/// LU factorization with partial pivoting, `A = P L U` (`?getrf`).
pub trait LapackGetrf<T: Scalar>: Device {
    /// Overwrites the `m × n` `a` with `L` (unit diagonal not stored) and `U`; `ipiv`
    /// receives the `min(m, n)` 1-based pivot rows. An exactly singular `U` gives
    /// `Error::Lapack` (the factors are still written).
    ///
    /// # Safety
    /// `a` is valid for reads and writes of `lda·(n-1) + m` elements, `ipiv` for writes
    /// of `min(m, n)` integers.
    unsafe fn getrf(m: usize, n: usize, a: *mut T, lda: usize, ipiv: *mut i32) -> Result<()>;
}

/// Solves `op(A) X = B` with the LU factors from [`LapackGetrf::getrf`] (`?getrs`).
pub trait LapackGetrs<T: Scalar>: Device {
    /// Overwrites the `n × nrhs` `b` with the solution `X`.
    ///
    /// # Safety
    /// `a` is valid for reads of `lda·(n-1) + n` elements, `ipiv` of `n` integers, `b` for
    /// reads and writes of `ldb·(nrhs-1) + n` elements; `b` overlaps neither.
    #[allow(clippy::too_many_arguments)]
    unsafe fn getrs(
        trans: Trans,
        n: usize,
        nrhs: usize,
        a: *const T,
        lda: usize,
        ipiv: *const i32,
        b: *mut T,
        ldb: usize,
    ) -> Result<()>;
}

/// All eigenvalues (and eigenvectors) of a Hermitian matrix by faer's self-adjoint
/// eigensolver (pure Rust; host memory only).
pub trait HeevFaer<T: Scalar>: Device {
    /// Reads only the `uplo` triangle of `a` (the imaginary parts of its diagonal are
    /// ignored, as LAPACK does) and leaves `a` untouched: eigenvalues ascending into
    /// `w`, and with [`Jobz::Vectors`] orthonormal eigenvectors into the columns of `z`
    /// (`z` is not touched otherwise and may be null).
    ///
    /// # Safety
    /// `a` is valid for reads of `lda·(n-1) + n` elements, `w` for writes of `n` values,
    /// and with vectors `z` for writes of `ldz·(n-1) + n` elements; `w` and `z` overlap
    /// nothing else.
    #[allow(clippy::too_many_arguments)]
    unsafe fn heev_faer(
        jobz: Jobz,
        uplo: Uplo,
        n: usize,
        a: *const T,
        lda: usize,
        w: *mut T::Real,
        z: *mut T,
        ldz: usize,
    ) -> Result<()>;
}

/// The part of a matrix a routine reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Part {
    /// Every entry.
    Whole,
    /// One triangle, with the diagonal.
    Triangle(Uplo),
}

impl Part {
    /// The part in words, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Part::Whole => "the whole matrix",
            Part::Triangle(Uplo::Lower) => "the lower triangle",
            Part::Triangle(Uplo::Upper) => "the upper triangle",
        }
    }
}

/// Finds the first entry that is NaN or infinite in a part of a matrix, so solvers can
/// refuse such input instead of returning finite nonsense.
pub trait FindNonFinite<T: Scalar>: Device {
    /// The row, column and value of the first non-finite entry (in column-major order)
    /// inside `part` of the `m × n` column-major `a`, or `None`. Integers are always
    /// finite.
    ///
    /// # Safety
    /// `a` is valid for reads of `lda·(n-1) + m` elements.
    unsafe fn find_non_finite(
        part: Part,
        m: usize,
        n: usize,
        a: *const T,
        lda: usize,
    ) -> Result<Option<(usize, usize, T)>>;
}

/// 0: not decided yet (read `CTENSOR_CHECK_FINITE` on first use), 1: off, 2: on.
static CHECK_FINITE: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Turns the finiteness check of solver inputs on (the default) or off for the whole
/// process. The eigensolvers, Cholesky and LU check the part of each input they read
/// and return [`Error::NonFinite`] for NaN or an infinity; a caller whose data is known
/// to be finite may skip the `O(n²)` scan. `CTENSOR_CHECK_FINITE=0` in the environment
/// turns it off at start.
///
/// With the check off, non-finite input is the libraries' to handle, and they do not
/// always handle it: LAPACK returns NaN or an `info` error, and ScaLAPACK's MRRR
/// (`p?syevr`) with an infinity and a value range was seen to wait forever inside the
/// library (ctensor-mpi's distributed solvers agree on this flag across ranks and hand
/// out rank 0's eigenvalues, but cannot reach into a solver that never returns).
pub fn set_check_finite(on: bool) {
    CHECK_FINITE.store(if on { 2 } else { 1 }, std::sync::atomic::Ordering::Relaxed);
}

/// Whether solver inputs are checked for non-finite values (see [`set_check_finite`]).
pub fn check_finite() -> bool {
    use std::sync::atomic::Ordering::Relaxed;
    match CHECK_FINITE.load(Relaxed) {
        0 => {
            let on = std::env::var("CTENSOR_CHECK_FINITE").map_or(true, |v| v != "0");
            set_check_finite(on);
            on
        }
        v => v == 2,
    }
}

/// `Err(Error::NonFinite)` when the check is on and `part` of the `m × n` column-major
/// `a` holds NaN or an infinity: the check every solver runs on what it reads (and the
/// tensor ops that reach LAPACK through other kernels, `lstsq`, call).
///
/// # Safety
/// As for [`FindNonFinite::find_non_finite`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn require_finite<T: Scalar, D: FindNonFinite<T>>(
    op: &'static str,
    operand: &'static str,
    part: Part,
    m: usize,
    n: usize,
    a: *const T,
    lda: usize,
) -> Result<()> {
    if !check_finite() || m == 0 || n == 0 {
        return Ok(());
    }
    // SAFETY: forwarded contract.
    match unsafe { D::find_non_finite(part, m, n, a, lda) }? {
        None => Ok(()),
        Some((row, col, v)) => {
            let z = v.to_c64();
            let value = if T::DTYPE.is_complex() {
                format!("({}, {})", z.re, z.im)
            } else {
                format!("{}", z.re)
            };
            Err(Error::NonFinite {
                op,
                operand,
                part: part.describe(),
                row,
                col,
                value,
            })
        }
    }
}

/// The 1-norm of a matrix and the reciprocal condition estimate of an LU-factored one
/// (`?lange` with `'1'`, `?gecon`), to tell a numerically singular system from a solvable
/// one: LU with partial pivoting reports only exact zeros on the diagonal of `U`.
pub trait LapackGecon<T: Scalar>: Device {
    /// `max_j Σ_i |a_ij|` of the `m × n` column-major `a`.
    ///
    /// # Safety
    /// `a` is valid for reads of `lda·(n-1) + m` elements.
    unsafe fn norm_one(m: usize, n: usize, a: *const T, lda: usize) -> Result<T::Real>;

    /// An estimate of `1 / (‖A‖₁ ‖A⁻¹‖₁)` from the factors of [`LapackGetrf::getrf`] and
    /// `anorm = ‖A‖₁` of the matrix before factoring.
    ///
    /// # Safety
    /// `lu` is valid for reads of `lda·(n-1) + n` elements.
    unsafe fn gecon(n: usize, lu: *const T, lda: usize, anorm: T::Real) -> Result<T::Real>;
}
