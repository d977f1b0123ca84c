//! Kernel implementations for [`CpuDevice`](ctensor_base::CpuDevice), one file per family.

mod linalg;
mod memory;
