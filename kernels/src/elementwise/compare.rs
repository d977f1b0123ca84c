//! Comparisons and selection: [`Compare`] (`<`, `<=`, `>`, `>=`, `==`, `!=` to a 0/1 mask),
//! [`Classify`] (NaN, finite, infinite), [`Select`] (`mask ? x : y`) and [`Extreme2`]
//! (element-wise maximum and minimum). Masks are `i32` 0/1, the type the tensor ops give
//! comparisons (ctensor has no boolean type).

use ctensor_base::{DataType, Device, Error, Result, Scalar};

/// The error for an ordering of complex numbers, which have none (both devices).
pub(crate) fn unordered(op: &'static str, dtype: DataType) -> Error {
    Error::UnsupportedDType {
        op,
        dtype,
        supported: "f32, f64, i32, i64, f16, bf16 (complex numbers have no order)",
    }
}

/// A comparison of [`Compare`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `x < y`.
    Lt,
    /// `x <= y`.
    Le,
    /// `x > y`.
    Gt,
    /// `x >= y`.
    Ge,
    /// `x == y` (IEEE: NaN equals nothing; complex compare both parts).
    Eq,
    /// `x != y` (true where either is NaN).
    Ne,
}

impl CmpOp {
    /// Whether the comparison needs an order (all but `Eq`, `Ne`).
    pub fn is_ordering(self) -> bool {
        !matches!(self, CmpOp::Eq | CmpOp::Ne)
    }

    /// The code the CUDA kernel takes (0 to 5 in declaration order).
    pub fn code(self) -> i32 {
        self as i32
    }
}

/// Element-wise comparison.
pub trait Compare<T: Scalar>: Device {
    /// `out[i] = (x[i] op y[i]) as i32` for `i < n`, IEEE semantics (NaN compares false
    /// except for `Ne`). Ordering comparisons of complex types are
    /// `Error::UnsupportedDType`.
    ///
    /// # Safety
    /// `x`, `y` are valid for reads of `n` elements and `out` for writes of `n` `i32`s.
    unsafe fn compare(op: CmpOp, n: usize, x: *const T, y: *const T, out: *mut i32) -> Result<()>;
}

/// A property of [`Classify`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// NaN (either part for complex).
    Nan,
    /// Finite (both parts for complex; every integer).
    Finite,
    /// ±infinity in a part and no NaN.
    Inf,
}

/// Element-wise classification of floating-point values.
pub trait Classify<T: Scalar>: Device {
    /// `out[i] = 1` where `x[i]` has the property, else 0.
    ///
    /// # Safety
    /// `x` is valid for reads of `n` elements and `out` for writes of `n` `i32`s.
    unsafe fn classify(what: Class, n: usize, x: *const T, out: *mut i32) -> Result<()>;
}

/// Element-wise selection.
pub trait Select<T: Scalar>: Device {
    /// `out[i] = if mask[i] != 0 { x[i] } else { y[i] }`.
    ///
    /// # Safety
    /// `mask` is valid for reads of `n` `i32`s, `x`, `y` for reads and `out` for writes of
    /// `n` elements; `out` is identical to or disjoint from each input.
    unsafe fn select(
        n: usize,
        mask: *const i32,
        x: *const T,
        y: *const T,
        out: *mut T,
    ) -> Result<()>;
}

/// Element-wise maximum or minimum of two arrays.
pub trait Extreme2<T: Scalar>: Device {
    /// `out[i] = max(x[i], y[i])` (`min` when `!max`); NaN in either gives NaN, and of
    /// two equal values (-0 and +0) `x[i]` is kept (NumPy's `maximum` and `minimum`).
    /// Complex types have no order (`Error::UnsupportedDType`).
    ///
    /// # Safety
    /// `x`, `y` are valid for reads and `out` for writes of `n` elements; `out` is
    /// identical to or disjoint from each input.
    unsafe fn extreme2(max: bool, n: usize, x: *const T, y: *const T, out: *mut T) -> Result<()>;
}
