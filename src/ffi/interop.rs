//! Exchange with other libraries and files: DLPack v1.1 (zero-copy, both directions) and
//! NumPy's `.npy` files.
//!
//! The DLPack structs are declared in `include/ctensor.h` as `dlpack.h` 1.1 declares them,
//! inside `#ifndef DLPACK_DLPACK_H_`: include the official `dlpack.h` first to use its
//! declarations instead.

use std::ffi::{c_char, CStr};

use ctensor_aten::dlpack::{DLManagedTensor, DLManagedTensorVersioned};
use ctensor_aten::Tensor;

use super::status::{ct_status, guard, write_out, Fail};
use super::tensor::{device_of, give, handle};

/// Exports `t` as a DLPack v1.1 managed tensor over the same memory (no copy): shape,
/// strides (in elements) and byte offset as the tensor's, `kDLCPU` or `kDLCUDA`,
/// `DLPACK_FLAG_BITMASK_READ_ONLY` for read-only memory. The memory stays alive until the
/// consumer calls `(*out)->deleter(*out)`, exactly once, even after `ct_tensor_free(t)`.
///
/// # Safety
/// `t` is a live handle (checked); `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_tensor_to_dlpack(
    t: *const super::tensor::ct_tensor,
    out: *mut *mut DLManagedTensorVersioned,
) -> ct_status {
    guard("ct_tensor_to_dlpack", || {
        let t = handle(t, "t")?;
        let m = t.to_dlpack()?;
        // SAFETY: the caller's promise on `out`.
        let written = unsafe { write_out(out, "out", m) };
        if written.is_err() {
            // Nobody can receive it: delete it here.
            // SAFETY: `m` is a fresh export whose deleter has not run.
            unsafe { drop(Tensor::from_dlpack(m)) };
        }
        written
    })
}

/// Wraps a DLPack v1.x managed tensor (from NumPy, PyTorch, CuPy or C) as a new handle over
/// the producer's memory, without copying. Ownership of `managed` passes to ctensor in
/// every case: its deleter is called exactly once, when the last tensor sharing the
/// memory is freed, or before this returns an error. A read-only tensor refuses writes.
///
/// GPU memory (`kDLCUDA`): ctensor's kernels run on its own non-blocking stream
/// (`ct_gpu_stream`), which does not wait for other streams. Work of the producer that
/// writes the memory must be finished, or ordered before that stream, when this is
/// called; ctensor in turn finishes its own work on the memory before the deleter runs.
///
/// # Safety
/// `managed` is null (an error) or a valid DLPack managed tensor whose deleter has not
/// run, not used by the caller afterwards; its memory stays valid until its deleter is
/// called and is written meanwhile only through ctensor. `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_tensor_from_dlpack(
    managed: *mut DLManagedTensorVersioned,
    out: *mut *mut super::tensor::ct_tensor,
) -> ct_status {
    guard("ct_tensor_from_dlpack", || {
        if managed.is_null() {
            return Err(Fail::Null("managed"));
        }
        // SAFETY: the caller's promise on `managed`.
        let t = unsafe { Tensor::from_dlpack(managed) }?;
        // SAFETY: the caller's promise on `out`.
        unsafe { give(out, t) }
    })
}

/// [`ct_tensor_from_dlpack`] for DLPack's legacy unversioned `DLManagedTensor` (no flags:
/// the tensor is writable).
///
/// # Safety
/// As [`ct_tensor_from_dlpack`].
#[no_mangle]
pub unsafe extern "C" fn ct_tensor_from_dlpack_legacy(
    managed: *mut DLManagedTensor,
    out: *mut *mut super::tensor::ct_tensor,
) -> ct_status {
    guard("ct_tensor_from_dlpack_legacy", || {
        if managed.is_null() {
            return Err(Fail::Null("managed"));
        }
        // SAFETY: the caller's promise on `managed`.
        let t = unsafe { Tensor::from_dlpack_legacy(managed) }?;
        // SAFETY: the caller's promise on `out`.
        unsafe { give(out, t) }
    })
}

/// The UTF-8 path at `path`.
///
/// # Safety
/// `path` is null or a NUL-terminated string.
unsafe fn path_arg<'a>(path: *const c_char) -> Result<&'a str, Fail> {
    if path.is_null() {
        return Err(Fail::Null("path"));
    }
    // SAFETY: non-null and NUL-terminated (caller).
    unsafe { CStr::from_ptr(path) }
        .to_str()
        .map_err(|_| Fail::Arg("`path` must be UTF-8".into()))
}

/// Saves `t` to the NumPy `.npy` file at `path` (C or Fortran order as the tensor lies;
/// strided views and device tensors through a copy). `CT_ERR_IO` when the file cannot be
/// written.
///
/// # Safety
/// `t` is a live handle (checked); `path` is a NUL-terminated UTF-8 string.
#[no_mangle]
pub unsafe extern "C" fn ct_tensor_save_npy(
    t: *const super::tensor::ct_tensor,
    path: *const c_char,
) -> ct_status {
    guard("ct_tensor_save_npy", || {
        let t = handle(t, "t")?;
        // SAFETY: the caller's promise on `path`.
        let path = unsafe { path_arg(path) }?;
        Ok(t.save_npy(path)?)
    })
}

/// Loads the NumPy `.npy` file at `path` onto `device` (`CT_CPU` or `CT_GPU`): the file's
/// element type and shape, column-major when the file is Fortran-ordered (so a Fortran
/// array saved by NumPy maps straight onto a Fortran array). `CT_ERR_IO` for a missing,
/// truncated or malformed file or an element type ctensor does not have.
///
/// # Safety
/// `path` is a NUL-terminated UTF-8 string; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_tensor_load_npy(
    path: *const c_char,
    device: i32,
    out: *mut *mut super::tensor::ct_tensor,
) -> ct_status {
    guard("ct_tensor_load_npy", || {
        // SAFETY: the caller's promise on `path`.
        let path = unsafe { path_arg(path) }?;
        let t = Tensor::load_npy_to(path, device_of(device)?)?;
        // SAFETY: the caller's promise on `out`.
        unsafe { give(out, t) }
    })
}
