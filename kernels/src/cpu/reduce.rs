//! Row reductions on the host: sums, extremes, their positions, running sums.

use ctensor_base::{CpuDevice, Result};

use crate::args as check;
use crate::elementwise::arith::Arith;
use crate::parallel::{for_each_range, SendPtr};
use crate::reduce::*;

impl<T: Arith> Reduce<T> for CpuDevice {
    unsafe fn reduce(rows: usize, inner: usize, src: *const T, dst: *mut T) -> Result<()> {
        let op = "reduce";
        let n = check::numel(op, &[rows, inner])?;
        check::non_null(op, "src", src, n)?;
        check::non_null(op, "dst", dst, rows)?;
        let (s, d) = (SendPtr(src as *mut T), SendPtr(dst));
        let sum_row = move |r: usize| {
            let mut acc = T::zero().up();
            for j in 0..inner {
                // SAFETY: `r < rows`, `j < inner`, `src` is valid for `rows · inner`.
                acc = T::add(acc, unsafe { s.get().add(r * inner + j).read() }.up());
            }
            T::down(acc)
        };
        if std::ptr::eq(src, dst) {
            // In place: row `r` is summed before `dst[r]` (index r <= r · inner) is
            // written, and later rows start beyond it.
            for r in 0..rows {
                let v = sum_row(r);
                // SAFETY: `r < rows`.
                unsafe { dst.add(r).write(v) };
            }
            return Ok(());
        }
        for_each_range(rows, inner, |range| {
            for r in range {
                let v = sum_row(r);
                // SAFETY: `r < rows`; `dst` is disjoint from `src` here.
                unsafe { d.get().add(r).write(v) };
            }
        });
        Ok(())
    }
}

impl<T: Arith> ReduceExtreme<T> for CpuDevice {
    unsafe fn reduce_extreme(
        max: bool,
        rows: usize,
        inner: usize,
        src: *const T,
        dst: *mut T,
    ) -> Result<()> {
        let op = check::extreme(max, T::DTYPE, rows, inner)?;
        let n = check::numel(op, &[rows, inner])?;
        check::non_null(op, "src", src, n)?;
        check::non_null(op, "dst", dst, rows)?;
        for r in 0..rows {
            // SAFETY: `r · inner + j < rows · inner`; row `r` is read before `dst[r]`
            // (at index r <= r · inner) is written, so in place is safe.
            let v = unsafe {
                let mut acc = src.add(r * inner).read().up();
                for j in 1..inner {
                    let v = src.add(r * inner + j).read().up();
                    if T::is_nan(acc) {
                        break;
                    }
                    // Replace on a NaN (it wins) or on a strictly better value.
                    let better = if max { T::gt(v, acc) } else { T::gt(acc, v) };
                    if T::is_nan(v) || better == Some(true) {
                        acc = v;
                    }
                }
                T::down(acc)
            };
            // SAFETY: `r < rows`.
            unsafe { dst.add(r).write(v) };
        }
        Ok(())
    }
}

impl<T: Arith> ArgExtreme<T> for CpuDevice {
    unsafe fn arg_extreme(
        max: bool,
        rows: usize,
        inner: usize,
        src: *const T,
        dst: *mut i64,
    ) -> Result<()> {
        let op = check::arg_extreme(max, T::DTYPE, rows, inner)?;
        let n = check::numel(op, &[rows, inner])?;
        check::non_null(op, "src", src, n)?;
        check::non_null(op, "dst", dst, rows)?;
        let (s, d) = (SendPtr(src as *mut T), SendPtr(dst));
        for_each_range(rows, inner, |range| {
            for r in range {
                // SAFETY: `r < rows`, `j < inner`: inside `src`; `dst[r]` is written by
                // this range alone, and is an `i64` array, not `src`.
                unsafe {
                    let row = s.get().add(r * inner);
                    let (mut best, mut at) = (row.read().up(), 0usize);
                    for j in 1..inner {
                        if T::is_nan(best) {
                            break;
                        }
                        let v = row.add(j).read().up();
                        // A NaN wins; otherwise only a strictly better value moves `at`.
                        let better = if max { T::gt(v, best) } else { T::gt(best, v) };
                        if T::is_nan(v) || better == Some(true) {
                            (best, at) = (v, j);
                        }
                    }
                    d.get().add(r).write(at as i64);
                }
            }
        });
        Ok(())
    }
}

impl<T: Arith> CumSum<T> for CpuDevice {
    unsafe fn cumsum(rows: usize, inner: usize, src: *const T, dst: *mut T) -> Result<()> {
        let op = "cumsum";
        let n = check::numel(op, &[rows, inner])?;
        check::non_null(op, "src", src, n)?;
        check::non_null(op, "dst", dst, n)?;
        if n == 0 {
            // Nothing to sum, however many empty rows (2^40 of them must not be walked).
            return Ok(());
        }
        let (s, d) = (SendPtr(src as *mut T), SendPtr(dst));
        for_each_range(rows, inner, |range| {
            for r in range {
                let mut acc = T::zero().up();
                for j in 0..inner {
                    let k = r * inner + j;
                    // SAFETY: `k < rows · inner`; element k is read before it is written
                    // (in place), and rows belong to one range each.
                    unsafe {
                        acc = T::add(acc, s.get().add(k).read().up());
                        d.get().add(k).write(T::down(acc));
                    }
                }
            }
        });
        Ok(())
    }
}
