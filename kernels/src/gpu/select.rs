//! [`IndexSelect`] and [`IndexCopy`] on the GPU: the `index_select` and `index_copy`
//! kernels of `layout.cu` (one template), one grid-stride thread per gathered or
//! scattered element. The indices are device memory, so their range (and, scattering,
//! their distinctness) is the caller's promise: the tensor ops check them on the host.

use ctensor_base::{GpuDevice, Result, Scalar};

use super::launch::{args, dev, launch_1d};
use super::source::{Kernel, INDEX_COPY, INDEX_SELECT};
use crate::select::{plan_rows, IndexCopy, IndexSelect};

/// Launches `kernel` (gather or scatter) over the `n` elements of the small array.
///
/// # Safety
/// As for [`IndexSelect::index_select`] / [`IndexCopy::index_copy`].
#[allow(clippy::too_many_arguments)]
unsafe fn launch_rows<T: Scalar>(
    kernel: &Kernel,
    n: usize,
    outer: usize,
    size: usize,
    inner: usize,
    idx: *const i64,
    nidx: usize,
    src: *const T,
    dst: *mut T,
) -> Result<()> {
    let (o, s, i, k) = (outer as u64, size as u64, inner as u64, nidx as u64);
    let (x, ix, y) = (dev(src), dev(idx), dev(dst));
    // SAFETY: device memory valid for these sizes, indices as promised, `dst` disjoint
    // (caller); the argument list matches both kernels' parameters.
    unsafe {
        launch_1d(
            kernel.get::<T>()?,
            n,
            &mut args![&o, &s, &i, &ix, &k, &x, &y],
        )
    }
}

impl<T: Scalar> IndexSelect<T> for GpuDevice {
    unsafe fn index_select(
        outer: usize,
        size: usize,
        inner: usize,
        idx: *const i64,
        nidx: usize,
        src: *const T,
        dst: *mut T,
    ) -> Result<()> {
        let Some(nd) = plan_rows(false, outer, size, inner, idx, nidx, src, dst)? else {
            return Ok(());
        };
        // SAFETY: forwarded contract; `nd` elements of `dst` are written.
        unsafe { launch_rows(&INDEX_SELECT, nd, outer, size, inner, idx, nidx, src, dst) }
    }
}

impl<T: Scalar> IndexCopy<T> for GpuDevice {
    unsafe fn index_copy(
        outer: usize,
        size: usize,
        inner: usize,
        idx: *const i64,
        nidx: usize,
        src: *const T,
        dst: *mut T,
    ) -> Result<()> {
        let Some(ns) = plan_rows(true, outer, size, inner, idx, nidx, src, dst)? else {
            return Ok(());
        };
        // SAFETY: forwarded contract; each of the `ns` source elements is written once
        // (distinct indices).
        unsafe { launch_rows(&INDEX_COPY, ns, outer, size, inner, idx, nidx, src, dst) }
    }
}
