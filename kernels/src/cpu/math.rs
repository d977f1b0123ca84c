//! [`Math`] and [`Pow`] on the host: the formulas of [`crate::elementwise::math`], element by element, split
//! across threads above the parallel threshold.

use ctensor_base::{CpuDevice, Result};

use super::elementwise::map_elements;
use crate::elementwise::math::{check_defined, Math, MathOp, MathScalar, Pow};

impl<T: MathScalar> Math<T> for CpuDevice {
    unsafe fn math(op: MathOp, n: usize, x: *const T, y: *mut T) -> Result<()> {
        check_defined::<T>(op)?;
        let probe = T::zero().up();
        // SAFETY: forwarded contract; `unwrap_or` is unreachable (checked above).
        unsafe {
            map_elements(op.name(), n, [x], y, move |[v]| {
                T::down(T::math(op, v.up()).unwrap_or(probe))
            })
        }
    }
}

impl<T: MathScalar> Pow<T> for CpuDevice {
    unsafe fn pow(n: usize, x: *const T, y: *const T, out: *mut T) -> Result<()> {
        // SAFETY: forwarded contract.
        unsafe {
            map_elements("pow", n, [x, y], out, |[a, b]| {
                T::down(T::pow(a.up(), b.up()))
            })
        }
    }
}
