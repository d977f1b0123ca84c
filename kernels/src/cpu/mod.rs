//! Kernel implementations for [`CpuDevice`](ctensor_base::CpuDevice), one file per family.

mod blas;
mod blas_batched;
mod cblas;
mod compare;
mod elementwise;
mod faer_eig;
mod fft;
pub(crate) mod fftw;
mod hegvx;
mod lapack;
mod lapack_sys;
mod math;
mod matmul;
mod memory;
mod permute;
mod qr;
mod random;
mod reduce;
mod select;
mod svd;
mod trsm;

/// A shared slice over `len` elements at `p`; empty (and `p` unread) when `len == 0`.
///
/// # Safety
/// For `len > 0`, `p` is valid for reads of `len` elements for `'a` and nothing writes
/// them meanwhile.
unsafe fn slice<'a, T>(p: *const T, len: usize) -> &'a [T] {
    if len == 0 {
        &[]
    } else {
        // SAFETY: the caller's promise.
        unsafe { std::slice::from_raw_parts(p, len) }
    }
}

/// A mutable slice over `len` elements at `p`; empty (and `p` unread) when `len == 0`.
///
/// # Safety
/// For `len > 0`, `p` is valid for reads and writes of `len` elements for `'a` and
/// nothing else accesses them meanwhile.
unsafe fn slice_mut<'a, T>(p: *mut T, len: usize) -> &'a mut [T] {
    if len == 0 {
        &mut []
    } else {
        // SAFETY: the caller's promise.
        unsafe { std::slice::from_raw_parts_mut(p, len) }
    }
}

/// Runs a LAPACK routine that takes one workspace array: first the size query
/// (`lwork = -1`, a one-element workspace), then the call with the length it asked for
/// plus `tail` more elements (the OpenBLAS guard's margin; 0 where it is off). `call`
/// makes the call and returns `info`; a failing query's `info` is returned as is.
fn with_queried_work<T: ctensor_base::Scalar>(
    tail: usize,
    mut call: impl FnMut(&mut [T], i32) -> i32,
) -> i32 {
    let mut query = [T::zero()];
    let info = call(&mut query, -1);
    if info != 0 {
        return info;
    }
    // Single-precision LAPACK reports the length as a float that may round low.
    let len = (ctensor_base::Scalar::to_c64(query[0]).re * (1.0 + 1e-6))
        .ceil()
        .clamp(1.0, i32::MAX as f64) as i32;
    let mut work = crate::openblas::Padded::<T>::zeroed(len as usize, tail);
    call(work.as_mut_slice(), len)
}
