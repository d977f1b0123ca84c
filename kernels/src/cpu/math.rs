//! [`Math`] and [`BinaryMath`] on the host: the formulas of [`crate::elementwise::math`], element by element, split
//! across threads above the parallel threshold.

use ctensor_base::{CpuDevice, Result};

use super::elementwise::map_elements;
use crate::elementwise::math::{
    check_binary_defined, check_defined, BinaryMath, BinaryMathOp, Math, MathOp, MathScalar,
};

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

impl<T: MathScalar> BinaryMath<T> for CpuDevice {
    unsafe fn binary_math(
        op: BinaryMathOp,
        n: usize,
        x: *const T,
        y: *const T,
        out: *mut T,
    ) -> Result<()> {
        check_binary_defined::<T>(op)?;
        let probe = T::zero().up();
        // SAFETY: forwarded contract; `unwrap_or` is unreachable (checked above).
        unsafe {
            map_elements(op.name(), n, [x, y], out, move |[a, b]| {
                T::down(T::binary(op, a.up(), b.up()).unwrap_or(probe))
            })
        }
    }
}
