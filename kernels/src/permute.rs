//! Layout kernels: permutation of axes ([`Transpose`]), gathering a strided view into a
//! dense array ([`Stride`]) and its inverse ([`Inflate`]). Each is correct in place (the
//! GPU goes through a temporary where it must).

use ctensor_base::{Device, Result, Scalar};

use crate::args as check;
use crate::strides::row_major_strides;

/// Permutation of the axes of a dense row-major array (a transpose for rank 2).
pub trait Transpose<T: Scalar>: Device {
    /// Writes the row-major array of shape `[shape[perm[0]], shape[perm[1]], ...]` whose
    /// element `[i_0, i_1, ...]` is `src[j]` with `j[perm[d]] = i_d`, conjugated when
    /// `conj`. `perm` must be a permutation of `0..shape.len()`. Cache-blocked.
    ///
    /// # Safety
    /// `src` is valid for reads and `dst` for writes of `shape.iter().product()`
    /// elements; the two are identical (in place, through a temporary) or disjoint.
    unsafe fn transpose(
        shape: &[usize],
        perm: &[usize],
        src: *const T,
        dst: *mut T,
        conj: bool,
    ) -> Result<()>;
}

/// Sub-sampling of a dense row-major array with a step per axis.
pub trait Stride<T: Scalar>: Device {
    /// Writes the row-major array of shape `[ceil(shape[d] / steps[d])]` whose element
    /// `idx` is `src[idx · steps]` (every step ≥ 1).
    ///
    /// # Safety
    /// `src` is valid for reads of `shape.iter().product()` elements and `dst` for
    /// writes of the output's; the two start at the same address (in place) or are
    /// disjoint.
    unsafe fn stride(shape: &[usize], steps: &[usize], src: *const T, dst: *mut T) -> Result<()>;
}

/// The inverse of [`Stride`]: spreads an array onto a grid with a step per axis.
pub trait Inflate<T: Scalar>: Device {
    /// Writes the row-major array of shape `dst_shape` whose element `idx · steps` is
    /// `src[idx]` and every other element zero. Each `dst_shape[d]` must be at least
    /// `(shape[d] - 1) · steps[d] + 1` (every step ≥ 1).
    ///
    /// # Safety
    /// `src` is valid for reads of `shape.iter().product()` elements and `dst` for
    /// writes of `dst_shape.iter().product()`; the two start at the same address (in
    /// place) or are disjoint.
    unsafe fn inflate(
        shape: &[usize],
        steps: &[usize],
        src: *const T,
        dst_shape: &[usize],
        dst: *mut T,
    ) -> Result<()>;
}

/// The checked layout of a [`Stride`](Stride): the output shape and, for
/// the walk over it, the row-major destination strides and the stepped source strides.
pub(crate) struct StridePlan {
    /// Elements of the input (the GPU sizes its in-place temporary by it).
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub(crate) n_in: usize,
    /// Elements of the output.
    pub(crate) n_out: usize,
    pub(crate) out_shape: Vec<usize>,
    pub(crate) dst_strides: Vec<usize>,
    pub(crate) src_strides: Vec<usize>,
}

/// Checks a stride's steps and pointers and lays it out (the same on every device).
pub(crate) fn plan_stride<T>(
    op: &'static str,
    shape: &[usize],
    steps: &[usize],
    src: *const T,
    dst: *mut T,
) -> Result<StridePlan> {
    check::steps(op, shape, steps)?;
    let n_in = check::numel(op, shape)?;
    let out_shape: Vec<usize> = shape
        .iter()
        .zip(steps)
        .map(|(&n, &s)| n.div_ceil(s))
        .collect();
    let n_out = check::numel(op, &out_shape)?;
    check::non_null(op, "src", src, n_in)?;
    check::non_null(op, "dst", dst, n_out)?;
    Ok(StridePlan {
        n_in,
        n_out,
        dst_strides: row_major_strides(&out_shape),
        src_strides: stepped_strides(shape, steps),
        out_shape,
    })
}

/// The row-major strides of `shape`, each multiplied by its axis's step: where element
/// `idx` of the coarse grid lies in the fine one.
pub(crate) fn stepped_strides(shape: &[usize], steps: &[usize]) -> Vec<usize> {
    row_major_strides(shape)
        .iter()
        .zip(steps)
        .map(|(&a, &s)| a * s)
        .collect()
}
