//! Checked BLAS argument sets shared by the CPU and GPU kernels: each device checks a
//! vector, a gemv or a gemm the same way and then only maps the transpose flag to its
//! library's own type (`O`).

use ctensor_base::{Error, Result};

use crate::args as check;
use crate::blas::Trans;

/// A checked strided vector argument: its BLAS increment and the elements it spans.
pub(crate) struct Vector {
    pub(crate) inc: i32,
    pub(crate) span: usize,
}

/// The common case of a vector argument, checked without building an error: a positive
/// increment and a length of 1 to `i32::MAX` elements at a non-null pointer. `None`
/// sends the caller to its general path ([`vector`]), which takes empty vectors and
/// negative increments and says what is wrong with the rest.
///
/// This is a few comparisons and no `Result`: a level-1 call on a short vector that
/// takes this path pays no stack frame for an error it will not return.
#[inline(always)]
pub(crate) fn vector_fast<T>(n: usize, p: *const T, inc: isize) -> Option<Vector> {
    const MAX: usize = i32::MAX as usize;
    if inc > 0 && (inc as usize) <= MAX && n > 0 && n <= MAX && !p.is_null() {
        // Cannot overflow a 64-bit usize ((2³¹ - 1)² + 1); checked for narrower ones.
        if let Some(span) = (n - 1).checked_mul(inc as usize) {
            return Some(Vector {
                inc: inc as i32,
                span: span + 1,
            });
        }
    }
    None
}

/// Checks a vector of `n` elements with increment `inc` at `p` (non-null unless empty).
///
/// The common case is [`vector_fast`], inlined into the caller; everything else, errors
/// included, goes through [`vector_checked`] out of line.
#[inline(always)]
pub(crate) fn vector<T>(
    op: &'static str,
    name: &str,
    n: usize,
    p: *const T,
    inc: isize,
) -> Result<Vector> {
    match vector_fast(n, p, inc) {
        Some(v) => Ok(v),
        None => vector_checked(op, name, n, p, inc),
    }
}

/// The checked arguments of a call on one vector of `n` elements at `x`: `None` for
/// `n == 0` (nothing to do), else the BLAS length and the vector.
#[inline]
pub(crate) fn vector_one<T>(
    op: &'static str,
    n: usize,
    x: *const T,
    incx: isize,
) -> Result<Option<(i32, Vector)>> {
    let vx = vector(op, "x", n, x, incx)?;
    if n == 0 {
        return Ok(None);
    }
    Ok(Some((check::blas_int(op, "n", n)?, vx)))
}

/// [`vector_one`] for a call on two vectors `x` and `y` of `n` elements.
#[inline]
pub(crate) fn vector_pair<T>(
    op: &'static str,
    n: usize,
    x: *const T,
    incx: isize,
    y: *const T,
    incy: isize,
) -> Result<Option<(i32, Vector, Vector)>> {
    let (vx, vy) = (vector(op, "x", n, x, incx)?, vector(op, "y", n, y, incy)?);
    if n == 0 {
        return Ok(None);
    }
    Ok(Some((check::blas_int(op, "n", n)?, vx, vy)))
}

/// [`vector`]'s full checks.
#[cold]
#[inline(never)]
fn vector_checked<T>(
    op: &'static str,
    name: &str,
    n: usize,
    p: *const T,
    inc: isize,
) -> Result<Vector> {
    let inc32 = check::blas_inc(op, name, inc)?;
    let span = check::vector_span(op, name, n, inc)?;
    check::non_null(op, name, p, span)?;
    Ok(Vector { inc: inc32, span })
}

/// The checked arguments of one gemv, shared by the single and batched forms; `O` is
/// the device library's transpose flag.
pub(crate) struct GemvPlan<O> {
    pub(crate) trans: O,
    pub(crate) m: i32,
    pub(crate) n: i32,
    pub(crate) lda: i32,
    pub(crate) incx: i32,
    pub(crate) incy: i32,
    /// Lengths of `x` and `y` (the columns and rows of `op(A)`).
    pub(crate) lx: usize,
    pub(crate) ly: usize,
    /// Elements spanned by `a`, `x` and `y`.
    pub(crate) spans: [usize; 3],
}

#[allow(clippy::too_many_arguments)]
#[inline]
pub(crate) fn plan_gemv<O>(
    op: &'static str,
    trans: Trans,
    flag: O,
    m: usize,
    n: usize,
    lda: usize,
    incx: isize,
    incy: isize,
) -> Result<GemvPlan<O>> {
    check::leading_dim(op, "lda", lda, m)?;
    let (ly, lx) = match trans {
        Trans::N => (m, n),
        _ => (n, m),
    };
    Ok(GemvPlan {
        trans: flag,
        m: check::blas_int(op, "m", m)?,
        n: check::blas_int(op, "n", n)?,
        lda: check::blas_int(op, "lda", lda)?,
        incx: check::blas_inc(op, "incx", incx)?,
        incy: check::blas_inc(op, "incy", incy)?,
        lx,
        ly,
        spans: [
            check::matrix_span(op, "a", m, n, lda)?,
            check::vector_span(op, "x", lx, incx)?,
            check::vector_span(op, "y", ly, incy)?,
        ],
    })
}

/// The checked arguments of one gemm, shared by the single and batched forms; `O` is
/// the device library's transpose flag.
pub(crate) struct GemmPlan<O> {
    pub(crate) ta: O,
    pub(crate) tb: O,
    pub(crate) m: i32,
    pub(crate) n: i32,
    pub(crate) k: i32,
    pub(crate) lda: i32,
    pub(crate) ldb: i32,
    pub(crate) ldc: i32,
    /// Elements spanned by `a`, `b` and `c`.
    pub(crate) spans: [usize; 3],
}

#[allow(clippy::too_many_arguments)]
#[inline]
pub(crate) fn plan_gemm<O>(
    op: &'static str,
    (transa, transb): (Trans, Trans),
    (ta, tb): (O, O),
    m: usize,
    n: usize,
    k: usize,
    lda: usize,
    ldb: usize,
    ldc: usize,
) -> Result<GemmPlan<O>> {
    let (ar, ac) = transa.stored(m, k);
    let (br, bc) = transb.stored(k, n);
    check::leading_dim(op, "lda", lda, ar)?;
    check::leading_dim(op, "ldb", ldb, br)?;
    check::leading_dim(op, "ldc", ldc, m)?;
    Ok(GemmPlan {
        ta,
        tb,
        m: check::blas_int(op, "m", m)?,
        n: check::blas_int(op, "n", n)?,
        k: check::blas_int(op, "k", k)?,
        lda: check::blas_int(op, "lda", lda)?,
        ldb: check::blas_int(op, "ldb", ldb)?,
        ldc: check::blas_int(op, "ldc", ldc)?,
        spans: [
            check::matrix_span(op, "a", ar, ac, lda)?,
            check::matrix_span(op, "b", br, bc, ldb)?,
            check::matrix_span(op, "c", m, n, ldc)?,
        ],
    })
}

/// Checks three operands `(name, pointer, span)`: a non-empty one must not be null.
pub(crate) fn operands<T>(op: &'static str, operands: [(&str, *const T, usize); 3]) -> Result<()> {
    for (name, ptr, span) in operands {
        check::non_null(op, name, ptr, span)?;
    }
    Ok(())
}

/// Checks a batch given by three pointer arrays of one length against the spans.
pub(crate) fn pointer_batch<T>(
    op: &'static str,
    names: [&str; 3],
    spans: [usize; 3],
    a: &[*const T],
    b: &[*const T],
    c: &[*mut T],
) -> Result<()> {
    check::same_len(op, &names.join(", "), &[a.len(), b.len(), c.len()])?;
    for i in 0..a.len() {
        check::non_null(op, &format!("{}[{i}]", names[0]), a[i], spans[0])?;
        check::non_null(op, &format!("{}[{i}]", names[1]), b[i], spans[1])?;
        check::non_null(op, &format!("{}[{i}]", names[2]), c[i], spans[2])?;
    }
    Ok(())
}

/// Checks a batch laid out with constant strides, `(name, pointer, stride)` per operand:
/// the last entry of each (`(batch-1)·stride + span`) must be addressable and a
/// non-empty operand non-null. Nothing to check for an empty batch.
pub(crate) fn strided_batch<T>(
    op: &'static str,
    spans: [usize; 3],
    operands: [(&str, *const T, usize); 3],
    batch: usize,
) -> Result<()> {
    if batch == 0 {
        return Ok(());
    }
    for ((name, ptr, stride), span) in operands.into_iter().zip(spans) {
        (batch - 1)
            .checked_mul(stride)
            .and_then(|v| v.checked_add(span))
            .ok_or_else(|| Error::Overflow {
                op,
                what: format!(
                    "batch entry {} of `{name}` (stride {stride}, {span} elements) lies beyond usize",
                    batch - 1
                ),
            })?;
        check::non_null(op, name, ptr, span)?;
    }
    Ok(())
}
