//! # ctensor
//!
//! A heterogeneous tensor container for scientific codes, density-functional theory
//! codes first: one [`Tensor`] whose element type ([`DataType`]) and device
//! ([`DeviceType`]) are chosen at run time, zero-copy maps over arrays that C, C++,
//! Fortran or Rust code already owns ([`TensorMap`]), and kernels written once per device
//! as traits ([`kernels`]).
//!
//! ```
//! use ctensor::{DataType, DeviceType, Order, Tensor, TensorMap, c64};
//!
//! // A 2 x 3 complex matrix, its conjugate, and a cast to single precision.
//! let a = Tensor::from_slice(
//!     &[c64::new(1.0, 1.0), c64::new(2.0, 0.0), c64::new(0.0, -3.0),
//!       c64::new(4.0, 0.5), c64::new(5.0, 0.0), c64::new(6.0, 2.0)],
//!     &[2, 3],
//! )?;
//! assert_eq!(a.conj()?.get_value::<c64>(&[0, 2])?, c64::new(0.0, 3.0));
//! let single = a.cast(DataType::ComplexFloat)?;
//! assert!(single.allclose(&a, 1e-6, 0.0)?);
//!
//! // Write into a Fortran-order array that the caller owns.
//! let mut fortran = vec![0.0f64; 6]; // A(2, 3), column-major
//! // SAFETY: `fortran` outlives the map and is only touched through it meanwhile.
//! let mut map = unsafe { TensorMap::new(fortran.as_mut_ptr(), DeviceType::Cpu, &[2, 3], Order::ColMajor)? };
//! map.sync(&a.real()?)?;
//! drop(map);
//! assert_eq!(fortran, [1.0, 4.0, 2.0, 5.0, 0.0, 6.0]);
//! # Ok::<(), ctensor::Error>(())
//! ```

#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

pub mod ffi;
pub mod solvers;

/// The cargo features this build of ctensor has, comma-separated (e.g. `cuda`): a shared
/// target directory may hold a library built with other features than the current
/// build asks for, so programs can print what they actually got.
pub const BUILD_FEATURES: &str = env!("CTENSOR_BUILD_FEATURES");

pub use ctensor_aten::*;
pub use ctensor_base as base;
pub use ctensor_kernels as kernels;
/// Tensors over MPI: collectives, k-point pools, and ScaLAPACK on block-cyclic matrices
/// (the `mpi` feature; crate `ctensor-mpi`).
#[cfg(feature = "mpi")]
pub use ctensor_mpi as mpi;

/// The README's examples, compiled and run as doc tests so the README stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
