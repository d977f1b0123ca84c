//! The C ABI: `ct_*` functions over opaque `ct_tensor*` handles, declared in the
//! generated header `include/ctensor.h` (`make header`).
//!
//! Every function returns a [`ct_status`](status::ct_status) (`CT_OK` = 0) and writes
//! its results through out-pointers; on failure
//! [`ct_last_error_message`](status::ct_last_error_message) gives the calling thread's
//! message. Null pointers
//! and dead handles are reported, and no panic unwinds into C: each entry point runs
//! inside `catch_unwind`. One file per topic: [`status`], [`tensor`] (lifetime, views,
//! copies, queries), [`ops`], [`kernels`], [`devices`], [`interop`] (DLPack, `.npy`), [`memory`] (the GPU cache, mirrored tensors).

pub mod devices;
pub mod interop;
pub mod kernels;
pub mod math;
pub mod memory;
pub mod ops;
pub mod status;
pub mod tensor;
