//! NumPy's dispatch protocols, `__array_ufunc__` (NEP 13) and `__array_function__`
//! (NEP 18): `numpy.sqrt(t)`, `numpy.sum(t, axis=-1)`, `array + t`.
//!
//! A ufunc or function that ctensor has runs as ctensor's op, on either device, and gives
//! a tensor. Anything else runs in NumPy: host tensors are handed over as NumPy views of
//! the same memory (no copy; a comparison's mask as a bool array), and the arrays NumPy
//! returns come back as tensors over NumPy's memory (bool arrays as masks; arrays of a
//! type ctensor lacks, such as uint8, stay NumPy arrays). GPU tensors are never copied
//! behind the caller's back: a NumPy-only function on one is a `TypeError` naming it.

use ctensor_aten::{BinaryMathOp, MathOp};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::linalg::promoted_matmul;
use crate::nogil;
use crate::tensor::{as_tensor, wrap, Cmp, Op, Tensor};

/// What ctensor runs itself for a NumPy ufunc of this name.
enum Own {
    Unary(MathOp),
    Binary(Op),
    Abs,
    Conj,
    Positive,
    Matmul,
}

fn own_ufunc(name: &str) -> Option<Own> {
    use MathOp as M;
    Some(match name {
        "sin" => Own::Unary(M::Sin),
        "cos" => Own::Unary(M::Cos),
        "tan" => Own::Unary(M::Tan),
        "log" => Own::Unary(M::Log),
        "log1p" => Own::Unary(M::Log1p),
        "expm1" => Own::Unary(M::Expm1),
        "square" => Own::Unary(M::Square),
        "reciprocal" => Own::Unary(M::Reciprocal),
        "sign" => Own::Unary(M::Sign),
        "floor" => Own::Unary(M::Floor),
        "ceil" => Own::Unary(M::Ceil),
        "rint" => Own::Unary(M::Round),
        "negative" => Own::Unary(M::Neg),
        "sqrt" => Own::Unary(M::Sqrt),
        "exp" => Own::Unary(M::Exp),
        "absolute" => Own::Abs,
        "conjugate" => Own::Conj,
        "positive" => Own::Positive,
        "matmul" => Own::Matmul,
        "add" => Own::Binary(Op::Add),
        "subtract" => Own::Binary(Op::Sub),
        "multiply" => Own::Binary(Op::Mul),
        "divide" | "true_divide" => Own::Binary(Op::Div),
        "floor_divide" => Own::Binary(Op::FloorDiv),
        "power" => Own::Binary(Op::Math(BinaryMathOp::Pow)),
        "arctan2" => Own::Binary(Op::Math(BinaryMathOp::Atan2)),
        "hypot" => Own::Binary(Op::Math(BinaryMathOp::Hypot)),
        "copysign" => Own::Binary(Op::Math(BinaryMathOp::Copysign)),
        "fmod" => Own::Binary(Op::Math(BinaryMathOp::Fmod)),
        "logaddexp" => Own::Binary(Op::Math(BinaryMathOp::Logaddexp)),
        "less" => Own::Binary(Op::Cmp(Cmp::Lt)),
        "less_equal" => Own::Binary(Op::Cmp(Cmp::Le)),
        "greater" => Own::Binary(Op::Cmp(Cmp::Gt)),
        "greater_equal" => Own::Binary(Op::Cmp(Cmp::Ge)),
        "equal" => Own::Binary(Op::Cmp(Cmp::Eq)),
        "not_equal" => Own::Binary(Op::Cmp(Cmp::Ne)),
        _ => return None,
    })
}

/// Whether every keyword is one ctensor's own path honours (all left at their default).
fn plain_call(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<bool> {
    let Some(kw) = kwargs else { return Ok(true) };
    for (k, v) in kw.iter() {
        let k: String = k.extract()?;
        let default = match k.as_str() {
            "out" | "dtype" | "signature" => v.is_none(),
            "where" => v.extract::<bool>().is_ok_and(|w| w),
            "casting" => v.extract::<String>().is_ok_and(|c| c == "same_kind"),
            "order" => v.extract::<String>().is_ok_and(|o| o == "K"),
            "subok" => v.extract::<bool>().is_ok_and(|s| s),
            _ => false,
        };
        if !default {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Whether ctensor can take `x` as an operand without NumPy: a tensor, a Python number,
/// or an array (or array-like) of a type ctensor has.
fn convertible(x: &Bound<'_, PyAny>) -> PyResult<bool> {
    if x.cast::<Tensor>().is_ok() {
        return Ok(true);
    }
    let np = x.py().import("numpy")?;
    let dtype = match x.getattr("dtype") {
        Ok(d) => d,
        Err(_) => np.call_method1("asarray", (x,))?.getattr("dtype")?,
    };
    let name: String = dtype.getattr("name")?.extract()?;
    Ok(matches!(
        name.as_str(),
        "float32" | "float64" | "int32" | "int64" | "complex64" | "complex128" | "float16"
    ))
}

/// `ufunc.method(*inputs, **kwargs)` with tensors among the operands.
pub(crate) fn array_ufunc(
    ufunc: &Bound<'_, PyAny>,
    method: &str,
    inputs: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<Py<PyAny>> {
    let py = ufunc.py();
    let name: String = ufunc.getattr("__name__")?.extract()?;
    let ours = inputs
        .iter()
        .map(|x| convertible(&x))
        .collect::<PyResult<Vec<_>>>()?;
    if method == "__call__" && plain_call(kwargs)? && ours.iter().all(|&c| c) {
        if let Some(own) = own_ufunc(&name) {
            let args: Vec<Bound<'_, PyAny>> = inputs.iter().collect();
            let t = match (own, args.as_slice()) {
                (Own::Unary(op), [x]) => {
                    let t = as_tensor(x)?;
                    match py.detach(|| t.math(op)) {
                        Ok(r) => wrap(r),
                        // A type ctensor has no kernel of (rint of complex numbers):
                        // NumPy's, below, on host tensors.
                        Err(ctensor_aten::Error::UnsupportedDType { .. })
                            if t.device() == ctensor_aten::DeviceType::Cpu =>
                        {
                            return numpy_ufunc(ufunc, method, inputs, kwargs, &name);
                        }
                        Err(e) => return Err(crate::err(e)),
                    }
                }
                (Own::Abs, [x]) => {
                    let t = as_tensor(x)?;
                    nogil(py, || t.abs()).map(wrap)?
                }
                (Own::Conj, [x]) => {
                    let t = as_tensor(x)?;
                    nogil(py, || t.conj()).map(wrap)?
                }
                (Own::Positive, [x]) => wrap(as_tensor(x)?.share()),
                (Own::Matmul, [a, b]) => {
                    let (a, b) = (as_tensor(a)?, as_tensor(b)?);
                    nogil(py, || promoted_matmul(&a, &b)).map(wrap)?
                }
                (Own::Binary(op), [a, b]) => crate::math::binary(a, b, op)?,
                _ => {
                    return Err(PyTypeError::new_err(format!(
                        "numpy.{name} got {} operands",
                        args.len()
                    )))
                }
            };
            return Ok(Bound::new(py, t)?.into_any().unbind());
        }
    }
    numpy_ufunc(ufunc, method, inputs, kwargs, &name)
}

/// `ufunc.method(*inputs, **kwargs)` run by NumPy on host views of the tensors.
fn numpy_ufunc(
    ufunc: &Bound<'_, PyAny>,
    method: &str,
    inputs: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
    name: &str,
) -> PyResult<Py<PyAny>> {
    let py = ufunc.py();
    let what = format!("numpy.{name}.{method}");
    let original_out = match kwargs {
        Some(kw) => kw.get_item("out")?,
        None => None,
    };
    let inputs = to_numpy(inputs.as_any(), &what, false)?;
    let kwargs = match kwargs {
        Some(kw) => {
            let d = PyDict::new(py);
            for (k, v) in kw.iter() {
                // `out=` stays a view (its writes must land in the tensor).
                let out = k.extract::<String>().is_ok_and(|k| k == "out");
                d.set_item(k, to_numpy(&v, &what, out)?)?;
            }
            Some(d)
        }
        None => None,
    };
    let f = if method == "__call__" {
        ufunc.clone()
    } else {
        ufunc.getattr(method)?
    };
    let r = f.call(inputs.cast::<PyTuple>()?, kwargs.as_ref())?;
    // With `out=` the result is the caller's own output objects (NumPy passes `out` to
    // this protocol as a tuple).
    if let Some(out) = original_out {
        if let Ok(out) = out.cast::<PyTuple>() {
            if out.iter().any(|o| o.cast::<Tensor>().is_ok()) {
                return Ok(match out.len() {
                    1 => out.get_item(0)?.unbind(),
                    _ => out.clone().into_any().unbind(),
                });
            }
        }
    }
    from_numpy(&r)
}

/// `func(*args, **kwargs)` with tensors among the arguments.
pub(crate) fn array_function(
    func: &Bound<'_, PyAny>,
    args: &Bound<'_, PyTuple>,
    kwargs: &Bound<'_, PyDict>,
) -> PyResult<Py<PyAny>> {
    let py = func.py();
    let name: String = func.getattr("__name__")?.extract()?;
    let module: String = func
        .getattr("__module__")
        .and_then(|m| m.extract())
        .unwrap_or_default();
    // The reductions ctensor has, with NumPy's keywords: `numpy.sum(t, axis=-1)`.
    let method = match (module.as_str(), name.as_str()) {
        ("numpy", "sum") => Some("sum"),
        ("numpy", "mean") => Some("mean"),
        ("numpy", "max" | "amax") => Some("max"),
        ("numpy", "min" | "amin") => Some("min"),
        _ => None,
    };
    if let (Some(method), Some(first)) = (method, args.iter().next()) {
        if let Ok(t) = first.cast::<Tensor>() {
            let rest = PyTuple::new(py, args.iter().skip(1))?;
            return Ok(t.call_method(method, rest, Some(kwargs))?.unbind());
        }
    }
    let linalg = |f: &str| -> PyResult<Option<Bound<'_, PyAny>>> {
        Ok(match (module.as_str(), name.as_str()) {
            ("numpy.linalg", n) if n == f => Some(py.import("ctensor")?.getattr(f)?),
            _ => None,
        })
    };
    for f in ["solve", "cholesky", "qr", "svd"] {
        // NumPy's keywords differ from ctensor's in places (cholesky's `upper`): only
        // positional calls go to ctensor's.
        if !kwargs.is_empty() {
            break;
        }
        if let Some(ours) = linalg(f)? {
            return Ok(ours.call(args, Some(kwargs))?.unbind());
        }
    }
    if module == "numpy" && name == "einsum" && kwargs.is_empty() {
        let ours = py.import("ctensor")?.getattr("einsum")?;
        return Ok(ours.call(args, None)?.unbind());
    }
    let what = format!("{module}.{name}");
    let args = to_numpy(args.as_any(), &what, false)?;
    let kw = to_numpy(kwargs.as_any(), &what, false)?;
    let r = func.call(args.cast::<PyTuple>()?, Some(kw.cast::<PyDict>()?))?;
    from_numpy(&r)
}

/// `x` with every tensor in it (also inside tuples, lists and dicts) as a NumPy view of
/// its memory; a mask as a bool array unless `keep_masks` (an `out=` operand).
pub(crate) fn to_numpy<'py>(
    x: &Bound<'py, PyAny>,
    what: &str,
    keep_masks: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let py = x.py();
    if let Ok(t) = x.cast::<Tensor>() {
        if t.get().inner().device() != ctensor_aten::DeviceType::Cpu {
            return Err(PyTypeError::new_err(format!(
                "{what} has no ctensor implementation, and NumPy cannot read a GPU tensor; \
                 move it to the host first with .to('cpu')"
            )));
        }
        let a = t.call_method0("numpy")?;
        return if t.get().is_mask() && !keep_masks {
            a.call_method1("astype", ("bool",))
        } else {
            Ok(a)
        };
    }
    if let Ok(tup) = x.cast::<PyTuple>() {
        let items = tup
            .iter()
            .map(|i| to_numpy(&i, what, keep_masks))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(PyTuple::new(py, items)?.into_any());
    }
    if let Ok(list) = x.cast::<PyList>() {
        let items = list
            .iter()
            .map(|i| to_numpy(&i, what, keep_masks))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(PyList::new(py, items)?.into_any());
    }
    if let Ok(d) = x.cast::<PyDict>() {
        let out = PyDict::new(py);
        for (k, v) in d.iter() {
            out.set_item(k, to_numpy(&v, what, keep_masks)?)?;
        }
        return Ok(out.into_any());
    }
    Ok(x.clone())
}

/// NumPy's result with its arrays as tensors (bool arrays as masks; arrays of a type
/// ctensor has no counterpart of stay arrays), through tuples (named ones too) and lists.
fn from_numpy(r: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let py = r.py();
    let np = py.import("numpy")?;
    if r.is_instance(&np.getattr("ndarray")?)? {
        let kind: String = r.getattr("dtype")?.getattr("kind")?.extract()?;
        if kind == "b" {
            let i = r.call_method1("astype", ("int32",))?;
            let t = crate::tensor::wrap_mask(as_tensor(&i)?);
            return Ok(Bound::new(py, t)?.into_any().unbind());
        }
        return Ok(match as_tensor(r) {
            Ok(t) => Bound::new(py, wrap(t))?.into_any().unbind(),
            Err(_) => r.clone().unbind(),
        });
    }
    if let Ok(tup) = r.cast::<PyTuple>() {
        let items = tup
            .iter()
            .map(|i| from_numpy(&i))
            .collect::<PyResult<Vec<_>>>()?;
        let plain = PyTuple::new(py, items)?;
        // A named tuple (numpy.linalg's results) is rebuilt as its own type.
        if r.get_type().is(py.get_type::<PyTuple>()) {
            return Ok(plain.into_any().unbind());
        }
        return Ok(r
            .get_type()
            .call1(plain.clone())
            .or_else(|_| Ok::<_, PyErr>(plain.into_any()))?
            .unbind());
    }
    if let Ok(list) = r.cast::<PyList>() {
        let items = list
            .iter()
            .map(|i| from_numpy(&i))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(PyList::new(py, items)?.into_any().unbind());
    }
    Ok(r.clone().unbind())
}
