//! Kernel implementations for [`CpuDevice`](ctensor_base::CpuDevice), one file per family.

mod blas;
mod compare;
mod faer_eig;
mod hegvx;
mod lapack;
mod linalg;
mod math;
mod memory;
mod qr;
mod random;
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
