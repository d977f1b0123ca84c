//! The consumer side of DLPack: a capsule's tensor taken over as a `Tensor` (checked,
//! zero-copy), and the producer it keeps alive.

use super::*;
use std::any::Any;
use std::ffi::c_void;
use std::sync::Arc;

use ctensor_base::{DataType, DeviceType, Error, Result};

use crate::core::tensor::Tensor;
use crate::core::tensor_map::TensorMap;

// ---- import ------------------------------------------------------------------------------

/// A producer's managed tensor, whose deleter runs when this is dropped.
enum Producer {
    Versioned(*mut DLManagedTensorVersioned),
    Legacy(*mut DLManagedTensor),
}

// SAFETY: the producer's memory is only reached through the tensor's buffer, which does
// its own synchronization; DLPack puts no thread restriction on calling the deleter
// (NumPy's and PyTorch's take the GIL themselves).
unsafe impl Send for Producer {}
// SAFETY: `Producer` has no `&self` methods; sharing it shares nothing.
unsafe impl Sync for Producer {}

impl Drop for Producer {
    fn drop(&mut self) {
        // SAFETY: the pointer was handed to `from_dlpack*` with ownership; this is the one
        // place its deleter is called.
        unsafe {
            match *self {
                Producer::Versioned(m) => {
                    if let Some(d) = (*m).deleter {
                        d(m)
                    }
                }
                Producer::Legacy(m) => {
                    if let Some(d) = (*m).deleter {
                        d(m)
                    }
                }
            }
        }
    }
}

/// `true` when `deleter` is `ours` (compared as addresses: one of our exports).
fn is_ours<M>(
    deleter: Option<unsafe extern "C" fn(*mut M)>,
    ours: unsafe extern "C" fn(*mut M),
) -> bool {
    deleter.is_some_and(|d| d as usize == ours as usize)
}

fn from_dl_dtype(t: DLDataType, op: &'static str) -> Result<DataType> {
    let d = match (t.code, t.bits, t.lanes) {
        (K_DL_FLOAT, 32, 1) => DataType::Float,
        (K_DL_FLOAT, 64, 1) => DataType::Double,
        (K_DL_INT, 32, 1) => DataType::Int,
        (K_DL_INT, 64, 1) => DataType::Int64,
        (K_DL_COMPLEX, 64, 1) => DataType::ComplexFloat,
        (K_DL_COMPLEX, 128, 1) => DataType::ComplexDouble,
        (K_DL_FLOAT, 16, 1) => DataType::Half,
        (K_DL_BFLOAT, 16, 1) => DataType::BFloat16,
        (code, bits, lanes) => {
            let name = match code {
                K_DL_INT => "int",
                K_DL_UINT => "uint",
                K_DL_FLOAT => "float",
                K_DL_BFLOAT => "bfloat",
                K_DL_COMPLEX => "complex",
                K_DL_BOOL => "bool",
                _ => "type code",
            };
            return Err(Error::InvalidArgument {
                op,
                expected: "float32/64, int32/64, complex64/128, float16 or bfloat16, one lane"
                    .into(),
                given: format!("{name}{bits} (code {code}) with {lanes} lane(s)"),
            });
        }
    };
    Ok(d)
}

/// Wraps the producer's `DLTensor` as a tensor that owns `producer`.
///
/// # Safety
/// `dl` is the `DLTensor` inside `producer`'s struct, valid as DLPack describes it.
unsafe fn import(
    dl: &DLTensor,
    read_only: bool,
    producer: Producer,
    op: &'static str,
) -> Result<Tensor> {
    let bad = |expected: &str, given: String| Error::InvalidArgument {
        op,
        expected: expected.into(),
        given,
    };
    let dtype = from_dl_dtype(dl.dtype, op)?;
    let device = match dl.device.device_type {
        K_DL_CPU | K_DL_CUDA_HOST => DeviceType::Cpu,
        K_DL_CUDA => {
            let ours = gpu_ordinal()?;
            if dl.device.device_id != ours {
                return Err(bad(
                    &format!("memory on GPU {ours}, the one ctensor uses (CTENSOR_GPU_DEVICE)"),
                    format!("memory on GPU {}", dl.device.device_id),
                ));
            }
            DeviceType::Gpu
        }
        other => {
            return Err(bad(
                "kDLCPU (1), kDLCUDA (2) or kDLCUDAHost (3) memory",
                format!("device type {other}"),
            ))
        }
    };
    let ndim =
        usize::try_from(dl.ndim).map_err(|_| bad("ndim >= 0", format!("ndim {}", dl.ndim)))?;
    if ndim > 0 && dl.shape.is_null() {
        return Err(bad("a shape array", "a null shape with ndim > 0".into()));
    }
    let raw_shape: &[i64] = if ndim == 0 {
        &[]
    } else {
        // SAFETY: DLPack's shape points to `ndim` sizes.
        unsafe { std::slice::from_raw_parts(dl.shape, ndim) }
    };
    let dims = raw_shape
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<std::result::Result<Vec<usize>, _>>()
        .map_err(|_| bad("sizes >= 0", format!("shape {raw_shape:?}")))?;
    let strides = if dl.strides.is_null() || ndim == 0 {
        crate::core::shape::Order::RowMajor.strides(&dims)
    } else {
        // SAFETY: DLPack's strides point to `ndim` strides when not null.
        let raw = unsafe { std::slice::from_raw_parts(dl.strides, ndim) };
        raw.iter()
            .map(|&s| usize::try_from(s))
            .collect::<std::result::Result<Vec<usize>, _>>()
            .map_err(|_| {
                bad(
                    "strides >= 0 (ctensor views do not run backwards; copy first, e.g. \
                     np.ascontiguousarray)",
                    format!("strides {raw:?}"),
                )
            })?
    };
    let numel = crate::core::shape::TensorShape::new(&dims).checked_numel(op)?;
    let start = if numel == 0 {
        std::ptr::null_mut()
    } else {
        // The offset is added as a number first: one that wraps the address space
        // (2⁶⁴ − 8 would start 8 bytes before the producer's data) is refused.
        usize::try_from(dl.byte_offset)
            .ok()
            .and_then(|offset| (dl.data as usize).checked_add(offset))
            .ok_or_else(|| Error::Overflow {
                op,
                what: format!(
                    "byte_offset {} from data {:p} wraps around the address space",
                    dl.byte_offset, dl.data
                ),
            })?;
        dl.data
            .cast::<u8>()
            .wrapping_add(dl.byte_offset as usize)
            .cast::<c_void>()
    };
    let keep: Arc<dyn Any + Send + Sync> = Arc::new(producer);
    // SAFETY: DLPack promises the memory for every element the shape and strides reach,
    // until the deleter is called; `keep` calls it when the last tensor sharing the
    // buffer is dropped. With `read_only` nothing writes through the buffer.
    let map = unsafe {
        TensorMap::from_raw_with(start, dtype, device, &dims, &strides, Some(keep), read_only)
    }
    .map_err(|e| e.in_op(op))?;
    Ok(map.into_tensor())
}

impl Tensor {
    /// Wraps a DLPack v1.x managed tensor as a tensor over the producer's memory (no
    /// copy), with the producer's shape, strides and byte offset. The deleter is called
    /// exactly once: when the last tensor sharing the memory is dropped, or before an
    /// error is returned. `DLPACK_FLAG_BITMASK_READ_ONLY` makes the tensor refuse writes.
    ///
    /// Errors (`InvalidArgument` unless said): a null pointer; a major version other than
    /// 1 (the deleter is still called, as DLPack requires); an element type ctensor does
    /// not have (uint8, bool, vectors, ...); a device other than host, pinned host or the
    /// GPU ctensor uses; negative sizes or strides, strides that reach one element twice
    /// (broadcast views), a misaligned pointer; `DeviceUnavailable` for GPU memory without
    /// a GPU.
    ///
    /// One of ctensor's own exports comes back as a view of the exported tensor's buffer
    /// (as PyTorch does with its own), so both sides share one borrow state.
    ///
    /// # Safety
    /// `managed` is null or a valid DLPack managed tensor whose deleter has not been
    /// called and that no one else will use after this call: ownership passes to ctensor.
    /// The memory it describes stays valid for every element its shape and strides reach
    /// until its deleter is called, and while the tensor lives no one writes to that memory
    /// other than through it (or reads it while ctensor writes), as for
    /// [`TensorMap`].
    pub unsafe fn from_dlpack(managed: *mut DLManagedTensorVersioned) -> Result<Tensor> {
        let op = "from_dlpack";
        if managed.is_null() {
            return Err(Error::InvalidArgument {
                op,
                expected: "a DLManagedTensorVersioned".into(),
                given: "a null pointer".into(),
            });
        }
        // SAFETY: non-null and valid per the contract; `version`, `manager_ctx` and
        // `deleter` are laid out the same in every major version.
        let (version, ctx, deleter) = unsafe {
            (
                (*managed).version,
                (*managed).manager_ctx,
                (*managed).deleter,
            )
        };
        if ctx == managed.cast() && is_ours(deleter, delete_versioned) {
            // One of our own exports: the tensor it holds, so that both sides share one
            // buffer (one borrow state, aliasing seen by every operation).
            // SAFETY: made by `to_dlpack` (its deleter, its context), owned by us now.
            let export =
                unsafe { Box::from_raw(managed.cast::<Export<DLManagedTensorVersioned>>()) };
            return Ok(export.tensor);
        }
        let producer = Producer::Versioned(managed);
        if version.major != DLPACK_MAJOR_VERSION {
            drop(producer); // DLPack: a consumer that cannot read it must still delete it.
            return Err(Error::InvalidArgument {
                op,
                expected: format!("DLPack major version {DLPACK_MAJOR_VERSION}"),
                given: format!("version {}.{}", version.major, version.minor),
            });
        }
        // SAFETY: a version-1 struct, valid per the contract.
        let (dl, flags) = unsafe { (&(*managed).dl_tensor, (*managed).flags) };
        let read_only = flags & DLPACK_FLAG_BITMASK_READ_ONLY != 0;
        // SAFETY: `dl` lives inside `producer`'s struct, which `import` keeps alive.
        unsafe { import(dl, read_only, producer, op) }
    }

    /// [`from_dlpack`](Self::from_dlpack) for DLPack's legacy unversioned struct (no
    /// version, no flags: the tensor is writable).
    ///
    /// # Safety
    /// As [`from_dlpack`](Self::from_dlpack).
    pub unsafe fn from_dlpack_legacy(managed: *mut DLManagedTensor) -> Result<Tensor> {
        // SAFETY: the caller's contract, passed on.
        unsafe { legacy(managed, false, "from_dlpack_legacy") }
    }

    /// [`from_dlpack_legacy`](Self::from_dlpack_legacy) for a producer whose memory must
    /// not be written although the legacy struct has no flag to say so (immutable arrays,
    /// such as JAX's): the tensor refuses writes as one imported with
    /// `DLPACK_FLAG_BITMASK_READ_ONLY` does.
    ///
    /// # Safety
    /// As [`from_dlpack`](Self::from_dlpack).
    pub unsafe fn from_dlpack_legacy_read_only(managed: *mut DLManagedTensor) -> Result<Tensor> {
        // SAFETY: the caller's contract, passed on.
        unsafe { legacy(managed, true, "from_dlpack_legacy_read_only") }
    }
}

/// The legacy import, writable or not.
///
/// # Safety
/// As [`Tensor::from_dlpack`].
unsafe fn legacy(
    managed: *mut DLManagedTensor,
    read_only: bool,
    op: &'static str,
) -> Result<Tensor> {
    if managed.is_null() {
        return Err(Error::InvalidArgument {
            op,
            expected: "a DLManagedTensor".into(),
            given: "a null pointer".into(),
        });
    }
    // SAFETY: non-null and valid per the contract.
    let (ctx, deleter) = unsafe { ((*managed).manager_ctx, (*managed).deleter) };
    if !read_only && ctx == managed.cast() && is_ours(deleter, delete_legacy) {
        // SAFETY: made by `to_dlpack_legacy`, owned by us now (see `from_dlpack`).
        let export = unsafe { Box::from_raw(managed.cast::<Export<DLManagedTensor>>()) };
        return Ok(export.tensor);
    }
    let producer = Producer::Legacy(managed);
    // SAFETY: valid per the contract; `dl` lives inside `producer`'s struct.
    unsafe { import(&(*managed).dl_tensor, read_only, producer, op) }
}
