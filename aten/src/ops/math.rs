//! Element-wise mathematical functions on tensors: `sin`, `cos`, `tan`, `log`, `log1p`,
//! `expm1`, `square`, `reciprocal`, `rsqrt`, `sign`, `floor`, `ceil`, `round` (the
//! [`Math`] kernel; formulas for complex arguments in [`ctensor_kernels::elementwise::math`]).
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
use ctensor_kernels::elementwise::math::{Math, MathOp, Pow};

use super::{dense_as, promote, promote_to, shape_of};
use crate::core::dispatch::dispatch;
use crate::core::promotion::Number;
use crate::core::tensor::Tensor;

impl Tensor {
    /// `op` of every element into a new row-major tensor.
    fn math(&self, op: MathOp) -> Result<Tensor> {
        let x = if self.dtype().is_integer() && !op.for_integers() {
            self.cast(DataType::Double)?
        } else {
            self.dense()?
        };
        let out = Tensor::new(x.dtype(), x.device(), x.dims())?;
        let _w = out.buffer.write(op.name())?;
        let _r = x.buffer.read(op.name())?;
        dispatch!(x.dtype(), x.device(), T, D => {
            // SAFETY: `x` is dense with numel elements of T, `out` fresh with as many, on
            // this device; the guards hold them.
            unsafe { <D as Math<T>>::math(op, x.numel(), x.typed_ptr::<T>(), out.typed_ptr::<T>()) }
        })?;
        drop((_w, _r));
        Ok(out)
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
        let op = "pow";
        let shape = shape_of(op, &[self, exponent])?;
        let p = promote(op, &[self, exponent])?;
        pow_of(op, &p[0], &p[1], &shape)
    }

    /// `self ^ exponent` for a number, weakly promoted ([`Number`]): an `f32` tensor stays
    /// `f32` for `2`, `2.0` or `0.5`; an integer tensor stays integer for an integer
    /// exponent (which must not be negative) and becomes `f64` for a real one.
    pub fn pow_scalar(&self, exponent: impl Into<Number>) -> Result<Tensor> {
        let op = "pow_scalar";
        let e = exponent.into();
        let dtype = e.result_type_with(self.dtype());
        let x = promote_to(op, &[self], dtype)?.remove(0);
        let y = e.tensor(dtype, self.device()).map_err(|e| e.in_op(op))?;
        pow_of(op, &x, &y, self.dims())
    }
}

/// `x ^ y` for operands of one type, broadcast to `shape`.
fn pow_of(op: &'static str, x: &Tensor, y: &Tensor, shape: &[usize]) -> Result<Tensor> {
    let (x, y) = (dense_as(x, shape)?, dense_as(y, shape)?);
    if y.dtype().is_integer() {
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
    }
    let out = Tensor::new(x.dtype(), x.device(), shape)?;
    let _w = out.buffer.write(op)?;
    let _r = (x.buffer.read(op)?, y.buffer.read(op)?);
    dispatch!(x.dtype(), x.device(), T, D => {
        // SAFETY: `x` and `y` are dense with numel elements of T, `out` fresh with as
        // many, on one device; the guards hold them.
        unsafe { <D as Pow<T>>::pow(out.numel(), x.typed_ptr::<T>(), y.typed_ptr::<T>(), out.typed_ptr::<T>()) }
    })?;
    drop((_w, _r));
    Ok(out)
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
}
