//! [`Fft`] on the GPU with cuFFT: one batched plan per layout and rank (1 to 3; cached in
//! the GPU context, bound to ctensor's stream, its work area from ctensor's allocator),
//! executed in place. A block of axes with nothing after it (`inner == 1`: a batch of
//! bands, each a 3-D grid) is one execution over every batch entry; a block with
//! interleaved lines after it (`inner > 1`) is one execution of `inner` interleaved
//! transforms per slab `o < outer`.

use ctensor_base::alloc::Allocation;
use ctensor_base::gpu::{context, FftPlanKey};
use ctensor_base::{DataType, DeviceType, Error, GpuDevice, Result, Scalar};

use super::launch::dev;
use crate::args as check;
use crate::fft::{by_axes, check_complex, Fft, FftDirection};

/// `v` as one of cuFFT's `int` sizes, or the error that says it is too large.
fn int(what: &str, v: usize) -> Result<i32> {
    i32::try_from(v).map_err(|_| Error::Overflow {
        op: "fft",
        what: format!("{what} = {v} exceeds cuFFT's int sizes ({})", i32::MAX),
    })
}

/// The executions of one block transform: the plan's layout and, for each execution,
/// its element offset into the array.
fn executions(
    outer: usize,
    dims: &[usize],
    inner: usize,
    double: bool,
) -> Result<Vec<(FftPlanKey, usize)>> {
    let block: usize = dims.iter().product();
    let mut key_dims = [0i32; 3];
    for (k, &d) in dims.iter().enumerate() {
        key_dims[k] = int("a transform length", d)?;
    }
    // The last element one execution reaches must be an int offset too.
    int("the span of a transform", block * inner)?;
    let rank = dims.len() as u8;
    if inner == 1 {
        // Consecutive blocks, as many per execution as int offsets allow.
        let per = (i32::MAX as usize / block).clamp(1, outer);
        let mut out = Vec::new();
        let mut o = 0;
        while o < outer {
            let batch = per.min(outer - o);
            let key = FftPlanKey {
                rank,
                dims: key_dims,
                stride: 1,
                dist: int("the points of a transform", block)?,
                batch: int("the transforms of one execution", batch)?,
                double,
            };
            out.push((key, o * block));
            o += batch;
        }
        Ok(out)
    } else {
        let key = FftPlanKey {
            rank,
            dims: key_dims,
            stride: int("inner", inner)?,
            dist: 1,
            batch: int("inner", inner)?,
            double,
        };
        Ok((0..outer).map(|o| (key, o * block * inner)).collect())
    }
}

/// Runs the executions of one block transform in place on `data`.
///
/// # Safety
/// `data` is valid for reads and writes of `outer · Π dims · inner` elements of `T`.
unsafe fn run<T: Scalar>(
    direction: FftDirection,
    outer: usize,
    dims: &[usize],
    inner: usize,
    data: *mut T,
) -> Result<()> {
    check_complex(T::DTYPE)?;
    let mut all = vec![outer];
    all.extend_from_slice(dims);
    all.push(inner);
    let n = check::numel("fft", &all)?;
    check::non_null("fft", "data", data, n)?;
    if n == 0 || dims.iter().all(|&d| d == 1) {
        return Ok(());
    }
    let double = T::DTYPE == DataType::ComplexDouble;
    let sign = match direction {
        FftDirection::Forward => -1,
        FftDirection::Inverse => 1,
    };
    let plan_runs = executions(outer, dims, inner, double)?;
    let ctx = context()?;
    let mut i = 0;
    while i < plan_runs.len() {
        let key = plan_runs[i].0;
        // The consecutive executions with this plan (all of them, or all but the last
        // of a chunked batch).
        let same = plan_runs[i..].iter().take_while(|(k, _)| *k == key).count();
        let offsets: Vec<usize> = plan_runs[i..i + same].iter().map(|&(_, o)| o).collect();
        i += same;
        let err = |e: cudarc::cufft::result::CufftError| Error::Cuda {
            library: "cuFFT",
            call: if double {
                "cufftExecZ2Z"
            } else {
                "cufftExecC2C"
            }
            .into(),
            detail: format!("{:?} for {key:?}", e.0),
        };
        ctx.with_cufft_plan(key, |plan, work| {
            // The plan's work area comes from ctensor's (stream-ordered) allocator, freed
            // after the executions queued on the same stream.
            let area = Allocation::zeroed(DeviceType::Gpu, work)?;
            if work > 0 {
                // SAFETY: `area` holds the `work` bytes the plan asked for and outlives
                // the executions in stream order.
                unsafe { cudarc::cufft::result::set_work_area(plan, area.as_ptr() as _) }.map_err(
                    |e| Error::Cuda {
                        library: "cuFFT",
                        call: "cufftSetWorkArea".into(),
                        detail: format!("{:?} for {key:?}", e.0),
                    },
                )?;
            }
            for &off in &offsets {
                let p = dev(data) + (off * std::mem::size_of::<T>()) as u64;
                // SAFETY: the plan covers `batch` transforms of the block from element
                // `off` of the caller's device array (`executions` keeps every one inside
                // it); in place (input = output).
                unsafe {
                    if double {
                        cudarc::cufft::result::exec_z2z(plan, p as _, p as _, sign).map_err(err)?;
                    } else {
                        cudarc::cufft::result::exec_c2c(plan, p as _, p as _, sign).map_err(err)?;
                    }
                }
            }
            Ok(())
        })?;
    }
    Ok(())
}

impl<T: Scalar> Fft<T> for GpuDevice {
    unsafe fn fft_axis(
        direction: FftDirection,
        outer: usize,
        len: usize,
        inner: usize,
        data: *mut T,
    ) -> Result<()> {
        // SAFETY: forwarded contract.
        unsafe { run(direction, outer, &[len], inner, data) }
    }

    unsafe fn fft_block(
        direction: FftDirection,
        outer: usize,
        dims: &[usize],
        inner: usize,
        data: *mut T,
    ) -> Result<()> {
        if dims.is_empty() || dims.len() > 3 {
            // cuFFT plans have rank 3 at most: one axis at a time.
            // SAFETY: forwarded contract.
            return unsafe { by_axes::<T, Self>(direction, outer, dims, inner, data) };
        }
        // SAFETY: forwarded contract.
        unsafe { run(direction, outer, dims, inner, data) }
    }
}

#[cfg(test)]
mod tests {
    use super::executions;

    #[test]
    fn a_band_by_grid_block_is_one_execution_and_strided_blocks_one_per_slab() {
        // [16 bands, 24³ grid]: one plan of rank 3, batch 16, one execution.
        let runs = executions(16, &[24, 24, 24], 1, true).unwrap();
        assert_eq!(runs.len(), 1);
        let (key, off) = runs[0];
        assert_eq!(
            (key.rank, key.dims, key.batch, key.dist, key.stride, off),
            (3, [24, 24, 24], 16, 13824, 1, 0)
        );
        // [3, 24, 24, 5] over the middle block: 5 interleaved transforms per slab.
        let runs = executions(3, &[24, 24], 5, false).unwrap();
        assert_eq!(runs.len(), 3);
        assert!(runs
            .iter()
            .all(|(k, _)| (k.rank, k.batch, k.stride, k.dist) == (2, 5, 5, 1)));
        assert_eq!(
            runs.iter().map(|r| r.1).collect::<Vec<_>>(),
            [0, 2880, 5760]
        );
        // More blocks than int offsets reach in one execution: chunked, every block once.
        let block = 1 << 20;
        let outer = 5000;
        let runs = executions(outer, &[block], 1, false).unwrap();
        let per = i32::MAX as usize / block;
        assert_eq!(runs.len(), outer.div_ceil(per));
        let covered: usize = runs.iter().map(|(k, _)| k.batch as usize).sum();
        assert_eq!(covered, outer);
        for w in runs.windows(2) {
            assert_eq!(
                w[1].1 - w[0].1,
                w[0].0.batch as usize * block,
                "consecutive chunks"
            );
        }
        // A block whose span exceeds an int is refused, not wrapped.
        assert!(executions(1, &[1 << 16, 1 << 16], 1, true).is_err());
    }
}
