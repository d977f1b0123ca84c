//! Element-wise and layout kernels on the host.

use ctensor_base::{CpuDevice, Error, Result, Scalar};

use crate::arith::Arith;
use crate::check;
use crate::layout::{row_major_strides, walk_rows};
use crate::linalg::*;
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

/// Tile edge of the blocked transpose: a 32 × 32 tile of 16-byte elements is 16 KiB, so
/// the source and destination tiles of any element type share a 32–48 KiB L1 cache.
const TILE: usize = 32;

/// One output axis of a transpose after merging: its length, its stride in the source
/// and its stride in the (row-major) destination.
#[derive(Clone, Copy, Debug)]
struct Axis {
    len: usize,
    src: usize,
    dst: usize,
}

/// Source and destination offsets of the `t`-th combination of `axes` (row-major).
fn offsets(axes: &[Axis], mut t: usize) -> (usize, usize) {
    let (mut s, mut d) = (0, 0);
    for ax in axes.iter().rev() {
        let i = t % ax.len;
        t /= ax.len;
        s += i * ax.src;
        d += i * ax.dst;
    }
    (s, d)
}

#[inline(always)]
fn maybe_conj<T: Scalar, const CONJ: bool>(v: T) -> T {
    if CONJ {
        v.conj()
    } else {
        v
    }
}

/// The transpose proper on disjoint `src` and `dst` (`n > 0` elements).
///
/// # Safety
/// As for [`Transpose::transpose`], with `src` and `dst` disjoint.
unsafe fn transpose_disjoint<T: Scalar, const CONJ: bool>(
    shape: &[usize],
    perm: &[usize],
    src: *const T,
    dst: *mut T,
) {
    let in_strides = row_major_strides(shape);
    // Output axes, outermost first, size-1 axes dropped, neighbours that stay
    // contiguous in the source merged.
    let mut axes: Vec<Axis> = Vec::new();
    for &p in perm {
        let (len, s) = (shape[p], in_strides[p]);
        if len == 1 {
            continue;
        }
        match axes.last_mut() {
            Some(last) if last.src == s * len => {
                last.len *= len;
                last.src = s;
            }
            _ => axes.push(Axis {
                len,
                src: s,
                dst: 0,
            }),
        }
    }
    let mut acc = 1;
    for ax in axes.iter_mut().rev() {
        ax.dst = acc;
        acc *= ax.len;
    }
    let (src, dst) = (SendPtr(src as *mut T), SendPtr(dst));
    let Some(&last) = axes.last() else {
        // SAFETY: one element (`n > 0`, every axis of length 1).
        unsafe { dst.get().write(maybe_conj::<T, CONJ>(src.get().read())) };
        return;
    };
    if last.src == 1 {
        // The innermost axis is contiguous on both sides: copy whole rows.
        let outer = &axes[..axes.len() - 1];
        let rows: usize = outer.iter().map(|a| a.len).product();
        for_each_range(rows, last.len, |range| {
            let (src, dst) = (src, dst);
            for r in range {
                let (s, _) = offsets(outer, r);
                let d = r * last.len;
                for j in 0..last.len {
                    // SAFETY: offsets stay inside the `n` elements of both arrays.
                    unsafe {
                        let v = src.get().add(s + j).read();
                        dst.get().add(d + j).write(maybe_conj::<T, CONJ>(v));
                    }
                }
            }
        });
        return;
    }
    // The source's contiguous axis `q` is not the destination's: swap tiles of
    // (q, last) so that reads and writes both stay within a cache-sized block.
    let q = axes
        .iter()
        .position(|a| a.src == 1)
        .expect("a dense source has an axis of stride 1");
    let qa = axes[q];
    let outer: Vec<Axis> = axes[..axes.len() - 1]
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != q)
        .map(|(_, a)| *a)
        .collect();
    let outer_count: usize = outer.iter().map(|a| a.len).product();
    let q_tiles = qa.len.div_ceil(TILE);
    for_each_range(outer_count * q_tiles, TILE * last.len, |range| {
        let (src, dst) = (src, dst);
        for t in range {
            let (s0, d0) = offsets(&outer, t / q_tiles);
            let i0 = (t % q_tiles) * TILE;
            let i1 = (i0 + TILE).min(qa.len);
            for j0 in (0..last.len).step_by(TILE) {
                let j1 = (j0 + TILE).min(last.len);
                for i in i0..i1 {
                    let (s, d) = (s0 + i, d0 + i * qa.dst);
                    for j in j0..j1 {
                        // SAFETY: offsets stay inside the `n` elements of both arrays.
                        unsafe {
                            let v = src.get().add(s + j * last.src).read();
                            dst.get().add(d + j).write(maybe_conj::<T, CONJ>(v));
                        }
                    }
                }
            }
        }
    });
}

impl<T: Scalar> Transpose<T> for CpuDevice {
    unsafe fn transpose(
        shape: &[usize],
        perm: &[usize],
        src: *const T,
        dst: *mut T,
        conj: bool,
    ) -> Result<()> {
        let op = "transpose";
        check::perm(op, perm, shape.len())?;
        let n = check::numel(op, shape)?;
        check::non_null(op, "src", src, n)?;
        check::non_null(op, "dst", dst, n)?;
        if n == 0 {
            return Ok(());
        }
        let conj = conj && T::DTYPE.is_complex();
        let tmp;
        let src = if std::ptr::eq(src, dst) {
            // In place: permute out of a copy.
            // SAFETY: `src` is valid for `n` reads (caller).
            tmp = unsafe { std::slice::from_raw_parts(src, n) }.to_vec();
            tmp.as_ptr()
        } else {
            src
        };
        // SAFETY: `src` and `dst` are now disjoint and valid for `n` elements.
        unsafe {
            if conj {
                transpose_disjoint::<T, true>(shape, perm, src, dst)
            } else {
                transpose_disjoint::<T, false>(shape, perm, src, dst)
            }
        }
        Ok(())
    }
}

impl<T: Scalar> Stride<T> for CpuDevice {
    unsafe fn stride(shape: &[usize], steps: &[usize], src: *const T, dst: *mut T) -> Result<()> {
        let p = crate::plan::plan_stride("stride", shape, steps, src, dst)?;
        if p.n_out == 0 {
            return Ok(());
        }
        let (out_shape, dst_strides, src_strides) = (p.out_shape, p.dst_strides, p.src_strides);
        // Row-major order with source index >= destination index at every element and
        // both increasing: reading ahead of writing keeps the in-place case correct.
        walk_rows(
            &out_shape,
            [&dst_strides, &src_strides],
            |[d, s], len, [dd, ds]| {
                for t in 0..len {
                    // SAFETY: offsets stay inside the arrays (caller's sizes, checked shapes).
                    unsafe { dst.add(d + t * dd).write(src.add(s + t * ds).read()) };
                }
            },
        );
        Ok(())
    }
}

impl<T: Scalar> Inflate<T> for CpuDevice {
    unsafe fn inflate(
        shape: &[usize],
        steps: &[usize],
        src: *const T,
        dst_shape: &[usize],
        dst: *mut T,
    ) -> Result<()> {
        let op = "inflate";
        check::steps(op, shape, steps)?;
        check::inflate_shape(op, shape, steps, dst_shape)?;
        let n_in = check::numel(op, shape)?;
        let n_out = check::numel(op, dst_shape)?;
        check::non_null(op, "src", src, n_in)?;
        check::non_null(op, "dst", dst, n_out)?;
        if n_out == 0 {
            return Ok(());
        }
        let in_strides = row_major_strides(shape);
        let rank = shape.len();
        // Walk the destination backwards: every element's source index is at most its
        // destination index, so in place nothing is overwritten before it is read.
        let mut idx: Vec<usize> = dst_shape.iter().map(|&n| n - 1).collect();
        for j in (0..n_out).rev() {
            let mut s = 0;
            let on_grid = (0..rank).all(|d| {
                let (q, r) = (idx[d] / steps[d], idx[d] % steps[d]);
                s += q * in_strides[d];
                r == 0 && q < shape[d]
            });
            let v = if on_grid {
                // SAFETY: `s < n_in` because every `q < shape[d]`.
                unsafe { src.add(s).read() }
            } else {
                T::zero()
            };
            // SAFETY: `j < n_out`.
            unsafe { dst.add(j).write(v) };
            for d in (0..rank).rev() {
                if idx[d] > 0 {
                    idx[d] -= 1;
                    break;
                }
                idx[d] = dst_shape[d] - 1;
            }
        }
        Ok(())
    }
}

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

impl<T: Arith> Unary<T> for CpuDevice {
    unsafe fn unary(op: UnaryOp, n: usize, x: *const T, y: *mut T) -> Result<()> {
        let name = match op {
            UnaryOp::Neg => "neg",
            UnaryOp::Sqrt => "sqrt",
            UnaryOp::Exp => "exp",
        };
        let probe = T::zero().up();
        let defined = match op {
            UnaryOp::Neg => true,
            UnaryOp::Sqrt => T::sqrt(probe).is_some(),
            UnaryOp::Exp => T::exp(probe).is_some(),
        };
        if !defined {
            return Err(Error::UnsupportedDType {
                op: name,
                dtype: T::DTYPE,
                supported: "f32, f64, c32, c64, f16, bf16",
            });
        }
        // SAFETY: forwarded contract. The `unwrap_or` arms are unreachable: `defined`
        // was checked above.
        unsafe {
            match op {
                UnaryOp::Neg => map_elements(name, n, [x], y, move |[v]| T::down(T::neg(v.up()))),
                UnaryOp::Sqrt => map_elements(name, n, [x], y, move |[v]| {
                    T::down(T::sqrt(v.up()).unwrap_or(probe))
                }),
                UnaryOp::Exp => map_elements(name, n, [x], y, move |[v]| {
                    T::down(T::exp(v.up()).unwrap_or(probe))
                }),
            }
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

/// Element `(r, c)` of `op(X)` for column-major `x` with leading dimension `ld`.
///
/// # Safety
/// The element lies inside `x`'s allocation.
#[inline(always)]
unsafe fn op_at<T: Scalar>(
    x: SendPtr<T>,
    t: crate::blas::Trans,
    ld: usize,
    r: usize,
    c: usize,
) -> T {
    use crate::blas::Trans;
    // SAFETY: the caller's promise.
    let v = unsafe {
        match t {
            Trans::N => x.get().add(r + c * ld).read(),
            Trans::T | Trans::C => x.get().add(c + r * ld).read(),
        }
    };
    if t == Trans::C {
        v.conj()
    } else {
        v
    }
}

impl<T: Arith> MatMul<T> for CpuDevice {
    unsafe fn matmul(
        transa: crate::blas::Trans,
        transb: crate::blas::Trans,
        m: usize,
        n: usize,
        k: usize,
        alpha: T,
        a: *const T,
        lda: usize,
        b: *const T,
        ldb: usize,
        beta: T,
        c: *mut T,
        ldc: usize,
    ) -> Result<()> {
        crate::linalg::matmul_via_gemm!(
            CpuDevice, T, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc
        );
        let op = "matmul";
        let p = super::blas::plan_gemm::<T>(op, transa, transb, m, n, k, lda, ldb, ldc)?;
        crate::plan::operands(
            op,
            [
                ("a", a, p.spans[0]),
                ("b", b, p.spans[1]),
                ("c", c as *const T, p.spans[2]),
            ],
        )?;
        let (a, b) = (SendPtr(a as *mut T), SendPtr(b as *mut T));
        let at = move |i: usize, l: usize| {
            // SAFETY: `i < m`, `l < k`: inside the span of `a` checked above.
            unsafe { op_at(a, transa, lda, i, l) }
        };
        let bt = move |l: usize, j: usize| {
            // SAFETY: `l < k`, `j < n`: inside the span of `b` checked above.
            unsafe { op_at(b, transb, ldb, l, j) }
        };
        let (al, be) = (alpha.up(), beta.up());
        let beta_zero = beta == T::zero();
        let s = SendPtr(c);
        for_each_range(n, m * k, |cols| {
            let mut acc = vec![T::zero().up(); m];
            for j in cols {
                acc.iter_mut().for_each(|v| *v = T::zero().up());
                for l in 0..k {
                    let blj = bt(l, j).up();
                    for (i, v) in acc.iter_mut().enumerate() {
                        *v = T::add(*v, T::mul(at(i, l).up(), blj));
                    }
                }
                for (i, v) in acc.iter().enumerate() {
                    // SAFETY: `i < m`, `j < n` inside C; each column belongs to one thread.
                    unsafe {
                        let cij = s.get().add(i + j * ldc);
                        let old = if beta_zero {
                            T::zero().up()
                        } else {
                            T::mul(be, cij.read().up())
                        };
                        cij.write(T::down(T::add(T::mul(al, *v), old)));
                    }
                }
            }
        });
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
