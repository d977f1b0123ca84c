//! Element types: the runtime [`DataType`] and the compile-time [`Scalar`] trait that ties
//! a Rust type to it.

use std::fmt;
use std::str::FromStr;

pub use half::{bf16, f16};
pub use num_complex::Complex;

use crate::cast::CastFrom;
use crate::error::Error;

/// Single-precision complex number, `#[repr(C)] {re, im}`: bit-compatible with C99
/// `float _Complex`, Fortran `complex(4)` and CUDA `cuFloatComplex`.
#[allow(non_camel_case_types)]
pub type c32 = Complex<f32>;

/// Double-precision complex number, `#[repr(C)] {re, im}`: bit-compatible with C99
/// `double _Complex`, Fortran `complex(8)` and CUDA `cuDoubleComplex`.
#[allow(non_camel_case_types)]
pub type c64 = Complex<f64>;

/// The element type of a tensor, chosen at run time.
///
/// The discriminants are stable: the C ABI uses the same numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum DataType {
    /// `f32`.
    Float = 0,
    /// `f64`.
    Double = 1,
    /// `i32`.
    Int = 2,
    /// `i64`.
    Int64 = 3,
    /// [`c32`], complex of two `f32`.
    ComplexFloat = 4,
    /// [`c64`], complex of two `f64`.
    ComplexDouble = 5,
    /// IEEE 754 half precision, [`half::f16`].
    Half = 6,
    /// Brain floating point, [`half::bf16`] (8-bit exponent, 7-bit mantissa).
    BFloat16 = 7,
}

impl DataType {
    /// Every data type, in discriminant order.
    pub const ALL: [DataType; 8] = [
        DataType::Float,
        DataType::Double,
        DataType::Int,
        DataType::Int64,
        DataType::ComplexFloat,
        DataType::ComplexDouble,
        DataType::Half,
        DataType::BFloat16,
    ];

    /// Size of one element in bytes.
    pub const fn size_of(self) -> usize {
        match self {
            DataType::Half | DataType::BFloat16 => 2,
            DataType::Float | DataType::Int => 4,
            DataType::Double | DataType::Int64 | DataType::ComplexFloat => 8,
            DataType::ComplexDouble => 16,
        }
    }

    /// Alignment of one element in bytes (a complex number aligns as its real part).
    pub const fn align_of(self) -> usize {
        self.real_type().size_of()
    }

    /// The stable short name, used for display and accepted by [`str::parse`]:
    /// `f32 f64 i32 i64 c32 c64 f16 bf16`.
    pub const fn name(self) -> &'static str {
        match self {
            DataType::Float => "f32",
            DataType::Double => "f64",
            DataType::Int => "i32",
            DataType::Int64 => "i64",
            DataType::ComplexFloat => "c32",
            DataType::ComplexDouble => "c64",
            DataType::Half => "f16",
            DataType::BFloat16 => "bf16",
        }
    }

    /// `true` for the two complex types.
    pub const fn is_complex(self) -> bool {
        matches!(self, DataType::ComplexFloat | DataType::ComplexDouble)
    }

    /// `true` for floating-point elements, real or complex (everything but `i32`, `i64`).
    pub const fn is_float(self) -> bool {
        !self.is_integer()
    }

    /// `true` for the types BLAS and LAPACK support: `f32`, `f64`, `c32`, `c64`.
    pub const fn is_blas(self) -> bool {
        matches!(
            self,
            DataType::Float | DataType::Double | DataType::ComplexFloat | DataType::ComplexDouble
        )
    }

    /// `true` for `i32` and `i64`.
    pub const fn is_integer(self) -> bool {
        matches!(self, DataType::Int | DataType::Int64)
    }

    /// The type of the real and imaginary parts: `c32 -> f32`, `c64 -> f64`; every real
    /// type is its own real type.
    pub const fn real_type(self) -> DataType {
        match self {
            DataType::ComplexFloat => DataType::Float,
            DataType::ComplexDouble => DataType::Double,
            other => other,
        }
    }

    /// Parses a name: the short names of [`DataType::name`], NumPy's names (`float32`,
    /// `complex128`, ...) and ABACUS's (`float`, `double`, `complex<double>`, ...),
    /// ignoring ASCII case and surrounding spaces.
    pub fn from_name(name: &str) -> Result<DataType, Error> {
        let key = name.trim().to_ascii_lowercase();
        let dtype = match key.as_str() {
            "f32" | "float" | "float32" | "dt_float" => DataType::Float,
            "f64" | "double" | "float64" | "dt_double" => DataType::Double,
            "i32" | "int" | "int32" | "dt_int" => DataType::Int,
            "i64" | "int64" | "long" | "int64_t" | "dt_int64" => DataType::Int64,
            "c32" | "complex64" | "complex<float>" | "cfloat" | "dt_complex" => {
                DataType::ComplexFloat
            }
            "c64" | "complex128" | "complex<double>" | "cdouble" | "dt_complex_double" => {
                DataType::ComplexDouble
            }
            "f16" | "half" | "float16" => DataType::Half,
            "bf16" | "bfloat16" => DataType::BFloat16,
            _ => {
                return Err(Error::UnknownName {
                    kind: "data type",
                    given: name.to_string(),
                    expected: "one of f32 f64 i32 i64 c32 c64 f16 bf16 (or a NumPy/ABACUS alias)",
                })
            }
        };
        Ok(dtype)
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DataType {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DataType::from_name(s)
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A Rust element type that a tensor can hold: one for each [`DataType`].
///
/// Sealed: exactly `f32, f64, i32, i64, c32, c64, f16, bf16` implement it.
pub trait Scalar:
    sealed::Sealed
    + Copy
    + Send
    + Sync
    + PartialEq
    + Default
    + fmt::Debug
    + fmt::Display
    + 'static
    + CastFrom<f64>
    + CastFrom<c64>
{
    /// The runtime tag of this type.
    const DTYPE: DataType;
    /// The type of the real part (`f64` for `c64`; `Self` for real types).
    type Real: Scalar;
    /// Additive identity.
    fn zero() -> Self;
    /// Multiplicative identity.
    fn one() -> Self;
    /// Complex conjugate (the identity for real types).
    fn conj(self) -> Self;
    /// Real part.
    fn re(self) -> Self::Real;
    /// Imaginary part (zero for real types).
    fn im(self) -> Self::Real;
    /// The value as a complex double: exact for every type except `i64` beyond 2^53.
    fn to_c64(self) -> c64;
    /// `self == other` as bit patterns are compared by IEEE rules: `NaN != NaN`, `0 == -0`.
    fn same_value(self, other: Self) -> bool {
        self == other
    }
}

macro_rules! impl_real_scalar {
    ($($t:ty => $dt:ident, $zero:expr, $one:expr);* $(;)?) => {$(
        impl sealed::Sealed for $t {}
        impl Scalar for $t {
            const DTYPE: DataType = DataType::$dt;
            type Real = $t;
            #[inline]
            fn zero() -> Self { $zero }
            #[inline]
            fn one() -> Self { $one }
            #[inline]
            fn conj(self) -> Self { self }
            #[inline]
            fn re(self) -> Self { self }
            #[inline]
            fn im(self) -> Self { $zero }
            #[inline]
            fn to_c64(self) -> c64 { c64::cast_from(self) }
        }
    )*};
}

impl_real_scalar! {
    f32 => Float, 0.0, 1.0;
    f64 => Double, 0.0, 1.0;
    i32 => Int, 0, 1;
    i64 => Int64, 0, 1;
    f16 => Half, f16::ZERO, f16::ONE;
    bf16 => BFloat16, bf16::ZERO, bf16::ONE;
}

macro_rules! impl_complex_scalar {
    ($($t:ty => $dt:ident);* $(;)?) => {$(
        impl sealed::Sealed for Complex<$t> {}
        impl Scalar for Complex<$t> {
            const DTYPE: DataType = DataType::$dt;
            type Real = $t;
            #[inline]
            fn zero() -> Self { Complex::new(0.0, 0.0) }
            #[inline]
            fn one() -> Self { Complex::new(1.0, 0.0) }
            #[inline]
            fn conj(self) -> Self { Complex::new(self.re, -self.im) }
            #[inline]
            fn re(self) -> $t { self.re }
            #[inline]
            fn im(self) -> $t { self.im }
            #[inline]
            fn to_c64(self) -> c64 { c64::cast_from(self) }
        }
    )*};
}

impl_complex_scalar! {
    f32 => ComplexFloat;
    f64 => ComplexDouble;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_size<T: Scalar>() {
        assert_eq!(T::DTYPE.size_of(), std::mem::size_of::<T>(), "{}", T::DTYPE);
        assert_eq!(
            T::DTYPE.align_of(),
            std::mem::align_of::<T>(),
            "{}",
            T::DTYPE
        );
        assert_eq!(<T::Real as Scalar>::DTYPE, T::DTYPE.real_type());
    }

    #[test]
    fn dtype_sizes_match_the_rust_types() {
        check_size::<f32>();
        check_size::<f64>();
        check_size::<i32>();
        check_size::<i64>();
        check_size::<c32>();
        check_size::<c64>();
        check_size::<f16>();
        check_size::<bf16>();
    }

    #[test]
    fn dtype_names_round_trip_and_aliases_parse() {
        for dt in DataType::ALL {
            assert_eq!(dt.name().parse::<DataType>().unwrap(), dt);
            assert_eq!(
                dt.to_string().to_uppercase().parse::<DataType>().unwrap(),
                dt
            );
        }
        assert_eq!(
            "complex<double>".parse::<DataType>().unwrap(),
            DataType::ComplexDouble
        );
        assert_eq!(
            " complex64 ".parse::<DataType>().unwrap(),
            DataType::ComplexFloat
        );
        assert_eq!("double".parse::<DataType>().unwrap(), DataType::Double);
        assert_eq!("bfloat16".parse::<DataType>().unwrap(), DataType::BFloat16);
    }

    #[test]
    fn dtype_unknown_name_is_an_error_naming_the_input() {
        let err = "quad".parse::<DataType>().unwrap_err();
        match &err {
            Error::UnknownName { kind, given, .. } => {
                assert_eq!(*kind, "data type");
                assert_eq!(given, "quad");
            }
            other => panic!("expected UnknownName, got {other:?}"),
        }
        assert!(err.to_string().contains("quad"));
        assert!(err.to_string().contains("f64"));
    }

    #[test]
    fn dtype_classification() {
        let complex: Vec<_> = DataType::ALL
            .into_iter()
            .filter(|d| d.is_complex())
            .collect();
        assert_eq!(complex, [DataType::ComplexFloat, DataType::ComplexDouble]);
        let ints: Vec<_> = DataType::ALL
            .into_iter()
            .filter(|d| d.is_integer())
            .collect();
        assert_eq!(ints, [DataType::Int, DataType::Int64]);
        assert!(DataType::Half.is_float() && !DataType::Int.is_float());
        assert_eq!(DataType::ComplexFloat.real_type(), DataType::Float);
        assert_eq!(DataType::BFloat16.real_type(), DataType::BFloat16);
    }

    #[test]
    fn scalar_conj_re_im() {
        let z = c64::new(1.5, -2.0);
        assert_eq!(z.conj(), c64::new(1.5, 2.0));
        assert_eq!(Scalar::re(z), 1.5);
        assert_eq!(Scalar::im(z), -2.0);
        assert_eq!(Scalar::conj(3i32), 3);
        assert_eq!(Scalar::im(3.0f32), 0.0);
        assert_eq!(f16::from_f32(0.5).to_c64(), c64::new(0.5, 0.0));
    }
}
