//! DLPack exchange with Python: importing any `__dlpack__` producer (NumPy, PyTorch,
//! CuPy, JAX) and the capsules `Tensor.__dlpack__` hands out.

use std::ffi::{c_void, CStr};

use ctensor_aten::dlpack::{DLManagedTensor, DLManagedTensorVersioned};
use ctensor_aten::Tensor as Inner;
use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use crate::err;
use crate::tensor::{wrap, Tensor};

pub(crate) const VERSIONED: &CStr = c"dltensor_versioned";
pub(crate) const LEGACY: &CStr = c"dltensor";
const USED_VERSIONED: &CStr = c"used_dltensor_versioned";
const USED_LEGACY: &CStr = c"used_dltensor";

/// `kDLCUDA` in `__dlpack_device__`'s answer.
const DL_CUDA: i32 = 2;

/// The `stream=` a consumer passes for memory on the device `x` reports: for CUDA memory
/// ctensor's own stream (as the Python array API defines it: the producer then makes that
/// stream wait for its pending work on the memory, so ctensor's kernels, queued on a
/// non-blocking stream, cannot run ahead of the producer's); `None` for host memory.
fn consumer_stream(x: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
    if !x.hasattr("__dlpack_device__")? {
        return Ok(None);
    }
    let (kind, _): (i32, i32) = x.call_method0("__dlpack_device__")?.extract()?;
    if kind != DL_CUDA {
        return Ok(None);
    }
    // 0 is not a valid `stream=` (ambiguous); the legacy default stream is 1.
    let s = ctensor_aten::gpu_stream_handle().map_err(err)?;
    Ok(Some(if s == 0 { 1 } else { s }))
}

/// Wraps the DLPack capsule of `x.__dlpack__()` (versioned when the producer can; on
/// ctensor's stream for CUDA memory, see [`consumer_stream`]).
pub(crate) fn import_dlpack(x: &Bound<'_, PyAny>) -> PyResult<Inner> {
    let py = x.py();
    let stream = consumer_stream(x)?;
    let kwargs = pyo3::types::PyDict::new(py);
    if let Some(s) = stream {
        kwargs.set_item("stream", s)?;
    }
    kwargs.set_item("max_version", (1, 1))?;
    let cap = match x.call_method("__dlpack__", (), Some(&kwargs)) {
        Ok(c) => c,
        // Producers older than DLPack 1.0 take no max_version (but do take `stream`).
        Err(e) if e.is_instance_of::<PyTypeError>(py) => {
            kwargs.del_item("max_version")?;
            x.call_method("__dlpack__", (), Some(&kwargs))?
        }
        Err(e) => return Err(e),
    };
    let cap = cap
        .cast_into::<PyCapsule>()
        .map_err(|_| PyTypeError::new_err("__dlpack__ did not return a capsule"))?;
    let raw = cap.as_ptr();
    // SAFETY: `raw` is a live capsule; IsValid only checks its name and pointer.
    let (versioned, legacy) = unsafe {
        (
            ffi::PyCapsule_IsValid(raw, VERSIONED.as_ptr()) == 1,
            ffi::PyCapsule_IsValid(raw, LEGACY.as_ptr()) == 1,
        )
    };
    if versioned {
        // SAFETY: a valid capsule of that name holds a DLManagedTensorVersioned; renaming
        // it marks it consumed (its destructor then leaves the deleter to us), as DLPack's
        // Python protocol requires.
        let m = unsafe {
            let m =
                ffi::PyCapsule_GetPointer(raw, VERSIONED.as_ptr()) as *mut DLManagedTensorVersioned;
            ffi::PyCapsule_SetName(raw, USED_VERSIONED.as_ptr());
            m
        };
        // SAFETY: ownership passed with the rename; the producer keeps the memory valid
        // until the deleter runs.
        unsafe { Inner::from_dlpack(m) }.map_err(err)
    } else if legacy {
        // SAFETY: as above, for the legacy struct.
        let m = unsafe {
            let m = ffi::PyCapsule_GetPointer(raw, LEGACY.as_ptr()) as *mut DLManagedTensor;
            ffi::PyCapsule_SetName(raw, USED_LEGACY.as_ptr());
            m
        };
        if immutable_producer(x)? {
            // SAFETY: as above.
            unsafe { Inner::from_dlpack_legacy_read_only(m) }.map_err(err)
        } else {
            // SAFETY: as above.
            unsafe { Inner::from_dlpack_legacy(m) }.map_err(err)
        }
    } else {
        Err(PyTypeError::new_err(
            "__dlpack__ returned a capsule that is neither 'dltensor_versioned' nor 'dltensor' \
             (already consumed?)",
        ))
    }
}

/// Whether `x` is an array that its library treats as immutable (JAX's) although its
/// legacy DLPack capsule cannot say so: the tensor over it then refuses writes, which
/// would change the array behind its library's back.
fn immutable_producer(x: &Bound<'_, PyAny>) -> PyResult<bool> {
    let module: String = x
        .get_type()
        .getattr("__module__")?
        .extract()
        .unwrap_or_default();
    Ok(module == "jax" || module.starts_with("jax.") || module.starts_with("jaxlib"))
}

/// The destructor of an exported capsule: an unconsumed capsule still owns its tensor.
unsafe extern "C" fn capsule_destructor(cap: *mut ffi::PyObject) {
    // SAFETY: called by Python with the capsule; IsValid/GetPointer only read it.
    unsafe {
        if ffi::PyCapsule_IsValid(cap, VERSIONED.as_ptr()) == 1 {
            let m =
                ffi::PyCapsule_GetPointer(cap, VERSIONED.as_ptr()) as *mut DLManagedTensorVersioned;
            if let Some(d) = (*m).deleter {
                d(m);
            }
        } else if ffi::PyCapsule_IsValid(cap, LEGACY.as_ptr()) == 1 {
            let m = ffi::PyCapsule_GetPointer(cap, LEGACY.as_ptr()) as *mut DLManagedTensor;
            if let Some(d) = (*m).deleter {
                d(m);
            }
        }
    }
}

/// A capsule named `name` holding `ptr`, whose destructor deletes it unless consumed.
pub(crate) fn capsule(
    py: Python<'_>,
    ptr: *mut c_void,
    name: &'static CStr,
) -> PyResult<Py<PyAny>> {
    // SAFETY: `ptr` is a managed tensor from `to_dlpack*`; the name is static.
    let obj = unsafe { ffi::PyCapsule_New(ptr, name.as_ptr(), Some(capsule_destructor)) };
    // SAFETY: a new reference, or null with a Python error set.
    unsafe { Bound::from_owned_ptr_or_err(py, obj) }.map(Bound::unbind)
}

/// A tensor over the memory of a NumPy array (or any DLPack producer: PyTorch, CuPy,
/// JAX) without copying. Layouts ctensor cannot view (negative or overlapping strides)
/// raise `ctensor.Error`; `ctensor.Tensor(a)` copies instead.
#[pyfunction]
pub(crate) fn from_numpy(a: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    import_dlpack(a).map(wrap)
}

/// The same as [`from_numpy`], under the Python array API's name.
#[pyfunction]
pub(crate) fn from_dlpack(a: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    import_dlpack(a).map(wrap)
}
