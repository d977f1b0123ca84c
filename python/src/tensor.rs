//! `ctensor.Tensor`: construction, NumPy's protocols, indexing and item assignment,
//! the arithmetic operators, and the module's creation functions.

use ctensor_aten::{c64, BinaryMathOp, DataType, DeviceType, Number, Tensor as Inner};
use pyo3::exceptions::{PyBufferError, PyIndexError, PyTypeError};
use pyo3::prelude::*;
use pyo3::pyclass::CompareOp;
use pyo3::types::{PyBool, PyBytes, PyComplex, PyDict, PyFloat, PyInt, PyModule, PyTuple};

use crate::dlpack::{capsule, import_dlpack, LEGACY, VERSIONED};
use crate::linalg::promoted_matmul;
use crate::promotion::numpy_promoted;
use crate::{device_arg, dtype_arg, dtype_object, err, nogil, numpy_name, Error};
use ctensor_aten::dlpack::DLPACK_FLAG_BITMASK_IS_COPIED;

/// A tensor whose element type and device are chosen at run time.
///
/// Shares memory with the arrays it was made from (`from_numpy`, `from_dlpack`) and with
/// those made from it (`numpy()`, `numpy.from_dlpack(t)`, `torch.from_dlpack(t)`).
///
/// ctensor has no boolean type: comparisons (`t < u`, `t == u`, `ctensor.less`...) give
/// int32 0/1 tensors marked as masks, so that `t[t > 0]` selects as NumPy's boolean
/// arrays do and `&`, `|`, `^`, `~` combine them.
#[pyclass(name = "Tensor", module = "ctensor", frozen, weakref)]
pub(crate) struct Tensor {
    t: Inner,
    /// A comparison's result (int32 0/1), indexed as a boolean mask.
    mask: bool,
}

pub(crate) fn wrap(t: Inner) -> Tensor {
    Tensor { t, mask: false }
}

/// A comparison's int32 0/1 result, marked as a mask.
pub(crate) fn wrap_mask(t: Inner) -> Tensor {
    Tensor { t, mask: true }
}

impl Tensor {
    /// The tensor itself.
    pub(crate) fn inner(&self) -> &Inner {
        &self.t
    }
    /// Whether this is a comparison's mask.
    pub(crate) fn is_mask(&self) -> bool {
        self.mask
    }
    /// The element type.
    pub(crate) fn dtype_type(&self) -> DataType {
        self.t.dtype()
    }
}

/// A Python number (`int`, `bool`, `float`, `complex` themselves) as ctensor's
/// weakly-typed [`Number`], or `None` for anything else. NumPy's scalars are not weak
/// although `np.float64` and `np.complex128` subclass `float` and `complex`: they
/// promote as the 0-d arrays they are (NumPy 2, NEP 50). An `int` beyond `int64` is
/// Python's `OverflowError`.
pub(crate) fn number(x: &Bound<'_, PyAny>) -> PyResult<Option<Number>> {
    if x.is_exact_instance_of::<PyInt>() || x.is_exact_instance_of::<PyBool>() {
        Ok(Some(Number::Int(x.extract::<i64>()?)))
    } else if x.is_exact_instance_of::<PyFloat>() {
        Ok(Some(Number::Float(x.extract::<f64>()?)))
    } else if x.is_exact_instance_of::<PyComplex>() {
        Ok(Some(Number::Complex(x.extract::<c64>()?)))
    } else {
        Ok(None)
    }
}

/// A Python object as an operand: a `Tensor`, or anything with `__dlpack__` (shared),
/// or else a copy through `numpy.ascontiguousarray` (nested sequences, and arrays in
/// layouts ctensor cannot view, such as negative strides).
pub(crate) fn as_tensor(x: &Bound<'_, PyAny>) -> PyResult<Inner> {
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

#[pymethods]
impl Tensor {
    /// `ctensor.Tensor(data, dtype=None, device="cpu")`: a new tensor holding a copy of
    /// `data` (a NumPy array, a nested list, anything `numpy.asarray` takes, or a
    /// DLPack producer), cast to `dtype` when given.
    #[new]
    #[pyo3(signature = (data, dtype=None, device="cpu"), text_signature = "(data, dtype=None, device='cpu')")]
    fn new(
        data: &Bound<'_, PyAny>,
        dtype: Option<&Bound<'_, PyAny>>,
        device: &str,
    ) -> PyResult<Self> {
        let src = as_tensor(data)?;
        let device = device_arg(device)?;
        let dtype = dtype.filter(|d| !d.is_none()).map(dtype_arg).transpose()?;
        let py = data.py();
        let t = nogil(py, || {
            let t = match dtype {
                Some(d) => src.cast(d)?,
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

    /// NumPy's ufunc protocol: `numpy.sqrt(t)`, `numpy.add(t, a)`, `a + t` with `a` an
    /// array. A ufunc ctensor has runs as ctensor's op and gives a tensor; any other ufunc
    /// or method (`reduce`, `out=`...) runs in NumPy on views of host tensors (no copy)
    /// and its arrays come back as tensors. GPU tensors take ctensor's ops only.
    #[pyo3(signature = (ufunc, method, *inputs, **kwargs))]
    fn __array_ufunc__(
        &self,
        ufunc: &Bound<'_, PyAny>,
        method: &str,
        inputs: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        crate::protocols::array_ufunc(ufunc, method, inputs, kwargs)
    }

    /// NumPy's function protocol: `numpy.sum(t)`, `numpy.linalg.solve(t, u)`,
    /// `numpy.concatenate([t, u])`. Functions ctensor has run as ctensor's ops; the rest
    /// run in NumPy on views of host tensors and their arrays come back as tensors.
    fn __array_function__(
        &self,
        func: &Bound<'_, PyAny>,
        types: &Bound<'_, PyAny>,
        args: &Bound<'_, PyTuple>,
        kwargs: &Bound<'_, PyDict>,
    ) -> PyResult<Py<PyAny>> {
        let _ = types;
        crate::protocols::array_function(func, args, kwargs)
    }

    /// The Python array API namespace (`ctensor.array_api`, standard 2023.12), as
    /// libraries written against the standard find it.
    #[pyo3(signature = (*, api_version=None))]
    fn __array_namespace__<'py>(
        &self,
        py: Python<'py>,
        api_version: Option<&str>,
    ) -> PyResult<Bound<'py, PyModule>> {
        if let Some(v) = api_version {
            if !matches!(v, "2021.12" | "2022.12" | "2023.12") {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "array API version {v:?} is not supported: ctensor.array_api implements \
                     2023.12 (2021.12 and 2022.12 are subsets)"
                )));
            }
        }
        crate::array_api(py)
    }

    /// The element type as a `numpy.dtype` (`t.dtype == numpy.float32`,
    /// `t.dtype == "float32"`); bfloat16 is `ml_dtypes`' (its name when that is not
    /// installed).
    #[getter]
    fn dtype(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        dtype_object(py, self.t.dtype())
    }

    /// The number of elements.
    #[getter]
    fn size(&self) -> usize {
        self.t.numel()
    }

    /// The size of one element in bytes.
    #[getter]
    fn itemsize(&self) -> usize {
        self.t.dtype().size_of()
    }

    /// The number of bytes of the elements.
    #[getter]
    fn nbytes(&self) -> usize {
        self.t.numel() * self.t.dtype().size_of()
    }

    /// The real parts: for a complex tensor a view of the real type (writing to it
    /// changes the tensor, as NumPy's `.real`); for a real tensor the tensor itself.
    #[getter]
    fn real(&self) -> PyResult<Self> {
        self.t.real().map(wrap).map_err(err)
    }

    /// The imaginary parts: for a complex tensor a view of the real type (writing to it
    /// changes the tensor); for a real tensor a new tensor of zeros.
    #[getter]
    fn imag(&self) -> PyResult<Self> {
        self.t.imag().map(wrap).map_err(err)
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

    /// The transpose of the last two axes (a view; the array API's `mT`).
    #[getter(mT)]
    fn matrix_transpose(&self) -> PyResult<Self> {
        let n = self.t.ndim();
        if n < 2 {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "mT needs at least two dimensions, the tensor has {n}"
            )));
        }
        self.t.transpose(n - 2, n - 1).map(wrap).map_err(err)
    }

    /// The same values on `device` (the array API's name for [`to`](Self::to); `stream`
    /// is accepted and unused: ctensor orders its own copies).
    #[pyo3(signature = (device, /, *, stream=None))]
    fn to_device(
        &self,
        py: Python<'_>,
        device: &str,
        stream: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let _ = stream;
        self.to(py, device)
    }

    /// `a % b`: NumPy's remainder (the sign of the divisor), computed by NumPy on host
    /// tensors.
    fn __mod__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        numpy_call(slf, "remainder", Some(other), false)
    }

    fn __rmod__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        numpy_call(slf, "remainder", Some(other), true)
    }

    fn __len__(&self) -> PyResult<usize> {
        self.t
            .dims()
            .first()
            .copied()
            .ok_or_else(|| PyTypeError::new_err("len() of a 0-d tensor"))
    }

    /// `ctensor.Tensor(shape=[3, 4], dtype=float64, device=cpu)` and the values, with
    /// NumPy's name of the type, as `.dtype` gives it.
    fn __repr__(&self) -> String {
        let d = self.t.dtype();
        format!("ctensor.{}", self.t).replacen(
            &format!("dtype={d}"),
            &format!("dtype={}", numpy_name(d)),
            1,
        )
    }

    /// `float(t)` of a one-element real tensor (a complex one is refused: NumPy would drop
    /// the imaginary part with only a warning).
    fn __float__(&self, py: Python<'_>) -> PyResult<f64> {
        self.scalar_check("float()")?;
        if self.t.dtype().is_complex() {
            return Err(PyTypeError::new_err(
                "float() of a complex tensor would drop the imaginary part: use abs(), .real \
                 or complex()",
            ));
        }
        self.item(py)?.bind(py).extract()
    }

    /// `int(t)` of a one-element real tensor (floats truncate towards zero).
    fn __int__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.scalar_check("int()")?;
        let v = self.__float__(py);
        if self.t.dtype().is_integer() {
            return self.item(py);
        }
        let v = v?;
        if !v.is_finite() {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "cannot convert {v} to an integer"
            )));
        }
        py.get_type::<PyInt>()
            .call1((v.trunc(),))
            .map(|i| i.unbind())
    }

    /// `complex(t)` of a one-element tensor.
    fn __complex__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.scalar_check("complex()")?;
        let one = nogil(py, || self.t.cast(DataType::ComplexDouble))?;
        let z: c64 = one.item().map_err(err)?;
        Ok(PyComplex::from_doubles(py, z.re, z.im).into_any().unbind())
    }

    /// `bool(t)`, `if t:`: the truth of a one-element tensor (nonzero; NaN is true).
    /// Empty and larger tensors are ambiguous and refused, as in NumPy.
    fn __bool__(&self, py: Python<'_>) -> PyResult<bool> {
        self.single("bool()")?;
        nogil(py, || self.t.any())
    }

    /// `operator.index(t)` (a 0-d integer tensor used as an index or in `range`).
    fn __index__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        if self.t.ndim() != 0 || !self.t.dtype().is_integer() {
            return Err(PyTypeError::new_err(format!(
                "only 0-d integer tensors can be used as an index, got shape {:?} of {}",
                self.t.dims(),
                numpy_name(self.t.dtype())
            )));
        }
        self.item(py)
    }

    /// Comparisons, element by element: int32 0/1 masks (`t == u`, `t < 3`). Tensors are
    /// therefore unhashable, as NumPy's arrays.
    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> PyResult<Self> {
        let c = match op {
            CompareOp::Lt => Cmp::Lt,
            CompareOp::Le => Cmp::Le,
            CompareOp::Gt => Cmp::Gt,
            CompareOp::Ge => Cmp::Ge,
            CompareOp::Eq => Cmp::Eq,
            CompareOp::Ne => Cmp::Ne,
        };
        self.binary(other, Op::Cmp(c), false)
    }

    /// `a & b`: the element-wise and of two masks (comparisons' results, NumPy bool
    /// arrays); of integers, NumPy's bitwise and on host tensors.
    fn __and__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Tensor::bitwise(slf, other, Logical::And, false)
    }
    fn __rand__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Tensor::bitwise(slf, other, Logical::And, true)
    }
    /// `a | b`: the element-wise or of two masks; of integers, NumPy's bitwise or.
    fn __or__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Tensor::bitwise(slf, other, Logical::Or, false)
    }
    fn __ror__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Tensor::bitwise(slf, other, Logical::Or, true)
    }
    /// `a ^ b`: the element-wise exclusive or of two masks; of integers, NumPy's.
    fn __xor__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Tensor::bitwise(slf, other, Logical::Xor, false)
    }
    fn __rxor__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Tensor::bitwise(slf, other, Logical::Xor, true)
    }
    /// `~m`: the element-wise not of a mask; of integers, NumPy's bitwise not.
    fn __invert__(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let me = slf.get();
        if me.mask {
            let m = nogil(py, || me.t.equal_scalar(0)).map(wrap_mask)?;
            return Ok(Bound::new(py, m)?.into_any().unbind());
        }
        numpy_call(slf, "invert", None, false)
    }
    /// `a << b` and `a >> b` of integers: NumPy's shifts on host tensors.
    fn __lshift__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        numpy_call(slf, "left_shift", Some(other), false)
    }
    fn __rlshift__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        numpy_call(slf, "left_shift", Some(other), true)
    }
    fn __rshift__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        numpy_call(slf, "right_shift", Some(other), false)
    }
    fn __rrshift__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        numpy_call(slf, "right_shift", Some(other), true)
    }

    /// Pickling: the values, shape, type and device (a copy is restored).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let me = slf.get();
        // The values as the bytes of a .npy file (every dtype, bfloat16 included).
        let bytes = nogil(py, || {
            let mut v = Vec::new();
            me.t.write_npy(&mut v)?;
            Ok(v)
        })?;
        // A static method of the class: found as `ctensor.Tensor._rebuild` whether the
        // extension is installed as a bare module or inside the package of the wheel.
        let rebuild = slf.get_type().getattr("_rebuild")?;
        let args = (PyBytes::new(py, &bytes), me.device(), me.mask);
        PyTuple::new(py, [rebuild, args.into_pyobject(py)?.into_any()])
    }

    /// Restores a pickled tensor (`__reduce__`): `.npy` bytes, the device, whether it is
    /// a mask.
    #[staticmethod]
    fn _rebuild(py: Python<'_>, data: &[u8], device: &str, mask: bool) -> PyResult<Tensor> {
        let device = device_arg(device)?;
        let mut r = data;
        let t = nogil(py, || {
            let t = Inner::read_npy(&mut r)?;
            if device == DeviceType::Cpu {
                Ok(t)
            } else {
                t.to_device(device)
            }
        })?;
        Ok(Tensor { t, mask })
    }

    /// `copy.copy(t)`: a new tensor with its own copy of the values, as NumPy's.
    fn __copy__(&self, py: Python<'_>) -> PyResult<Self> {
        self.copy(py)
    }

    /// `copy.deepcopy(t)`: a new tensor with its own copy of the values.
    fn __deepcopy__(&self, py: Python<'_>, memo: &Bound<'_, PyAny>) -> PyResult<Self> {
        let _ = memo;
        self.copy(py)
    }

    /// A NumPy array over the same memory (no copy) for host tensors, writable unless the
    /// memory is read-only (writes show in the tensor, as NumPy views do); GPU tensors are
    /// copied to the host first. bf16 has no NumPy type: cast it first.
    fn numpy<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let t = &slf.get().t;
        if t.dtype() == DataType::BFloat16 {
            return Err(PyTypeError::new_err(
                "NumPy has no bfloat16: cast first, e.g. t.astype('float32')",
            ));
        }
        if t.device() != DeviceType::Cpu {
            let host = nogil(py, || t.to_device(DeviceType::Cpu))?;
            return Tensor::numpy(&Bound::new(py, wrap(host))?);
        }
        host_array(slf)
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

    /// NumPy's indexing: integers (Python's or NumPy's), slices, `...` and `None` give
    /// views of the same memory; a slice with a negative step, an integer array and a
    /// boolean mask (a NumPy bool array or a comparison's mask) give copies.
    fn __getitem__(&self, key: &Bound<'_, PyAny>) -> PyResult<Self> {
        crate::index::index(&self.t, key).map(|i| Tensor {
            t: i.t,
            mask: self.mask && i.view,
        })
    }

    /// `t[key] = value`: writes `value` (a number, a tensor or an array, broadcast as
    /// NumPy does) into `t[key]`. Complex into real and floating into integer are
    /// refused, as for every in-place operation. Keys that select a copy in reading (a
    /// negative step, an index array, a mask: `t[t < 0] = 0`) write through NumPy's own
    /// assignment on a view of a host tensor; on the GPU they are refused.
    fn __setitem__(&self, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        if crate::index::selects_copy(key)? {
            return self.assign_through_numpy(key, value);
        }
        let mut view = crate::index::index(&self.t, key)?.t;
        let n = number(value)?;
        if let Some(n) = n {
            // `t[0] = 2**40` into int32 must not wrap (NumPy 2: OverflowError).
            n.check_fits("__setitem__", view.dtype()).map_err(err)?;
        }
        let src = match n {
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

    /// A copy with the element type `dtype` (a name, a NumPy type or a `numpy.dtype`).
    fn astype(&self, py: Python<'_>, dtype: &Bound<'_, PyAny>) -> PyResult<Self> {
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
    /// `t.reshape(3, 4)` and `t.reshape((3, 4))` alike.
    #[pyo3(signature = (*shape))]
    fn reshape(&self, shape: &Bound<'_, PyTuple>) -> PyResult<Self> {
        let shape: Vec<i64> = match shape.len() {
            1 if shape.get_item(0)?.hasattr("__len__")? => shape.get_item(0)?.extract()?,
            _ => shape.extract()?,
        };
        self.t.reshape(&shape).map(wrap).map_err(err)
    }

    /// The same values as one dimension (a copy, as NumPy's `flatten`).
    fn flatten(&self, py: Python<'_>) -> PyResult<Self> {
        nogil(py, || self.t.contiguous()?.reshape(&[-1])).map(wrap)
    }

    /// The same values as one dimension; a view when possible.
    fn ravel(&self) -> PyResult<Self> {
        self.t.reshape(&[-1]).map(wrap).map_err(err)
    }

    /// The only element of a one-element tensor, as a Python number: `int` for the
    /// integer types, `float` for the real floating types, `complex` for the complex ones
    /// (exact: each value is one of the wider type's).
    fn item(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let d = self.t.dtype();
        let wide = if d.is_complex() {
            DataType::ComplexDouble
        } else if d.is_integer() {
            DataType::Int64
        } else {
            DataType::Double
        };
        // Cast only the one element (a larger tensor gets item's own shape error).
        let one = if self.t.numel() == 1 && d != wide {
            nogil(py, || self.t.cast(wide))?
        } else {
            self.t.share()
        };
        Ok(match wide {
            DataType::ComplexDouble => one
                .item::<c64>()
                .map_err(err)?
                .into_pyobject(py)?
                .into_any(),
            DataType::Int64 => one
                .item::<i64>()
                .map_err(err)?
                .into_pyobject(py)?
                .into_any(),
            _ => one
                .item::<f64>()
                .map_err(err)?
                .into_pyobject(py)?
                .into_any(),
        }
        .unbind())
    }

    /// The sum over `axis` (an int or a tuple, negative counting from the end; all when
    /// None), as NumPy's: `dtype` sums in that type, `keepdims` keeps the summed axes
    /// with size 1. Integers below int64 sum in int64, as NumPy's.
    #[pyo3(signature = (axis=None, dtype=None, out=None, keepdims=false))]
    fn sum(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> PyResult<Self> {
        self.reduce(py, Reduce::Sum, axis, dtype, out, keepdims)
    }

    /// The mean over `axis` (as [`sum`](Self::sum)); integers average in float64.
    #[pyo3(signature = (axis=None, dtype=None, out=None, keepdims=false))]
    fn mean(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> PyResult<Self> {
        self.reduce(py, Reduce::Mean, axis, dtype, out, keepdims)
    }

    /// The largest element over `axis` (NaN wins, as NumPy's); not of complex tensors.
    #[pyo3(signature = (axis=None, out=None, keepdims=false))]
    fn max(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> PyResult<Self> {
        self.reduce(py, Reduce::Max, axis, None, out, keepdims)
    }

    /// The smallest element over `axis` (NaN wins, as NumPy's); not of complex tensors.
    #[pyo3(signature = (axis=None, out=None, keepdims=false))]
    fn min(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> PyResult<Self> {
        self.reduce(py, Reduce::Min, axis, None, out, keepdims)
    }

    /// Whether any element is nonzero (NaN counts), as a Python bool.
    fn any(&self, py: Python<'_>) -> PyResult<bool> {
        nogil(py, || self.t.any())
    }

    /// Whether every element is nonzero (NaN counts; true when empty), as a Python bool.
    fn all(&self, py: Python<'_>) -> PyResult<bool> {
        nogil(py, || self.t.all())
    }

    fn __neg__(&self, py: Python<'_>) -> PyResult<Self> {
        nogil(py, || self.t.neg()).map(wrap)
    }
    fn __abs__(&self, py: Python<'_>) -> PyResult<Self> {
        nogil(py, || self.t.abs()).map(wrap)
    }
    fn __pow__(
        &self,
        other: &Bound<'_, PyAny>,
        modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        self.power(other, modulo, false)
    }
    fn __rpow__(
        &self,
        other: &Bound<'_, PyAny>,
        modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        self.power(other, modulo, true)
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
    fn __floordiv__(&self, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.binary(other, Op::FloorDiv, false)
    }
    fn __rfloordiv__(&self, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.binary(other, Op::FloorDiv, true)
    }
    fn __pos__(&self) -> Self {
        wrap(self.t.share())
    }

    /// `t += x` and the other in-place operators write into `t`'s memory (NumPy arrays
    /// sharing it see the change), with NumPy's `same_kind` rule: the result must not
    /// need a kind `t` cannot hold (`int32 += 1.5`, `float64 += 1j` are refused).
    fn __iadd__(&self, other: &Bound<'_, PyAny>) -> PyResult<()> {
        self.in_place(other, Op::Add, "+=")
    }
    fn __isub__(&self, other: &Bound<'_, PyAny>) -> PyResult<()> {
        self.in_place(other, Op::Sub, "-=")
    }
    fn __imul__(&self, other: &Bound<'_, PyAny>) -> PyResult<()> {
        self.in_place(other, Op::Mul, "*=")
    }
    fn __itruediv__(&self, other: &Bound<'_, PyAny>) -> PyResult<()> {
        self.in_place(other, Op::Div, "/=")
    }
    fn __ifloordiv__(&self, other: &Bound<'_, PyAny>) -> PyResult<()> {
        self.in_place(other, Op::FloorDiv, "//=")
    }
    fn __ipow__(
        &self,
        other: &Bound<'_, PyAny>,
        modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        if modulo.is_some_and(|m| !m.is_none()) {
            return Err(PyTypeError::new_err(
                "pow() with a modulus is not supported for tensors",
            ));
        }
        self.in_place(other, Op::Math(BinaryMathOp::Pow), "**=")
    }

    fn __matmul__(&self, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        let b = as_tensor(other)?;
        nogil(other.py(), || promoted_matmul(&self.t, &b)).map(wrap)
    }
    fn __rmatmul__(&self, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        let a = as_tensor(other)?;
        nogil(other.py(), || promoted_matmul(&a, &self.t)).map(wrap)
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

#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Op {
    Add,
    Sub,
    Mul,
    /// Python's `/`: true division, in `float64` for integers (as NumPy).
    Div,
    /// Python's `//`: the quotient rounded towards minus infinity.
    FloorDiv,
    /// A function of two arguments (`**`, `atan2`, ...).
    Math(BinaryMathOp),
    /// A comparison, giving an `int32` 0/1 mask.
    Cmp(Cmp),
}

/// The comparisons of [`Op::Cmp`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

/// `a // b` for integer tensors of one type: the truncating quotient, less one where
/// the remainder is nonzero and its sign differs from the divisor's (Python's and
/// NumPy's floor). A zero divisor is ctensor's error.
fn floor_divide(a: &Inner, b: &Inner) -> ctensor_aten::Result<Inner> {
    if a.dtype().is_float() {
        return floor_divide_floats(a, b);
    }
    let q = a.div(b)?;
    let r = a.sub(&q.mul(b)?)?;
    let signs_differ = r.lt_scalar(0)?.not_equal(&b.lt_scalar(0)?)?;
    let adjust = r.not_equal_scalar(0)?.mul(&signs_differ)?.cast(q.dtype())?;
    q.sub(&adjust)
}

/// `a // b` for floating tensors of one type, as NumPy's `npy_divmod` computes it from the
/// exact remainder: `div = (a - fmod(a, b)) / b`, less one where the remainder's sign
/// differs from the divisor's, then rounded to the nearest integer (it is one up to the
/// rounding of the division); a zero quotient takes the sign of `a / b`, and a zero
/// divisor gives `a / b` (±inf or NaN).
fn floor_divide_floats(a: &Inner, b: &Inner) -> ctensor_aten::Result<Inner> {
    let dt = a.dtype();
    let m = a.fmod(b)?;
    let div = a.sub(&m)?.div(b)?;
    let signs_differ = m.lt_scalar(0)?.not_equal(&b.lt_scalar(0)?)?;
    let adjust = m.not_equal_scalar(0)?.mul(&signs_differ)?.cast(dt)?;
    let div = div.sub(&adjust)?;
    let floor = div.floor()?;
    let up = div.sub(&floor)?.gt_scalar(0.5)?.cast(dt)?;
    let floor = floor.add(&up)?;
    let quotient = a.div(b)?;
    let signed_zero = Inner::zeros(dt, a.device(), &[])?.copysign(&quotient)?;
    let q = ctensor_aten::where_cond(&div.equal_scalar(0)?, &signed_zero, &floor)?;
    ctensor_aten::where_cond(&b.equal_scalar(0)?, &quotient, &q)
}

/// The reductions of [`Tensor::reduce`].
#[derive(Clone, Copy, PartialEq)]
enum Reduce {
    Sum,
    Mean,
    Max,
    Min,
}

/// The combinations of masks of [`Tensor::logical`].
#[derive(Clone, Copy, PartialEq)]
enum Logical {
    And,
    Or,
    Xor,
}

/// `numpy.<name>(slf[, other])` (the operands swapped when `reflected`): a ufunc ctensor
/// has no kernel of, run by NumPy on host views through `__array_ufunc__`.
fn numpy_call(
    slf: &Bound<'_, Tensor>,
    name: &str,
    other: Option<&Bound<'_, PyAny>>,
    reflected: bool,
) -> PyResult<Py<PyAny>> {
    let np = slf.py().import("numpy")?;
    let r = match (other, reflected) {
        (None, _) => np.call_method1(name, (slf,))?,
        (Some(o), false) => np.call_method1(name, (slf, o))?,
        (Some(o), true) => np.call_method1(name, (o, slf))?,
    };
    Ok(r.unbind())
}

/// The type a mask (NumPy's bool) takes in arithmetic with `other`, as NumPy 2 promotes
/// bool: a Python int gives int64, a float float64, a complex complex128, a tensor or
/// array its own type; `None` for another mask, a Python bool or a bool array (the mask
/// ⊕ mask rules apply).
fn bool_partner_type(other: &Bound<'_, PyAny>) -> PyResult<Option<DataType>> {
    if other.is_instance_of::<PyBool>() {
        return Ok(None);
    }
    if let Some(n) = number(other)? {
        return Ok(Some(match n {
            Number::Int(_) => DataType::Int64,
            Number::Float(_) => DataType::Double,
            Number::Complex(_) => DataType::ComplexDouble,
        }));
    }
    if let Ok(t) = other.cast::<Tensor>() {
        let t = t.get();
        return Ok((!t.mask).then(|| t.t.dtype()));
    }
    // An array or a NumPy scalar: its type, unless it is a bool array.
    let dtype = match other.getattr("dtype") {
        Ok(d) => d,
        Err(_) => return Ok(None),
    };
    let kind: String = dtype.getattr("kind")?.extract()?;
    if kind == "b" {
        return Ok(None);
    }
    Ok(dtype_arg(&dtype).ok())
}

/// The kind of a type for NumPy's `same_kind` casting: integer < floating < complex.
fn kind(d: DataType) -> u8 {
    if d.is_complex() {
        2
    } else if d.is_integer() {
        0
    } else {
        1
    }
}

/// `axis=` as NumPy takes it (None, an int or a sequence of ints; negative counts from
/// the end) as sorted, distinct axes of a rank-`ndim` tensor.
pub(crate) fn axes_arg(axis: Option<&Bound<'_, PyAny>>, ndim: usize) -> PyResult<Vec<usize>> {
    let Some(axis) = axis.filter(|a| !a.is_none()) else {
        return Ok((0..ndim).collect());
    };
    let raw: Vec<i64> = if axis.hasattr("__len__")? {
        axis.extract()?
    } else {
        vec![axis.call_method0("__index__")?.extract()?]
    };
    let mut out = Vec::with_capacity(raw.len());
    for a in raw {
        let k = if a < 0 { a + ndim as i64 } else { a };
        if k < 0 || k >= ndim as i64 {
            return Err(pyo3::exceptions::PyIndexError::new_err(format!(
                "axis {a} is out of bounds for a tensor of dimension {ndim}"
            )));
        }
        if out.contains(&(k as usize)) {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "duplicate value in 'axis': {a}"
            )));
        }
        out.push(k as usize);
    }
    out.sort_unstable();
    Ok(out)
}

impl Tensor {
    /// Refuses a tensor that is not one element (for `bool()`, `float()`...) with
    /// NumPy's `ValueError`.
    fn single(&self, what: &str) -> PyResult<()> {
        if self.t.numel() == 1 {
            return Ok(());
        }
        Err(pyo3::exceptions::PyValueError::new_err(format!(
            "{what} needs a tensor of one element, got shape {:?} (the truth or value of an \
             empty or larger tensor is ambiguous: use .any() or .all())",
            self.t.dims()
        )))
    }

    /// `t[key] = value` for a key that selects a copy: NumPy's assignment on a view of
    /// the host tensor's memory, after ctensor's own refusal of a value of a higher kind.
    fn assign_through_numpy(
        &self,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let py = key.py();
        if self.t.device() != DeviceType::Cpu || self.t.dtype() == DataType::BFloat16 {
            return Err(PyIndexError::new_err(format!(
                "assignment through a slice with a negative step, an index array or a mask \
                 is done by NumPy on host tensors of NumPy's types; this tensor is {} on the \
                 {}: assign through integers and slices with a positive step",
                numpy_name(self.t.dtype()),
                self.device()
            )));
        }
        let what = "tensor item assignment";
        let value_kind = match number(value)? {
            Some(n) => {
                n.check_fits("__setitem__", self.t.dtype()).map_err(err)?;
                match n {
                    Number::Int(_) => 0,
                    Number::Float(_) => 1,
                    Number::Complex(_) => 2,
                }
            }
            None => {
                let np = py.import("numpy")?;
                let v = crate::protocols::to_numpy(value, what, false)?;
                let k: String = np
                    .call_method1("asarray", (v,))?
                    .getattr("dtype")?
                    .getattr("kind")?
                    .extract()?;
                match k.as_str() {
                    "c" => 2,
                    "f" => 1,
                    _ => 0,
                }
            }
        };
        if value_kind > kind(self.t.dtype()) {
            return Err(Error::new_err(format!(
                "__setitem__: a {} value cannot be stored in a {} tensor (complex into real \
                 and floating into integer are refused); cast the value first",
                ["integer", "floating", "complex"][value_kind as usize],
                numpy_name(self.t.dtype())
            )));
        }
        let me = Bound::new(py, wrap(self.t.share()))?;
        let target = host_array(&me)?;
        let key = crate::protocols::to_numpy(key, what, false)?;
        let value = crate::protocols::to_numpy(value, what, false)?;
        target.set_item(key, value)
    }

    /// Refuses a conversion to a Python number of a tensor that is not one element, with
    /// NumPy's `TypeError`.
    fn scalar_check(&self, what: &str) -> PyResult<()> {
        if self.t.numel() == 1 {
            return Ok(());
        }
        Err(PyTypeError::new_err(format!(
            "only one-element tensors can be converted to Python numbers ({what}), got shape {:?}",
            self.t.dims()
        )))
    }

    /// A reduction with NumPy's keywords.
    fn reduce(
        &self,
        py: Python<'_>,
        r: Reduce,
        axis: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> PyResult<Self> {
        if out.is_some_and(|o| !o.is_none()) {
            return Err(PyTypeError::new_err(
                "out= is not supported by tensor reductions; assign the result: o[...] = t.sum(...)",
            ));
        }
        let axes = axes_arg(axis, self.t.ndim())?;
        let dtype = dtype.filter(|d| !d.is_none()).map(dtype_arg).transpose()?;
        let d = self.t.dtype();
        // NumPy's accumulation types: small integers sum in int64, integer means in
        // float64.
        let work = match (r, dtype) {
            (_, Some(want)) => want,
            (Reduce::Sum, None) if d == DataType::Int => DataType::Int64,
            (Reduce::Mean, None) if d.is_integer() => DataType::Double,
            _ => d,
        };
        let t = &self.t;
        let reduced = nogil(py, || {
            let x = if work == d { t.share() } else { t.cast(work)? };
            match r {
                Reduce::Sum => x.sum(&axes),
                Reduce::Mean if axes.iter().any(|&a| t.dims()[a] == 0) || t.numel() == 0 => {
                    // NumPy: the mean of nothing is NaN (with a warning).
                    let s = x.sum(&axes)?;
                    s.mul_scalar(f64::NAN)
                }
                Reduce::Mean => x.mean(&axes),
                Reduce::Max => x.max(&axes),
                Reduce::Min => x.min(&axes),
            }
        })?;
        if !keepdims {
            return Ok(wrap(reduced));
        }
        let shape: Vec<i64> = (0..t.ndim())
            .map(|k| {
                if axes.contains(&k) {
                    1
                } else {
                    t.dims()[k] as i64
                }
            })
            .collect();
        reduced.reshape(&shape).map(wrap).map_err(err)
    }

    /// `&`, `|`, `^`: of two masks (or a mask and a bool) ctensor's logical operation,
    /// a mask; of anything else NumPy's bitwise one on host tensors.
    fn bitwise(
        slf: &Bound<'_, Self>,
        other: &Bound<'_, PyAny>,
        l: Logical,
        reflected: bool,
    ) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        match slf.get().logical(other, l) {
            Ok(Some(m)) => Ok(Bound::new(py, m)?.into_any().unbind()),
            Ok(None) => {
                let name = match l {
                    Logical::And => "bitwise_and",
                    Logical::Or => "bitwise_or",
                    Logical::Xor => "bitwise_xor",
                };
                numpy_call(slf, name, Some(other), reflected)
            }
            Err(e) => Err(e),
        }
    }

    /// `&`, `|`, `^` of two masks (or a mask and a NumPy bool array): a mask; `None` when
    /// either is not a mask.
    fn logical(&self, other: &Bound<'_, PyAny>, l: Logical) -> PyResult<Option<Self>> {
        let other_mask = match other.cast::<Tensor>() {
            Ok(o) => o.get().mask,
            Err(_) => {
                other
                    .getattr("dtype")
                    .and_then(|d| d.getattr("kind"))
                    .and_then(|k| k.extract::<String>())
                    .is_ok_and(|k| k == "b")
                    || other.is_instance_of::<PyBool>()
            }
        };
        if !self.mask || !other_mask {
            return Ok(None);
        }
        let o = if other.is_instance_of::<PyBool>() {
            Inner::scalar(i32::from(other.extract::<bool>()?)).map_err(err)?
        } else if other.cast::<Tensor>().is_ok() {
            as_tensor(other)?
        } else {
            // A NumPy bool array (no ctensor counterpart) as int32 0/1.
            as_tensor(&other.call_method1("astype", ("int32",))?)?
        };
        let py = other.py();
        nogil(py, || {
            let a = self.t.not_equal_scalar(0)?;
            let b = o.not_equal_scalar(0)?;
            let b = if b.device() == a.device() {
                b
            } else {
                b.to_device(a.device())?
            };
            match l {
                Logical::And => a.mul(&b),
                Logical::Or => a.add(&b)?.not_equal_scalar(0),
                Logical::Xor => a.not_equal(&b),
            }
        })
        .map(|m| Some(wrap_mask(m)))
    }

    /// `self op= other`: the result written into `self`'s memory under `same_kind`.
    fn in_place(&self, other: &Bound<'_, PyAny>, op: Op, symbol: &str) -> PyResult<()> {
        let r = self.binary(other, op, false)?;
        let (have, got) = (self.t.dtype(), r.t.dtype());
        if kind(got) > kind(have) {
            return Err(PyTypeError::new_err(format!(
                "{symbol}: the result is {} and cannot be stored in this {} tensor (NumPy's \
                 same_kind rule); compute t = t {} x instead",
                numpy_name(got),
                numpy_name(have),
                symbol.trim_end_matches('=')
            )));
        }
        if r.t.dims() != self.t.dims() {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "{symbol}: the result has shape {:?}, the tensor {:?}; broadcasting may not \
                 change the shape of an in-place operand",
                r.t.dims(),
                self.t.dims()
            )));
        }
        let mut dst = self.t.share();
        nogil(other.py(), || {
            let src = if got == have {
                r.t.share()
            } else {
                r.t.cast(have)?
            };
            dst.assign(&src)
        })
    }

    /// `self op other` (or `other op self` when `reflected`), with Python numbers as
    /// weakly-typed scalars and anything else converted to a tensor; two tensors promote
    /// as NumPy 2 does ([`numpy_promoted`]).
    /// `**` and its reflection; a third `pow()` argument (a modulus) is refused.
    fn power(
        &self,
        other: &Bound<'_, PyAny>,
        modulo: Option<&Bound<'_, PyAny>>,
        reflected: bool,
    ) -> PyResult<Self> {
        if modulo.is_some_and(|m| !m.is_none()) {
            return Err(PyTypeError::new_err(
                "pow() with a modulus is not supported for tensors",
            ));
        }
        self.binary(other, Op::Math(BinaryMathOp::Pow), reflected)
    }

    pub(crate) fn binary(
        &self,
        other: &Bound<'_, PyAny>,
        op: Op,
        reflected: bool,
    ) -> PyResult<Self> {
        let py = other.py();
        // A comparison's mask stands for NumPy's bool, which promotes to the other
        // operand's type (`mask * float32` is float32, `mask + 2` int64), not as int32.
        if self.mask && !matches!(op, Op::Cmp(_)) {
            if let Some(d) = bool_partner_type(other)? {
                let as_numbers = wrap(nogil(py, || self.t.cast(d))?);
                return as_numbers.binary(other, op, reflected);
            }
        }
        let t = &self.t;
        let n = number(other)?;
        if let Some(n) = n.filter(|_| matches!(op, Op::Add | Op::Sub | Op::Mul | Op::Div)) {
            // True division of integers by an integer: in float64 (a float divisor
            // promotes the tensor there already).
            let x = if op == Op::Div && t.dtype().is_integer() {
                nogil(py, || t.cast(DataType::Double))?
            } else {
                t.share()
            };
            return nogil(py, || match (op, reflected) {
                (Op::Add, _) => x.add_scalar(n),
                (Op::Mul, _) => x.mul_scalar(n),
                (Op::Sub, false) => x.sub_scalar(n),
                (Op::Sub, true) => x.rsub_scalar(n),
                (Op::Div, false) => x.div_scalar(n),
                (Op::Div, true) => x.rdiv_scalar(n),
                (Op::FloorDiv | Op::Math(_) | Op::Cmp(_), _) => {
                    Err(ctensor_aten::Error::Internal {
                        op: "binary",
                        what: "a number reached the scalar path".into(),
                    })
                }
            })
            .map(wrap);
        }
        let o = match n {
            // A number for `//`, a function or a comparison becomes a 0-d tensor of its
            // weak type.
            Some(n) => n
                .tensor(n.result_type_with(t.dtype()), t.device())
                .map_err(|e| err(e.in_op(op.name())))?,
            None => match other.cast::<Tensor>() {
                // The other operand is a mask (and this tensor is not): as this type.
                Ok(m) if m.get().mask && !self.mask && !matches!(op, Op::Cmp(_)) => {
                    let mt = m.get().t.share();
                    nogil(py, || mt.cast(t.dtype()))?
                }
                _ => as_tensor(other)?,
            },
        };
        let (a, b) = if reflected { (&o, t) } else { (t, &o) };
        nogil(py, || {
            let mut p = numpy_promoted(&[a.share(), b.share()])?;
            let floating = p[0].dtype().is_float() || p[0].dtype().is_complex();
            if op == Op::Div && !floating {
                p = p
                    .iter()
                    .map(|x| x.cast(DataType::Double))
                    .collect::<ctensor_aten::Result<_>>()?;
            }
            let (a, b) = (&p[0], &p[1]);
            match op {
                Op::Add => a.add(b),
                Op::Sub => a.sub(b),
                Op::Mul => a.mul(b),
                Op::Div => a.div(b),
                Op::FloorDiv if a.dtype().is_complex() => {
                    Err(ctensor_aten::Error::UnsupportedDType {
                        op: "floor_divide",
                        dtype: a.dtype(),
                        supported: "integer and real floating types (complex numbers have no \
                                    floor division, as in NumPy)",
                    })
                }
                Op::FloorDiv => floor_divide(a, b),
                Op::Math(f) => a.binary_math(b, f),
                Op::Cmp(Cmp::Lt) => a.lt(b),
                Op::Cmp(Cmp::Le) => a.le(b),
                Op::Cmp(Cmp::Gt) => a.gt(b),
                Op::Cmp(Cmp::Ge) => a.ge(b),
                Op::Cmp(Cmp::Eq) => a.equal(b),
                Op::Cmp(Cmp::Ne) => a.not_equal(b),
            }
        })
        .map(|t| {
            if matches!(op, Op::Cmp(_)) {
                wrap_mask(t)
            } else {
                wrap(t)
            }
        })
    }
}

impl Op {
    /// The NumPy name, for messages.
    fn name(self) -> &'static str {
        match self {
            Op::Add => "add",
            Op::Sub => "subtract",
            Op::Mul => "multiply",
            Op::Div => "true_divide",
            Op::FloorDiv => "floor_divide",
            Op::Math(f) => f.name(),
            Op::Cmp(Cmp::Lt) => "less",
            Op::Cmp(Cmp::Le) => "less_equal",
            Op::Cmp(Cmp::Gt) => "greater",
            Op::Cmp(Cmp::Ge) => "greater_equal",
            Op::Cmp(Cmp::Eq) => "equal",
            Op::Cmp(Cmp::Ne) => "not_equal",
        }
    }
}

/// A tensor of zeros.
#[pyfunction]
#[pyo3(signature = (shape, dtype=None, device="cpu"))]
pub(crate) fn zeros(
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: &str,
) -> PyResult<Tensor> {
    let shape: Vec<usize> = if shape.hasattr("__len__")? {
        shape.extract()?
    } else {
        vec![shape.call_method0("__index__")?.extract()?]
    };
    Inner::zeros(dtype_or_f64(dtype)?, device_arg(device)?, &shape)
        .map(wrap)
        .map_err(err)
}

/// The identity matrix.
#[pyfunction]
#[pyo3(signature = (n, dtype=None, device="cpu"))]
pub(crate) fn eye(n: usize, dtype: Option<&Bound<'_, PyAny>>, device: &str) -> PyResult<Tensor> {
    Inner::eye(dtype_or_f64(dtype)?, device_arg(device)?, n)
        .map(wrap)
        .map_err(err)
}

/// A `dtype=` argument, float64 when None.
fn dtype_or_f64(dtype: Option<&Bound<'_, PyAny>>) -> PyResult<DataType> {
    match dtype.filter(|d| !d.is_none()) {
        Some(d) => dtype_arg(d),
        None => Ok(DataType::Double),
    }
}

/// A NumPy array over a host tensor's memory through NumPy's array interface (version 3),
/// held by an object that keeps the tensor alive. NumPy's `from_dlpack` would do, but
/// NumPy 2.1 marks every array it imports that way read-only.
fn host_array<'py>(slf: &Bound<'py, Tensor>) -> PyResult<Bound<'py, PyAny>> {
    let py = slf.py();
    let np = py.import("numpy")?;
    let t = &slf.get().t;
    if t.numel() == 0 {
        // No memory to share (the address may be null): an empty array of the shape.
        return np.call_method1(
            "zeros",
            (PyTuple::new(py, t.dims())?, numpy_name(t.dtype())),
        );
    }
    let size = t.dtype().size_of();
    let typestr: String = np
        .call_method1("dtype", (numpy_name(t.dtype()),))?
        .getattr("str")?
        .extract()?;
    let interface = PyDict::new(py);
    interface.set_item("version", 3)?;
    interface.set_item("shape", PyTuple::new(py, t.dims())?)?;
    interface.set_item("typestr", typestr)?;
    let strides: Vec<usize> = t.strides().iter().map(|s| s * size).collect();
    interface.set_item("strides", PyTuple::new(py, strides)?)?;
    interface.set_item("data", (t.data_ptr() as usize, t.buffer().is_read_only()))?;
    let holder = py.import("types")?.getattr("SimpleNamespace")?.call0()?;
    holder.setattr("__array_interface__", interface)?;
    // The array's base is the holder, and the holder keeps the tensor (and its memory).
    holder.setattr("tensor", slf)?;
    np.call_method1("asarray", (holder,))
}
