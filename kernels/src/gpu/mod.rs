//! The kernels for [`GpuDevice`](ctensor_base::GpuDevice): cuBLAS and cuSOLVER for BLAS
//! and LAPACK, cuFFT for FFTs, custom CUDA C kernels (compiled by NVRTC at first use)
//! for the rest.
//!
//! Pointers given to these kernels are device pointers of the selected GPU (from a GPU
//! tensor, or a foreign device buffer); scalars are host values. Work is queued on
//! ctensor's stream (see [`ctensor_base::gpu`]): a kernel returns once it is queued,
//! except where it must read a result back (`dot`, `nrm2`, LAPACK `info`, the integer
//! divisor check), which waits for it.

pub mod source;

mod blas;
mod compare;
mod cublas;
mod cusolver;
mod elementwise;
mod fft;
mod hegvx;
mod lapack;
mod launch;
mod math;
mod memory;
mod permute;
mod qr;
mod random;
mod reduce;
mod select;
mod svd;
mod trsm;

/// The launch configurations of the custom kernels, exactly as the GPU code computes
/// them, for the host emulation of the kernels (`kernels/tests/cuda_emulation.rs`). Not
/// part of the API.
#[doc(hidden)]
pub mod emulation {
    pub use super::launch::{
        grid_1d, reduce_grid, transpose_plan, Dims, TransposePlan, BLOCK, MAX_GRID,
    };
}
