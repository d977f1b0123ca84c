//! # ctensor-aten
//!
//! The [`Tensor`] — runtime data type and device, any rank, any strides, shared buffers
//! with run-time borrow checks — and [`TensorMap`] over foreign memory.
//!
//! ```
//! use ctensor_aten::{Tensor, DataType, DeviceType};
//! let a = Tensor::arange(DataType::Double, DeviceType::Cpu, 0.0, 6.0, 1.0)?.reshape(&[2, -1])?;
//! let col = a.t()?.index(1)?; // the second column, a zero-copy view
//! assert_eq!(col.to_vec::<f64>()?, [1.0, 4.0]);
//! let z = a.cast(DataType::ComplexFloat)?;
//! println!("{z}");
//! # Ok::<(), ctensor_aten::Error>(())
//! ```

#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

pub mod core;
pub mod dlpack;
pub mod io;
pub mod ops;

pub use crate::core::accessor::{Accessor, AccessorMut};
pub use crate::core::buffer::TensorBuffer;
pub use crate::core::growable::GrowableTensor;
pub use crate::core::mirrored::MirroredTensor;
pub use crate::core::offload::{LruBudget, OffloadSet};
pub use crate::core::promotion::{can_cast, result_type, Number};
pub use crate::core::shape::{Order, TensorShape};
pub use crate::core::tensor::{DataMut, DataRef, Tensor};
pub use crate::core::tensor_map::TensorMap;
#[allow(deprecated)]
pub use crate::ops::compare::where_;
pub use crate::ops::compare::{where_cond, NormOrd};
pub use crate::ops::einsum::{einsum, einsum_into, EinsumOptions};
pub use crate::ops::fft::{
    fft, fftfreq, fftn, fftshift, ifft, ifftn, ifftshift, irfftn, rfftfreq, rfftn, FftNorm,
};
pub use crate::ops::indices::Indices;
pub use crate::ops::linalg::{
    cholesky, eigh, eigh_generalized, eigvalsh, inverse, overlap, set_matrix, solve, tri_inverse,
    EigBackend, EighRange, MIXED_TOLERANCE,
};
pub use crate::ops::math::{BinaryMathOp, MathOp};
pub use crate::ops::matmul::{matmul, matmul_into, matmul_op};
pub use crate::ops::qr::{qr, qr_r, QrMode};
pub use crate::ops::random::Generator;
pub use crate::ops::select::{cat, concat, stack};
pub use crate::ops::solve::{cholesky_solve, det, lstsq, slogdet, solve_triangular};
pub use crate::ops::sphere_fft::SphereFft;
pub use crate::ops::svd::{pinv, svd, svdvals};
/// Queued device work that may not have finished (see `core::transfer`).
pub use ctensor_base::fence::Fence;
/// `true` when a GPU can be used here (driver found, device present, context created).
pub use ctensor_base::gpu::gpu_available;
/// ctensor's CUDA stream as an integer, for a DLPack producer's `stream=` argument.
pub use ctensor_base::gpu::stream_handle as gpu_stream_handle;
/// The caching allocators' counters and `empty_cache` (see `ctensor_base::alloc::pool`),
/// streams and events.
pub use ctensor_base::gpu::{
    empty_cache, empty_pinned_cache, memory_stats, pinned_memory_stats, Event, MemoryStats, Stream,
};
pub use ctensor_base::{
    bf16, c32, c64, f16, CastFrom, CpuDevice, DataType, Device, DeviceType, Error, GpuDevice,
    Result, Scalar,
};
pub use ctensor_kernels::blas::Trans;
pub use ctensor_kernels::fft::{host_fft, set_fftw_planner, set_host_fft, FftwPlanner, HostFft};
pub use ctensor_kernels::lapack::{check_finite, set_check_finite, Diag, Uplo};
pub use ctensor_kernels::parallel::{blas_num_threads, num_threads, set_num_threads};
