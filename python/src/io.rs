//! `.npy` files.

use ctensor_aten::Tensor as Inner;
use pyo3::prelude::*;

use crate::tensor::{as_tensor, wrap, Tensor};
use crate::{device_arg, nogil};

/// Saves a tensor to a NumPy `.npy` file (bf16 as `<V2`, readable with `ml_dtypes`).
#[pyfunction]
pub(crate) fn save_npy(
    py: Python<'_>,
    path: std::path::PathBuf,
    t: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let t = as_tensor(t)?;
    nogil(py, || t.save_npy(&path))
}

/// Loads a NumPy `.npy` file onto `device`.
#[pyfunction]
#[pyo3(signature = (path, device="cpu"))]
pub(crate) fn load_npy(py: Python<'_>, path: std::path::PathBuf, device: &str) -> PyResult<Tensor> {
    let device = device_arg(device)?;
    nogil(py, || Inner::load_npy_to(&path, device)).map(wrap)
}
