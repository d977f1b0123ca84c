//! NumPy's element-wise functions as module functions: `ctensor.sin(x)`,
//! `ctensor.arctan2(x1, x2)`, `ctensor.less(x1, x2)`... One line per function, each over
//! the one element-wise door of the Rust side ([`MathOp`], [`BinaryMathOp`], the
//! comparisons). Operands are tensors, NumPy arrays or, for the binary ones, Python
//! numbers (weakly promoted, as NumPy 2); promotion follows NumPy's table.

use ctensor_aten::{BinaryMathOp, MathOp};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use crate::nogil;
use crate::tensor::{as_tensor, number, wrap, Cmp, Op, Tensor};

/// `op(x)` for a tensor or an array.
fn unary(x: &Bound<'_, PyAny>, op: MathOp) -> PyResult<Tensor> {
    let t = as_tensor(x)?;
    nogil(x.py(), || t.math(op)).map(wrap)
}

/// `op(x1, x2)`: whichever is a tensor (or array) leads, a number on either side.
pub(crate) fn binary(x1: &Bound<'_, PyAny>, x2: &Bound<'_, PyAny>, op: Op) -> PyResult<Tensor> {
    // A tensor leads (as itself: a comparison's mask stays one); then an array; a Python
    // number on either side stays weakly typed.
    if let Ok(t) = x1.cast::<Tensor>() {
        return t.get().binary(x2, op, false);
    }
    if let Ok(t) = x2.cast::<Tensor>() {
        return t.get().binary(x1, op, true);
    }
    if number(x1)?.is_none() {
        if let Ok(a) = as_tensor(x1) {
            return wrap(a).binary(x2, op, false);
        }
    }
    match as_tensor(x2) {
        Ok(b) if number(x2)?.is_none() => wrap(b).binary(x1, op, true),
        _ => Err(PyTypeError::new_err(format!(
            "expected a ctensor.Tensor or an array for one of the operands, got {} and {}",
            x1.get_type().name()?,
            x2.get_type().name()?
        ))),
    }
}

macro_rules! unary_functions {
    ($($(#[$doc:meta])* $name:ident => $op:ident;)*) => {
        $(
            $(#[$doc])*
            #[pyfunction]
            pub(crate) fn $name(x: &Bound<'_, PyAny>) -> PyResult<Tensor> {
                unary(x, MathOp::$op)
            }
        )*
    };
}

macro_rules! binary_functions {
    ($($(#[$doc:meta])* $name:ident => $op:expr;)*) => {
        $(
            $(#[$doc])*
            #[pyfunction]
            pub(crate) fn $name(x1: &Bound<'_, PyAny>, x2: &Bound<'_, PyAny>) -> PyResult<Tensor> {
                binary(x1, x2, $op)
            }
        )*
    };
}

unary_functions! {
    /// Element-wise sine.
    sin => Sin;
    /// Element-wise cosine.
    cos => Cos;
    /// Element-wise tangent.
    tan => Tan;
    /// Element-wise natural logarithm.
    log => Log;
    /// Element-wise log(1 + x).
    log1p => Log1p;
    /// Element-wise exp(x) - 1.
    expm1 => Expm1;
    /// Element-wise x².
    square => Square;
    /// Element-wise 1 / x.
    reciprocal => Reciprocal;
    /// Element-wise 1 / sqrt(x).
    rsqrt => Rsqrt;
    /// Element-wise sign (z / |z| for complex).
    sign => Sign;
    /// Element-wise floor.
    floor => Floor;
    /// Element-wise ceiling.
    ceil => Ceil;
    /// Element-wise rounding, half to even (NumPy's rint).
    rint => Round;
    /// Element-wise -x.
    negative => Neg;
    /// Element-wise square root.
    sqrt => Sqrt;
    /// Element-wise exponential.
    exp => Exp;
}

binary_functions! {
    /// Element-wise x1 ** x2.
    power => Op::Math(BinaryMathOp::Pow);
    /// Element-wise arctan(x1 / x2) in the right quadrant.
    arctan2 => Op::Math(BinaryMathOp::Atan2);
    /// Element-wise sqrt(x1² + x2²).
    hypot => Op::Math(BinaryMathOp::Hypot);
    /// Element-wise |x1| with the sign of x2.
    copysign => Op::Math(BinaryMathOp::Copysign);
    /// Element-wise C fmod: the remainder with the sign of x1.
    fmod => Op::Math(BinaryMathOp::Fmod);
    /// Element-wise log(exp(x1) + exp(x2)) without overflow.
    logaddexp => Op::Math(BinaryMathOp::Logaddexp);
    /// Element-wise x1 < x2 as an int32 0/1 mask.
    less => Op::Cmp(Cmp::Lt);
    /// Element-wise x1 <= x2 as an int32 0/1 mask.
    less_equal => Op::Cmp(Cmp::Le);
    /// Element-wise x1 > x2 as an int32 0/1 mask.
    greater => Op::Cmp(Cmp::Gt);
    /// Element-wise x1 >= x2 as an int32 0/1 mask.
    greater_equal => Op::Cmp(Cmp::Ge);
    /// Element-wise x1 == x2 as an int32 0/1 mask.
    equal => Op::Cmp(Cmp::Eq);
    /// Element-wise x1 != x2 as an int32 0/1 mask.
    not_equal => Op::Cmp(Cmp::Ne);
}

/// Adds every function of this file to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    for f in [
        wrap_pyfunction!(sin, m)?,
        wrap_pyfunction!(cos, m)?,
        wrap_pyfunction!(tan, m)?,
        wrap_pyfunction!(log, m)?,
        wrap_pyfunction!(log1p, m)?,
        wrap_pyfunction!(expm1, m)?,
        wrap_pyfunction!(square, m)?,
        wrap_pyfunction!(reciprocal, m)?,
        wrap_pyfunction!(rsqrt, m)?,
        wrap_pyfunction!(sign, m)?,
        wrap_pyfunction!(floor, m)?,
        wrap_pyfunction!(ceil, m)?,
        wrap_pyfunction!(rint, m)?,
        wrap_pyfunction!(negative, m)?,
        wrap_pyfunction!(sqrt, m)?,
        wrap_pyfunction!(exp, m)?,
        wrap_pyfunction!(power, m)?,
        wrap_pyfunction!(arctan2, m)?,
        wrap_pyfunction!(hypot, m)?,
        wrap_pyfunction!(copysign, m)?,
        wrap_pyfunction!(fmod, m)?,
        wrap_pyfunction!(logaddexp, m)?,
        wrap_pyfunction!(less, m)?,
        wrap_pyfunction!(less_equal, m)?,
        wrap_pyfunction!(greater, m)?,
        wrap_pyfunction!(greater_equal, m)?,
        wrap_pyfunction!(equal, m)?,
        wrap_pyfunction!(not_equal, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}
