//! Argument checks shared by every kernel, so each failure reads the same everywhere.

use ctensor_base::{Error, Result};

/// A pointer that will be dereferenced for `n > 0` elements must not be null.
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
pub fn numel(op: &'static str, shape: &[usize]) -> Result<usize> {
    shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| Error::Overflow {
            op,
            what: format!("the element count of shape {shape:?} exceeds usize"),
        })
}
