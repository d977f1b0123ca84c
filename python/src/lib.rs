//! The Python module `ctensor`: [`Tensor`](ctensor_aten::Tensor) as `ctensor.Tensor`,
//! zero-copy exchange through DLPack (`numpy.from_dlpack(t)`, `ctensor.from_numpy(a)`,
//! and PyTorch/CuPy alike), and the operations a DFT prototype needs: element-wise
//! arithmetic with NumPy's promotion, `einsum`, `matmul`, `eigh` with index and value
//! ranges, `cholesky`, `solve`, `qr`, `svd`, FFTs and `.npy` files. Errors are
//! `ctensor.Error` with ctensor's message; long operations release the GIL.

mod dlpack;
mod fft;
mod index;
mod io;
mod linalg;
mod math;
mod promotion;
mod protocols;
mod tensor;

use ctensor_aten::{DataType, DeviceType};
use pyo3::create_exception;
use pyo3::exceptions::{PyOverflowError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};

use crate::tensor::Tensor;

create_exception!(
    ctensor,
    Error,
    pyo3::exceptions::PyException,
    "An error from ctensor; the message says what was expected and what was given."
);

/// `ctensor.OverflowError`: a subclass of both `ctensor.Error` and Python's
/// `OverflowError`, made when the module loads.
static OVERFLOW: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// ctensor's error as `ctensor.Error`; a value that does not fit its type
/// (`Error::Overflow`) as `ctensor.OverflowError`, which `except OverflowError` catches
/// as NumPy's does.
pub(crate) fn err(e: ctensor_aten::Error) -> PyErr {
    let msg = e.to_string();
    if matches!(e, ctensor_aten::Error::Overflow { .. }) {
        let made = Python::attach(|py| {
            OVERFLOW
                .get(py)
                .map(|t| PyErr::from_type(t.bind(py).clone(), msg.clone()))
        });
        if let Some(e) = made {
            return e;
        }
    }
    Error::new_err(msg)
}

/// Makes `ctensor.OverflowError` (`class OverflowError(ctensor.Error, OverflowError)`).
fn overflow_type(py: Python<'_>) -> PyResult<Py<PyType>> {
    let bases = (py.get_type::<Error>(), py.get_type::<PyOverflowError>());
    let attrs = PyDict::new(py);
    attrs.set_item("__module__", "ctensor")?;
    attrs.set_item(
        "__doc__",
        "A value that does not fit the data type it must be stored in (e.g. 2**40 into \
         int32); both a ctensor.Error and an OverflowError.",
    )?;
    let t = py
        .get_type::<PyType>()
        .call1(("OverflowError", bases, attrs))?;
    Ok(t.cast_into::<PyType>()?.unbind())
}

/// `ctensor.array_api`, the array API namespace (src/array_api.py), made when the module
/// loads.
static ARRAY_API: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

/// Runs the namespace's Python source as the module `ctensor.array_api`, with the
/// extension module `ext` as its `_ct`.
fn make_array_api(ext: &Bound<'_, PyModule>) -> PyResult<Py<PyModule>> {
    let py = ext.py();
    let module = PyModule::new(py, "ctensor.array_api")?;
    module.add("_ct", ext)?;
    let code = std::ffi::CString::new(include_str!("array_api.py"))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    py.run(&code, Some(&module.dict()), None)?;
    Ok(module.unbind())
}

/// The array API namespace (`Tensor.__array_namespace__`).
pub(crate) fn array_api(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    match ARRAY_API.get(py) {
        Some(m) => Ok(m.bind(py).clone()),
        None => Err(Error::new_err(
            "ctensor.array_api was not made when the module loaded",
        )),
    }
}

/// Runs `f` without the GIL (for operations that may take long) and converts its error.
pub(crate) fn nogil<T: Send>(
    py: Python<'_>,
    f: impl Send + FnOnce() -> ctensor_aten::Result<T>,
) -> PyResult<T> {
    py.detach(f).map_err(err)
}

/// A `dtype=` argument as NumPy takes it: a name (`"float64"`, `"f8"`, `"c16"`, ctensor's
/// `"f64"`), a NumPy scalar type (`numpy.float32`), a `numpy.dtype`, or `ml_dtypes.bfloat16`.
pub(crate) fn dtype_arg(obj: &Bound<'_, PyAny>) -> PyResult<DataType> {
    if let Ok(name) = obj.extract::<String>() {
        if let Ok(d) = DataType::from_name(&name) {
            return Ok(d);
        }
    }
    // Anything else through NumPy's own parser, then by its canonical name.
    let np = obj.py().import("numpy")?;
    let name = match np.call_method1("dtype", (obj,)) {
        Ok(d) => d.getattr("name")?.extract::<String>()?,
        Err(_) => {
            return Err(Error::new_err(format!(
                "unknown data type {}: expected float32, float64, int32, int64, complex64, \
                 complex128, float16 or bfloat16 (a name, a NumPy type or a numpy.dtype)",
                obj.repr()?
            )))
        }
    };
    DataType::from_name(&name).map_err(|_| {
        Error::new_err(format!(
            "data type {name} (from {}) has no ctensor type: expected float32, float64, int32, \
             int64, complex64, complex128, float16 or bfloat16",
            obj.repr().map(|r| r.to_string()).unwrap_or_default()
        ))
    })
}

/// The `numpy.dtype` of a ctensor type (bfloat16's from `ml_dtypes`; its name, a `str`,
/// when `ml_dtypes` is not installed).
pub(crate) fn dtype_object(py: Python<'_>, d: DataType) -> PyResult<Py<PyAny>> {
    let np = py.import("numpy")?;
    if d == DataType::BFloat16 {
        return Ok(match py.import("ml_dtypes") {
            Ok(ml) => np
                .call_method1("dtype", (ml.getattr("bfloat16")?,))?
                .unbind(),
            Err(_) => "bfloat16".into_pyobject(py)?.into_any().unbind(),
        });
    }
    Ok(np.call_method1("dtype", (numpy_name(d),))?.unbind())
}

pub(crate) fn device_arg(name: &str) -> PyResult<DeviceType> {
    name.parse::<DeviceType>().map_err(err)
}

/// NumPy's name of a dtype.
pub(crate) fn numpy_name(d: DataType) -> &'static str {
    match d {
        DataType::Float => "float32",
        DataType::Double => "float64",
        DataType::Int => "int32",
        DataType::Int64 => "int64",
        DataType::ComplexFloat => "complex64",
        DataType::ComplexDouble => "complex128",
        DataType::Half => "float16",
        DataType::BFloat16 => "bfloat16",
    }
}

/// `True` when a GPU can be used.
#[pyfunction]
fn gpu_available() -> bool {
    ctensor_aten::gpu_available()
}

/// ctensor: tensors whose element type (float32, float64, int32, int64, complex64,
/// complex128, float16, bfloat16) and device ("cpu" or "gpu") are chosen at run time,
/// for scientific codes.
///
/// Tensors share memory with NumPy, PyTorch, CuPy and JAX arrays through DLPack
/// (`ctensor.from_numpy(a)`, `ctensor.from_dlpack(x)`, `numpy.asarray(t)`,
/// `torch.from_dlpack(t)`) and follow NumPy's semantics: NumPy 2's type promotion,
/// indexing (views for integers, slices, `...` and `None`), in-place operators,
/// reductions with `axis`/`keepdims`, and NumPy's functions and ufuncs applied to tensors
/// (`numpy.sqrt(t)`, `numpy.sum(t, axis=-1)`).
///
/// Linear algebra as NumPy and SciPy name it: `matmul`, `einsum`, `eigh` (SciPy's
/// `subset_by_index`/`subset_by_value`, generalized problems, `driver=`), `cholesky`,
/// `solve` (stacks too), `qr`, `svd`; FFTs (`fft`, `ifft`, `fftn`, `ifftn`); NumPy-named
/// element-wise functions (`sin`, `arctan2`, `less`, ...); `.npy` files (`save_npy`,
/// `load_npy`). Errors are `ctensor.Error` with a message that says what was expected
/// and what was given. Every long operation releases the GIL.
#[pymodule]
#[pyo3(name = "ctensor")]
fn ctensor_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("Error", m.py().get_type::<Error>())?;
    let overflow = OVERFLOW.get_or_try_init(m.py(), || overflow_type(m.py()))?;
    m.add("OverflowError", overflow.clone_ref(m.py()))?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<Tensor>()?;
    m.add_function(wrap_pyfunction!(dlpack::from_numpy, m)?)?;
    m.add_function(wrap_pyfunction!(dlpack::from_dlpack, m)?)?;
    m.add_function(wrap_pyfunction!(tensor::zeros, m)?)?;
    m.add_function(wrap_pyfunction!(tensor::eye, m)?)?;
    m.add_function(wrap_pyfunction!(linalg::einsum, m)?)?;
    m.add_function(wrap_pyfunction!(linalg::matmul, m)?)?;
    m.add_function(wrap_pyfunction!(linalg::eigh, m)?)?;
    m.add_function(wrap_pyfunction!(linalg::cholesky, m)?)?;
    m.add_function(wrap_pyfunction!(linalg::solve, m)?)?;
    m.add_function(wrap_pyfunction!(linalg::qr, m)?)?;
    m.add_function(wrap_pyfunction!(linalg::svd, m)?)?;
    m.add_function(wrap_pyfunction!(fft::fftn, m)?)?;
    m.add_function(wrap_pyfunction!(fft::ifftn, m)?)?;
    m.add_function(wrap_pyfunction!(fft::fft, m)?)?;
    m.add_function(wrap_pyfunction!(fft::ifft, m)?)?;
    m.add_function(wrap_pyfunction!(io::save_npy, m)?)?;
    m.add_function(wrap_pyfunction!(io::load_npy, m)?)?;
    m.add_function(wrap_pyfunction!(gpu_available, m)?)?;
    m.add_function(wrap_pyfunction!(promotion::result_type, m)?)?;
    math::register(m)?;
    let api = ARRAY_API.get_or_try_init(m.py(), || make_array_api(m))?;
    m.add("array_api", api.clone_ref(m.py()))?;
    m.py()
        .import("sys")?
        .getattr("modules")?
        .set_item("ctensor.array_api", api.clone_ref(m.py()))?;
    // `__all__`: the wheel installs this extension inside a package whose `__init__`
    // re-exports it with `from .ctensor import *`, which takes `__all__` (and would drop
    // `__version__` without it).
    let mut names: Vec<String> = m
        .dict()
        .keys()
        .iter()
        .map(|k| k.extract::<String>())
        .collect::<PyResult<_>>()?;
    names.retain(|n| !n.starts_with('_'));
    names.sort();
    names.push("__version__".into());
    m.add("__all__", names)?;
    Ok(())
}
