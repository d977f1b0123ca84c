//! Type promotion: the data type of a result whose operands have different data types.
//! The one table, beside the dispatch; every op that accepts mixed operands asks here.
//!
//! Between tensors the rules are PyTorch's `promote_types` (which agree with NumPy's for
//! these types except where NumPy widens integers with floats to `f64`):
//!
//! - Kinds are ordered integer < floating < complex; the result has the higher kind.
//! - Within a kind the wider type wins: `i32 ∘ i64 → i64`, `f32 ∘ f64 → f64`,
//!   `c32 ∘ c64 → c64`; the two 16-bit floats meet in `f32` (`f16 ∘ bf16 → f32`), as
//!   neither holds the other's values.
//! - Integer with floating or complex: the floating or complex type (`i64 ∘ f32 → f32`,
//!   `i32 ∘ f16 → f16`).
//! - Floating with complex: the complex type wide enough for the floating one
//!   (`f64 ∘ c32 → c64`, `f16 ∘ c32 → c32`).
//!
//! |       | i32 | i64 | f16 | bf16 | f32 | f64 | c32 | c64 |
//! |-------|-----|-----|-----|------|-----|-----|-----|-----|
//! | i32   | i32 | i64 | f16 | bf16 | f32 | f64 | c32 | c64 |
//! | i64   | i64 | i64 | f16 | bf16 | f32 | f64 | c32 | c64 |
//! | f16   | f16 | f16 | f16 | f32  | f32 | f64 | c32 | c64 |
//! | bf16  | bf16| bf16| f32 | bf16 | f32 | f64 | c32 | c64 |
//! | f32   | f32 | f32 | f32 | f32  | f32 | f64 | c32 | c64 |
//! | f64   | f64 | f64 | f64 | f64  | f64 | f64 | c64 | c64 |
//! | c32   | c32 | c32 | c32 | c32  | c32 | c64 | c32 | c64 |
//! | c64   | c64 | c64 | c64 | c64  | c64 | c64 | c64 | c64 |
//!
//! A plain number (a Rust `f64`, `c64`, `i32`, ... given to a scalar op, a [`Number`]) is
//! *weak*, as in NumPy (NEP 50) and PyTorch: it never widens the tensor within its kind,
//! only lifts the kind. `f32 tensor · 2.0 → f32`; `f32 tensor · c64 → c32`; `i32 tensor ·
//! 2.5 → f64` (NumPy's choice; PyTorch would give its default `f32`); `i64 tensor · 1i →
//! c64`; an integer number keeps the tensor's type.
//!
//! In-place ops and ops writing into an existing `out` compute in the output's type and
//! accept operands whose promoted type can be stored there without dropping a kind:
//! complex into real, or floating into integer, is [`Error::CannotCast`] (PyTorch's
//! `can_cast`).

use ctensor_base::{c32, c64, DataType, Error, Result, Scalar};

/// The kind of a data type, in promotion order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Integer,
    Floating,
    Complex,
}

fn kind(t: DataType) -> Kind {
    if t.is_complex() {
        Kind::Complex
    } else if t.is_float() {
        Kind::Floating
    } else {
        Kind::Integer
    }
}

/// The complex type whose parts can hold a floating type's values.
fn complex_for(t: DataType) -> DataType {
    match t {
        DataType::Double | DataType::ComplexDouble => DataType::ComplexDouble,
        _ => DataType::ComplexFloat,
    }
}

/// The data type of the result of a binary op on tensors of types `a` and `b` (the table
/// in the [module docs](self)). Symmetric; `result_type(t, t) == t`.
pub fn result_type(a: DataType, b: DataType) -> DataType {
    use DataType::*;
    if a == b {
        return a;
    }
    match (kind(a), kind(b)) {
        (Kind::Integer, Kind::Integer) => Int64, // the only two are i32 and i64
        (ka, kb) if ka != kb => {
            let (lo, hi) = if ka < kb { (a, b) } else { (b, a) };
            match (kind(lo), kind(hi)) {
                (Kind::Integer, _) => hi,
                // floating with complex
                _ => {
                    if complex_for(lo) == ComplexDouble {
                        ComplexDouble
                    } else {
                        hi
                    }
                }
            }
        }
        (Kind::Floating, Kind::Floating) => match (a, b) {
            (Double, _) | (_, Double) => Double,
            // f32 with a 16-bit type, or f16 with bf16
            _ => Float,
        },
        // two different complex types
        _ => ComplexDouble,
    }
}

/// The machine epsilon of the solvers' thresholds (rank, condition) for a BLAS dtype:
/// `f32::EPSILON` for f32 and c32, `f64::EPSILON` for f64 and c64.
pub(crate) fn epsilon(dtype: DataType) -> f64 {
    match dtype.real_type() {
        DataType::Float => f32::EPSILON as f64,
        _ => f64::EPSILON,
    }
}

/// [`result_type`] over several operands (the first one's type for one operand).
pub fn result_type_of(types: impl IntoIterator<Item = DataType>) -> Option<DataType> {
    types.into_iter().reduce(result_type)
}

/// Whether a value of type `from` may be written into a tensor of type `to` by an
/// in-place op or an `out` argument: everything but complex into a non-complex type and
/// floating into an integer type.
pub fn can_cast(from: DataType, to: DataType) -> bool {
    kind(from) <= kind(to)
}

/// [`can_cast`] as a `Result` naming `op`.
pub(crate) fn check_can_cast(op: &'static str, from: DataType, to: DataType) -> Result<()> {
    if can_cast(from, to) {
        Ok(())
    } else {
        Err(Error::CannotCast { op, from, to })
    }
}

/// A plain number given to a scalar op (`&t * 2.0`, `t.add_scalar(c64::i())`): its kind
/// takes part in promotion (see the [module docs](self)), its value is cast to the
/// result's type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    /// An integer.
    Int(i64),
    /// A real floating-point number.
    Float(f64),
    /// A complex number.
    Complex(c64),
}

impl Number {
    /// The value as a complex double (exact for `Float` and `Complex`; integers beyond
    /// 2⁵³ round).
    pub fn to_c64(self) -> c64 {
        match self {
            Number::Int(i) => c64::new(i as f64, 0.0),
            Number::Float(x) => c64::new(x, 0.0),
            Number::Complex(z) => z,
        }
    }

    /// The value cast to `T` with ctensor's casts ([`CastFrom`](ctensor_base::CastFrom)); an integer is exact in
    /// `i64` and goes through `f64` for the other types.
    pub fn cast<T: Scalar>(self) -> T {
        match self {
            Number::Int(i) if T::DTYPE == DataType::Int64 => {
                // SAFETY: `Scalar` is sealed and each type has its own tag, so `T` is `i64`.
                unsafe { std::mem::transmute_copy::<i64, T>(&i) }
            }
            Number::Int(i) => T::cast_from(i as f64),
            Number::Float(x) => T::cast_from(x),
            Number::Complex(z) => T::cast_from(z),
        }
    }

    /// A rank-0 tensor of `dtype` on `device` holding this number (cast as
    /// [`cast`](Self::cast)): the scalar operand of the scalar ops. An integer that
    /// `dtype` cannot hold is [`Error::Overflow`] ([`check_fits`](Self::check_fits)).
    pub fn tensor(
        self,
        dtype: DataType,
        device: ctensor_base::DeviceType,
    ) -> Result<crate::Tensor> {
        self.check_fits("scalar operand", dtype)?;
        crate::core::dispatch::with_dtype!(dtype, T => crate::Tensor::scalar(self.cast::<T>()))?
            .to_device(device)
    }

    /// Whether an integer number fits the integer type `dtype` (every number fits the
    /// floating and complex types, which round or overflow to infinity as their casts
    /// do). `Err(Error::Overflow)` naming the value and the type when it does not: an
    /// out-of-range integer would otherwise wrap, as NumPy 2 refuses it
    /// (`OverflowError`).
    pub fn check_fits(self, op: &'static str, dtype: DataType) -> Result<()> {
        let Number::Int(i) = self else {
            return Ok(());
        };
        let fits = match dtype {
            DataType::Int => i32::try_from(i).is_ok(),
            _ => true,
        };
        if fits {
            Ok(())
        } else {
            Err(Error::Overflow {
                op,
                what: format!("the integer {i} is out of range for {dtype}"),
            })
        }
    }

    /// The type of the result of a tensor of type `t` with this number (weak promotion).
    pub fn result_type_with(self, t: DataType) -> DataType {
        match (self, kind(t)) {
            (Number::Int(_), _) => t,
            (Number::Float(_), Kind::Integer) => DataType::Double,
            (Number::Float(_), _) => t,
            (Number::Complex(_), Kind::Integer) => DataType::ComplexDouble,
            (Number::Complex(_), _) => complex_for(t),
        }
    }
}

macro_rules! number_from {
    ($($t:ty => |$x:ident| $e:expr),* $(,)?) => {$(
        impl From<$t> for Number {
            fn from($x: $t) -> Number {
                $e
            }
        }
    )*};
}
number_from! {
    i32 => |x| Number::Int(x as i64),
    i64 => |x| Number::Int(x),
    u32 => |x| Number::Int(x as i64),
    f32 => |x| Number::Float(x as f64),
    f64 => |x| Number::Float(x),
    ctensor_base::f16 => |x| Number::Float(x.to_f64()),
    ctensor_base::bf16 => |x| Number::Float(x.to_f64()),
    c32 => |x| Number::Complex(c64::new(x.re as f64, x.im as f64)),
    c64 => |x| Number::Complex(x),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_symmetric_and_idempotent() {
        for a in DataType::ALL {
            assert_eq!(result_type(a, a), a);
            for b in DataType::ALL {
                assert_eq!(result_type(a, b), result_type(b, a), "{a} with {b}");
                // Both operands can be stored in the result.
                assert!(can_cast(a, result_type(a, b)) && can_cast(b, result_type(a, b)));
            }
        }
    }

    #[test]
    fn weak_numbers_lift_the_kind_only() {
        use DataType::*;
        assert_eq!(Number::from(2.0).result_type_with(Float), Float);
        assert_eq!(Number::from(2.0).result_type_with(Int), Double);
        assert_eq!(Number::from(2).result_type_with(Half), Half);
        assert_eq!(Number::from(c64::i()).result_type_with(Float), ComplexFloat);
        assert_eq!(
            Number::from(c64::i()).result_type_with(BFloat16),
            ComplexFloat
        );
        assert_eq!(
            Number::from(c64::i()).result_type_with(Double),
            ComplexDouble
        );
        assert_eq!(
            Number::from(c64::i()).result_type_with(Int64),
            ComplexDouble
        );
        assert_eq!(
            Number::from(c32::i()).result_type_with(ComplexDouble),
            ComplexDouble
        );
    }
}
