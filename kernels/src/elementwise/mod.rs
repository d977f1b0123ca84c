//! Element-wise kernels on raw memory, for all eight element types: arithmetic
//! ([`Add`], [`Mul`], [`Div`], [`Fma`], [`Conj`]), the functions of one argument
//! ([`math`]: [`Math`](math::Math) and [`BinaryMath`](math::BinaryMath); [`Abs`]), comparisons ([`compare`]) and [`EqScalar`].
//!
//! Every one is correct when the output is the same memory as an input (in place): each
//! pointer argument is either identical to or disjoint from each other one. Arithmetic
//! follows [`Arith`](arith::Arith): `f16`/`bf16` compute in `f32`, integers wrap,
//! integer division by zero is an error. Large arrays are split across threads above
//! [`parallel_threshold`](crate::parallel::parallel_threshold). [`broadcast`] runs them
//! over operands broadcast to the output's shape on the host, block by block.

pub mod arith;
pub mod broadcast;
pub mod compare;
pub mod math;

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

/// A function of one argument of [`Unary`]; each is now a [`MathOp`](math::MathOp).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-x` (wrapping for integers).
    Neg,
    /// `sqrt(x)` (principal branch for complex; NaN for negative reals); not for integers.
    Sqrt,
    /// `exp(x)`; not for integers.
    Exp,
}

impl From<UnaryOp> for math::MathOp {
    fn from(op: UnaryOp) -> Self {
        match op {
            UnaryOp::Neg => math::MathOp::Neg,
            UnaryOp::Sqrt => math::MathOp::Sqrt,
            UnaryOp::Exp => math::MathOp::Exp,
        }
    }
}

/// Element-wise functions of one argument, under their former trait: every device that
/// implements [`Math`](math::Math) has it.
#[deprecated(note = "use `Math` with `MathOp::Neg`, `MathOp::Sqrt` or `MathOp::Exp`")]
pub trait Unary<T: Scalar>: Device {
    /// `y[i] = op(x[i])` for `i < n`. An operation that is not defined for `T` (square
    /// root or exponential of an integer) is `Error::UnsupportedDType`.
    ///
    /// # Safety
    /// `x` is valid for reads and `y` for writes of `n` elements; identical or disjoint.
    unsafe fn unary(op: UnaryOp, n: usize, x: *const T, y: *mut T) -> Result<()>;
}

#[allow(deprecated)]
impl<T: math::MathScalar, D: math::Math<T>> Unary<T> for D {
    unsafe fn unary(op: UnaryOp, n: usize, x: *const T, y: *mut T) -> Result<()> {
        // SAFETY: forwarded contract.
        unsafe { D::math(op.into(), n, x, y) }
    }
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

/// Element-wise equality with a scalar.
pub trait EqScalar<T: Scalar>: Device {
    /// `y[i] = 1` where `x[i] == s` (IEEE equality, so NaN matches nothing) and `0`
    /// elsewhere, in `T`.
    ///
    /// # Safety
    /// `x` is valid for reads and `y` for writes of `n` elements; identical or disjoint.
    unsafe fn eq_scalar(n: usize, x: *const T, s: T, y: *mut T) -> Result<()>;
}
