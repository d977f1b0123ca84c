//! What the LAPACK kernels of every device share: the argument checks made before a
//! call, and the translation of the routine's `info` into [`Error::Lapack`]. cuSOLVER
//! keeps LAPACK's `info` conventions, so a failure reads the same on both devices.

use ctensor_base::{Error, Result, Scalar};

use crate::args as check;
use crate::lapack::{EigRange, Jobz};

/// `Err(Error::Lapack)` for a non-zero `info`, with what it means for `routine`.
/// `positive` explains a positive `info`; a negative one names the illegal argument
/// from `args` (1-based, as the routine counts them).
pub(crate) fn info_result(
    routine: &'static str,
    info: i32,
    args: &[&str],
    positive: impl FnOnce(i32) -> String,
) -> Result<()> {
    if info == 0 {
        return Ok(());
    }
    let detail = if info < 0 {
        let k = info.unsigned_abs() as usize;
        let name = args.get(k - 1).copied().unwrap_or("?");
        format!("argument {k} ({name}) had an illegal value")
    } else {
        positive(info)
    };
    Err(Error::Lapack {
        routine,
        info: info as i64,
        detail,
    })
}

/// A positive `info` of `potrf`.
pub(crate) fn potrf_failure(i: i32) -> String {
    format!(
        "the leading minor of order {i} is not positive definite, \
         so the Cholesky factorization could not be completed"
    )
}

/// A positive `info` of `potri`.
pub(crate) fn potri_failure(i: i32) -> String {
    format!(
        "element ({i},{i}) of the Cholesky factor is zero: \
         the matrix is singular and has no inverse"
    )
}

/// A positive `info` of `trtri`.
pub(crate) fn trtri_failure(i: i32) -> String {
    format!("diagonal element {i} is exactly zero: the triangular matrix is singular")
}

/// A positive `info` of `getrf`.
pub(crate) fn getrf_failure(i: i32) -> String {
    format!(
        "U({i},{i}) is exactly zero: the matrix is singular \
         (the factors were computed but cannot be used to solve)"
    )
}

/// A positive `info` of a divide-and-conquer eigensolver (`syevd`/`heevd`); with
/// vectors LAPACK encodes the failing submatrix in it.
pub(crate) fn evd_failure(jobz: Jobz, n: usize, i: i32) -> String {
    match jobz {
        Jobz::ValuesOnly => format!(
            "the eigensolver failed to converge: {i} off-diagonal elements of an \
             intermediate tridiagonal form did not converge to zero"
        ),
        Jobz::Vectors => {
            let (lo, hi) = (i as usize / (n + 1), i as usize % (n + 1));
            format!(
                "the eigensolver failed to converge while working on the submatrix in rows \
                 and columns {lo} through {hi}"
            )
        }
    }
}

/// A positive `info` of `sygvd`/`hegvd`: above `n` the overlap matrix `B` was not
/// positive definite, otherwise the eigensolver failed as in [`evd_failure`].
pub(crate) fn gvd_failure(jobz: Jobz, n: usize, i: i32) -> String {
    if i as usize > n {
        format!(
            "the leading minor of order {} of B is not positive definite, so B is \
             not a valid overlap matrix (its Cholesky factorization failed)",
            i as usize - n
        )
    } else {
        evd_failure(jobz, n, i)
    }
}

/// The checked square `n × n` matrix argument `name` with leading dimension `lda`:
/// `(n, lda)` as LAPACK integers and the element span.
fn square(op: &'static str, name: &str, n: usize, lda: usize) -> Result<(i32, i32, usize)> {
    check::leading_dim(op, &format!("ld{name}"), lda, n)?;
    Ok((
        check::blas_int(op, "n", n)?,
        check::blas_int(op, &format!("ld{name}"), lda)?,
        check::matrix_span(op, name, n, n, lda)?,
    ))
}

/// Checks `itype` of the generalized eigenproblem (1, 2 or 3).
fn check_itype(op: &'static str, itype: i32) -> Result<()> {
    if (1..=3).contains(&itype) {
        return Ok(());
    }
    Err(Error::OutOfRange {
        op,
        what: "itype".into(),
        given: itype as i64,
        valid: "1 (A x = λ B x), 2 (A B x = λ x) or 3 (B A x = λ x)".into(),
    })
}

/// How a partial-spectrum solver is asked for the eigenpairs of an [`EigRange`].
#[derive(Debug, Clone, Copy)]
pub(crate) enum Select<R> {
    /// Every eigenpair.
    All,
    /// The 1-based index range `il..=iu`.
    Index {
        /// First index, 1-based.
        il: i32,
        /// Last index, 1-based and inclusive.
        iu: i32,
    },
    /// Eigenvalues in `(vl, vu]`.
    Value {
        /// Exclusive lower bound.
        vl: R,
        /// Inclusive upper bound.
        vu: R,
    },
}

/// The checked selection of `range` for an `n × n` problem and how many eigenvector
/// columns it may fill; `None` for an empty index range (nothing to compute).
fn select<R: Scalar>(
    op: &'static str,
    n: usize,
    range: &EigRange<R>,
) -> Result<Option<(Select<R>, usize)>> {
    match range {
        EigRange::All => Ok(Some((Select::All, n))),
        EigRange::Index(r) => {
            if r.start > r.end || r.end > n {
                return Err(Error::OutOfRange {
                    op,
                    what: "eigenpair index range end".into(),
                    given: r.end as i64,
                    valid: format!("a range start..end with start <= end <= n = {n}, got {r:?}"),
                });
            }
            if r.is_empty() {
                return Ok(None);
            }
            let il = check::blas_int(op, "il", r.start + 1)?;
            let iu = check::blas_int(op, "iu", r.end)?;
            Ok(Some((Select::Index { il, iu }, r.len())))
        }
        &EigRange::Value { lower, upper } => {
            let (l, u) = (lower.to_c64().re, upper.to_c64().re);
            if l.partial_cmp(&u) != Some(std::cmp::Ordering::Less) {
                return Err(Error::InvalidArgument {
                    op,
                    expected: "an eigenvalue interval (lower, upper] with lower < upper".into(),
                    given: format!("lower = {l}, upper = {u}"),
                });
            }
            Ok(Some((
                Select::Value {
                    vl: lower,
                    vu: upper,
                },
                n,
            )))
        }
    }
}

/// A checked `n × n` matrix argument with its LAPACK integers and element span.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Square {
    /// The order, as a LAPACK integer.
    pub(crate) n: i32,
    /// The leading dimension, as a LAPACK integer.
    pub(crate) ld: i32,
    /// Elements from the first to the last one the matrix reaches.
    pub(crate) span: usize,
}

/// Checks the `n × n` matrix `a` (leading dimension, integer range, null pointer);
/// `None` when `n == 0` leaves nothing to do.
pub(crate) fn plan_square<T>(
    op: &'static str,
    name: &str,
    n: usize,
    a: *const T,
    lda: usize,
) -> Result<Option<Square>> {
    let (n32, ld, span) = square(op, name, n, lda)?;
    check::non_null(op, name, a, span)?;
    Ok((n > 0).then_some(Square { n: n32, ld, span }))
}

/// Checks `heevd`'s arguments: `a` as in [`plan_square`] and `w` for `n` values.
pub(crate) fn plan_heevd<T, R>(
    n: usize,
    a: *const T,
    lda: usize,
    w: *const R,
) -> Result<Option<Square>> {
    let sq = plan_square("heevd", "a", n, a, lda)?;
    check::non_null("heevd", "w", w, n)?;
    Ok(sq)
}

/// Checked arguments of `heevr`.
pub(crate) struct HeevrPlan<R> {
    /// The matrix `a`.
    pub(crate) a: Square,
    /// Which eigenpairs.
    pub(crate) select: Select<R>,
    /// The columns `z` may receive (the GPU copies at most these).
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub(crate) cols: usize,
    /// The leading dimension of `z`, as a LAPACK integer.
    pub(crate) ldz: i32,
    /// Elements of `z` the call may write.
    pub(crate) zspan: usize,
}

/// Checks `heevr`'s arguments; `None` when there is nothing to compute (`n == 0` or
/// an empty index range).
#[allow(clippy::too_many_arguments)]
pub(crate) fn plan_heevr<T, R: Scalar>(
    n: usize,
    a: *const T,
    lda: usize,
    range: &EigRange<R>,
    w: *const R,
    z: *const T,
    ldz: usize,
) -> Result<Option<HeevrPlan<R>>> {
    plan_selected("heevr", n, a, lda, range, w, z, ldz)
}

/// The checks `heevr` and `hegvx` share: `a`, the selection, `w` and `z`, for `op`.
#[allow(clippy::too_many_arguments)]
fn plan_selected<T, R: Scalar>(
    op: &'static str,
    n: usize,
    a: *const T,
    lda: usize,
    range: &EigRange<R>,
    w: *const R,
    z: *const T,
    ldz: usize,
) -> Result<Option<HeevrPlan<R>>> {
    let (n32, ld, span) = square(op, "a", n, lda)?;
    check::leading_dim(op, "ldz", ldz, n)?;
    let Some((select, cols)) = select(op, n, range)? else {
        return Ok(None);
    };
    let ldz32 = check::blas_int(op, "ldz", ldz)?;
    let zspan = check::matrix_span(op, "z", n, cols, ldz)?;
    check::non_null(op, "a", a, span)?;
    check::non_null(op, "w", w, n)?;
    check::non_null(op, "z", z, zspan)?;
    Ok((n > 0).then_some(HeevrPlan {
        a: Square { n: n32, ld, span },
        select,
        cols,
        ldz: ldz32,
        zspan,
    }))
}

/// Checks `hegvx`'s arguments: the plan of `a`, `z` and the selection (as for `heevr`)
/// and the checked `b`; `None` when `n == 0` or nothing is selected.
#[allow(clippy::too_many_arguments)]
pub(crate) fn plan_hegvx<T, R: Scalar>(
    itype: i32,
    n: usize,
    a: *const T,
    lda: usize,
    b: *const T,
    ldb: usize,
    range: &EigRange<R>,
    w: *const R,
    z: *const T,
    ldz: usize,
) -> Result<Option<(HeevrPlan<R>, Square)>> {
    let op = "hegvx";
    check_itype(op, itype)?;
    let (n32, ldb32, bspan) = square(op, "b", n, ldb)?;
    let Some(plan) = plan_selected(op, n, a, lda, range, w, z, ldz)? else {
        return Ok(None);
    };
    check::non_null(op, "b", b, bspan)?;
    Ok(Some((
        plan,
        Square {
            n: n32,
            ld: ldb32,
            span: bspan,
        },
    )))
}

/// Checks `hegvd`'s arguments; `None` when `n == 0`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn plan_hegvd<T, R>(
    itype: i32,
    n: usize,
    a: *const T,
    lda: usize,
    b: *const T,
    ldb: usize,
    w: *const R,
) -> Result<Option<(Square, Square)>> {
    let op = "hegvd";
    check_itype(op, itype)?;
    let (n32, lda32, aspan) = square(op, "a", n, lda)?;
    let (_, ldb32, bspan) = square(op, "b", n, ldb)?;
    check::non_null(op, "a", a, aspan)?;
    check::non_null(op, "b", b, bspan)?;
    check::non_null(op, "w", w, n)?;
    let sq = |ld, span| Square { n: n32, ld, span };
    Ok((n > 0).then_some((sq(lda32, aspan), sq(ldb32, bspan))))
}

/// Checks a general `m × n` column-major matrix for `op`: its LAPACK integer sizes and
/// span, or `None` when it is empty.
pub(crate) fn plan_matrix<T>(
    op: &'static str,
    m: usize,
    n: usize,
    a: *const T,
    lda: usize,
) -> Result<Option<([i32; 3], usize)>> {
    check::leading_dim(op, "lda", lda, m)?;
    let span = check::matrix_span(op, "a", m, n, lda)?;
    check::non_null(op, "a", a, span)?;
    // An empty matrix needs no LAPACK integers: a [2^40, 0] one is no overflow.
    if m.min(n) == 0 {
        return Ok(None);
    }
    let ints = [
        check::blas_int(op, "m", m)?,
        check::blas_int(op, "n", n)?,
        check::blas_int(op, "lda", lda)?,
    ];
    Ok(Some((ints, span)))
}

/// Checked arguments of `getrf`: those of [`plan_matrix`] and the pivots.
pub(crate) fn plan_getrf<T>(
    m: usize,
    n: usize,
    a: *const T,
    lda: usize,
    ipiv: *const i32,
) -> Result<Option<([i32; 3], usize)>> {
    check::non_null("getrf", "ipiv", ipiv, m.min(n))?;
    plan_matrix("getrf", m, n, a, lda)
}

/// Checked arguments of `getrs`: `a` as a [`Square`], `(nrhs, ldb)` as LAPACK integers
/// and the span of `b`; `None` when `n == 0` or `nrhs == 0`.
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub(crate) fn plan_getrs<T>(
    n: usize,
    nrhs: usize,
    a: *const T,
    lda: usize,
    ipiv: *const i32,
    b: *const T,
    ldb: usize,
) -> Result<Option<(Square, [i32; 2], usize)>> {
    let op = "getrs";
    let (n32, lda32, aspan) = square(op, "a", n, lda)?;
    check::leading_dim(op, "ldb", ldb, n)?;
    let bspan = check::matrix_span(op, "b", n, nrhs, ldb)?;
    let ints = [
        check::blas_int(op, "nrhs", nrhs)?,
        check::blas_int(op, "ldb", ldb)?,
    ];
    check::non_null(op, "a", a, aspan)?;
    check::non_null(op, "ipiv", ipiv, n)?;
    check::non_null(op, "b", b, bspan)?;
    let a = Square {
        n: n32,
        ld: lda32,
        span: aspan,
    };
    Ok((n > 0 && nrhs > 0).then_some((a, ints, bspan)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn illegal_argument_info_names_the_argument() {
        let e =
            info_result("dpotrf", -4, &["uplo", "n", "a", "lda"], |_| String::new()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "dpotrf failed with info = -4: argument 4 (lda) had an illegal value"
        );
    }

    #[test]
    fn overlap_failure_is_told_apart_from_convergence() {
        assert!(gvd_failure(Jobz::Vectors, 5, 7).contains("order 2 of B"));
        assert!(gvd_failure(Jobz::ValuesOnly, 5, 3).contains("3 off-diagonal"));
        assert!(evd_failure(Jobz::Vectors, 4, 12).contains("rows and columns 2 through 2"));
    }

    #[test]
    fn selection_checks_its_range() {
        assert!(select::<f64>("heevr", 4, &EigRange::Index(1..3))
            .unwrap()
            .is_some_and(|(s, cols)| matches!(s, Select::Index { il: 2, iu: 3 }) && cols == 2));
        assert!(select::<f64>("heevr", 4, &EigRange::Index(2..2))
            .unwrap()
            .is_none());
        assert!(select::<f64>("heevr", 4, &EigRange::Index(0..5)).is_err());
        let bad = EigRange::Value {
            lower: 1.0,
            upper: 1.0,
        };
        assert!(select::<f64>("heevr", 4, &bad).is_err());
    }
}
