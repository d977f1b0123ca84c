//! NumPy 2's type promotion, which the Python package follows (the Rust library's own
//! table is PyTorch's, documented in `ctensor_aten::promotion`). The two differ only
//! where an integer meets a floating or complex type: NumPy picks the type that holds
//! every value of both (`int32 ⊕ float32 → float64`, `int64 ⊕ float16 → float64`,
//! `int32 ⊕ complex64 → complex128`), PyTorch the floating one. bfloat16 (from
//! `ml_dtypes`, which defines no promotion with integers or float16) is treated as
//! float16 is: `int ⊕ bfloat16 → float64`, `float16 ⊕ bfloat16 → float32`.
//!
//! Python numbers stay weak (NEP 50) through ctensor's [`Number`](ctensor_aten::Number):
//! `float32 tensor * 2.5` is `float32`; NumPy scalars (`np.float64(2.5)`) are not Python
//! numbers and promote as 0-d arrays do (`float32 tensor * np.float64(2.5)` is `float64`).

use ctensor_aten::{DataType, Tensor as Inner};
use pyo3::prelude::*;

/// The type NumPy 2 gives a binary operation on arrays of types `a` and `b`.
pub(crate) fn numpy_result_type(a: DataType, b: DataType) -> DataType {
    let int = |t: DataType| t.is_integer();
    match (int(a), int(b)) {
        (true, false) | (false, true) => {
            let other = if int(a) { b } else { a };
            if other.is_complex() {
                DataType::ComplexDouble
            } else {
                DataType::Double
            }
        }
        _ => ctensor_aten::result_type(a, b),
    }
}

/// The operands cast to their common NumPy type (shared, not copied, where already of
/// it), so that the Rust op they go to sees one type.
pub(crate) fn numpy_promoted(ts: &[Inner]) -> ctensor_aten::Result<Vec<Inner>> {
    let Some(common) = ts.iter().map(Inner::dtype).reduce(numpy_result_type) else {
        return Ok(Vec::new());
    };
    ts.iter()
        .map(|t| {
            if t.dtype() == common {
                Ok(t.share())
            } else {
                t.cast(common)
            }
        })
        .collect()
}

/// The type of `a ⊕ b` as `numpy.result_type` gives for arrays, as a `numpy.dtype`; each
/// operand is a dtype (a name, a NumPy type, a `numpy.dtype`) or a tensor:
/// `ctensor.result_type("int32", "float32") == numpy.float64`.
#[pyfunction]
pub(crate) fn result_type(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    let of = |x: &Bound<'_, PyAny>| match x.cast::<crate::tensor::Tensor>() {
        Ok(t) => Ok(t.get().dtype_type()),
        Err(_) => crate::dtype_arg(x),
    };
    crate::dtype_object(py, numpy_result_type(of(a)?, of(b)?))
}
