//! Element-wise kernels over broadcast operands on the host, block by block.
//!
//! The element-wise kernels read dense arrays of `n` elements. An operand broadcast to
//! the output's shape (a row `[1, m]` or a column `[r, 1]` against an `[r, m]` block) is
//! not one: [`host_blocks`] walks the row-major output in blocks of [`BLOCK`] elements,
//! copies each such operand's elements of the block into a small buffer that stays in
//! the cache, and runs the dense kernel on the block. An operand is never made dense at
//! the output's size, and the cost over a dense call is a cache-resident copy per block
//! (measured in `make bench`'s "large" table against ndarray, which reads a broadcast
//! operand through its zero stride).

use std::sync::Mutex;

use ctensor_base::{Error, Result};

use crate::parallel::{for_each_range, SendPtr};

/// Elements per block: 2048 (32 KiB of `c64` per operand), so an operand's buffer and
/// the block of the output stay in a core's L2 cache between the copy and the kernel.
pub const BLOCK: usize = 2048;

/// How [`host_blocks`] reads one operand.
#[derive(Clone, Copy, Debug)]
pub enum Operand<'a, T> {
    /// Dense row-major over the output's shape: read where it lies, block by block.
    Dense(*const T),
    /// Strided over the output's shape (strides in elements, one per axis of the shape,
    /// 0 along a broadcast axis): copied into a buffer block by block.
    Strided(*const T, &'a [usize]),
}

/// The longest period (elements) of an operand broadcast along its outermost axis that
/// [`host_blocks`] copies once (a period and a block: at most 0.56 MB of `c64`) rather
/// than block by block.
const PERIODIC_MAX: usize = 16 * BLOCK;

/// How [`host_blocks`] reads one operand, prepared once.
enum View<T> {
    /// In place, at the block's position.
    Dense(SendPtr<T>),
    /// Copied block by block from these [`merged`] axes.
    Gather(SendPtr<T>, Vec<(usize, usize)>),
    /// `pattern[i] = x[i % period]`, read at the block's phase.
    Periodic(Vec<T>, usize),
}

/// An operand's axes with size-1 axes dropped and neighbours that are contiguous in it
/// merged, outermost first, as `(size, stride)`; at least one axis.
fn merged(shape: &[usize], strides: &[usize]) -> Vec<(usize, usize)> {
    let mut dims: Vec<(usize, usize)> = Vec::with_capacity(shape.len());
    for (&n, &s) in shape.iter().zip(strides) {
        if n == 1 {
            continue;
        }
        match dims.last_mut() {
            // The previous axis steps over exactly this one: one axis of both.
            Some((pn, ps)) if *ps == s.wrapping_mul(n) => {
                *pn *= n;
                *ps = s;
            }
            _ => dims.push((n, s)),
        }
    }
    if dims.is_empty() {
        dims.push((1, 0));
    }
    dims
}

/// Copies `run` elements `from[j * step]` to `out[j]`.
///
/// # Safety
/// `from` is valid for reads at every `j * step`, `out` for writes of `run` elements, and
/// the two do not overlap.
#[inline(always)]
unsafe fn copy_run<T: Copy>(from: *const T, step: usize, run: usize, out: *mut T) {
    // SAFETY: forwarded contract.
    unsafe {
        match step {
            // Short runs (a broadcast column of a narrow block): a plain loop, cheaper
            // than a call to `fill` or `memcpy`.
            _ if run <= 8 => {
                for j in 0..run {
                    out.add(j).write(from.add(j * step).read());
                }
            }
            0 => std::slice::from_raw_parts_mut(out, run).fill(from.read()),
            1 => std::ptr::copy_nonoverlapping(from, out, run),
            s => {
                for j in 0..run {
                    out.add(j).write(from.add(j * s).read());
                }
            }
        }
    }
}

/// Copies elements `start..start + len` (row-major order over `dims`, a [`merged`] list)
/// of the strided view at `src` to `dst`; `idx` is scratch of `dims.len()` entries.
///
/// # Safety
/// Every offset the view reaches from `src` is valid for reads; `dst` is valid for
/// writes of `len` elements and disjoint from the view; `start + len` is at most the
/// product of the sizes.
unsafe fn gather<T: Copy>(
    src: *const T,
    dims: &[(usize, usize)],
    idx: &mut [usize],
    start: usize,
    len: usize,
    dst: *mut T,
) {
    if let [(n1, s1), (n0, s0)] = *dims {
        // Two axes (a broadcast row or column of a matrix, the common case): rows
        // without the general carry.
        let (mut i1, mut i0) = (start / n0, start % n0);
        let mut done = 0;
        while done < len && i1 < n1 {
            let run = (n0 - i0).min(len - done);
            // SAFETY: the run lies in row `i1` of the view (`i0 + run <= n0`) and inside
            // `dst` (`done + run <= len`); disjoint (caller).
            unsafe { copy_run(src.add(i1 * s1 + i0 * s0), s0, run, dst.add(done)) };
            done += run;
            i0 = 0;
            i1 += 1;
        }
        return;
    }
    let last = dims.len() - 1;
    // The multi-index of `start` and its offset.
    let mut rem = start;
    let mut off = 0;
    for d in (0..=last).rev() {
        idx[d] = rem % dims[d].0;
        rem /= dims[d].0;
        off += idx[d] * dims[d].1;
    }
    let (n_in, s_in) = dims[last];
    let mut done = 0;
    while done < len {
        let run = (n_in - idx[last]).min(len - done);
        // SAFETY: the run lies inside the view (`idx` is a valid index, the run stays in
        // its innermost axis) and inside `dst` (`done + run <= len`); disjoint (caller).
        unsafe { copy_run(src.add(off), s_in, run, dst.add(done)) };
        done += run;
        idx[last] += run;
        off += run * s_in;
        // Carry into the outer axes.
        let mut d = last;
        while idx[d] == dims[d].0 && d > 0 {
            off -= dims[d].0 * dims[d].1;
            idx[d] = 0;
            d -= 1;
            idx[d] += 1;
            off += dims[d].1;
        }
    }
}

/// Runs `dense(n, inputs, out)` over the dense row-major output `out` of `shape`, block
/// of [`BLOCK`] elements by block: [`Operand::Dense`] inputs and the output are passed
/// at the block's position, [`Operand::Strided`] ones as a buffer holding their
/// elements of the block. Blocks are split across threads as the element-wise kernels
/// split their elements ([`parallel_threshold`](crate::parallel::parallel_threshold)),
/// so `dense` runs on blocks below the threshold, on one thread each. The first error
/// `dense` returns is returned, and no block starts after it.
///
/// # Safety
/// `out` is valid for writes of the product of `shape` elements (of `U`); every
/// [`Operand::Dense`] input is valid for reads of as many elements and is `out` itself
/// (as `dense` allows) or disjoint from it; every offset a [`Operand::Strided`] input
/// reaches through its strides is valid for reads and disjoint from `out`; nothing else
/// accesses these memories meanwhile.
pub unsafe fn host_blocks<T, U, const K: usize>(
    op: &'static str,
    shape: &[usize],
    inputs: [Operand<'_, T>; K],
    out: *mut U,
    dense: impl Fn(usize, [*const T; K], *mut U) -> Result<()> + Sync,
) -> Result<()>
where
    T: Copy + Default + Send + Sync,
    U: Copy + Send + Sync,
{
    let n = shape.iter().try_fold(1usize, |a, &b| a.checked_mul(b));
    let Some(n) = n else {
        return Err(Error::InvalidArgument {
            op,
            expected: "an output shape whose element count fits in usize".into(),
            given: format!("{shape:?}"),
        });
    };
    for x in &inputs {
        if let Operand::Strided(_, s) = x {
            if s.len() != shape.len() {
                return Err(Error::InvalidArgument {
                    op,
                    expected: format!("one stride per axis of the output's shape {shape:?}"),
                    given: format!("strides {s:?}"),
                });
            }
        }
    }
    if n == 0 {
        return Ok(());
    }
    let views: [View<T>; K] = std::array::from_fn(|k| match inputs[k] {
        Operand::Dense(p) => View::Dense(SendPtr(p as *mut T)),
        Operand::Strided(p, s) => {
            let dims = merged(shape, s);
            // Broadcast along the outermost axis: element `i` is element `i % period`,
            // so one copy of a period and a block's worth more serves every block.
            let period: usize = dims[1..].iter().map(|d| d.0).product();
            if dims[0].1 == 0 && period <= PERIODIC_MAX {
                let len = n.min(period + BLOCK - 1);
                let mut pattern = vec![T::default(); len];
                let mut idx = vec![0; dims.len()];
                // SAFETY: `len <= n`; the view is valid and disjoint from the new
                // `pattern` (caller).
                unsafe { gather(p, &dims, &mut idx, 0, len, pattern.as_mut_ptr()) };
                View::Periodic(pattern, period)
            } else {
                View::Gather(SendPtr(p as *mut T), dims)
            }
        }
    });
    let out = SendPtr(out);
    let failed: Mutex<Option<Error>> = Mutex::new(None);
    let stop = std::sync::atomic::AtomicBool::new(false);
    for_each_range(n, 1, |range| {
        // This range's buffers and index scratch, reused by each of its blocks.
        let mut bufs: [Vec<T>; K] = std::array::from_fn(|k| match &views[k] {
            View::Gather(..) => vec![T::default(); BLOCK.min(range.len())],
            _ => Vec::new(),
        });
        let mut idx: [Vec<usize>; K] = std::array::from_fn(|k| match &views[k] {
            View::Gather(_, dims) => vec![0; dims.len()],
            _ => Vec::new(),
        });
        let mut start = range.start;
        while start < range.end {
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                return;
            }
            let len = BLOCK.min(range.end - start);
            let mut ptrs = [std::ptr::null::<T>(); K];
            for k in 0..K {
                ptrs[k] = match &views[k] {
                    View::Dense(p) => p.get().wrapping_add(start) as *const T,
                    // `start % period + len <= pattern.len()`: the pattern holds
                    // `period + BLOCK - 1` elements, or all `n` when fewer, and then
                    // `start % period + len <= start + len <= n`.
                    View::Periodic(pattern, period) => pattern[start % period..].as_ptr(),
                    View::Gather(p, dims) => {
                        // SAFETY: `start + len <= n`; the view is valid and disjoint
                        // from this thread's buffer (caller).
                        unsafe {
                            gather(p.get(), dims, &mut idx[k], start, len, bufs[k].as_mut_ptr())
                        };
                        bufs[k].as_ptr()
                    }
                };
            }
            if let Err(e) = dense(len, ptrs, out.get().wrapping_add(start)) {
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                let mut slot = failed.lock().unwrap_or_else(|p| p.into_inner());
                slot.get_or_insert(e);
                return;
            }
            start += len;
        }
    });
    match failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strides::row_major_strides;

    /// The element at row-major position `i` of `shape` of the strided view `src`.
    fn at(src: &[f64], shape: &[usize], strides: &[usize], mut i: usize) -> f64 {
        let mut off = 0;
        for d in (0..shape.len()).rev() {
            off += (i % shape[d]) * strides[d];
            i /= shape[d];
        }
        src[off]
    }

    #[test]
    fn gather_copies_any_range_of_any_strided_view() {
        let src: Vec<f64> = (0..400).map(|i| i as f64 * 0.5 - 3.0).collect();
        // (shape, strides): broadcast rows and columns, a scalar, a transposed view, a
        // 4-d mix of zero, unit and long strides, size-1 axes.
        let cases: [(&[usize], &[usize]); 7] = [
            (&[7, 5], &[0, 1]),
            (&[7, 5], &[1, 0]),
            (&[3, 4], &[0, 0]),
            (&[5, 7], &[1, 5]),
            (&[2, 3, 1, 4], &[0, 4, 9, 1]),
            (&[3, 2, 5, 3], &[30, 0, 3, 1]),
            (&[1, 9, 1], &[4, 2, 0]),
        ];
        for (shape, strides) in cases {
            let dims = merged(shape, strides);
            let n: usize = shape.iter().product();
            let mut idx = vec![0; dims.len()];
            for start in 0..n {
                for len in [0, 1, 2, 3, n - start] {
                    let len = len.min(n - start);
                    let mut dst = vec![f64::NAN; len + 1];
                    // SAFETY: every offset of these views is below 400; `dst` holds len.
                    unsafe { gather(src.as_ptr(), &dims, &mut idx, start, len, dst.as_mut_ptr()) };
                    for (j, got) in dst[..len].iter().enumerate() {
                        assert_eq!(*got, at(&src, shape, strides, start + j), "{shape:?}");
                    }
                    assert!(dst[len].is_nan(), "wrote past the block");
                }
            }
        }
    }

    #[test]
    fn blocks_match_a_loop_on_every_thread_split() {
        let src: Vec<f64> = (0..200_000)
            .map(|i| ((i * 7919) % 1013) as f64 - 500.0)
            .collect();
        // (output shape, strides of operand b, strides of operand c): a broadcast row
        // and column (periodic, gathered), a scalar, a period above the copied limit,
        // a 3-d period, rows of a wider block (row stride above the row length), a
        // single element, outputs smaller than one period and a block.
        let cases: [(&[usize], &[usize], &[usize]); 8] = [
            (&[1001, 517], &[0, 1], &[1, 0]),
            (&[9, 40_000], &[0, 1], &[0, 0]),
            (&[3, 5, 7], &[0, 7, 1], &[35, 0, 1]),
            (&[61, 5, 7], &[0, 7, 1], &[1, 0, 0]),
            (&[700, 3], &[5, 1], &[0, 1]),
            (&[1], &[0], &[0]),
            (&[2, 3000], &[0, 1], &[1, 0]),
            (&[100_000, 2], &[0, 1], &[1, 0]),
        ];
        for (shape, sb, sc) in cases {
            let n: usize = shape.iter().product();
            let x: Vec<f64> = (0..n).map(|i| (i % 89) as f64 * 0.5).collect();
            let want: Vec<f64> = (0..n)
                .map(|i| x[i] * at(&src, shape, sb, i) + at(&src, shape, sc, i))
                .collect();
            for threshold in [1usize, 5000, usize::MAX] {
                let old = crate::parallel::set_parallel_threshold(threshold);
                let mut out = vec![f64::NAN; n];
                // SAFETY: every offset of the views is below `src.len()`; `x` and `out`
                // hold n elements.
                let got = unsafe {
                    host_blocks(
                        "test",
                        shape,
                        [
                            Operand::Dense(x.as_ptr()),
                            Operand::Strided(src.as_ptr(), sb),
                            Operand::Strided(src.as_ptr(), sc),
                        ],
                        out.as_mut_ptr(),
                        |n, [a, b, c], z| {
                            for i in 0..n {
                                *z.add(i) = *a.add(i) * *b.add(i) + *c.add(i);
                            }
                            Ok(())
                        },
                    )
                };
                crate::parallel::set_parallel_threshold(old);
                got.unwrap();
                assert_eq!(out, want, "{shape:?} {sb:?} {sc:?}, threshold {threshold}");
            }
        }
    }

    #[test]
    fn an_error_stops_the_blocks_and_is_returned() {
        let n = 10 * BLOCK + 3;
        let x = vec![1.0f64; n];
        let mut out = vec![0.0; n];
        let calls = std::sync::atomic::AtomicUsize::new(0);
        // SAFETY: `x` and `out` hold n elements; the strided view is dense.
        let got = unsafe {
            host_blocks(
                "test",
                &[n],
                [Operand::Strided(x.as_ptr(), &row_major_strides(&[n]))],
                out.as_mut_ptr(),
                |_, _, _| {
                    if calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed) == 2 {
                        Err(Error::InvalidArgument {
                            op: "test",
                            expected: "no third block".into(),
                            given: "one".into(),
                        })
                    } else {
                        Ok(())
                    }
                },
            )
        };
        assert!(got.unwrap_err().to_string().contains("no third block"));
        assert!(calls.load(std::sync::atomic::Ordering::Relaxed) < 11);
    }

    #[test]
    fn bad_strides_and_empty_shapes() {
        let x = [1.0f64];
        let mut out = [0.0f64; 4];
        // SAFETY: rejected before any access.
        let e = unsafe {
            host_blocks(
                "test",
                &[2, 2],
                [Operand::Strided(x.as_ptr(), &[0])],
                out.as_mut_ptr(),
                |_, _, _| Ok(()),
            )
        };
        let msg = e.unwrap_err().to_string();
        assert!(
            msg.contains("one stride per axis") && msg.contains("[0]"),
            "{msg}"
        );
        // SAFETY: nothing is read or written for an empty shape.
        unsafe {
            host_blocks(
                "test",
                &[0, usize::MAX],
                [Operand::Strided(x.as_ptr(), &[0, 0])],
                out.as_mut_ptr(),
                |_, _, _| panic!("no block of an empty output"),
            )
        }
        .unwrap();
        // SAFETY: rejected before any access.
        let e = unsafe {
            host_blocks(
                "test",
                &[usize::MAX, 3],
                [Operand::Dense(x.as_ptr())],
                out.as_mut_ptr(),
                |_, _, _| Ok(()),
            )
        };
        assert!(e.unwrap_err().to_string().contains("fits in usize"));
    }
}
