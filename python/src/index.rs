//! NumPy's indexing of a tensor: `t[i]`, `t[a:b:s]`, `t[..., i]`, `t[None]`, `t[[2, 0]]`,
//! `t[mask]`. Integers (Python's, NumPy's or anything with `__index__`), slices with a
//! positive step, `...` and `None` give views of the same memory, as in NumPy; a slice
//! with a negative step, an integer array and a boolean mask give copies (NumPy copies
//! for the last two; ctensor's strides are never negative, so a reversed slice is a copy
//! too).

use ctensor_aten::Tensor as Inner;
use pyo3::exceptions::{PyIndexError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyEllipsis, PyInt, PyNone, PySlice, PyString, PyTuple};

use crate::err;
use crate::tensor::{as_tensor, Tensor};

/// One item of an index, classified.
enum Item<'py> {
    Int(i64),
    Slice(Bound<'py, PySlice>),
    NewAxis,
    Ellipsis,
    /// An integer array (or sequence): the entries at those positions.
    Array(Inner),
    /// A boolean array (or a mask from a comparison, int32 0/1): the entries where true.
    Mask(Inner),
}

/// `t[key]` and whether it is a view of `t`'s memory (`false`: a copy).
pub(crate) struct Indexed {
    pub(crate) t: Inner,
    pub(crate) view: bool,
}

fn classify<'py>(item: &Bound<'py, PyAny>) -> PyResult<Item<'py>> {
    if item.is_instance_of::<PyBool>() {
        // NumPy reads `t[True]` as a new axis of length 1 (and `t[False]` of 0), not as
        // the index 1: refused rather than silently taken as an integer.
        return Err(PyIndexError::new_err(
            "a bare True/False index is not supported (NumPy would add an axis, not select \
             row 1 or 0); index with an integer or a boolean array",
        ));
    }
    if item.is_instance_of::<PyInt>() {
        return Ok(Item::Int(item.extract()?));
    }
    if let Ok(s) = item.cast::<PySlice>() {
        return Ok(Item::Slice(s.clone()));
    }
    if item.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(format!(
            "indices are integers, slices, ..., None, and integer or boolean arrays; got the \
             string {}",
            item.repr()?
        )));
    }
    if item.is_instance_of::<PyNone>() {
        return Ok(Item::NewAxis);
    }
    if item.is_instance_of::<PyEllipsis>() {
        return Ok(Item::Ellipsis);
    }
    if let Ok(t) = item.cast::<Tensor>() {
        let t = t.get();
        let d = t.inner().dtype();
        if t.is_mask() {
            return Ok(Item::Mask(t.inner().share()));
        }
        if !d.is_integer() {
            return Err(PyIndexError::new_err(format!(
                "tensor indices must be integers or comparison masks, got a tensor of dtype {}",
                crate::numpy_name(d)
            )));
        }
        return Ok(Item::Array(t.inner().share()));
    }
    let ndim: Option<usize> = item.getattr("ndim").ok().and_then(|n| n.extract().ok());
    // NumPy integer scalars and 0-d integer arrays: integers, through `__index__`.
    if ndim.unwrap_or(0) == 0 && item.hasattr("__index__")? {
        let kind: Option<String> = item
            .getattr("dtype")
            .and_then(|d| d.getattr("kind"))
            .and_then(|k| k.extract())
            .ok();
        if kind.as_deref() == Some("b") {
            return Err(PyIndexError::new_err(
                "a 0-d boolean index is not supported (NumPy would add an axis); index with \
                 an integer or a boolean array",
            ));
        }
        return Ok(Item::Int(item.call_method0("__index__")?.extract()?));
    }
    if item.hasattr("__len__")? || ndim.is_some() {
        let np = item.py().import("numpy")?;
        let a = np.call_method1("asarray", (item,))?;
        let size: usize = a.getattr("size")?.extract()?;
        let kind: String = a.getattr("dtype")?.getattr("kind")?.extract()?;
        return match kind.as_str() {
            "i" | "u" => Ok(Item::Array(as_tensor(
                &a.call_method1("astype", ("int64",))?,
            )?)),
            // An empty list is an empty integer index in NumPy (asarray makes it float64).
            "f" if size == 0 => Ok(Item::Array(as_tensor(
                &a.call_method1("astype", ("int64",))?,
            )?)),
            // ctensor has no boolean type: a mask travels as int32 0/1.
            "b" => Ok(Item::Mask(as_tensor(
                &a.call_method1("astype", ("int32",))?,
            )?)),
            _ => Err(PyIndexError::new_err(format!(
                "array indices must be integers or booleans, got an array of dtype {}",
                a.getattr("dtype")?.str()?
            ))),
        };
    }
    Err(PyTypeError::new_err(format!(
        "indices are integers, slices, ..., None, and integer or boolean arrays; got {}",
        item.get_type().name()?
    )))
}

/// Whether `src[key]` would be a copy rather than a view (an index array, a mask, a
/// negative step), decided from the key alone: item assignment through such a key goes
/// another way and need not make the copy first.
pub(crate) fn selects_copy(key: &Bound<'_, PyAny>) -> PyResult<bool> {
    let raw: Vec<Bound<'_, PyAny>> = match key.cast::<PyTuple>() {
        Ok(t) => t.iter().collect(),
        Err(_) => vec![key.clone()],
    };
    for item in raw {
        if let Ok(sl) = item.cast::<PySlice>() {
            let step: Option<isize> = sl.getattr("step")?.extract()?;
            if step.is_some_and(|s| s < 0) {
                return Ok(true);
            }
        } else if let Ok(t) = item.cast::<Tensor>() {
            if t.get().is_mask() || t.get().inner().ndim() > 0 {
                return Ok(true);
            }
        } else if !item.is_instance_of::<PyString>() {
            let ndim: usize = item
                .getattr("ndim")
                .ok()
                .and_then(|n| n.extract().ok())
                .unwrap_or(0);
            if ndim > 0 || (item.hasattr("__len__")? && item.getattr("ndim").is_err()) {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// `src[key]`, as NumPy indexes (one array index at most).
pub(crate) fn index(src: &Inner, key: &Bound<'_, PyAny>) -> PyResult<Indexed> {
    let raw: Vec<Bound<'_, PyAny>> = match key.cast::<PyTuple>() {
        Ok(t) => t.iter().collect(),
        Err(_) => vec![key.clone()],
    };
    let items = raw.iter().map(classify).collect::<PyResult<Vec<_>>>()?;
    if items.iter().filter(|i| matches!(i, Item::Ellipsis)).count() > 1 {
        return Err(PyIndexError::new_err(
            "an index can only have a single ellipsis ('...')",
        ));
    }
    let arrays = items
        .iter()
        .filter(|i| matches!(i, Item::Array(_) | Item::Mask(_)))
        .count();
    if arrays > 1 {
        return Err(PyIndexError::new_err(
            "one integer or boolean array per index is supported (NumPy's broadcasting of \
             several index arrays is not); index one axis at a time",
        ));
    }
    // How many dimensions the items consume (a boolean mask consumes its rank).
    let consumed: usize = items
        .iter()
        .map(|i| match i {
            Item::Int(_) | Item::Slice(_) => 1,
            Item::Mask(a) => a.ndim(),
            Item::Array(_) => 1,
            Item::NewAxis | Item::Ellipsis => 0,
        })
        .sum();
    if consumed > src.ndim() {
        return Err(PyIndexError::new_err(format!(
            "too many indices: {consumed} for a tensor of {} dimensions",
            src.ndim()
        )));
    }
    let mut t = src.share();
    let mut view = true;
    let mut dim = 0;
    for item in items {
        match item {
            Item::Ellipsis => dim += src.ndim() - consumed,
            Item::NewAxis => {
                t = t.unsqueeze(dim).map_err(err)?;
                dim += 1;
            }
            Item::Int(i) => {
                let size = t.dims()[dim];
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
            }
            Item::Slice(sl) => {
                let size = t.dims()[dim];
                let ind = sl.indices(size as isize)?;
                let len = ind.slicelength;
                if ind.step > 0 {
                    let start = if len == 0 { 0 } else { ind.start as usize };
                    t = t
                        .narrow_step(dim, start, len, ind.step as usize)
                        .map_err(err)?;
                } else {
                    let picks: Vec<usize> = (0..len)
                        .map(|j| (ind.start + j as isize * ind.step) as usize)
                        .collect();
                    t = t.take(dim, &picks).map_err(err)?;
                    view = false;
                }
                dim += 1;
            }
            Item::Mask(a) => {
                let want = &t.dims()[dim..dim + a.ndim()];
                if a.dims() != want {
                    return Err(PyIndexError::new_err(format!(
                        "boolean index of shape {:?} does not match the indexed dimensions {:?}",
                        a.dims(),
                        want
                    )));
                }
                // The mask's dimensions flattened into one, then compressed.
                let mut shape: Vec<i64> = t.dims()[..dim].iter().map(|&d| d as i64).collect();
                shape.push(-1);
                shape.extend(t.dims()[dim + a.ndim()..].iter().map(|&d| d as i64));
                let flat_mask = a.reshape(&[-1]).map_err(err)?;
                t = t
                    .reshape(&shape)
                    .and_then(|f| f.compress(dim, &flat_mask))
                    .map_err(err)?;
                view = false;
                dim += 1;
            }
            Item::Array(a) => {
                let size = t.dims()[dim] as i64;
                let raw = a
                    .contiguous()
                    .and_then(|c| c.to_vec::<i64>())
                    .map_err(err)?;
                let mut picks = Vec::with_capacity(raw.len());
                for i in raw {
                    let k = if i < 0 { i + size } else { i };
                    if k < 0 || k >= size {
                        return Err(PyIndexError::new_err(format!(
                            "index {i} is out of range for dimension {dim} of size {size}"
                        )));
                    }
                    picks.push(k as usize);
                }
                let taken = t.take(dim, &picks).map_err(err)?;
                let mut shape: Vec<i64> = t.dims()[..dim].iter().map(|&d| d as i64).collect();
                shape.extend(a.dims().iter().map(|&d| d as i64));
                shape.extend(t.dims()[dim + 1..].iter().map(|&d| d as i64));
                t = taken.reshape(&shape).map_err(err)?;
                view = false;
                dim += a.ndim();
            }
        }
    }
    Ok(Indexed { t, view })
}
