//! [`Math`] on the GPU: the `math` kernel of `math.cu`, one grid-stride thread per
//! element; an input identical to the output is read before it is written.

use ctensor_base::{GpuDevice, Result};

use super::launch::{args, dev, launch_1d};
use super::source::MATH_K;
use crate::check;
use crate::math::{check_defined, Math, MathOp, MathScalar};

impl<T: MathScalar> Math<T> for GpuDevice {
    unsafe fn math(op: MathOp, n: usize, x: *const T, y: *mut T) -> Result<()> {
        check_defined::<T>(op)?;
        check::non_null(op.name(), "x", x, n)?;
        check::non_null(op.name(), "y", y, n)?;
        let (n64, code, a, b) = (n as u64, op.code(), dev(x), dev(y));
        // SAFETY: device memory of n elements each (caller); arguments match the kernel.
        unsafe { launch_1d(MATH_K.get::<T>()?, n, &mut args![&n64, &code, &a, &b]) }
    }
}
