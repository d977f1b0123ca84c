//! [`Math`] on the host: the formulas of [`crate::math`], element by element, split
//! across threads above the parallel threshold.

use ctensor_base::{CpuDevice, Error, Result};

use super::linalg::map_elements;
use crate::math::{Math, MathOp, MathScalar};

impl<T: MathScalar> Math<T> for CpuDevice {
    unsafe fn math(op: MathOp, n: usize, x: *const T, y: *mut T) -> Result<()> {
        let probe = T::zero().up();
        if T::math(op, probe).is_none() {
            return Err(Error::UnsupportedDType {
                op: op.name(),
                dtype: T::DTYPE,
                supported: if op.for_complex() {
                    "f32, f64, c32, c64, f16, bf16 (the tensor op computes integers in f64)"
                } else {
                    "f32, f64, i32, i64, f16, bf16 (complex numbers have no floor, ceiling or rounding)"
                },
            });
        }
        // SAFETY: forwarded contract; `unwrap_or` is unreachable (checked above).
        unsafe {
            map_elements(op.name(), n, [x], y, move |[v]| {
                T::down(T::math(op, v.up()).unwrap_or(probe))
            })
        }
    }
}
