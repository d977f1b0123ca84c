//! # ctensor-base
//!
//! The foundation of ctensor, which knows no tensor: element types ([`DataType`],
//! [`Scalar`], [`CastFrom`]), devices ([`DeviceType`], [`CpuDevice`], [`GpuDevice`]), the
//! one [`Error`] type, and memory allocation ([`alloc::Allocation`]).
//!
//! ```
//! use ctensor_base::{DataType, Scalar, c64};
//! assert_eq!(<c64 as Scalar>::DTYPE, DataType::ComplexDouble);
//! assert_eq!("complex<double>".parse::<DataType>().unwrap().size_of(), 16);
//! ```

#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

pub mod alloc;
pub mod cast;
pub mod device;
pub mod dtype;
pub mod error;
pub mod fence;
pub mod gpu;
pub mod pool;

pub use cast::CastFrom;
pub use device::{CpuDevice, Device, DeviceType, GpuDevice};
pub use dtype::{bf16, c32, c64, f16, Complex, DataType, Scalar};
pub use error::{Error, Result};
