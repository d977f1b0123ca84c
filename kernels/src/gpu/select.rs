//! [`IndexSelect`] and [`IndexCopy`] on the GPU: the `index_select` and `index_copy`
//! kernels of `layout.cu`, one grid-stride thread per gathered or scattered element. The indices are device memory, so their range is the
//! caller's promise (the tensor op checks them on the host first).

use ctensor_base::{GpuDevice, Result, Scalar};

use super::launch::{args, dev, launch_1d};
use super::source::{INDEX_COPY, INDEX_SELECT};
use crate::select::{plan_index_copy, plan_index_select, IndexCopy, IndexSelect};

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
        let Some((_, nd)) = plan_index_select(outer, size, inner, idx, nidx, src, dst)? else {
            return Ok(());
        };
        let (o, s, i, k) = (outer as u64, size as u64, inner as u64, nidx as u64);
        let (x, ix, y) = (dev(src), dev(idx), dev(dst));
        // SAFETY: device memory valid for these sizes, indices in range, `dst` disjoint
        // (caller); the argument list matches the kernel's parameters.
        unsafe {
            launch_1d(
                INDEX_SELECT.get::<T>()?,
                nd,
                &mut args![&o, &s, &i, &ix, &k, &x, &y],
            )
        }
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
        let Some(ns) = plan_index_copy(outer, size, inner, idx, nidx, src, dst)? else {
            return Ok(());
        };
        let (o, s, i, k) = (outer as u64, size as u64, inner as u64, nidx as u64);
        let (x, ix, y) = (dev(src), dev(idx), dev(dst));
        // SAFETY: device memory valid for these sizes, indices distinct and in range,
        // `dst` disjoint (caller): each thread writes its own element of `dst`.
        unsafe {
            launch_1d(
                INDEX_COPY.get::<T>()?,
                ns,
                &mut args![&o, &s, &i, &ix, &k, &x, &y],
            )
        }
    }
}
