//! The Python module `ctensor`: [`Tensor`](ctensor_aten::Tensor) as `ctensor.Tensor`,
//! zero-copy exchange through DLPack (`numpy.from_dlpack(t)`, `ctensor.from_numpy(a)`,
//! and PyTorch/CuPy alike), and the operations a DFT prototype needs: element-wise
//! arithmetic with NumPy's promotion, `einsum`, `matmul`, `eigh` with index and value
//! ranges, `cholesky`, `solve`, `qr`, `svd`, FFTs and `.npy` files. Errors are
//! `ctensor.Error` with ctensor's message; long operations release the GIL.

use std::ffi::{c_void, CStr};

use ctensor_aten::dlpack::{
    DLManagedTensor, DLManagedTensorVersioned, DLPACK_FLAG_BITMASK_IS_COPIED,
};
use ctensor_aten::{
    c64, DataType, DeviceType, EigBackend, EighRange, EinsumOptions, FftNorm, Number, QrMode,
    Tensor as Inner, Uplo,
};
use pyo3::exceptions::{PyBufferError, PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyComplex, PyFloat, PyInt, PySlice, PyTuple};
use pyo3::{create_exception, ffi};

create_exception!(
    ctensor,
    Error,
    pyo3::exceptions::PyException,
    "An error from ctensor; the message says what was expected and what was given."
);

/// ctensor's error as `ctensor.Error`.
fn err(e: ctensor_aten::Error) -> PyErr {
    Error::new_err(e.to_string())
}

/// Runs `f` without the GIL (for operations that may take long) and converts its error.
fn nogil<T: Send>(
    py: Python<'_>,
    f: impl Send + FnOnce() -> ctensor_aten::Result<T>,
) -> PyResult<T> {
    py.detach(f).map_err(err)
}

fn dtype_arg(name: &str) -> PyResult<DataType> {
    DataType::from_name(name).map_err(err)
}

fn device_arg(name: &str) -> PyResult<DeviceType> {
    name.parse::<DeviceType>().map_err(err)
}

/// NumPy's name of a dtype.
fn numpy_name(d: DataType) -> &'static str {
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

/// A tensor whose element type and device are chosen at run time.
///
/// Shares memory with the arrays it was made from (`from_numpy`, `from_dlpack`) and with
/// those made from it (`numpy()`, `numpy.from_dlpack(t)`, `torch.from_dlpack(t)`).
#[pyclass(name = "Tensor", module = "ctensor", frozen)]
struct Tensor {
    t: Inner,
}

fn wrap(t: Inner) -> Tensor {
    Tensor { t }
}

/// A Python number as ctensor's weakly-typed [`Number`], or `None` for anything else.
fn number(x: &Bound<'_, PyAny>) -> PyResult<Option<Number>> {
    if x.is_instance_of::<PyInt>() {
        Ok(Some(Number::Int(x.extract::<i64>()?)))
    } else if x.is_instance_of::<PyFloat>() {
        Ok(Some(Number::Float(x.extract::<f64>()?)))
    } else if x.is_instance_of::<PyComplex>() {
        Ok(Some(Number::Complex(x.extract::<c64>()?)))
    } else {
        Ok(None)
    }
}

/// A Python object as an operand: a `Tensor`, or anything with `__dlpack__` (shared),
/// or else a copy through `numpy.ascontiguousarray` (nested sequences, and arrays in
/// layouts ctensor cannot view, such as negative strides).
fn as_tensor(x: &Bound<'_, PyAny>) -> PyResult<Inner> {
    if let Ok(t) = x.cast::<Tensor>() {
        return Ok(t.get().t.share());
    }
    if x.hasattr("__dlpack__")? {
        match import_dlpack(x) {
            Ok(t) => return Ok(t),
            Err(e) if e.is_instance_of::<Error>(x.py()) => {}
            Err(e) => return Err(e),
        }
    }
    let np = x.py().import("numpy")?;
    let a = np.call_method1("ascontiguousarray", (x,))?;
    import_dlpack(&a)?.try_clone().map_err(err)
}

/// The view `src[key]` for integers and slices of step 1 (negative values count from
/// the end), as NumPy indexes.
fn view_of(src: &Inner, key: &Bound<'_, PyAny>) -> PyResult<Inner> {
    let items: Vec<Bound<'_, PyAny>> = match key.cast::<PyTuple>() {
        Ok(t) => t.iter().collect(),
        Err(_) => vec![key.clone()],
    };
    if items.len() > src.ndim() {
        return Err(PyIndexError::new_err(format!(
            "too many indices: {} for a tensor of {} dimensions",
            items.len(),
            src.ndim()
        )));
    }
    let mut t = src.share();
    let mut dim = 0;
    for item in items {
        let size = t.dims()[dim];
        if let Ok(sl) = item.cast::<PySlice>() {
            let ind = sl.indices(size as isize)?;
            if ind.step != 1 {
                return Err(PyIndexError::new_err(format!(
                    "slices of step 1 only (ctensor views have no step), got step {}",
                    ind.step
                )));
            }
            t = t
                .narrow(dim, ind.start as usize, ind.slicelength)
                .map_err(err)?;
            dim += 1;
        } else if item.is_instance_of::<PyInt>() {
            let i: i64 = item.extract()?;
            let k = if i < 0 { i + size as i64 } else { i };
            if k < 0 || k >= size as i64 {
                return Err(PyIndexError::new_err(format!(
                    "index {i} is out of range for dimension {dim} of size {size}"
                )));
            }
            t = t
                .narrow(dim, k as usize, 1)
                .and_then(|v| v.squeeze(dim))
                .map_err(err)?;
        } else {
            return Err(PyTypeError::new_err(format!(
                "indices are integers and slices, got {}",
                item.get_type().name()?
            )));
        }
    }
    Ok(t)
}

// ---- DLPack --------------------------------------------------------------------------

const VERSIONED: &CStr = c"dltensor_versioned";
const LEGACY: &CStr = c"dltensor";
const USED_VERSIONED: &CStr = c"used_dltensor_versioned";
const USED_LEGACY: &CStr = c"used_dltensor";

/// Wraps the DLPack capsule of `x.__dlpack__()` (versioned when the producer can).
fn import_dlpack(x: &Bound<'_, PyAny>) -> PyResult<Inner> {
    let py = x.py();
    let kwargs = pyo3::types::PyDict::new(py);
    kwargs.set_item("max_version", (1, 1))?;
    let cap = match x.call_method("__dlpack__", (), Some(&kwargs)) {
        Ok(c) => c,
        // Producers older than DLPack 1.0 take no max_version.
        Err(e) if e.is_instance_of::<PyTypeError>(py) => x.call_method0("__dlpack__")?,
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
        // SAFETY: as above.
        unsafe { Inner::from_dlpack_legacy(m) }.map_err(err)
    } else {
        Err(PyTypeError::new_err(
            "__dlpack__ returned a capsule that is neither 'dltensor_versioned' nor 'dltensor' \
             (already consumed?)",
        ))
    }
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
fn capsule(py: Python<'_>, ptr: *mut c_void, name: &'static CStr) -> PyResult<Py<PyAny>> {
    // SAFETY: `ptr` is a managed tensor from `to_dlpack*`; the name is static.
    let obj = unsafe { ffi::PyCapsule_New(ptr, name.as_ptr(), Some(capsule_destructor)) };
    // SAFETY: a new reference, or null with a Python error set.
    unsafe { Bound::from_owned_ptr_or_err(py, obj) }.map(Bound::unbind)
}

#[pymethods]
impl Tensor {
    /// `ctensor.Tensor(data, dtype=None, device="cpu")`: a new tensor holding a copy of
    /// `data` (a NumPy array, a nested list, anything `numpy.asarray` takes, or a
    /// DLPack producer), cast to `dtype` when given.
    #[new]
    #[pyo3(signature = (data, dtype=None, device="cpu"))]
    fn new(data: &Bound<'_, PyAny>, dtype: Option<&str>, device: &str) -> PyResult<Self> {
        let src = as_tensor(data)?;
        let device = device_arg(device)?;
        let py = data.py();
        let t = nogil(py, || {
            let t = match dtype {
                Some(d) => src.cast(DataType::from_name(d)?)?,
                None => src.try_clone()?,
            };
            if t.device() == device {
                Ok(t)
            } else {
                t.to_device(device)
            }
        })?;
        Ok(wrap(t))
    }

    /// `None`, so that NumPy's operators defer to ours (`array @ tensor` calls
    /// `Tensor.__rmatmul__`) instead of trying to convert the tensor.
    #[classattr]
    fn __array_ufunc__(py: Python<'_>) -> Py<PyAny> {
        py.None()
    }

    /// The element type, by NumPy's name (`"float64"`, `"complex128"`, ...).
    #[getter]
    fn dtype(&self) -> &'static str {
        numpy_name(self.t.dtype())
    }

    /// `"cpu"` or `"gpu"`.
    #[getter]
    fn device(&self) -> &'static str {
        match self.t.device() {
            DeviceType::Cpu => "cpu",
            DeviceType::Gpu => "gpu",
        }
    }

    /// The sizes, as a tuple.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.t.dims())
    }

    /// The strides in elements (NumPy's `strides` are in bytes).
    #[getter]
    fn strides<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.t.strides())
    }

    /// The number of dimensions.
    #[getter]
    fn ndim(&self) -> usize {
        self.t.ndim()
    }

    /// The transpose of a matrix (a view).
    #[getter(T)]
    fn transpose(&self) -> PyResult<Self> {
        self.t.t().map(wrap).map_err(err)
    }

    fn __len__(&self) -> PyResult<usize> {
        self.t
            .dims()
            .first()
            .copied()
            .ok_or_else(|| PyTypeError::new_err("len() of a 0-d tensor"))
    }

    fn __repr__(&self) -> String {
        format!("ctensor.{}", self.t)
    }

    /// A NumPy array over the same memory (no copy) for host tensors; GPU tensors are
    /// copied to the host first. bf16 has no NumPy type: cast it first.
    fn numpy<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let np = py.import("numpy")?;
        let t = &slf.get().t;
        if t.dtype() == DataType::BFloat16 {
            return Err(PyTypeError::new_err(
                "NumPy has no bfloat16: cast first, e.g. t.astype('float32')",
            ));
        }
        if t.device() == DeviceType::Cpu {
            np.call_method1("from_dlpack", (slf,))
        } else {
            let host = nogil(py, || t.to_device(DeviceType::Cpu))?;
            np.call_method1("from_dlpack", (Bound::new(py, wrap(host))?,))
        }
    }

    /// NumPy's array protocol: `numpy.asarray(t)` shares the memory as [`numpy`] does
    /// (`copy=True` or a `dtype` copies).
    #[pyo3(signature = (dtype=None, copy=None))]
    fn __array__<'py>(
        slf: &Bound<'py, Self>,
        dtype: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut a = Tensor::numpy(slf)?;
        if let Some(d) = dtype {
            a = a.call_method1("astype", (d,))?;
        }
        if copy == Some(true) {
            a = a.call_method0("copy")?;
        }
        Ok(a)
    }

    /// `t[i]`, `t[a:b]`, `t[i, a:b, ...]`: integers and slices of step 1 (negative
    /// values count from the end), as views of the same memory.
    fn __getitem__(&self, key: &Bound<'_, PyAny>) -> PyResult<Self> {
        view_of(&self.t, key).map(wrap)
    }

    /// `t[key] = value`: writes `value` (a number, a tensor or an array, broadcast as
    /// NumPy does) into the view `t[key]`. Complex into real and floating into integer
    /// are refused, as for every in-place operation.
    fn __setitem__(&self, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut view = view_of(&self.t, key)?;
        let src = match number(value)? {
            Some(Number::Int(i)) => Inner::scalar(i).map_err(err)?,
            Some(Number::Float(f)) => Inner::scalar(f).map_err(err)?,
            Some(Number::Complex(c)) => Inner::scalar(c).map_err(err)?,
            None => as_tensor(value)?,
        };
        let src = if src.device() == view.device() {
            src
        } else {
            src.to_device(view.device()).map_err(err)?
        };
        nogil(value.py(), || view.assign(&src))
    }

    /// The same values on `device` (`"cpu"` or `"gpu"`); the tensor itself when already
    /// there.
    fn to(&self, py: Python<'_>, device: &str) -> PyResult<Self> {
        let device = device_arg(device)?;
        if device == self.t.device() {
            return Ok(wrap(self.t.share()));
        }
        nogil(py, || self.t.to_device(device)).map(wrap)
    }

    /// A copy with the element type `dtype` (NumPy's or ctensor's names).
    fn astype(&self, py: Python<'_>, dtype: &str) -> PyResult<Self> {
        let d = dtype_arg(dtype)?;
        nogil(py, || self.t.cast(d)).map(wrap)
    }

    /// A deep copy.
    fn copy(&self, py: Python<'_>) -> PyResult<Self> {
        nogil(py, || self.t.try_clone()).map(wrap)
    }

    /// The complex conjugate (a copy; the tensor itself for real types).
    fn conj(&self, py: Python<'_>) -> PyResult<Self> {
        nogil(py, || self.t.conj()).map(wrap)
    }

    /// The same values with a new shape (one size may be -1); a view when possible.
    #[pyo3(signature = (*shape))]
    fn reshape(&self, shape: Vec<i64>) -> PyResult<Self> {
        self.t.reshape(&shape).map(wrap).map_err(err)
    }

    /// The only element of a one-element tensor, as a Python number.
    fn item(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let d = self.t.dtype();
        Ok(if d.is_complex() {
            self.t
                .item::<c64>()
                .map_err(err)?
                .into_pyobject(py)?
                .into_any()
                .unbind()
        } else if d.is_integer() {
            self.t
                .item::<i64>()
                .map_err(err)?
                .into_pyobject(py)?
                .into_any()
                .unbind()
        } else {
            self.t
                .item::<f64>()
                .map_err(err)?
                .into_pyobject(py)?
                .into_any()
                .unbind()
        })
    }

    /// The sum over `axes` (all when omitted).
    #[pyo3(signature = (axes=None))]
    fn sum(&self, py: Python<'_>, axes: Option<Vec<usize>>) -> PyResult<Self> {
        let axes = axes.unwrap_or_else(|| (0..self.t.ndim()).collect());
        nogil(py, || self.t.sum(&axes)).map(wrap)
    }

    fn __neg__(&self, py: Python<'_>) -> PyResult<Self> {
        nogil(py, || self.t.neg()).map(wrap)
    }

    fn __add__(&self, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.binary(other, Op::Add, false)
    }
    fn __radd__(&self, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.binary(other, Op::Add, true)
    }
    fn __sub__(&self, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.binary(other, Op::Sub, false)
    }
    fn __rsub__(&self, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.binary(other, Op::Sub, true)
    }
    fn __mul__(&self, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.binary(other, Op::Mul, false)
    }
    fn __rmul__(&self, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.binary(other, Op::Mul, true)
    }
    fn __truediv__(&self, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.binary(other, Op::Div, false)
    }
    fn __rtruediv__(&self, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.binary(other, Op::Div, true)
    }
    fn __matmul__(&self, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        let b = as_tensor(other)?;
        nogil(other.py(), || ctensor_aten::matmul(&self.t, &b)).map(wrap)
    }
    fn __rmatmul__(&self, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        let a = as_tensor(other)?;
        nogil(other.py(), || ctensor_aten::matmul(&a, &self.t)).map(wrap)
    }

    /// DLPack export (the Python array API): a capsule over the same memory, versioned
    /// when the consumer passes `max_version >= (1, 0)`, legacy otherwise. `copy=True`
    /// exports a copy; a different `dl_device` is refused.
    #[pyo3(signature = (*, stream=None, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__(
        &self,
        py: Python<'_>,
        stream: Option<&Bound<'_, PyAny>>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Py<PyAny>> {
        let _ = stream; // ctensor synchronizes its stream before every GPU export
        if let Some(want) = dl_device {
            if want != self.__dlpack_device__()? {
                return Err(PyBufferError::new_err(format!(
                    "the tensor is on DLPack device {:?}, {want:?} was asked for; use .to()",
                    self.__dlpack_device__()?
                )));
            }
        }
        let copied = copy == Some(true);
        let t = if copied {
            nogil(py, || self.t.try_clone())?
        } else {
            self.t.share()
        };
        if max_version.is_some_and(|(major, _)| major >= 1) {
            let m = t.to_dlpack().map_err(err)?;
            if copied {
                // SAFETY: a fresh export not yet handed out.
                unsafe { (*m).flags |= DLPACK_FLAG_BITMASK_IS_COPIED };
            }
            capsule(py, m.cast(), VERSIONED)
        } else {
            capsule(py, t.to_dlpack_legacy().map_err(err)?.cast(), LEGACY)
        }
    }

    /// `(device_type, device_id)` as DLPack numbers them: `(1, 0)` for host memory,
    /// `(2, ordinal)` for the GPU.
    fn __dlpack_device__(&self) -> PyResult<(i32, i32)> {
        self.t.dlpack_device().map_err(err)
    }
}

#[derive(Clone, Copy)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
}

impl Tensor {
    /// `self op other` (or `other op self` when `reflected`), with Python numbers as
    /// weakly-typed scalars and anything else converted to a tensor.
    fn binary(&self, other: &Bound<'_, PyAny>, op: Op, reflected: bool) -> PyResult<Self> {
        let py = other.py();
        let t = &self.t;
        if let Some(n) = number(other)? {
            return nogil(py, || match (op, reflected) {
                (Op::Add, _) => t.add_scalar(n),
                (Op::Mul, _) => t.mul_scalar(n),
                (Op::Sub, false) => t.sub_scalar(n),
                (Op::Sub, true) => t.rsub_scalar(n),
                (Op::Div, false) => t.div_scalar(n),
                (Op::Div, true) => t.rdiv_scalar(n),
            })
            .map(wrap);
        }
        let o = as_tensor(other)?;
        let (a, b) = if reflected { (&o, t) } else { (t, &o) };
        nogil(py, || match op {
            Op::Add => a.add(b),
            Op::Sub => a.sub(b),
            Op::Mul => a.mul(b),
            Op::Div => a.div(b),
        })
        .map(wrap)
    }
}

// ---- module functions ------------------------------------------------------------------

/// A tensor over the memory of a NumPy array (or any DLPack producer: PyTorch, CuPy,
/// JAX) without copying. Layouts ctensor cannot view (negative or overlapping strides)
/// raise `ctensor.Error`; `ctensor.Tensor(a)` copies instead.
#[pyfunction]
fn from_numpy(a: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    import_dlpack(a).map(wrap)
}

/// The same as [`from_numpy`], under the Python array API's name.
#[pyfunction]
fn from_dlpack(a: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    import_dlpack(a).map(wrap)
}

/// A tensor of zeros.
#[pyfunction]
#[pyo3(signature = (shape, dtype="float64", device="cpu"))]
fn zeros(shape: Vec<usize>, dtype: &str, device: &str) -> PyResult<Tensor> {
    Inner::zeros(dtype_arg(dtype)?, device_arg(device)?, &shape)
        .map(wrap)
        .map_err(err)
}

/// The identity matrix.
#[pyfunction]
#[pyo3(signature = (n, dtype="float64", device="cpu"))]
fn eye(n: usize, dtype: &str, device: &str) -> PyResult<Tensor> {
    Inner::eye(dtype_arg(dtype)?, device_arg(device)?, n)
        .map(wrap)
        .map_err(err)
}

/// `numpy.einsum` over ctensor tensors (one BLAS call where the contraction allows).
#[pyfunction]
#[pyo3(signature = (equation, *operands))]
fn einsum(py: Python<'_>, equation: &str, operands: Vec<Bound<'_, PyAny>>) -> PyResult<Tensor> {
    let ts = operands
        .iter()
        .map(as_tensor)
        .collect::<PyResult<Vec<_>>>()?;
    let refs: Vec<&Inner> = ts.iter().collect();
    nogil(py, || {
        ctensor_aten::einsum(equation, &refs, &EinsumOptions::default())
    })
    .map(wrap)
}

/// The matrix product (batched over leading axes as `numpy.matmul`).
#[pyfunction]
fn matmul(py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    let (a, b) = (as_tensor(a)?, as_tensor(b)?);
    nogil(py, || ctensor_aten::matmul(&a, &b)).map(wrap)
}

/// The range of an `eigh` call from SciPy's keywords.
fn eigh_range(
    subset_by_index: Option<(usize, usize)>,
    subset_by_value: Option<(f64, f64)>,
) -> PyResult<EighRange> {
    match (subset_by_index, subset_by_value) {
        (Some(_), Some(_)) => Err(PyValueError::new_err(
            "give subset_by_index or subset_by_value, not both",
        )),
        // SciPy's index range is inclusive.
        (Some((lo, hi)), None) => Ok(EighRange::Index(lo, hi.saturating_add(1))),
        (None, Some((lo, hi))) => Ok(EighRange::Value(lo, hi)),
        (None, None) => Ok(EighRange::All),
    }
}

/// Eigenvalues (ascending) and eigenvectors (columns) of a Hermitian matrix, or of the
/// generalized problem `A v = λ B v` with `B` positive definite, as `scipy.linalg.eigh`:
/// `subset_by_index=(lo, hi)` (inclusive) or `subset_by_value=(lo, hi)` (the half-open
/// `(lo, hi]`) computes only those; `eigvals_only=True` returns the values alone. The
/// lower triangle is read. Stacks `[..., n, n]` are solved matrix by matrix.
#[pyfunction]
#[pyo3(signature = (a, b=None, *, subset_by_index=None, subset_by_value=None, eigvals_only=false))]
fn eigh(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    b: Option<&Bound<'_, PyAny>>,
    subset_by_index: Option<(usize, usize)>,
    subset_by_value: Option<(f64, f64)>,
    eigvals_only: bool,
) -> PyResult<Py<PyAny>> {
    let range = eigh_range(subset_by_index, subset_by_value)?;
    let a = as_tensor(a)?;
    let b = b.map(as_tensor).transpose()?;
    if eigvals_only && b.is_none() {
        let w = nogil(py, || {
            ctensor_aten::eigvalsh(&a, range, EigBackend::default())
        })?;
        return Ok(Bound::new(py, wrap(w))?.into_any().unbind());
    }
    let (w, v) = nogil(py, || match &b {
        None => ctensor_aten::eigh(&a, range, EigBackend::default()),
        Some(b) => ctensor_aten::eigh_generalized(&a, b, 1, range),
    })?;
    if eigvals_only {
        return Ok(Bound::new(py, wrap(w))?.into_any().unbind());
    }
    Ok((wrap(w), wrap(v)).into_pyobject(py)?.into_any().unbind())
}

/// The Cholesky factor (`lower=True`: `A = L Lᴴ`; otherwise `A = Uᴴ U`).
#[pyfunction]
#[pyo3(signature = (a, lower=true))]
fn cholesky(py: Python<'_>, a: &Bound<'_, PyAny>, lower: bool) -> PyResult<Tensor> {
    let a = as_tensor(a)?;
    let uplo = if lower { Uplo::Lower } else { Uplo::Upper };
    nogil(py, || ctensor_aten::cholesky(&a, uplo)).map(wrap)
}

/// The solution `x` of `a x = b` (`b` a vector or several right-hand sides).
#[pyfunction]
fn solve(py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    let (a, b) = (as_tensor(a)?, as_tensor(b)?);
    nogil(py, || ctensor_aten::solve(&a, &b)).map(wrap)
}

/// The QR factorization, as `numpy.linalg.qr`: `mode="reduced"` (default) or
/// `"complete"` return `(q, r)`, `mode="r"` returns `r`.
#[pyfunction]
#[pyo3(signature = (a, mode="reduced"))]
fn qr(py: Python<'_>, a: &Bound<'_, PyAny>, mode: &str) -> PyResult<Py<PyAny>> {
    let a = as_tensor(a)?;
    let mode = match mode {
        "reduced" => QrMode::Reduced,
        "complete" => QrMode::Complete,
        "r" => {
            let r = nogil(py, || ctensor_aten::qr_r(&a))?;
            return Ok(Bound::new(py, wrap(r))?.into_any().unbind());
        }
        other => {
            return Err(PyValueError::new_err(format!(
                "qr: mode must be 'reduced', 'complete' or 'r', got {other:?}"
            )))
        }
    };
    let (q, r) = nogil(py, || ctensor_aten::qr(&a, mode))?;
    Ok((wrap(q), wrap(r)).into_pyobject(py)?.into_any().unbind())
}

/// The singular value decomposition, as `numpy.linalg.svd`: `(u, s, vh)`, or `s` alone
/// with `compute_uv=False`.
#[pyfunction]
#[pyo3(signature = (a, full_matrices=true, compute_uv=true))]
fn svd(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    full_matrices: bool,
    compute_uv: bool,
) -> PyResult<Py<PyAny>> {
    let a = as_tensor(a)?;
    if !compute_uv {
        let s = nogil(py, || ctensor_aten::svdvals(&a))?;
        return Ok(Bound::new(py, wrap(s))?.into_any().unbind());
    }
    let (u, s, vh) = nogil(py, || ctensor_aten::svd(&a, full_matrices))?;
    Ok((wrap(u), wrap(s), wrap(vh))
        .into_pyobject(py)?
        .into_any()
        .unbind())
}

fn norm_arg(norm: Option<&str>) -> PyResult<FftNorm> {
    match norm.unwrap_or("backward") {
        "backward" => Ok(FftNorm::Backward),
        "ortho" => Ok(FftNorm::Ortho),
        "forward" => Ok(FftNorm::Forward),
        other => Err(PyValueError::new_err(format!(
            "norm must be 'backward', 'ortho' or 'forward', got {other:?}"
        ))),
    }
}

/// Axes as NumPy takes them (negative counts from the end; all when omitted).
fn axes_arg(ndim: usize, axes: Option<Vec<i64>>) -> PyResult<Vec<usize>> {
    match axes {
        None => Ok((0..ndim).collect()),
        Some(v) => v
            .into_iter()
            .map(|a| {
                let k = if a < 0 { a + ndim as i64 } else { a };
                usize::try_from(k)
                    .ok()
                    .filter(|&k| k < ndim)
                    .ok_or_else(|| {
                        PyValueError::new_err(format!(
                            "axis {a} is out of range for {ndim} dimensions"
                        ))
                    })
            })
            .collect(),
    }
}

/// A forward (or `inverse`) transform of `a` over NumPy-style `axes` with `norm`.
fn transform(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    axes: Option<Vec<i64>>,
    norm: Option<&str>,
    inverse: bool,
) -> PyResult<Tensor> {
    let a = as_tensor(a)?;
    let (axes, norm) = (axes_arg(a.ndim(), axes)?, norm_arg(norm)?);
    let f = if inverse {
        ctensor_aten::ifftn
    } else {
        ctensor_aten::fftn
    };
    nogil(py, || f(&a, &axes, norm)).map(wrap)
}

/// The n-dimensional discrete Fourier transform over `axes` (all when omitted), with
/// NumPy's `norm`.
#[pyfunction]
#[pyo3(signature = (a, axes=None, norm=None))]
fn fftn(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    axes: Option<Vec<i64>>,
    norm: Option<&str>,
) -> PyResult<Tensor> {
    transform(py, a, axes, norm, false)
}

/// The inverse of [`fftn`].
#[pyfunction]
#[pyo3(signature = (a, axes=None, norm=None))]
fn ifftn(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    axes: Option<Vec<i64>>,
    norm: Option<&str>,
) -> PyResult<Tensor> {
    transform(py, a, axes, norm, true)
}

/// The one-dimensional transform along `axis` (the last by default).
#[pyfunction]
#[pyo3(signature = (a, axis=-1, norm=None))]
fn fft(py: Python<'_>, a: &Bound<'_, PyAny>, axis: i64, norm: Option<&str>) -> PyResult<Tensor> {
    transform(py, a, Some(vec![axis]), norm, false)
}

/// The inverse of [`fft`].
#[pyfunction]
#[pyo3(signature = (a, axis=-1, norm=None))]
fn ifft(py: Python<'_>, a: &Bound<'_, PyAny>, axis: i64, norm: Option<&str>) -> PyResult<Tensor> {
    transform(py, a, Some(vec![axis]), norm, true)
}

/// Saves a tensor to a NumPy `.npy` file (bf16 as `<V2`, readable with `ml_dtypes`).
#[pyfunction]
fn save_npy(py: Python<'_>, path: std::path::PathBuf, t: &Bound<'_, PyAny>) -> PyResult<()> {
    let t = as_tensor(t)?;
    nogil(py, || t.save_npy(&path))
}

/// Loads a NumPy `.npy` file onto `device`.
#[pyfunction]
#[pyo3(signature = (path, device="cpu"))]
fn load_npy(py: Python<'_>, path: std::path::PathBuf, device: &str) -> PyResult<Tensor> {
    let device = device_arg(device)?;
    nogil(py, || Inner::load_npy_to(&path, device)).map(wrap)
}

/// `True` when a GPU can be used.
#[pyfunction]
fn gpu_available() -> bool {
    ctensor_aten::gpu_available()
}

/// The module.
#[pymodule]
#[pyo3(name = "ctensor")]
fn ctensor_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("Error", m.py().get_type::<Error>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<Tensor>()?;
    m.add_function(wrap_pyfunction!(from_numpy, m)?)?;
    m.add_function(wrap_pyfunction!(from_dlpack, m)?)?;
    m.add_function(wrap_pyfunction!(zeros, m)?)?;
    m.add_function(wrap_pyfunction!(eye, m)?)?;
    m.add_function(wrap_pyfunction!(einsum, m)?)?;
    m.add_function(wrap_pyfunction!(matmul, m)?)?;
    m.add_function(wrap_pyfunction!(eigh, m)?)?;
    m.add_function(wrap_pyfunction!(cholesky, m)?)?;
    m.add_function(wrap_pyfunction!(solve, m)?)?;
    m.add_function(wrap_pyfunction!(qr, m)?)?;
    m.add_function(wrap_pyfunction!(svd, m)?)?;
    m.add_function(wrap_pyfunction!(fftn, m)?)?;
    m.add_function(wrap_pyfunction!(ifftn, m)?)?;
    m.add_function(wrap_pyfunction!(fft, m)?)?;
    m.add_function(wrap_pyfunction!(ifft, m)?)?;
    m.add_function(wrap_pyfunction!(save_npy, m)?)?;
    m.add_function(wrap_pyfunction!(load_npy, m)?)?;
    m.add_function(wrap_pyfunction!(gpu_available, m)?)?;
    Ok(())
}
