//! Element-wise mathematical functions on tensors: `sin`, `cos`, `tan`, `log`, `log1p`,
//! `expm1`, `square`, `reciprocal`, `rsqrt`, `sign`, `floor`, `ceil`, `round` (the
//! [`Math`] kernel; formulas for complex arguments in [`ctensor_kernels::math`]).
//! Integers keep their type for `square`, `sign`, `floor`, `ceil` and `round`, and are
//! computed in `f64` for the others (as NumPy and PyTorch do); complex tensors have no
//! `floor`, `ceil` or `round` (`Error::UnsupportedDType`).

use ctensor_base::{DataType, Result};
use ctensor_kernels::math::{Math, MathOp};

use crate::core::dispatch::dispatch;
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
