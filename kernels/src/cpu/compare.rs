//! [`Compare`], [`Classify`], [`Select`] and [`Extreme2`] on the host, split across
//! threads above the parallel threshold.

use ctensor_base::{CpuDevice, Result, Scalar};

use crate::args as check;
use crate::elementwise::arith::Arith;
use crate::elementwise::compare::{unordered, *};
use crate::parallel::{for_each_range, SendPtr};

/// `out[i] = f(i)` for `i < n`, split across threads above the threshold.
///
/// # Safety
/// `out` is valid for writes of `n` values and not read by `f`.
unsafe fn fill<R: Copy + Send + Sync>(n: usize, out: *mut R, f: impl Fn(usize) -> R + Sync) {
    let out = SendPtr(out);
    for_each_range(n, 1, |range| {
        for i in range {
            // SAFETY: `i < n`; each index is written by one range only.
            unsafe { *out.get().add(i) = f(i) };
        }
    });
}

impl<T: Arith> Compare<T> for CpuDevice {
    unsafe fn compare(op: CmpOp, n: usize, x: *const T, y: *const T, out: *mut i32) -> Result<()> {
        if op.is_ordering() && T::DTYPE.is_complex() {
            return Err(unordered("compare", T::DTYPE));
        }
        for (name, p) in [("x", x), ("y", y)] {
            check::non_null("compare", name, p, n)?;
        }
        check::non_null("compare", "out", out, n)?;
        let (x, y) = (SendPtr(x as *mut T), SendPtr(y as *mut T));
        // SAFETY: `x`, `y` hold n readable elements and `out` n writable i32s (caller);
        // `out` is a different type's array, so it is not an input.
        unsafe {
            fill(n, out, |i| {
                let (a, b) = ((*x.get().add(i)).up(), (*y.get().add(i)).up());
                let nan = T::is_nan(a) || T::is_nan(b);
                let gt = |p, q| T::gt(p, q).unwrap_or(false);
                let r = match op {
                    CmpOp::Lt => gt(b, a),
                    CmpOp::Le => !nan && !gt(a, b),
                    CmpOp::Gt => gt(a, b),
                    CmpOp::Ge => !nan && !gt(b, a),
                    CmpOp::Eq => a == b,
                    CmpOp::Ne => a != b,
                };
                r as i32
            })
        };
        Ok(())
    }
}

impl<T: Arith> Classify<T> for CpuDevice {
    unsafe fn classify(what: Class, n: usize, x: *const T, out: *mut i32) -> Result<()> {
        check::non_null("classify", "x", x, n)?;
        check::non_null("classify", "out", out, n)?;
        let x = SendPtr(x as *mut T);
        // SAFETY: as in `compare`.
        unsafe {
            fill(n, out, |i| {
                let a = (*x.get().add(i)).up();
                let r = match what {
                    Class::Nan => T::is_nan(a),
                    Class::Finite => T::is_finite(a),
                    Class::Inf => !T::is_nan(a) && !T::is_finite(a),
                };
                r as i32
            })
        };
        Ok(())
    }
}

impl<T: Scalar> Select<T> for CpuDevice {
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
        let (m, x, y) = (
            SendPtr(mask as *mut i32),
            SendPtr(x as *mut T),
            SendPtr(y as *mut T),
        );
        // SAFETY: every pointer holds n elements (caller); element i of `out` is written
        // after element i of the inputs is read, and inputs are identical to or disjoint
        // from `out`, so in place is correct.
        unsafe {
            fill(n, out, |i| {
                if *m.get().add(i) != 0 {
                    *x.get().add(i)
                } else {
                    *y.get().add(i)
                }
            })
        };
        Ok(())
    }
}

impl<T: Arith> Extreme2<T> for CpuDevice {
    unsafe fn extreme2(max: bool, n: usize, x: *const T, y: *const T, out: *mut T) -> Result<()> {
        let op = if max { "maximum" } else { "minimum" };
        if T::DTYPE.is_complex() {
            return Err(unordered(op, T::DTYPE));
        }
        for (name, p) in [("x", x), ("y", y)] {
            check::non_null(op, name, p, n)?;
        }
        check::non_null(op, "out", out, n)?;
        let (x, y) = (SendPtr(x as *mut T), SendPtr(y as *mut T));
        // SAFETY: as in `select`.
        unsafe {
            fill(n, out, |i| {
                let (p, q) = (*x.get().add(i), *y.get().add(i));
                let (a, b) = (p.up(), q.up());
                // NaN wins; otherwise `q` only when strictly beyond `p`, so ties (-0 and
                // +0) keep `x`, as NumPy's maximum and minimum.
                let beyond = if max { T::gt(b, a) } else { T::gt(a, b) };
                if T::is_nan(a) {
                    p
                } else if T::is_nan(b) || beyond.unwrap_or(false) {
                    q
                } else {
                    p
                }
            })
        };
        Ok(())
    }
}
