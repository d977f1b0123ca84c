//! Singular value decomposition `A = U Σ Vᴴ` ([`LapackSvd`]): LAPACK's divide and conquer
//! `?gesdd` on the host (falling back to `?gesvd` when it does not converge), cuSOLVER's
//! `?gesvd` on the GPU. Column-major, as LAPACK.

use ctensor_base::{Device, Error, Result, Scalar};

use crate::args as check;

/// Which singular vectors [`LapackSvd::svd`] computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SvdJob {
    /// Singular values only; `u` and `vt` are not referenced.
    ValuesOnly,
    /// `U` of `m × n` (the thin factor) and `Vᴴ` of `n × n`.
    Thin,
    /// `U` of `m × m` and `Vᴴ` of `n × n`.
    Full,
}

/// The singular value decomposition of a tall or square matrix.
pub trait LapackSvd<T: Scalar>: Device {
    /// For the `m × n` column-major `a` with `m ≥ n` (the tensor op transposes wide
    /// matrices; cuSOLVER requires it), writes the `n` singular values in descending
    /// order to `s` and, by `job`, the left singular vectors (columns of `u`, leading
    /// dimension `ldu`) and the conjugate-transposed right ones (`vt`, `n × n`, leading
    /// dimension `ldvt`). `a` is destroyed. NaN or infinite entries are
    /// `Error::NonFinite` (see [`check_finite`](crate::lapack::check_finite)); a
    /// decomposition that does not converge is `Error::Lapack`.
    ///
    /// # Safety
    /// `a` is valid for reads and writes of `lda·(n-1) + m` elements, `s` for writes of
    /// `n` real values and, unless `job` is `ValuesOnly`, `u` for writes of
    /// `ldu·(cols-1) + m` (`cols` = `n` or `m`) and `vt` of `ldvt·(n-1) + n`; all on this
    /// device and disjoint.
    #[allow(clippy::too_many_arguments)]
    unsafe fn svd(
        job: SvdJob,
        m: usize,
        n: usize,
        a: *mut T,
        lda: usize,
        s: *mut T::Real,
        u: *mut T,
        ldu: usize,
        vt: *mut T,
        ldvt: usize,
    ) -> Result<()>;
}

/// Checked `svd` arguments: LAPACK integers `[m, n, lda, ldu, ldvt]`, and the spans of
/// `a`, `u` and `vt`; `None` when `n == 0`.
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub(crate) fn plan_svd<T, R>(
    job: SvdJob,
    m: usize,
    n: usize,
    a: *const T,
    lda: usize,
    s: *const R,
    u: *const T,
    ldu: usize,
    vt: *const T,
    ldvt: usize,
) -> Result<Option<([i32; 5], [usize; 3])>> {
    let op = "svd";
    if m < n {
        return Err(Error::NotAMatrix {
            op,
            shape: vec![m, n],
            need: "a tall or square matrix (m >= n; the tensor op svd transposes wide ones)",
        });
    }
    check::leading_dim(op, "lda", lda, m)?;
    let sa = check::matrix_span(op, "a", m, n, lda)?;
    let (ucols, vecs) = match job {
        SvdJob::ValuesOnly => (0, false),
        SvdJob::Thin => (n, true),
        SvdJob::Full => (m, true),
    };
    let (ldu, ldvt) = if vecs {
        (ldu, ldvt)
    } else {
        (ldu.max(m).max(1), ldvt.max(n).max(1))
    };
    check::leading_dim(op, "ldu", ldu, m)?;
    check::leading_dim(op, "ldvt", ldvt, n)?;
    let su = if vecs {
        check::matrix_span(op, "u", m, ucols, ldu)?
    } else {
        0
    };
    let sv = if vecs {
        check::matrix_span(op, "vt", n, n, ldvt)?
    } else {
        0
    };
    if n == 0 {
        return Ok(None);
    }
    check::non_null(op, "a", a, sa)?;
    check::non_null(op, "s", s, n)?;
    check::non_null(op, "u", u, su)?;
    check::non_null(op, "vt", vt, sv)?;
    let ints = [
        check::blas_int(op, "m", m)?,
        check::blas_int(op, "n", n)?,
        check::blas_int(op, "lda", lda)?,
        check::blas_int(op, "ldu", ldu)?,
        check::blas_int(op, "ldvt", ldvt)?,
    ];
    Ok(Some((ints, [sa, su, sv])))
}

/// The meaning of a positive `info` of the SVD drivers.
pub(crate) fn svd_failure(i: i32) -> String {
    format!("the bidiagonal QR/divide-and-conquer iteration did not converge ({i} superdiagonals did not reach zero)")
}
