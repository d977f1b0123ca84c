//! Typed, rank-checked element access by multi-index (ABACUS's `accessor<T, N>()`).

use std::marker::PhantomData;
use std::ops::{Index, IndexMut};

use ctensor_base::{Error, Result, Scalar};

use super::buffer::{ReadGuard, WriteGuard};
use super::tensor::Tensor;

/// The first element, dimension sizes and strides of a rank-`N` view: the index
/// arithmetic both accessors share.
struct RawView<T, const N: usize> {
    ptr: *mut T,
    dims: [usize; N],
    strides: [usize; N],
}

impl<T, const N: usize> RawView<T, N> {
    /// Address of the element at `idx`, or `Error::OutOfRange`.
    fn elem(&self, idx: [usize; N]) -> Result<*mut T> {
        let mut off = 0;
        for (d, ((&i, &size), &stride)) in idx.iter().zip(&self.dims).zip(&self.strides).enumerate()
        {
            if i >= size {
                return Err(Error::OutOfRange {
                    op: "accessor",
                    what: format!("index along dimension {d}"),
                    given: i as i64,
                    valid: format!("0..{size}"),
                });
            }
            off += i * stride;
        }
        Ok(self.ptr.wrapping_add(off))
    }

    /// As [`elem`](Self::elem), panicking on a bad index like slice indexing does.
    fn elem_or_panic(&self, idx: [usize; N]) -> *mut T {
        self.elem(idx).unwrap_or_else(|e| panic!("{e}"))
    }
}

/// Read access to a rank-`N` host tensor of `T` by `[i, j, ...]`, under a shared borrow.
pub struct Accessor<'a, T, const N: usize> {
    view: RawView<T, N>,
    _guard: ReadGuard<'a>,
    _marker: PhantomData<&'a T>,
}

/// Read-write access to a rank-`N` host tensor of `T` by `[i, j, ...]`, under the
/// exclusive borrow.
pub struct AccessorMut<'a, T, const N: usize> {
    view: RawView<T, N>,
    _guard: WriteGuard<'a>,
    _marker: PhantomData<&'a mut T>,
}

impl Tensor {
    fn raw_view<T: Scalar, const N: usize>(&self, op: &'static str) -> Result<RawView<T, N>> {
        self.check_dtype::<T>(op)?;
        self.check_host(op)?;
        let dims: [usize; N] = self.dims().try_into().map_err(|_| Error::ShapeMismatch {
            op,
            expected: format!("a rank-{N} tensor"),
            got: vec![self.dims().to_vec()],
        })?;
        let strides: [usize; N] = self.strides().try_into().expect("one stride per dimension");
        Ok(RawView {
            ptr: self.typed_ptr::<T>(),
            dims,
            strides,
        })
    }

    /// Read access by `[i, j, ...]` to a rank-`N` host tensor of `T` with any strides.
    ///
    /// Errors: `DTypeMismatch`, `ShapeMismatch` when the rank is not `N`,
    /// `BorrowConflict` while the memory is borrowed mutably.
    pub fn accessor<T: Scalar, const N: usize>(&self) -> Result<Accessor<'_, T, N>> {
        let view = self.raw_view::<T, N>("accessor")?;
        let guard = self.buffer.read("accessor")?;
        Ok(Accessor {
            view,
            _guard: guard,
            _marker: PhantomData,
        })
    }

    /// Read-write access by `[i, j, ...]`; errors as [`accessor`](Self::accessor), plus
    /// `BorrowConflict` while any other borrow is alive.
    pub fn accessor_mut<T: Scalar, const N: usize>(&mut self) -> Result<AccessorMut<'_, T, N>> {
        let view = self.raw_view::<T, N>("accessor_mut")?;
        let guard = self.buffer.write("accessor_mut")?;
        Ok(AccessorMut {
            view,
            _guard: guard,
            _marker: PhantomData,
        })
    }
}

impl<T: Scalar, const N: usize> Accessor<'_, T, N> {
    /// The element at `idx`, or `Error::OutOfRange`.
    pub fn get(&self, idx: [usize; N]) -> Result<T> {
        let p = self.view.elem(idx)?;
        // SAFETY: `p` is in bounds of the view, which lies inside the buffer; the shared
        // borrow held by the guard excludes writers.
        Ok(unsafe { p.read() })
    }

    /// The dimension sizes.
    pub fn dims(&self) -> [usize; N] {
        self.view.dims
    }
}

impl<T: Scalar, const N: usize> Index<[usize; N]> for Accessor<'_, T, N> {
    type Output = T;
    /// # Panics
    /// When an index is out of range, like slice indexing; [`Accessor::get`] returns an error instead.
    fn index(&self, idx: [usize; N]) -> &T {
        let p = self.view.elem_or_panic(idx);
        // SAFETY: as in `get`; the reference lives no longer than `self` and its guard.
        unsafe { &*p }
    }
}

impl<T: Scalar, const N: usize> AccessorMut<'_, T, N> {
    /// The element at `idx`, or `Error::OutOfRange`.
    pub fn get(&self, idx: [usize; N]) -> Result<T> {
        let p = self.view.elem(idx)?;
        // SAFETY: in bounds; the exclusive borrow is held.
        Ok(unsafe { p.read() })
    }

    /// Writes `value` at `idx`, or returns `Error::OutOfRange`.
    pub fn set(&mut self, idx: [usize; N], value: T) -> Result<()> {
        let p = self.view.elem(idx)?;
        // SAFETY: in bounds; the exclusive borrow is held.
        unsafe { p.write(value) };
        Ok(())
    }

    /// The dimension sizes.
    pub fn dims(&self) -> [usize; N] {
        self.view.dims
    }
}

impl<T: Scalar, const N: usize> Index<[usize; N]> for AccessorMut<'_, T, N> {
    type Output = T;
    /// # Panics
    /// When an index is out of range; [`AccessorMut::get`] returns an error instead.
    fn index(&self, idx: [usize; N]) -> &T {
        let p = self.view.elem_or_panic(idx);
        // SAFETY: in bounds; the exclusive borrow is held; the reference borrows `self`.
        unsafe { &*p }
    }
}

impl<T: Scalar, const N: usize> IndexMut<[usize; N]> for AccessorMut<'_, T, N> {
    /// # Panics
    /// When an index is out of range; [`AccessorMut::set`] returns an error instead.
    fn index_mut(&mut self, idx: [usize; N]) -> &mut T {
        let p = self.view.elem_or_panic(idx);
        // SAFETY: in bounds; the exclusive borrow is held; views never reach one element
        // through two indices, and the reference borrows `self` mutably.
        unsafe { &mut *p }
    }
}
