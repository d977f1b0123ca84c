//! # ctensor-kernels
//!
//! Kernels on raw memory: one trait per kernel, generic over the element type, and
//! implemented by each device marker ([`CpuDevice`](ctensor_base::CpuDevice), later
//! [`GpuDevice`](ctensor_base::GpuDevice)). Kernels never see a tensor, so they serve
//! tensors, maps over foreign arrays and plain pointers alike. Each validates what it
//! can and returns [`Result`](ctensor_base::Result).
//!
//! ```
//! use ctensor_base::CpuDevice;
//! use ctensor_kernels::memory::SetMemory;
//! let mut v = vec![0.0f64; 5];
//! // SAFETY: `v` holds 5 elements and nothing else touches it during the call.
//! unsafe { <CpuDevice as SetMemory<f64>>::set(v.as_mut_ptr(), 2.5, 5) }.unwrap();
//! assert_eq!(v, [2.5; 5]);
//! ```

#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

pub mod arith;
pub mod blas;
pub mod check;
mod cpu;
pub mod lapack;
pub mod layout;
pub mod linalg;
pub mod memory;
pub mod parallel;
