//! `numpy.fft`'s transforms: `fftn`, `ifftn`, `fft`, `ifft`.

use ctensor_aten::FftNorm;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::nogil;
use crate::tensor::{as_tensor, wrap, Tensor};

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
pub(crate) fn fftn(
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
pub(crate) fn ifftn(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    axes: Option<Vec<i64>>,
    norm: Option<&str>,
) -> PyResult<Tensor> {
    transform(py, a, axes, norm, true)
}

/// The one-dimensional transform along `axis` (the last by default).
#[pyfunction]
#[pyo3(signature = (a, axis=-1, norm=None), text_signature = "(a, axis=-1, norm=None)")]
pub(crate) fn fft(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    axis: i64,
    norm: Option<&str>,
) -> PyResult<Tensor> {
    transform(py, a, Some(vec![axis]), norm, false)
}

/// The inverse of [`fft`].
#[pyfunction]
#[pyo3(signature = (a, axis=-1, norm=None), text_signature = "(a, axis=-1, norm=None)")]
pub(crate) fn ifft(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    axis: i64,
    norm: Option<&str>,
) -> PyResult<Tensor> {
    transform(py, a, Some(vec![axis]), norm, true)
}
