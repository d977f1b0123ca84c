//! Element-wise kernels on the GPU, through the custom kernels of `cuda/elementwise.cu`.
//!
//! They read element i of each input and write element i of the output, so they are
//! correct in place as they are.

use ctensor_base::gpu::copy_d2h;
use ctensor_base::{Error, GpuDevice, Result, Scalar};

use super::launch::{args, dev, launch_1d, Scratch};
use super::source::{Kernel, ABS, ADD, ANY_ZERO, CONJ, DIV, EQ_SCALAR, FMA, MUL, SCALE};
use crate::args as check;
use crate::elementwise::{Abs, Add, Conj, Div, EqScalar, Fma, Mul};

/// Launches an element-wise kernel `k(n, pointers...)` after the null checks.
///
/// # Safety
/// Every pointer is device memory valid for `n` elements; the output is identical to or
/// disjoint from each input.
unsafe fn unary_kernel<T: Scalar, R: Scalar>(
    k: &Kernel,
    op: &'static str,
    n: usize,
    x: *const T,
    y: *mut R,
) -> Result<()> {
    check::non_null(op, "x", x, n)?;
    check::non_null(op, "y", y, n)?;
    let (n64, xp, yp) = (n as u64, dev(x), dev(y));
    // SAFETY: forwarded contract.
    unsafe { launch_1d(k.get::<T>()?, n, &mut args![&n64, &xp, &yp]) }
}

impl<T: Scalar> Conj<T> for GpuDevice {
    unsafe fn conj(dst: *mut T, src: *const T, n: usize) -> Result<()> {
        // SAFETY: forwarded contract (conj_<t>(n, src, dst)).
        unsafe { unary_kernel(&CONJ, "conj", n, src, dst) }
    }
}

impl<T: Scalar> Add<T> for GpuDevice {
    unsafe fn add(n: usize, alpha: T, x: *const T, beta: T, y: *const T, z: *mut T) -> Result<()> {
        for (name, p) in [("x", x), ("y", y), ("z", z as *const T)] {
            check::non_null("add", name, p, n)?;
        }
        let (n64, xp, yp, zp) = (n as u64, dev(x), dev(y), dev(z));
        // SAFETY: forwarded contract.
        unsafe {
            launch_1d(
                ADD.get::<T>()?,
                n,
                &mut args![&n64, &alpha, &xp, &beta, &yp, &zp],
            )
        }
    }
}

impl<T: Scalar> Mul<T> for GpuDevice {
    unsafe fn scale(n: usize, alpha: T, x: *const T, y: *mut T) -> Result<()> {
        check::non_null("scale", "x", x, n)?;
        check::non_null("scale", "y", y, n)?;
        let (n64, xp, yp) = (n as u64, dev(x), dev(y));
        // SAFETY: forwarded contract.
        unsafe { launch_1d(SCALE.get::<T>()?, n, &mut args![&n64, &alpha, &xp, &yp]) }
    }

    unsafe fn mul(n: usize, alpha: T, x: *const T, y: *const T, z: *mut T) -> Result<()> {
        // SAFETY: forwarded contract.
        unsafe { binary(&MUL, "mul", n, alpha, x, y, z) }
    }
}

/// `z = k(alpha, x, y)` for the kernels with that argument list (mul, div).
///
/// # Safety
/// As for [`Mul::mul`].
unsafe fn binary<T: Scalar>(
    k: &Kernel,
    op: &'static str,
    n: usize,
    alpha: T,
    x: *const T,
    y: *const T,
    z: *mut T,
) -> Result<()> {
    for (name, p) in [("x", x), ("y", y), ("z", z as *const T)] {
        check::non_null(op, name, p, n)?;
    }
    let (n64, xp, yp, zp) = (n as u64, dev(x), dev(y), dev(z));
    // SAFETY: forwarded contract.
    unsafe { launch_1d(k.get::<T>()?, n, &mut args![&n64, &alpha, &xp, &yp, &zp]) }
}

impl<T: Scalar> Div<T> for GpuDevice {
    unsafe fn div(n: usize, alpha: T, x: *const T, y: *const T, z: *mut T) -> Result<()> {
        check::non_null("div", "y", y, n)?;
        if T::DTYPE.is_integer() && n > 0 {
            // Integer division by zero is reported before anything is written, as on the
            // host: one pass finds the first zero divisor on the device, which is read back.
            let first = Scratch::<i64>::new("div", 1)?;
            let (n64, yp, fp) = (n as u64, dev(y), dev(first.ptr()));
            let mut found = 0u64;
            // SAFETY: `y` is valid for `n` device reads (caller); `first` holds one u64.
            unsafe {
                launch_1d(ANY_ZERO.get::<T>()?, n, &mut args![&n64, &yp, &fp])?;
                copy_d2h(&mut found as *mut u64 as *mut u8, fp, 8)?;
            }
            if found != 0 {
                return Err(Error::InvalidArgument {
                    op: "div",
                    expected: format!("non-zero divisors for integer ({}) division", T::DTYPE),
                    given: format!("y[{}] = 0", n as u64 - found),
                });
            }
        }
        // SAFETY: forwarded contract.
        unsafe { binary(&DIV, "div", n, alpha, x, y, z) }
    }
}

impl<T: Scalar> Fma<T> for GpuDevice {
    unsafe fn fma(
        n: usize,
        alpha: T,
        x: *const T,
        y: *const T,
        beta: T,
        z: *const T,
        out: *mut T,
    ) -> Result<()> {
        for (name, p) in [("x", x), ("y", y), ("z", z), ("out", out as *const T)] {
            check::non_null("fma", name, p, n)?;
        }
        let (n64, xp, yp, zp, op) = (n as u64, dev(x), dev(y), dev(z), dev(out));
        // SAFETY: forwarded contract.
        unsafe {
            launch_1d(
                FMA.get::<T>()?,
                n,
                &mut args![&n64, &alpha, &xp, &yp, &beta, &zp, &op],
            )
        }
    }
}

impl<T: Scalar> Abs<T> for GpuDevice {
    unsafe fn abs(n: usize, x: *const T, y: *mut T::Real) -> Result<()> {
        // SAFETY: forwarded contract.
        unsafe { unary_kernel(&ABS, "abs", n, x, y) }
    }
}

impl<T: Scalar> EqScalar<T> for GpuDevice {
    unsafe fn eq_scalar(n: usize, x: *const T, s: T, y: *mut T) -> Result<()> {
        check::non_null("eq_scalar", "x", x, n)?;
        check::non_null("eq_scalar", "y", y, n)?;
        let (n64, xp, yp) = (n as u64, dev(x), dev(y));
        // SAFETY: forwarded contract.
        unsafe { launch_1d(EQ_SCALAR.get::<T>()?, n, &mut args![&n64, &xp, &s, &yp]) }
    }
}
