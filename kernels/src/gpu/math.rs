//! [`Math`] on the GPU: the `math` kernel of `math.cu`, one grid-stride thread per
//! element; an input identical to the output is read before it is written.

use ctensor_base::{Error, GpuDevice, Result};

use super::launch::{args, dev, launch_1d};
use super::source::MATH_K;
use crate::check;
use crate::math::{Math, MathOp, MathScalar};

impl<T: MathScalar> Math<T> for GpuDevice {
    unsafe fn math(op: MathOp, n: usize, x: *const T, y: *mut T) -> Result<()> {
        if T::math(op, T::zero().up()).is_none() {
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
        check::non_null(op.name(), "x", x, n)?;
        check::non_null(op.name(), "y", y, n)?;
        let (n64, code, a, b) = (n as u64, op.code(), dev(x), dev(y));
        // SAFETY: device memory of n elements each (caller); arguments match the kernel.
        unsafe { launch_1d(MATH_K.get::<T>()?, n, &mut args![&n64, &code, &a, &b]) }
    }
}
