//! [`Fft`] on the GPU with cuFFT: one batched 1-D plan per layout (cached in the GPU
//! context, bound to ctensor's stream, its work area from ctensor's allocator), executed
//! in place. Contiguous lines
//! (`inner == 1`) are one execution over all `outer` lines; strided lines are one
//! execution of `inner` interleaved lines per slab `o < outer`.

use ctensor_base::alloc::Allocation;
use ctensor_base::gpu::{context, FftPlanKey};
use ctensor_base::{DataType, DeviceType, Error, GpuDevice, Result, Scalar};

use super::launch::dev;
use crate::check;
use crate::fft::{check_complex, Fft, FftDirection};

/// `v` as one of cuFFT's `int` sizes, or the error that says it is too large.
fn int(what: &str, v: usize) -> Result<i32> {
    i32::try_from(v).map_err(|_| Error::Overflow {
        op: "fft",
        what: format!("{what} = {v} exceeds cuFFT's int sizes ({})", i32::MAX),
    })
}

impl<T: Scalar> Fft<T> for GpuDevice {
    unsafe fn fft_axis(
        direction: FftDirection,
        outer: usize,
        len: usize,
        inner: usize,
        data: *mut T,
    ) -> Result<()> {
        check_complex(T::DTYPE)?;
        let n = check::numel("fft", &[outer, len, inner])?;
        check::non_null("fft", "data", data, n)?;
        if n == 0 || len == 1 {
            return Ok(());
        }
        let double = T::DTYPE == DataType::ComplexDouble;
        let (key, slabs) = if inner == 1 {
            let key = FftPlanKey {
                len: int("len", len)?,
                stride: 1,
                dist: int("len", len)?,
                batch: int("the number of lines", outer)?,
                double,
            };
            (key, 1)
        } else {
            // The last element a plan reaches must be an int offset too.
            int("the span of a slab", len * inner)?;
            let key = FftPlanKey {
                len: int("len", len)?,
                stride: int("inner", inner)?,
                dist: 1,
                batch: int("inner", inner)?,
                double,
            };
            (key, outer)
        };
        let sign = match direction {
            FftDirection::Forward => -1,
            FftDirection::Inverse => 1,
        };
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
        context()?.with_cufft_plan(key, |plan, work| {
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
            for o in 0..slabs {
                let p = dev(data) + (o * len * inner * std::mem::size_of::<T>()) as u64;
                // SAFETY: the plan covers `batch` lines of `len` points within slab `o`
                // of the caller's device array; in place (input = output).
                unsafe {
                    if double {
                        cudarc::cufft::result::exec_z2z(plan, p as _, p as _, sign).map_err(err)?;
                    } else {
                        cudarc::cufft::result::exec_c2c(plan, p as _, p as _, sign).map_err(err)?;
                    }
                }
            }
            Ok(())
        })
    }
}
