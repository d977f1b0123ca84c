//! Layout kernels on the host: blocked transpose, stride and inflate.

use ctensor_base::{CpuDevice, Result, Scalar};

use crate::args as check;
use crate::parallel::{for_each_range, SendPtr};
use crate::permute::*;
use crate::strides::{row_major_strides, walk_rows};

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
        let p = crate::permute::plan_stride("stride", shape, steps, src, dst)?;
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
