//! The singular value decomposition of a matrix ([`svd`], [`svdvals`]) and the
//! pseudo-inverse built on it ([`pinv`]), through the [`LapackSvd`] kernel (LAPACK's
//! `?gesdd` with `?gesvd` as the fallback on the host, cuSOLVER's `?gesvd` on the GPU).

use ctensor_base::{DataType, Error, Result, Scalar};
use ctensor_kernels::blas::Trans;
use ctensor_kernels::lapack::svd::{LapackSvd, SvdJob};

use super::compare::where_cond;
use super::linalg::{col_major, in_order_of};
use super::matmul::matmul_op;
use crate::core::dispatch::dispatch_blas;
use crate::core::shape::Order;
use crate::core::tensor::Tensor;

/// `x` itself when it is dense column-major, otherwise a column-major copy (what
/// `in_order_of` takes).
fn col_major_dense(x: Tensor) -> Result<Tensor> {
    if x.dense_order() == Some(Order::ColMajor) {
        Ok(x)
    } else {
        x.copy_in_order(Order::ColMajor)
    }
}

/// `(m, n)` of the matrix `a`.
fn matrix(op: &'static str, a: &Tensor) -> Result<(usize, usize)> {
    match *a.dims() {
        [m, n] => Ok((m, n)),
        _ => Err(Error::NotAMatrix {
            op,
            shape: a.dims().to_vec(),
            need: "a matrix (rank 2, m × n)",
        }),
    }
}

/// The kernel on a tall or square `a` (`m ≥ n`): `(U, S, Vᴴ)`, the vectors `None` for
/// `ValuesOnly`, all column-major on `a`'s device.
fn tall(
    op: &'static str,
    a: &Tensor,
    job: SvdJob,
) -> Result<(Option<Tensor>, Tensor, Option<Tensor>)> {
    let (m, n) = (a.dims()[0], a.dims()[1]);
    let work = col_major(a)?;
    let s = Tensor::new(a.dtype().real_type(), a.device(), &[n])?;
    let ucols = if job == SvdJob::Full { m } else { n };
    let vectors = job != SvdJob::ValuesOnly;
    let (u, vt) = if vectors {
        (
            Tensor::new_in_order(a.dtype(), a.device(), &[m, ucols], Order::ColMajor)?,
            Tensor::new_in_order(a.dtype(), a.device(), &[n, n], Order::ColMajor)?,
        )
    } else {
        let none = Tensor::new(a.dtype(), a.device(), &[0])?;
        (none.share(), none)
    };
    dispatch_blas!(a.dtype(), a.device(), op, T, D => {
        let _w = (work.buffer.write(op)?, s.buffer.write(op)?);
        let _v = if vectors { Some((u.buffer.write(op)?, vt.buffer.write(op)?)) } else { None };
        // SAFETY: `work` is a fresh column-major m × n copy (ld m) and `s` n real values;
        // with vectors, `u` is column-major m × ucols and `vt` n × n, all fresh, distinct
        // and on this device (without vectors they are not referenced).
        unsafe {
            <D as LapackSvd<T>>::svd(job, m, n, work.typed_ptr::<T>(), m.max(1), s.typed_ptr::<<T as Scalar>::Real>(), u.typed_ptr::<T>(), m.max(1), vt.typed_ptr::<T>(), n.max(1))
        }
    })
    .map_err(|e| e.in_op(op))?;
    // With no columns there is nothing to factor, but the full U must still be unitary:
    // the identity, as NumPy gives.
    if n == 0 && job == SvdJob::Full {
        let eye = Tensor::eye(a.dtype(), a.device(), m)?.copy_in_order(Order::ColMajor)?;
        return Ok((Some(eye), s, Some(vt)));
    }
    Ok((vectors.then(|| u.share()), s, vectors.then_some(vt)))
}

/// `(U, S, Vᴴ)` for any shape: wide matrices through the SVD of `Aᴴ`
/// (`Aᴴ = U' S V'ᴴ` gives `A = V' S U'ᴴ`).
fn factor(
    op: &'static str,
    a: &Tensor,
    job: SvdJob,
) -> Result<(Option<Tensor>, Tensor, Option<Tensor>)> {
    let (m, n) = matrix(op, a)?;
    if m >= n {
        return tall(op, a, job);
    }
    let (u2, s, vt2) = tall(op, &a.t()?.conj()?, job)?;
    let ct = |t: Option<Tensor>| -> Result<Option<Tensor>> { t.map(|t| t.t()?.conj()).transpose() };
    Ok((ct(vt2)?, s, ct(u2)?))
}

/// The singular value decomposition `A = U diag(S) Vᴴ` of the matrix `a` (`m × n`,
/// `k = min(m, n)`): `U` with orthonormal columns, the singular values `S` (descending,
/// non-negative, of the real type) and `Vᴴ`. With `full_matrices` `U` is `m × m` and
/// `Vᴴ` `n × n`, otherwise `m × k` and `k × n` (NumPy's `svd`). `U` and `Vᴴ` come in
/// `a`'s memory order. NaN or infinite entries are `Error::NonFinite`.
///
/// ```
/// use ctensor_aten::{svd, Tensor};
/// let a = Tensor::from_slice(&[3.0f64, 0.0, 0.0, 4.0, 0.0, 0.0], &[3, 2])?;
/// let (u, s, vh) = svd(&a, false)?;
/// assert_eq!(s.to_vec::<f64>()?, [4.0, 3.0]);
/// assert_eq!((u.dims(), vh.dims()), (&[3, 2][..], &[2, 2][..]));
/// # Ok::<(), ctensor_aten::Error>(())
/// ```
pub fn svd(a: &Tensor, full_matrices: bool) -> Result<(Tensor, Tensor, Tensor)> {
    let op = "svd";
    let job = if full_matrices {
        SvdJob::Full
    } else {
        SvdJob::Thin
    };
    let (u, s, vt) = factor(op, a, job)?;
    match (u, vt) {
        (Some(u), Some(vt)) => Ok((
            in_order_of(col_major_dense(u)?, a)?,
            s,
            in_order_of(col_major_dense(vt)?, a)?,
        )),
        _ => Err(Error::Internal {
            op,
            what: "the SVD returned no vectors".into(),
        }),
    }
}

/// The singular values of the matrix `a`, descending (NumPy's `svd(..., compute_uv=False)`).
pub fn svdvals(a: &Tensor) -> Result<Tensor> {
    Ok(factor("svdvals", a, SvdJob::ValuesOnly)?.1)
}

/// The Moore–Penrose pseudo-inverse `A⁺ = V diag(1/σ) Uᴴ` (`n × m`), with singular
/// values at or below `rtol · σ_max` treated as zero. `rtol` defaults to `max(m, n) · ε`
/// of the dtype (NumPy's default for `pinv`'s `rtol`).
pub fn pinv(a: &Tensor, rtol: Option<f64>) -> Result<Tensor> {
    let op = "pinv";
    let (m, n) = matrix(op, a)?;
    if let Some(r) = rtol {
        if !(r.is_finite() && r >= 0.0) {
            return Err(Error::InvalidArgument {
                op,
                expected: "a finite, non-negative relative cutoff".into(),
                given: format!("{r}"),
            });
        }
    }
    let (u, s, vt) = factor(op, a, SvdJob::Thin)?;
    let (Some(u), Some(vt)) = (u, vt) else {
        return Err(Error::Internal {
            op,
            what: "the SVD returned no vectors".into(),
        });
    };
    let eps = crate::core::promotion::epsilon(a.dtype());
    let rtol = rtol.unwrap_or(m.max(n) as f64 * eps);
    let smax = if s.numel() > 0 {
        s.narrow(0, 0, 1)?.cast(DataType::Double)?.item::<f64>()?
    } else {
        0.0
    };
    let keep = s.gt_scalar(rtol * smax)?;
    let zero = Tensor::zeros(s.dtype(), s.device(), &[])?;
    // 1/σ where kept; the division of the others (possibly by zero) is discarded.
    let inv = where_cond(&keep, &(1.0 / &s)?, &zero)?;
    // A⁺ = (Vᴴ)ᴴ diag(1/σ) Uᴴ.
    let v_scaled = (&vt.t()?.conj()? * &inv)?;
    let p = matmul_op(&v_scaled, Trans::N, &u, Trans::C)?;
    in_order_of(col_major_dense(p)?, a)
}
