//! [`Math`] and [`BinaryMath`] on the GPU: the `math` and `binary_math` kernels of `math.cu`, one grid-stride thread per
//! element; an input identical to the output is read before it is written.

use ctensor_base::{GpuDevice, Result};

use super::launch::{args, dev, launch_1d};
use super::source::{BINARY_MATH_K, MATH_K};
use crate::args as check;
use crate::elementwise::math::{
    check_binary_defined, check_defined, BinaryMath, BinaryMathOp, Math, MathOp, MathScalar,
};

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

impl<T: MathScalar> BinaryMath<T> for GpuDevice {
    unsafe fn binary_math(
        op: BinaryMathOp,
        n: usize,
        x: *const T,
        y: *const T,
        out: *mut T,
    ) -> Result<()> {
        check_binary_defined::<T>(op)?;
        for (name, p) in [("x", x), ("y", y)] {
            check::non_null(op.name(), name, p, n)?;
        }
        check::non_null(op.name(), "out", out, n)?;
        let (n64, code, a, b, o) = (n as u64, op.code(), dev(x), dev(y), dev(out));
        // SAFETY: device memory of n elements each (caller); each thread reads its element
        // of x and y before writing it, so an output identical to an input is fine.
        unsafe {
            launch_1d(
                BINARY_MATH_K.get::<T>()?,
                n,
                &mut args![&n64, &code, &a, &b, &o],
            )
        }
    }
}
