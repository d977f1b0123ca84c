//! [`Compare`], [`Classify`], [`Select`] and [`Extreme2`] on the GPU: the kernels of
//! `compare.cu`, one grid-stride thread per element.

use ctensor_base::{GpuDevice, Result, Scalar};

use super::launch::{args, dev, launch_1d};
use super::source::{CLASSIFY, COMPARE_K, EXTREME2, SELECT};
use crate::args as check;
use crate::elementwise::compare::{unordered, *};

impl<T: Scalar> Compare<T> for GpuDevice {
    unsafe fn compare(op: CmpOp, n: usize, x: *const T, y: *const T, out: *mut i32) -> Result<()> {
        if op.is_ordering() && T::DTYPE.is_complex() {
            return Err(unordered("compare", T::DTYPE));
        }
        for (name, p) in [("x", x), ("y", y)] {
            check::non_null("compare", name, p, n)?;
        }
        check::non_null("compare", "out", out, n)?;
        let (n64, code, a, b, o) = (n as u64, op.code(), dev(x), dev(y), dev(out));
        // SAFETY: device memory of n elements each (caller); arguments match the kernel.
        unsafe {
            launch_1d(
                COMPARE_K.get::<T>()?,
                n,
                &mut args![&n64, &code, &a, &b, &o],
            )
        }
    }
}

impl<T: Scalar> Classify<T> for GpuDevice {
    unsafe fn classify(what: Class, n: usize, x: *const T, out: *mut i32) -> Result<()> {
        check::non_null("classify", "x", x, n)?;
        check::non_null("classify", "out", out, n)?;
        let code: i32 = match what {
            Class::Nan => 0,
            Class::Finite => 1,
            Class::Inf => 2,
        };
        let (n64, a, o) = (n as u64, dev(x), dev(out));
        // SAFETY: as in `compare`.
        unsafe { launch_1d(CLASSIFY.get::<T>()?, n, &mut args![&n64, &code, &a, &o]) }
    }
}

impl<T: Scalar> Select<T> for GpuDevice {
    unsafe fn select(
        n: usize,
        mask: *const i32,
        x: *const T,
        y: *const T,
        out: *mut T,
    ) -> Result<()> {
        check::non_null("select", "mask", mask, n)?;
        for (name, p) in [("x", x), ("y", y)] {
            check::non_null("select", name, p, n)?;
        }
        check::non_null("select", "out", out, n)?;
        let (n64, m, a, b, o) = (n as u64, dev(mask), dev(x), dev(y), dev(out));
        // SAFETY: as in `compare`; each thread reads element i before writing it, so an
        // output identical to an input is correct.
        unsafe { launch_1d(SELECT.get::<T>()?, n, &mut args![&n64, &m, &a, &b, &o]) }
    }
}

impl<T: Scalar> Extreme2<T> for GpuDevice {
    unsafe fn extreme2(max: bool, n: usize, x: *const T, y: *const T, out: *mut T) -> Result<()> {
        let op = if max { "maximum" } else { "minimum" };
        if T::DTYPE.is_complex() {
            return Err(unordered(op, T::DTYPE));
        }
        for (name, p) in [("x", x), ("y", y)] {
            check::non_null(op, name, p, n)?;
        }
        check::non_null(op, "out", out, n)?;
        let (n64, mx, a, b, o) = (n as u64, max as i32, dev(x), dev(y), dev(out));
        // SAFETY: as in `select`.
        unsafe { launch_1d(EXTREME2.get::<T>()?, n, &mut args![&n64, &mx, &a, &b, &o]) }
    }
}
