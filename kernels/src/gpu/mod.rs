//! The kernels for [`GpuDevice`](ctensor_base::GpuDevice): cuBLAS and cuSOLVER for BLAS
//! and LAPACK, custom CUDA C kernels (compiled by NVRTC at first use) for the rest.
//!
//! Pointers given to these kernels are device pointers of the selected GPU (from a GPU
//! tensor, or a foreign device buffer); scalars are host values. Work is queued on
//! ctensor's stream (see [`ctensor_base::gpu`]): a kernel returns once it is queued,
//! except where it must read a result back (`dot`, `nrm2`, LAPACK `info`, the integer
//! divisor check), which waits for it.

pub mod source;

mod blas;
mod cublas;
mod cusolver;
mod lapack;
mod launch;
mod linalg;
mod memory;
