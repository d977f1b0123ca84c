//! Element-wise mathematical functions on tensors: `sin`, `cos`, `tan`, `log`, `log1p`,
//! `expm1`, `square`, `reciprocal`, `rsqrt`, `sign`, `floor`, `ceil`, `round`, `neg`,
//! `sqrt`, `exp` (one [`MathOp`] each) and of two arguments `pow`, `atan2`, `hypot`,
//! `copysign`, `fmod`, `logaddexp` (one [`BinaryMathOp`] each); formulas for complex arguments in
//! [`ctensor_kernels::elementwise::math`]. All go through the one element-wise engine, so
//! each has the same forms: a new tensor, in place ([`Tensor::math_`]) and into an
//! existing tensor ([`Tensor::math_into`], [`Tensor::binary_math_into`]); operands of any
//! layout, broadcasting and promotion.
//! Integers keep their type for `square`, `sign`, `floor`, `ceil` and `round`, and are
//! computed in `f64` for the others (as NumPy and PyTorch do); complex tensors have no
//! `floor`, `ceil` or `round` (`Error::UnsupportedDType`).
//!
//! Powers: [`Tensor::pow`] (a tensor exponent, broadcasting and promoting) and
//! [`Tensor::pow_scalar`] (a number, weakly promoted: `x.pow_scalar(2)` keeps `x`'s type),
//! by the rules of [`ctensor_kernels::elementwise::math`]: C's `pow` for real types, exact
//! square-and-multiply for integers (wrapping), and for complex bases repeated
//! multiplication when the exponent is a real integer of modulus at most 100 (as NumPy),
//! `exp(w log z)` otherwise.

use ctensor_base::{DataType, Error, Result};
pub use ctensor_kernels::elementwise::math::{BinaryMathOp, MathOp};

use super::elementwise;
use super::shape_of;
use crate::core::promotion::Number;
use crate::core::tensor::Tensor;

impl Tensor {
    /// `op` of every element into a new row-major tensor (integers in `f64` for the
    /// functions that do not take them, see [`MathOp::for_integers`]).
    ///
    /// ```
    /// use ctensor_aten::{MathOp, Tensor};
    /// let x = Tensor::from_slice(&[4.0f64, 9.0], &[2])?;
    /// assert_eq!(x.math(MathOp::Sqrt)?.to_vec::<f64>()?, [2.0, 3.0]);
    /// # Ok::<(), ctensor_aten::Error>(())
    /// ```
    pub fn math(&self, op: MathOp) -> Result<Tensor> {
        elementwise::math(self, op)
    }

    /// `self := op(self)` in place, computed in `self`'s type (so an integer tensor takes
    /// only the functions defined for integers).
    pub fn math_(&mut self, op: MathOp) -> Result<()> {
        elementwise::math_into(&self.share(), op, self)
    }

    /// `out = op(self)` into an existing tensor of `self`'s shape (any layout), computed
    /// in `out`'s type, which must hold `self`'s ([`can_cast`](crate::can_cast)).
    pub fn math_into(&self, op: MathOp, out: &mut Tensor) -> Result<()> {
        if out.dims() != self.dims() {
            return Err(Error::ShapeMismatch {
                op: op.name(),
                expected: format!("an output of the input's shape {:?}", self.dims()),
                got: vec![out.dims().to_vec()],
            });
        }
        elementwise::math_into(self, op, out)
    }

    /// `op(self, other)` element-wise (broadcasting; both promote to their common type;
    /// integers in `f64` for the functions that do not take them).
    ///
    /// ```
    /// use ctensor_aten::{BinaryMathOp, Tensor};
    /// let y = Tensor::from_slice(&[1.0f64, -1.0], &[2])?;
    /// let x = Tensor::from_slice(&[1.0f64, 1.0], &[2])?;
    /// let a = y.binary_math(&x, BinaryMathOp::Atan2)?.to_vec::<f64>()?;
    /// assert!((a[0] - std::f64::consts::FRAC_PI_4).abs() < 1e-15 && a[1] < 0.0);
    /// # Ok::<(), ctensor_aten::Error>(())
    /// ```
    pub fn binary_math(&self, other: &Tensor, op: BinaryMathOp) -> Result<Tensor> {
        if op == BinaryMathOp::Pow {
            return self.pow(other);
        }
        elementwise::binary_math(self, other, op)
    }

    /// `op(self, s)` for a number, weakly promoted ([`Number`]).
    pub fn binary_math_scalar(&self, s: impl Into<Number>, op: BinaryMathOp) -> Result<Tensor> {
        if op == BinaryMathOp::Pow {
            return self.pow_scalar(s);
        }
        elementwise::binary_math_number(self, s.into(), op, false)
    }

    /// `out = op(self, other)` into an existing tensor of the broadcast shape (any
    /// layout), computed in `out`'s type, which must hold the operands' promoted type.
    /// (`out` may be `self`: `x.binary_math_into(&y, op, &mut x.share())` is in place.)
    pub fn binary_math_into(
        &self,
        other: &Tensor,
        op: BinaryMathOp,
        out: &mut Tensor,
    ) -> Result<()> {
        if op == BinaryMathOp::Pow && other.dtype().is_integer() {
            check_exponents("pow", other)?;
        }
        elementwise::binary_math_into(self, other, op, out)
    }
}

impl Tensor {
    /// `self ^ exponent` element-wise (broadcasting; both promote to their common type,
    /// as NumPy's `power`): `x.pow(&e)`. Integer powers are exact and wrap; a negative
    /// integer exponent is an error, as in NumPy (cast to a float type first). Real
    /// types follow C's `pow` (`x^0 = 1` even for NaN; a negative base with a
    /// non-integer exponent is NaN: use a complex type for the principal value).
    ///
    /// ```
    /// use ctensor_aten::Tensor;
    /// let x = Tensor::from_slice(&[2.0f64, 9.0, 0.5], &[3])?;
    /// let e = Tensor::from_slice(&[3.0f64, 0.5, -1.0], &[3])?;
    /// assert_eq!(x.pow(&e)?.to_vec::<f64>()?, [8.0, 3.0, 2.0]);
    /// # Ok::<(), ctensor_aten::Error>(())
    /// ```
    pub fn pow(&self, exponent: &Tensor) -> Result<Tensor> {
        shape_of("pow", &[self, exponent])?;
        if exponent.dtype().is_integer() && self.dtype().is_integer() {
            check_exponents("pow", exponent)?;
        }
        elementwise::binary_math(self, exponent, BinaryMathOp::Pow)
    }

    /// `self ^ exponent` for a number, weakly promoted ([`Number`]): an `f32` tensor stays
    /// `f32` for `2`, `2.0` or `0.5`; an integer tensor stays integer for an integer
    /// exponent (which must not be negative) and becomes `f64` for a real one.
    pub fn pow_scalar(&self, exponent: impl Into<Number>) -> Result<Tensor> {
        let op = "pow_scalar";
        let e = exponent.into();
        let dtype = e.result_type_with(self.dtype());
        if dtype.is_integer() {
            let probe = e
                .tensor(DataType::Int64, self.device())
                .map_err(|e| e.in_op(op))?;
            check_exponents(op, &probe)?;
        }
        elementwise::binary_math_number(self, e, BinaryMathOp::Pow, false)
            .map_err(|err| err.in_op(op))
    }
}

/// Refuses negative integer exponents, naming the first (NumPy refuses them too).
fn check_exponents(op: &'static str, y: &Tensor) -> Result<()> {
    let negative = y.lt_scalar(0)?;
    if negative.any()? {
        let k = negative.argmax_all()?;
        let v = y.reshape(&[-1])?.narrow(0, k, 1)?.cast(DataType::Int64)?;
        return Err(Error::InvalidArgument {
            op,
            expected: "non-negative exponents for an integer power (cast to a float type \
                       for negative powers)"
                .into(),
            given: format!("the exponent {} at flat index {k}", v.to_vec::<i64>()?[0]),
        });
    }
    Ok(())
}

macro_rules! math_methods {
    ($($(#[$doc:meta])* $name:ident => $op:ident;)*) => {
        impl Tensor {
            $(
                $(#[$doc])*
                pub fn $name(&self) -> Result<Tensor> {
                    self.math(MathOp::$op)
                }
            )*
        }
    };
}

macro_rules! binary_methods {
    ($($(#[$doc:meta])* $name:ident, $scalar:ident => $op:ident;)*) => {
        impl Tensor {
            $(
                $(#[$doc])*
                pub fn $name(&self, other: &Tensor) -> Result<Tensor> {
                    self.binary_math(other, BinaryMathOp::$op)
                }

                #[doc = concat!("[`", stringify!($name), "`](Self::", stringify!($name), ") with a number (weak promotion, as [`Number`]).")]
                pub fn $scalar(&self, s: impl Into<Number>) -> Result<Tensor> {
                    self.binary_math_scalar(s, BinaryMathOp::$op)
                }
            )*
        }
    };
}

binary_methods! {
    /// Element-wise `atan2(self, other)`: the angle of the point `(other, self)` in
    /// `[-π, π]` (NumPy's `arctan2`); real types, integers in `f64`.
    atan2, atan2_scalar => Atan2;
    /// Element-wise `sqrt(self² + other²)` without undue overflow (C's `hypot`); real
    /// types, integers in `f64`.
    hypot, hypot_scalar => Hypot;
    /// Element-wise `|self|` with the sign of `other` (C's `copysign`); real types,
    /// integers in `f64`.
    copysign, copysign_scalar => Copysign;
    /// Element-wise remainder of `self / other` with the sign of `self` (C's and NumPy's
    /// `fmod`); integers stay integer, and an integer divisor of 0 gives 0 (as NumPy).
    fmod, fmod_scalar => Fmod;
    /// Element-wise `log(exp(self) + exp(other))` without overflow (NumPy's
    /// `logaddexp`); real types, integers in `f64`.
    logaddexp, logaddexp_scalar => Logaddexp;
}

math_methods! {
    /// Element-wise sine.
    sin => Sin;
    /// Element-wise cosine.
    cos => Cos;
    /// Element-wise tangent.
    tan => Tan;
    /// Element-wise natural logarithm (principal branch for complex; NaN below 0 for reals).
    log => Log;
    /// Element-wise `log(1 + x)`, accurate for small `x`.
    log1p => Log1p;
    /// Element-wise `exp(x) − 1`, accurate for small `x`.
    expm1 => Expm1;
    /// Element-wise `x²` (wrapping for integers).
    square => Square;
    /// Element-wise `1 / x` (integers in `f64`).
    reciprocal => Reciprocal;
    /// Element-wise `1 / sqrt(x)` (integers in `f64`).
    rsqrt => Rsqrt;
    /// Element-wise sign: −1, 0 or 1 (NaN stays NaN, ±0 keep their sign); `z / |z|` for
    /// complex.
    sign => Sign;
    /// Element-wise floor (real types; the identity for integers).
    floor => Floor;
    /// Element-wise ceiling (real types; the identity for integers).
    ceil => Ceil;
    /// Element-wise rounding to the nearest integer, half to even (NumPy's `round`).
    round => Round;
    /// Element-wise square root (principal branch for complex; NaN below 0 for reals;
    /// integers in `f64`).
    sqrt => Sqrt;
    /// Element-wise exponential (integers in `f64`).
    exp => Exp;
}
