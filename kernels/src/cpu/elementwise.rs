//! Element-wise kernels on the host: arithmetic, the functions of one argument, `EqScalar`.

use ctensor_base::{CpuDevice, Error, Result, Scalar};

use crate::args as check;
use crate::elementwise::arith::Arith;
use crate::elementwise::*;
use crate::parallel::{for_each_range, SendPtr};

/// `out[i] = f([in_0[i], in_1[i], ...])` for `i < n`, split across threads when large.
///
/// The loop runs on slices so the compiler vectorizes it. An input that is the output
/// itself (in place) cannot be a shared slice while the output is a mutable one, so it
/// is read from the output slice, element `i` just before element `i` is written: the
/// in-place loop reads and writes each element once, as a C loop would. The common in
/// place case, the first input being the output (`a.add_(&b)`), has a loop of its own
/// so that it vectorizes; other aliasing patterns (`a.add_(&a)`) take a general loop.
///
/// # Safety
/// Every input is valid for reads and `out` for writes of `n` elements; each input is
/// identical to `out` or disjoint from it.
pub(super) unsafe fn map_elements<T: Scalar, const K: usize>(
    op: &'static str,
    n: usize,
    inputs: [*const T; K],
    out: *mut T,
    f: impl Fn([T; K]) -> T + Sync + Copy,
) -> Result<()> {
    for (k, p) in inputs.iter().enumerate() {
        check::non_null(op, ["x", "y", "z"][k.min(2)], *p, n)?;
    }
    check::non_null(op, "the output", out, n)?;
    let aliased = inputs.map(|p| std::ptr::eq(p, out));
    let first_only = aliased[0] && aliased[1..].iter().all(|&a| !a);
    let any_alias = aliased.iter().any(|&a| a);
    let ins = inputs.map(|p| SendPtr(p as *mut T));
    let out = SendPtr(out);
    for_each_range(n, 1, |range| {
        // Local copies: the scalars captured by `f` then live in registers instead of
        // being reloaded through a reference on every element.
        let (ins, out, f) = (ins, out, f);
        let len = range.len();
        // SAFETY: `range` lies inside `0..n`; this thread alone touches `range` of
        // `out`; non-aliased inputs are disjoint from `out` (caller), so their shared
        // slices never overlap the mutable one; aliased ones are never made slices.
        unsafe {
            let srcs: [&[T]; K] = std::array::from_fn(|k| {
                if aliased[k] {
                    &[][..]
                } else {
                    std::slice::from_raw_parts(ins[k].get().add(range.start), len)
                }
            });
            let o = std::slice::from_raw_parts_mut(out.get().add(range.start), len);
            // Unchecked: every non-empty `srcs[k]` has `len` elements and `i < len`;
            // bounds checks here would keep the loops from vectorizing.
            if !any_alias {
                for (i, o) in o.iter_mut().enumerate() {
                    *o = f(std::array::from_fn(|k| *srcs[k].get_unchecked(i)));
                }
            } else if first_only {
                for (i, o) in o.iter_mut().enumerate() {
                    let cur = *o;
                    *o = f(std::array::from_fn(|k| {
                        if k == 0 {
                            cur
                        } else {
                            *srcs[k].get_unchecked(i)
                        }
                    }));
                }
            } else {
                for (i, o) in o.iter_mut().enumerate() {
                    let cur = *o;
                    *o = f(std::array::from_fn(|k| {
                        if aliased[k] {
                            cur
                        } else {
                            *srcs[k].get_unchecked(i)
                        }
                    }));
                }
            }
        }
    });
    Ok(())
}

impl<T: Scalar> Conj<T> for CpuDevice {
    unsafe fn conj(dst: *mut T, src: *const T, n: usize) -> Result<()> {
        // SAFETY: forwarded contract.
        unsafe { map_elements("conj", n, [src], dst, move |[x]| x.conj()) }
    }
}

impl<T: Arith> Add<T> for CpuDevice {
    unsafe fn add(n: usize, alpha: T, x: *const T, beta: T, y: *const T, z: *mut T) -> Result<()> {
        let (a, b) = (alpha.up(), beta.up());
        let one = T::one().up();
        if a == one && b == one {
            // `x + y` (`a.add(&b)`, `a.add_(&b)`): the same values as the general loop
            // (`Arith::scale` by one is exact), without its two products per element.
            // SAFETY: forwarded contract.
            return unsafe {
                map_elements("add", n, [x, y], z, move |[x, y]| {
                    T::down(T::add(x.up(), y.up()))
                })
            };
        }
        // SAFETY: forwarded contract.
        unsafe {
            map_elements("add", n, [x, y], z, move |[x, y]| {
                T::down(T::add(T::scale(a, x.up()), T::scale(b, y.up())))
            })
        }
    }
}

impl<T: Arith> Mul<T> for CpuDevice {
    unsafe fn scale(n: usize, alpha: T, x: *const T, y: *mut T) -> Result<()> {
        let a = alpha.up();
        // SAFETY: forwarded contract.
        unsafe { map_elements("scale", n, [x], y, move |[x]| T::down(T::scale(a, x.up()))) }
    }

    unsafe fn mul(n: usize, alpha: T, x: *const T, y: *const T, z: *mut T) -> Result<()> {
        let a = alpha.up();
        // SAFETY: forwarded contract.
        unsafe {
            map_elements("mul", n, [x, y], z, move |[x, y]| {
                T::down(T::mul(T::scale(a, x.up()), y.up()))
            })
        }
    }
}

impl<T: Arith> Div<T> for CpuDevice {
    unsafe fn div(n: usize, alpha: T, x: *const T, y: *const T, z: *mut T) -> Result<()> {
        check::non_null("div", "y", y, n)?;
        if T::DTYPE.is_integer() {
            for i in 0..n {
                // SAFETY: `y` is valid for `n` reads (caller).
                if unsafe { y.add(i).read() }.is_bad_divisor() {
                    return Err(Error::InvalidArgument {
                        op: "div",
                        expected: format!("non-zero divisors for integer ({}) division", T::DTYPE),
                        given: format!("y[{i}] = 0"),
                    });
                }
            }
        }
        let a = alpha.up();
        // SAFETY: forwarded contract.
        unsafe {
            map_elements("div", n, [x, y], z, move |[x, y]| {
                T::down(T::div(T::scale(a, x.up()), y.up()))
            })
        }
    }
}

impl<T: Arith> Fma<T> for CpuDevice {
    unsafe fn fma(
        n: usize,
        alpha: T,
        x: *const T,
        y: *const T,
        beta: T,
        z: *const T,
        out: *mut T,
    ) -> Result<()> {
        let (a, b) = (alpha.up(), beta.up());
        // SAFETY: forwarded contract.
        unsafe {
            map_elements("fma", n, [x, y, z], out, move |[x, y, z]| {
                T::down(T::add(
                    T::mul(T::scale(a, x.up()), y.up()),
                    T::scale(b, z.up()),
                ))
            })
        }
    }
}

impl<T: Arith> Abs<T> for CpuDevice {
    unsafe fn abs(n: usize, x: *const T, y: *mut T::Real) -> Result<()> {
        check::non_null("abs", "x", x, n)?;
        check::non_null("abs", "y", y, n)?;
        for i in 0..n {
            // SAFETY: `i < n`; for real `T` reading before writing makes identical
            // ranges safe, and complex ranges are disjoint (caller).
            unsafe { y.add(i).write(x.add(i).read().abs()) };
        }
        Ok(())
    }
}

impl<T: Scalar> EqScalar<T> for CpuDevice {
    unsafe fn eq_scalar(n: usize, x: *const T, s: T, y: *mut T) -> Result<()> {
        let (one, zero) = (T::one(), T::zero());
        // SAFETY: forwarded contract.
        unsafe {
            map_elements(
                "eq_scalar",
                n,
                [x],
                y,
                move |[v]| if v == s { one } else { zero },
            )
        }
    }
}
