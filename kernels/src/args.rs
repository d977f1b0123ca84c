//! Argument checks shared by every kernel, so each failure reads the same everywhere.

use ctensor_base::{Error, Result};

/// A pointer that will be dereferenced for `n > 0` elements must not be null.
#[inline]
pub fn non_null<P>(op: &'static str, name: &str, ptr: *const P, n: usize) -> Result<()> {
    if n > 0 && ptr.is_null() {
        return Err(Error::InvalidArgument {
            op,
            expected: format!("a non-null pointer for `{name}` ({n} elements)"),
            given: "a null pointer".to_string(),
        });
    }
    Ok(())
}

/// A strides slice must have one entry per dimension.
#[inline]
pub fn strides_rank(
    op: &'static str,
    name: &str,
    strides: &[usize],
    shape: &[usize],
) -> Result<()> {
    if strides.len() != shape.len() {
        return Err(Error::InvalidArgument {
            op,
            expected: format!(
                "{} strides for `{name}` (one per dimension of {shape:?})",
                shape.len()
            ),
            given: format!("{} strides {strides:?}", strides.len()),
        });
    }
    Ok(())
}

/// Number of elements of `shape`, or `Error::Overflow`.
#[inline]
pub fn numel(op: &'static str, shape: &[usize]) -> Result<usize> {
    if shape.contains(&0) {
        // Empty whatever the other sizes are: [2⁴⁰, 2⁴⁰, 0] holds nothing (as NumPy).
        return Ok(0);
    }
    shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| Error::Overflow {
            op,
            what: format!("the element count of shape {shape:?} exceeds usize"),
        })
}

/// A size handed to an LP64 BLAS/LAPACK must fit in its 32-bit integer.
#[inline(always)]
pub fn blas_int(op: &'static str, name: &str, v: usize) -> Result<i32> {
    match i32::try_from(v) {
        Ok(v) => Ok(v),
        Err(_) => Err(blas_int_overflow(op, name, v)),
    }
}

/// [`blas_int`]'s error, out of line so the check inlines as one comparison.
#[cold]
#[inline(never)]
fn blas_int_overflow(op: &'static str, name: &str, v: usize) -> Error {
    Error::Overflow {
        op,
        what: format!("`{name}` = {v} exceeds the BLAS/LAPACK integer range (i32::MAX)"),
    }
}

/// A BLAS increment: non-zero and within the 32-bit BLAS integer range.
#[inline]
pub fn blas_inc(op: &'static str, name: &str, inc: isize) -> Result<i32> {
    if inc == 0 {
        return Err(Error::InvalidArgument {
            op,
            expected: format!("a non-zero increment `{name}`"),
            given: "0".to_string(),
        });
    }
    i32::try_from(inc).map_err(|_| Error::Overflow {
        op,
        what: format!("`{name}` = {inc} exceeds the BLAS integer range"),
    })
}

/// Elements spanned by a strided vector of `n` entries: `1 + (n-1)|inc|` (0 when `n == 0`).
#[inline]
pub fn vector_span(op: &'static str, name: &str, n: usize, inc: isize) -> Result<usize> {
    if n == 0 {
        return Ok(0);
    }
    (n - 1)
        .checked_mul(inc.unsigned_abs())
        .and_then(|v| v.checked_add(1))
        .ok_or_else(|| Error::Overflow {
            op,
            what: format!(
                "vector `{name}` of {n} elements with increment {inc} spans more than usize"
            ),
        })
}

/// A leading dimension must be at least `max(1, rows)`.
#[inline]
pub fn leading_dim(op: &'static str, name: &str, ld: usize, rows: usize) -> Result<()> {
    if ld < rows.max(1) {
        return Err(Error::InvalidArgument {
            op,
            expected: format!("`{name}` >= max(1, {rows}) (the rows of the stored matrix)"),
            given: format!("`{name}` = {ld}"),
        });
    }
    Ok(())
}

/// Elements spanned by a column-major `rows × cols` matrix with leading dimension `ld`:
/// `ld·(cols-1) + rows`, or 0 for an empty matrix.
#[inline]
pub fn matrix_span(
    op: &'static str,
    name: &str,
    rows: usize,
    cols: usize,
    ld: usize,
) -> Result<usize> {
    if rows == 0 || cols == 0 {
        return Ok(0);
    }
    ld.checked_mul(cols - 1)
        .and_then(|v| v.checked_add(rows))
        .ok_or_else(|| Error::Overflow {
            op,
            what: format!("matrix `{name}` ({rows} × {cols}, ld {ld}) spans more than usize"),
        })
}

/// Two slices that must have the same length (the arrays of a pointer batch).
#[inline]
pub fn same_len(op: &'static str, names: &str, lens: &[usize]) -> Result<()> {
    if lens.windows(2).any(|w| w[0] != w[1]) {
        return Err(Error::ShapeMismatch {
            op,
            expected: format!("{names} of the same length (the lengths given)"),
            got: vec![lens.to_vec()],
        });
    }
    Ok(())
}

/// `perm` must be a permutation of `0..rank`.
pub fn perm(op: &'static str, perm: &[usize], rank: usize) -> Result<()> {
    let mut seen = vec![false; rank];
    let ok = perm.len() == rank
        && perm
            .iter()
            .all(|&p| p < rank && !std::mem::replace(&mut seen[p], true));
    if !ok {
        return Err(Error::InvalidArgument {
            op,
            expected: format!("a permutation of 0..{rank}"),
            given: format!("{perm:?}"),
        });
    }
    Ok(())
}

/// Steps must be one per axis and at least 1.
pub fn steps(op: &'static str, shape: &[usize], steps: &[usize]) -> Result<()> {
    strides_rank(op, "steps", steps, shape)?;
    if let Some(d) = steps.iter().position(|&s| s == 0) {
        return Err(Error::InvalidArgument {
            op,
            expected: "a step of at least 1 along every axis".into(),
            given: format!("steps {steps:?} (axis {d} is 0)"),
        });
    }
    Ok(())
}

/// `dst_shape` has one length per axis of `shape`, each at least
/// `(shape[d] - 1) · steps[d] + 1` (the extent of an inflated axis).
pub fn inflate_shape(
    op: &'static str,
    shape: &[usize],
    steps: &[usize],
    dst_shape: &[usize],
) -> Result<()> {
    strides_rank(op, "dst_shape", dst_shape, shape)?;
    for d in 0..shape.len() {
        let need = if shape[d] == 0 {
            0
        } else {
            (shape[d] - 1) * steps[d] + 1
        };
        if dst_shape[d] < need {
            return Err(Error::ShapeMismatch {
                op,
                expected: format!(
                    "a dst_shape with dst_shape[{d}] >= (shape[{d}] - 1) · steps[{d}] + 1 = {need} \
                     for shape {shape:?} and steps {steps:?}"
                ),
                got: vec![dst_shape.to_vec()],
            });
        }
    }
    Ok(())
}

/// The checks of [`ArgExtreme`](crate::reduce::ArgExtreme): an order and a non-empty
/// row; returns the operation's name.
pub fn arg_extreme(
    max: bool,
    dtype: ctensor_base::DataType,
    rows: usize,
    inner: usize,
) -> Result<&'static str> {
    let op = if max { "argmax" } else { "argmin" };
    extreme_named(op, dtype, rows, inner)
}

/// The checks of [`ReduceExtreme`](crate::reduce::ReduceExtreme), for `op`.
fn extreme_named(
    op: &'static str,
    dtype: ctensor_base::DataType,
    rows: usize,
    inner: usize,
) -> Result<&'static str> {
    if dtype.is_complex() {
        return Err(Error::UnsupportedDType {
            op,
            dtype,
            supported: "f32, f64, i32, i64, f16, bf16 (complex numbers have no order)",
        });
    }
    if inner == 0 && rows > 0 {
        return Err(Error::InvalidArgument {
            op,
            expected: format!("at least one element to take the {op} of"),
            given: "an empty axis".into(),
        });
    }
    Ok(op)
}

/// The arguments of a row max/min: an ordered element type and non-empty rows. Returns
/// the operation's name (`max` or `min`).
pub fn extreme(
    max: bool,
    dtype: ctensor_base::DataType,
    rows: usize,
    inner: usize,
) -> Result<&'static str> {
    extreme_named(if max { "max" } else { "min" }, dtype, rows, inner)
}
