//! DLPack v1.1: zero-copy exchange of tensors with NumPy, PyTorch, CuPy, JAX and any C
//! library that speaks it.
//!
//! The structs are DLPack's C ABI, field for field (`dlpack.h`, version 1.1).
//! [`Tensor::to_dlpack`] hands out a [`DLManagedTensorVersioned`] over the tensor's own
//! memory; [`Tensor::from_dlpack`] (and [`Tensor::from_dlpack_legacy`] for the
//! unversioned [`DLManagedTensor`]) wraps a producer's memory as a tensor. Neither copies.
//!
//! **Ownership.** An exported tensor keeps its memory alive until the consumer calls the
//! deleter, whatever happens to the tensor meanwhile. An imported tensor calls the
//! producer's deleter exactly once: when the last tensor or view sharing that memory is
//! dropped, or at once if the import fails. Once passed to `from_dlpack`, the managed
//! tensor belongs to ctensor in every case.
//!
//! **Access.** A tensor imported with `DLPACK_FLAG_BITMASK_READ_ONLY` refuses every write
//! ([`Error::BorrowConflict`], naming the flag); a read-only tensor is exported with the
//! flag set. The consumer of an export shares the memory as with
//! [`data_ptr`](Tensor::data_ptr): ctensor's borrow checks do not see its reads and
//! writes, so it must not write while ctensor operations run on the tensor.
//!
//! **Devices.** Host memory is `kDLCPU` (and `kDLCUDAHost` on import, pinned host
//! memory), GPU memory `kDLCUDA` with the selected GPU's ordinal. A GPU tensor's stream
//! is synchronized before it is exported, so a consumer on any stream sees its values.
//!
//! ```
//! use ctensor_aten::{Tensor, DataType, DeviceType};
//! let a = Tensor::arange(DataType::Double, DeviceType::Cpu, 0.0, 6.0, 1.0)?.reshape(&[2, 3])?;
//! let managed = a.t()?.to_dlpack()?;            // a 3 × 2 view, strides [1, 3]
//! // SAFETY: `managed` comes from `to_dlpack` and is passed on exactly once.
//! let b = unsafe { Tensor::from_dlpack(managed) }?;
//! assert!(b.shares_memory_with(&a));
//! assert_eq!(b.to_vec::<f64>()?, [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
//! # Ok::<(), ctensor_aten::Error>(())
//! ```

mod import;

use std::ffi::c_void;

use ctensor_base::{DataType, DeviceType, Error, Result};

use crate::core::tensor::Tensor;

/// The DLPack major version this implements.
pub const DLPACK_MAJOR_VERSION: u32 = 1;
/// The DLPack minor version this implements.
pub const DLPACK_MINOR_VERSION: u32 = 1;
/// `flags` bit: the consumer must not write to the memory.
pub const DLPACK_FLAG_BITMASK_READ_ONLY: u64 = 1 << 0;
/// `flags` bit: the producer made a copy for this exchange.
pub const DLPACK_FLAG_BITMASK_IS_COPIED: u64 = 1 << 1;

/// `DLDeviceType` `kDLCPU`: host memory.
pub const K_DL_CPU: i32 = 1;
/// `DLDeviceType` `kDLCUDA`: CUDA device memory.
pub const K_DL_CUDA: i32 = 2;
/// `DLDeviceType` `kDLCUDAHost`: pinned host memory (`cudaMallocHost`).
pub const K_DL_CUDA_HOST: i32 = 3;

/// `DLDataTypeCode` `kDLInt`.
pub const K_DL_INT: u8 = 0;
/// `DLDataTypeCode` `kDLUInt`.
pub const K_DL_UINT: u8 = 1;
/// `DLDataTypeCode` `kDLFloat`.
pub const K_DL_FLOAT: u8 = 2;
/// `DLDataTypeCode` `kDLBfloat`.
pub const K_DL_BFLOAT: u8 = 4;
/// `DLDataTypeCode` `kDLComplex`.
pub const K_DL_COMPLEX: u8 = 5;
/// `DLDataTypeCode` `kDLBool`.
pub const K_DL_BOOL: u8 = 6;

/// `DLPackVersion`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DLPackVersion {
    /// A different major version means a different layout of the managed struct.
    pub major: u32,
    /// Minor versions add enumeration values only.
    pub minor: u32,
}

/// `DLDevice`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DLDevice {
    /// A `DLDeviceType` value (`K_DL_CPU`, `K_DL_CUDA`, ...).
    pub device_type: i32,
    /// The device's ordinal; 0 for host memory.
    pub device_id: i32,
}

/// `DLDataType`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DLDataType {
    /// A `DLDataTypeCode` value (`K_DL_FLOAT`, `K_DL_COMPLEX`, ...).
    pub code: u8,
    /// Bits per element (for complex: of both parts together).
    pub bits: u8,
    /// Vector lanes; 1 for scalars.
    pub lanes: u16,
}

/// `DLTensor`: the array, without ownership.
#[repr(C)]
#[derive(Debug)]
pub struct DLTensor {
    /// The allocation's start (null for an empty tensor).
    pub data: *mut c_void,
    /// Where the memory lives.
    pub device: DLDevice,
    /// Number of dimensions.
    pub ndim: i32,
    /// The element type.
    pub dtype: DLDataType,
    /// `ndim` sizes.
    pub shape: *mut i64,
    /// `ndim` strides in elements (null means row-major, legacy producers only).
    pub strides: *mut i64,
    /// Bytes from `data` to the first element.
    pub byte_offset: u64,
}

/// `DLManagedTensor`, DLPack's legacy (unversioned) managed tensor.
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensor {
    /// The array.
    pub dl_tensor: DLTensor,
    /// The producer's context.
    pub manager_ctx: *mut c_void,
    /// Frees the producer's resources and the struct itself; may be null.
    pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

/// `DLManagedTensorVersioned`, DLPack's managed tensor since version 1.0.
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensorVersioned {
    /// The producer's DLPack version.
    pub version: DLPackVersion,
    /// The producer's context.
    pub manager_ctx: *mut c_void,
    /// Frees the producer's resources and the struct itself; may be null.
    pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    /// `DLPACK_FLAG_BITMASK_*` bits.
    pub flags: u64,
    /// The array.
    pub dl_tensor: DLTensor,
}

// ---- export ------------------------------------------------------------------------------

/// What an export keeps alive: the tensor (and so its buffer) and the shape and strides
/// the `DLTensor` points into. The managed struct comes first so that a pointer to it is
/// a pointer to the whole.
#[repr(C)]
struct Export<M> {
    managed: M,
    shape: Vec<i64>,
    strides: Vec<i64>,
    tensor: Tensor,
}

impl<M> Export<M> {
    /// Waits, for GPU memory, until the consumer's work on it is done before the tensor
    /// goes: the consumer calls the deleter when it drops its array, with its own work on
    /// the memory possibly still queued on its streams, and the buffer may then go back to
    /// ctensor's pool and to the next allocation. The context is synchronized (every
    /// stream of it, the consumer's included when it shares the primary context, as
    /// PyTorch and CuPy do).
    fn settle_consumer(&self) {
        #[cfg(feature = "cuda")]
        if self.tensor.device() == DeviceType::Gpu && self.tensor.numel() > 0 {
            if let Ok(ctx) = ctensor_base::gpu::context() {
                // A fault there was the consumer's kernels' to report.
                let _ = ctx.synchronize_context();
            }
        }
    }
}

/// The deleter of [`Tensor::to_dlpack`]'s struct.
///
/// # Safety
/// `m` is null or a pointer from [`Tensor::to_dlpack`] whose deleter was not yet called.
unsafe extern "C" fn delete_versioned(m: *mut DLManagedTensorVersioned) {
    if !m.is_null() {
        // SAFETY: `m` is the first field of a boxed `Export` (repr(C)), made by
        // `to_dlpack` and freed only here, once.
        let export = unsafe { Box::from_raw(m.cast::<Export<DLManagedTensorVersioned>>()) };
        // Dropping a tensor does not panic; if it ever did, nothing may unwind into C.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            export.settle_consumer();
            drop(export)
        }));
    }
}

/// The deleter of [`Tensor::to_dlpack_legacy`]'s struct.
///
/// # Safety
/// `m` is null or a pointer from [`Tensor::to_dlpack_legacy`] whose deleter was not yet
/// called.
unsafe extern "C" fn delete_legacy(m: *mut DLManagedTensor) {
    if !m.is_null() {
        // SAFETY: as in `delete_versioned`, for the legacy struct.
        let export = unsafe { Box::from_raw(m.cast::<Export<DLManagedTensor>>()) };
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            export.settle_consumer();
            drop(export)
        }));
    }
}

fn dl_dtype(d: DataType) -> DLDataType {
    let (code, bits) = match d {
        DataType::Float => (K_DL_FLOAT, 32),
        DataType::Double => (K_DL_FLOAT, 64),
        DataType::Int => (K_DL_INT, 32),
        DataType::Int64 => (K_DL_INT, 64),
        DataType::ComplexFloat => (K_DL_COMPLEX, 64),
        DataType::ComplexDouble => (K_DL_COMPLEX, 128),
        DataType::Half => (K_DL_FLOAT, 16),
        DataType::BFloat16 => (K_DL_BFLOAT, 16),
    };
    DLDataType {
        code,
        bits,
        lanes: 1,
    }
}

/// The ordinal of the GPU ctensor uses.
fn gpu_ordinal() -> Result<i32> {
    #[cfg(feature = "cuda")]
    {
        Ok(ctensor_base::gpu::context()?.ordinal() as i32)
    }
    #[cfg(not(feature = "cuda"))]
    {
        Err(ctensor_base::alloc::gpu_unavailable())
    }
}

/// The `DLTensor` of `t` (shape and strides still to be pointed at) and the shape and
/// strides it needs.
fn describe(t: &Tensor, op: &'static str) -> Result<(DLTensor, Vec<i64>, Vec<i64>)> {
    if t.buffer.is_scoped() {
        return Err(Error::InvalidArgument {
            op,
            expected: "a tensor whose memory may outlive the current scope".into(),
            given: "a tensor over a slice lent by with_slice (the export could outlive it); \
                    export a try_clone() instead"
                .into(),
        });
    }
    // The consumer does not know ctensor's borrow rules: asynchronous copies that use
    // the memory must have finished before it is handed over.
    t.synchronize()?;
    let device = match t.device() {
        DeviceType::Cpu => DLDevice {
            device_type: K_DL_CPU,
            device_id: 0,
        },
        DeviceType::Gpu => {
            // The consumer may read on any stream: let queued work finish first.
            ctensor_base::gpu::synchronize()?;
            DLDevice {
                device_type: K_DL_CUDA,
                device_id: gpu_ordinal()?,
            }
        }
    };
    let to_i64 = |v: &[usize], what: &str| -> Result<Vec<i64>> {
        v.iter()
            .map(|&x| {
                i64::try_from(x).map_err(|_| Error::Overflow {
                    op,
                    what: format!("{what} {x} does not fit DLPack's int64"),
                })
            })
            .collect()
    };
    let shape = to_i64(t.dims(), "size")?;
    let strides = to_i64(t.strides(), "stride")?;
    let ndim = i32::try_from(t.ndim()).map_err(|_| Error::Overflow {
        op,
        what: format!("{} dimensions do not fit DLPack's int32", t.ndim()),
    })?;
    let empty = t.numel() == 0;
    let dl = DLTensor {
        data: if empty {
            std::ptr::null_mut()
        } else {
            t.buffer.as_ptr().cast()
        },
        device,
        ndim,
        dtype: dl_dtype(t.dtype()),
        shape: std::ptr::null_mut(),
        strides: std::ptr::null_mut(),
        byte_offset: if empty {
            0
        } else {
            (t.offset() * t.dtype().size_of()) as u64
        },
    };
    Ok((dl, shape, strides))
}

/// Boxes `managed` with what it points into (a share of `t`, its shape and strides),
/// points its `DLTensor` and context at them, and gives up the box: the deleter frees it.
/// `parts` reaches the `DLTensor` and `manager_ctx` of either managed struct.
fn export<M>(
    t: &Tensor,
    managed: M,
    shape: Vec<i64>,
    strides: Vec<i64>,
    parts: impl Fn(&mut M) -> (&mut DLTensor, &mut *mut c_void),
) -> *mut M {
    let raw = Box::into_raw(Box::new(Export {
        managed,
        shape,
        strides,
        tensor: t.share(),
    }));
    // SAFETY: `raw` is the box just given up; nothing else refers to it yet.
    let e = unsafe { &mut *raw };
    let (shape, strides) = (e.shape.as_mut_ptr(), e.strides.as_mut_ptr());
    let (dl, ctx) = parts(&mut e.managed);
    dl.shape = shape;
    dl.strides = strides;
    *ctx = raw.cast();
    // The managed struct is the first field of the repr(C) box: its address is the box's.
    raw.cast()
}

impl Tensor {
    /// Exports the tensor as a DLPack v1.1 managed tensor over the same memory (no copy),
    /// any strides and offset as they are. The memory stays alive until the consumer
    /// calls the struct's deleter (exactly once; the struct is freed with it). Read-only
    /// memory is exported with `DLPACK_FLAG_BITMASK_READ_ONLY`. See the
    /// [module docs](crate::dlpack) for access and devices.
    ///
    /// Errors: `InvalidArgument` for a tensor over a `with_slice` scope (its memory goes
    /// back to the caller when the scope ends; export a `try_clone`), `Overflow` for sizes
    /// beyond `i64`, GPU errors from synchronizing the stream. Asynchronous copies that
    /// use the memory ([`Tensor::sync_async`]) are waited for first.
    pub fn to_dlpack(&self) -> Result<*mut DLManagedTensorVersioned> {
        let (dl_tensor, shape, strides) = describe(self, "to_dlpack")?;
        let flags = if self.buffer.is_read_only() {
            DLPACK_FLAG_BITMASK_READ_ONLY
        } else {
            0
        };
        let managed = DLManagedTensorVersioned {
            version: DLPackVersion {
                major: DLPACK_MAJOR_VERSION,
                minor: DLPACK_MINOR_VERSION,
            },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(delete_versioned),
            flags,
            dl_tensor,
        };
        Ok(export(self, managed, shape, strides, |m| {
            (&mut m.dl_tensor, &mut m.manager_ctx)
        }))
    }

    /// `(device_type, device_id)` as DLPack numbers the tensor's memory (the Python
    /// protocol's `__dlpack_device__`): `(1, 0)` for host memory, `(2, ordinal)` for the
    /// GPU.
    pub fn dlpack_device(&self) -> Result<(i32, i32)> {
        match self.device() {
            DeviceType::Cpu => Ok((K_DL_CPU, 0)),
            DeviceType::Gpu => Ok((K_DL_CUDA, gpu_ordinal()?)),
        }
    }

    /// [`to_dlpack`](Self::to_dlpack) as DLPack's legacy unversioned struct, for
    /// consumers older than DLPack 1.0 (it has no flags: do not export read-only memory
    /// to a consumer that may write).
    pub fn to_dlpack_legacy(&self) -> Result<*mut DLManagedTensor> {
        let (dl_tensor, shape, strides) = describe(self, "to_dlpack_legacy")?;
        let managed = DLManagedTensor {
            dl_tensor,
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(delete_legacy),
        };
        Ok(export(self, managed, shape, strides, |m| {
            (&mut m.dl_tensor, &mut m.manager_ctx)
        }))
    }
}
