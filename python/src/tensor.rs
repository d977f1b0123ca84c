//! `ctensor.Tensor`: construction, NumPy's protocols, indexing and item assignment,
//! the arithmetic operators, and the module's creation functions.

use ctensor_aten::{c64, BinaryMathOp, DataType, DeviceType, Number, Tensor as Inner};
use pyo3::exceptions::{PyBufferError, PyIndexError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyComplex, PyFloat, PyInt, PySlice, PyTuple};

use crate::dlpack::{capsule, import_dlpack, LEGACY, VERSIONED};
use crate::linalg::promoted_matmul;
use crate::promotion::numpy_promoted;
use crate::{device_arg, dtype_arg, err, nogil, numpy_name, Error};
use ctensor_aten::dlpack::DLPACK_FLAG_BITMASK_IS_COPIED;

/// A tensor whose element type and device are chosen at run time.
///
/// Shares memory with the arrays it was made from (`from_numpy`, `from_dlpack`) and with
/// those made from it (`numpy()`, `numpy.from_dlpack(t)`, `torch.from_dlpack(t)`).
#[pyclass(name = "Tensor", module = "ctensor", frozen)]
pub(crate) struct Tensor {
    t: Inner,
}

pub(crate) fn wrap(t: Inner) -> Tensor {
    Tensor { t }
}

/// A Python number (`int`, `bool`, `float`, `complex` themselves) as ctensor's
/// weakly-typed [`Number`], or `None` for anything else. NumPy's scalars are not weak
/// although `np.float64` and `np.complex128` subclass `float` and `complex`: they
/// promote as the 0-d arrays they are (NumPy 2, NEP 50). An `int` beyond `int64` is
/// Python's `OverflowError`.
fn number(x: &Bound<'_, PyAny>) -> PyResult<Option<Number>> {
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
        } else if item.is_instance_of::<PyBool>() {
            // NumPy reads `t[True]` as a new axis of length 1 (and `t[False]` of 0), not
            // as the index 1: refused rather than silently taken as an integer.
            return Err(PyIndexError::new_err(
                "boolean indices are not supported (NumPy would add an axis, not select \
                 row 1 or 0); index with an integer",
            ));
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

    /// The sum over `axes` (all when omitted).
    #[pyo3(signature = (axes=None))]
    fn sum(&self, py: Python<'_>, axes: Option<Vec<usize>>) -> PyResult<Self> {
        let axes = axes.unwrap_or_else(|| (0..self.t.ndim()).collect());
        nogil(py, || self.t.sum(&axes)).map(wrap)
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

impl Tensor {
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
            None => as_tensor(other)?,
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
        .map(wrap)
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
#[pyo3(signature = (shape, dtype="float64", device="cpu"))]
pub(crate) fn zeros(shape: Vec<usize>, dtype: &str, device: &str) -> PyResult<Tensor> {
    Inner::zeros(dtype_arg(dtype)?, device_arg(device)?, &shape)
        .map(wrap)
        .map_err(err)
}

/// The identity matrix.
#[pyfunction]
#[pyo3(signature = (n, dtype="float64", device="cpu"))]
pub(crate) fn eye(n: usize, dtype: &str, device: &str) -> PyResult<Tensor> {
    Inner::eye(dtype_arg(dtype)?, device_arg(device)?, n)
        .map(wrap)
        .map_err(err)
}
