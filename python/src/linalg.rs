//! Linear algebra and contractions as NumPy and SciPy name them: `einsum`, `matmul`,
//! `eigh`, `cholesky`, `solve`, `qr`, `svd`.

use ctensor_aten::{DataType, EigBackend, EighRange, EinsumOptions, QrMode, Tensor as Inner, Uplo};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::nogil;
use crate::promotion::numpy_promoted;
use crate::tensor::{as_tensor, wrap, Tensor};

/// `numpy.einsum` over ctensor tensors (one BLAS call where the contraction allows).
#[pyfunction]
#[pyo3(signature = (equation, *operands))]
pub(crate) fn einsum(
    py: Python<'_>,
    equation: &str,
    operands: Vec<Bound<'_, PyAny>>,
) -> PyResult<Tensor> {
    let ts = operands
        .iter()
        .map(as_tensor)
        .collect::<PyResult<Vec<_>>>()?;
    nogil(py, || {
        let ts = numpy_promoted(&ts)?;
        let refs: Vec<&Inner> = ts.iter().collect();
        ctensor_aten::einsum(equation, &refs, &EinsumOptions::default())
    })
    .map(wrap)
}

/// The matrix product (batched over leading axes as `numpy.matmul`).
#[pyfunction]
pub(crate) fn matmul(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
) -> PyResult<Tensor> {
    let (a, b) = (as_tensor(a)?, as_tensor(b)?);
    nogil(py, || promoted_matmul(&a, &b)).map(wrap)
}

/// `a @ b` with NumPy's promotion of the two and its rules for vectors: a 1-D first
/// operand is a row `[1, k]`, a 1-D second one a column `[k, 1]`, and the added axis is
/// removed from the result (`vector @ vector` is 0-d). 0-d operands are refused.
pub(crate) fn promoted_matmul(a: &Inner, b: &Inner) -> ctensor_aten::Result<Inner> {
    if a.ndim() == 0 || b.ndim() == 0 {
        return Err(ctensor_aten::Error::ShapeMismatch {
            op: "matmul",
            expected: "operands of rank 1 or more (use * to scale by a scalar)".into(),
            got: vec![a.dims().to_vec(), b.dims().to_vec()],
        });
    }
    let p = numpy_promoted(&[a.share(), b.share()])?;
    let (row, col) = (a.ndim() == 1, b.ndim() == 1);
    let x = if row {
        p[0].unsqueeze(0)?
    } else {
        p[0].share()
    };
    let y = if col {
        p[1].unsqueeze(1)?
    } else {
        p[1].share()
    };
    let mut r = ctensor_aten::matmul(&x, &y)?;
    if col {
        r = r.squeeze(r.ndim() - 1)?;
    }
    if row {
        r = r.squeeze(r.ndim() - if col { 1 } else { 2 })?;
    }
    Ok(r)
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
///
/// `driver` picks the solver of the standard problem: `"evd"` (LAPACK divide and
/// conquer), `"evr"` (LAPACK MRRR, only the requested range), `"faer"`, `"mixed"`
/// (eigenvalues only of float64/complex128 input: a single-precision solve refined in
/// double, checked, `EigBackend::Mixed`), or None/`"auto"` for ctensor's measured policy.
#[pyfunction]
#[pyo3(signature = (a, b=None, *, subset_by_index=None, subset_by_value=None, eigvals_only=false, driver=None))]
pub(crate) fn eigh(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    b: Option<&Bound<'_, PyAny>>,
    subset_by_index: Option<(usize, usize)>,
    subset_by_value: Option<(f64, f64)>,
    eigvals_only: bool,
    driver: Option<&str>,
) -> PyResult<Py<PyAny>> {
    let range = eigh_range(subset_by_index, subset_by_value)?;
    let backend = match driver {
        None | Some("auto") => EigBackend::Auto,
        Some("evd") => EigBackend::LapackEvd,
        Some("evr") => EigBackend::LapackEvr,
        Some("faer") => EigBackend::Faer,
        Some("mixed") => EigBackend::Mixed,
        Some(d) => {
            return Err(PyValueError::new_err(format!(
                "driver={d:?}: expected None, 'auto', 'evd', 'evr', 'faer' or 'mixed'"
            )))
        }
    };
    let a = as_tensor(a)?;
    let b = b.map(as_tensor).transpose()?;
    if b.is_some() && driver.is_some() {
        return Err(PyValueError::new_err(
            "driver= chooses the solver of the standard problem; the generalized one (b given) has one solver: leave driver out",
        ));
    }
    if eigvals_only && b.is_none() {
        let w = nogil(py, || ctensor_aten::eigvalsh(&a, range, backend))?;
        return Ok(Bound::new(py, wrap(w))?.into_any().unbind());
    }
    let (w, v) = nogil(py, || match &b {
        None => ctensor_aten::eigh(&a, range, backend),
        Some(b) => {
            let p = numpy_promoted(&[a.share(), b.share()])?;
            ctensor_aten::eigh_generalized(&p[0], &p[1], 1, range)
        }
    })?;
    if eigvals_only {
        return Ok(Bound::new(py, wrap(w))?.into_any().unbind());
    }
    Ok((wrap(w), wrap(v)).into_pyobject(py)?.into_any().unbind())
}

/// The Cholesky factor (`lower=True`: `A = L Lᴴ`; otherwise `A = Uᴴ U`).
#[pyfunction]
#[pyo3(signature = (a, lower=true))]
pub(crate) fn cholesky(py: Python<'_>, a: &Bound<'_, PyAny>, lower: bool) -> PyResult<Tensor> {
    let a = as_tensor(a)?;
    let uplo = if lower { Uplo::Lower } else { Uplo::Upper };
    nogil(py, || ctensor_aten::cholesky(&a, uplo)).map(wrap)
}

/// The solution `x` of `a x = b` (`b` a vector or several right-hand sides).
#[pyfunction]
pub(crate) fn solve(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
) -> PyResult<Tensor> {
    let (a, b) = (as_tensor(a)?, as_tensor(b)?);
    nogil(py, || {
        let p = numpy_promoted(&[a, b])?;
        // Integers solve in float64, as NumPy's.
        let p = if p[0].dtype().is_integer() {
            vec![p[0].cast(DataType::Double)?, p[1].cast(DataType::Double)?]
        } else {
            p
        };
        ctensor_aten::solve(&p[0], &p[1])
    })
    .map(wrap)
}

/// The QR factorization, as `numpy.linalg.qr`: `mode="reduced"` (default) or
/// `"complete"` return `(q, r)`, `mode="r"` returns `r`.
#[pyfunction]
#[pyo3(signature = (a, mode="reduced"))]
pub(crate) fn qr(py: Python<'_>, a: &Bound<'_, PyAny>, mode: &str) -> PyResult<Py<PyAny>> {
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
pub(crate) fn svd(
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
