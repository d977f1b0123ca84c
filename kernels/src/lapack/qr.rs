//! Householder QR: [`LapackGeqrf`] factors `A = Q R`, [`LapackOrgqr`] forms `Q` from the
//! reflectors (LAPACK `?geqrf`, `?orgqr`/`?ungqr`; cuSOLVER's routines of the same names
//! on the GPU). Column-major, as LAPACK.

use ctensor_base::{Device, Error, Result, Scalar};

use crate::args as check;

/// Householder QR factorization `A = Q R` (`?geqrf`).
pub trait LapackGeqrf<T: Scalar>: Device {
    /// Overwrites the `m × n` `a` with `R` on and above the diagonal (the upper
    /// `min(m, n) × n` trapezoid) and the Householder vectors of `Q` below it; `tau`
    /// receives their `min(m, n)` scale factors. Non-finite entries propagate into the
    /// factors (the factorization itself cannot fail).
    ///
    /// # Safety
    /// `a` is valid for reads and writes of `lda·(n-1) + m` elements and `tau` for writes
    /// of `min(m, n)`, on this device; they do not overlap.
    unsafe fn geqrf(m: usize, n: usize, a: *mut T, lda: usize, tau: *mut T) -> Result<()>;
}

/// The `m × n` matrix with orthonormal columns `Q` from the first `k` reflectors of
/// [`LapackGeqrf::geqrf`] (`?orgqr` for real types, `?ungqr` for complex).
pub trait LapackOrgqr<T: Scalar>: Device {
    /// Overwrites the `m × n` `a`, whose first `k` columns hold reflectors below their
    /// diagonal, with the first `n` columns of `Q = H₁ H₂ ⋯ H_k`. Requires
    /// `m ≥ n ≥ k`; `n = m` gives the complete `Q`.
    ///
    /// # Safety
    /// `a` is valid for reads and writes of `lda·(n-1) + m` elements and `tau` for reads
    /// of `k`, on this device; they do not overlap.
    unsafe fn orgqr(
        m: usize,
        n: usize,
        k: usize,
        a: *mut T,
        lda: usize,
        tau: *const T,
    ) -> Result<()>;
}

/// Checked `geqrf` arguments: LAPACK integers `[m, n, lda]` and the span of `a`; `None`
/// when there is nothing to do.
pub(crate) fn plan_geqrf<T>(
    m: usize,
    n: usize,
    a: *const T,
    lda: usize,
    tau: *const T,
) -> Result<Option<([i32; 3], usize)>> {
    let plan = crate::lapack::args::plan_matrix("geqrf", m, n, a, lda)?;
    check::non_null("geqrf", "tau", tau, m.min(n))?;
    Ok(plan)
}

/// Checked `orgqr` arguments: LAPACK integers `[m, n, k, lda]` and the span of `a`;
/// `None` when `n == 0`.
pub(crate) fn plan_orgqr<T>(
    m: usize,
    n: usize,
    k: usize,
    a: *const T,
    lda: usize,
    tau: *const T,
) -> Result<Option<([i32; 4], usize)>> {
    let op = "orgqr";
    if !(m >= n && n >= k) {
        return Err(Error::InvalidArgument {
            op,
            expected: "sizes with m >= n >= k (Q has no more columns than rows, and at \
                       least as many as reflectors)"
                .into(),
            given: format!("m = {m}, n = {n}, k = {k}"),
        });
    }
    check::leading_dim(op, "lda", lda, m)?;
    let span = check::matrix_span(op, "a", m, n, lda)?;
    check::non_null(op, "a", a, span)?;
    check::non_null(op, "tau", tau, k)?;
    if n == 0 {
        return Ok(None);
    }
    let ints = [
        check::blas_int(op, "m", m)?,
        check::blas_int(op, "n", n)?,
        check::blas_int(op, "k", k)?,
        check::blas_int(op, "lda", lda)?,
    ];
    Ok(Some((ints, span)))
}
