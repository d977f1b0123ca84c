//! Typed, rank-checked element access by multi-index (ABACUS's `accessor<T, N>()`).

use std::marker::PhantomData;
use std::ops::{Index, IndexMut};

use ctensor_base::{Error, Result, Scalar};

use super::buffer::{ReadGuard, WriteGuard};
use super::tensor::Tensor;

/// Read access to a rank-`N` host tensor of `T` by `[i, j, ...]`, under a shared borrow.
pub struct Accessor<'a, T, const N: usize> {
    ptr: *const T,
    dims: [usize; N],
    strides: [usize; N],
    _guard: ReadGuard<'a>,
    _marker: PhantomData<&'a T>,
}

/// Read-write access to a rank-`N` host tensor of `T` by `[i, j, ...]`, under the
/// exclusive borrow.
pub struct AccessorMut<'a, T, const N: usize> {
    ptr: *mut T,
    dims: [usize; N],
    strides: [usize; N],
    _guard: WriteGuard<'a>,
    _marker: PhantomData<&'a mut T>,
}

fn offset<const N: usize>(
    dims: &[usize; N],
    strides: &[usize; N],
    idx: [usize; N],
) -> Result<usize> {
    let mut off = 0;
    for d in 0..N {
        if idx[d] >= dims[d] {
            return Err(Error::OutOfRange {
                op: "accessor",
                what: format!("index along dimension {d}"),
                given: idx[d] as i64,
                valid: format!("0..{}", dims[d]),
            });
        }
        off += idx[d] * strides[d];
    }
    Ok(off)
}

impl Tensor {
    fn accessor_parts<T: Scalar, const N: usize>(
        &self,
        op: &'static str,
    ) -> Result<([usize; N], [usize; N])> {
        self.check_dtype::<T>(op)?;
        if self.device != ctensor_base::DeviceType::Cpu {
            return Err(Error::InvalidArgument {
                op,
                expected: "a tensor in host memory".into(),
                given: format!("a tensor on {}", self.device),
            });
        }
        let dims: [usize; N] = self.dims().try_into().map_err(|_| Error::ShapeMismatch {
            op,
            expected: format!("a rank-{N} tensor"),
            got: format!("rank {} ({})", self.ndim(), self.shape),
        })?;
        let strides: [usize; N] = self.strides().try_into().expect("one stride per dimension");
        Ok((dims, strides))
    }

    /// Read access by `[i, j, ...]` to a rank-`N` host tensor of `T` with any strides.
    ///
    /// Errors: `DTypeMismatch`, `ShapeMismatch` when the rank is not `N`,
    /// `BorrowConflict` while the memory is borrowed mutably.
    pub fn accessor<T: Scalar, const N: usize>(&self) -> Result<Accessor<'_, T, N>> {
        let (dims, strides) = self.accessor_parts::<T, N>("accessor")?;
        let guard = self.buffer.read("accessor")?;
        Ok(Accessor {
            ptr: self.typed_ptr::<T>(),
            dims,
            strides,
            _guard: guard,
            _marker: PhantomData,
        })
    }

    /// Read-write access by `[i, j, ...]`; errors as [`accessor`](Self::accessor), plus
    /// `BorrowConflict` while any other borrow is alive.
    pub fn accessor_mut<T: Scalar, const N: usize>(&mut self) -> Result<AccessorMut<'_, T, N>> {
        let (dims, strides) = self.accessor_parts::<T, N>("accessor_mut")?;
        let guard = self.buffer.write("accessor_mut")?;
        Ok(AccessorMut {
            ptr: self.typed_ptr::<T>(),
            dims,
            strides,
            _guard: guard,
            _marker: PhantomData,
        })
    }
}

impl<T: Scalar, const N: usize> Accessor<'_, T, N> {
    /// The element at `idx`, or `Error::OutOfRange`.
    pub fn get(&self, idx: [usize; N]) -> Result<T> {
        let off = offset(&self.dims, &self.strides, idx)?;
        // SAFETY: `off` is in bounds of the view, which lies inside the buffer; the shared
        // borrow held by the guard excludes writers.
        Ok(unsafe { self.ptr.add(off).read() })
    }

    /// The dimension sizes.
    pub fn dims(&self) -> [usize; N] {
        self.dims
    }
}

impl<T: Scalar, const N: usize> Index<[usize; N]> for Accessor<'_, T, N> {
    type Output = T;
    /// # Panics
    /// When an index is out of range, like slice indexing; [`Accessor::get`] returns an error instead.
    fn index(&self, idx: [usize; N]) -> &T {
        match offset(&self.dims, &self.strides, idx) {
            // SAFETY: as in `get`; the reference lives no longer than `self` and its guard.
            Ok(off) => unsafe { &*self.ptr.add(off) },
            Err(e) => panic!("{e}"),
        }
    }
}

impl<T: Scalar, const N: usize> AccessorMut<'_, T, N> {
    /// The element at `idx`, or `Error::OutOfRange`.
    pub fn get(&self, idx: [usize; N]) -> Result<T> {
        let off = offset(&self.dims, &self.strides, idx)?;
        // SAFETY: in bounds; the exclusive borrow is held.
        Ok(unsafe { self.ptr.add(off).read() })
    }

    /// Writes `value` at `idx`, or returns `Error::OutOfRange`.
    pub fn set(&mut self, idx: [usize; N], value: T) -> Result<()> {
        let off = offset(&self.dims, &self.strides, idx)?;
        // SAFETY: in bounds; the exclusive borrow is held.
        unsafe { self.ptr.add(off).write(value) };
        Ok(())
    }

    /// The dimension sizes.
    pub fn dims(&self) -> [usize; N] {
        self.dims
    }
}

impl<T: Scalar, const N: usize> Index<[usize; N]> for AccessorMut<'_, T, N> {
    type Output = T;
    /// # Panics
    /// When an index is out of range; [`AccessorMut::get`] returns an error instead.
    fn index(&self, idx: [usize; N]) -> &T {
        match offset(&self.dims, &self.strides, idx) {
            // SAFETY: in bounds; the exclusive borrow is held; the reference borrows `self`.
            Ok(off) => unsafe { &*self.ptr.add(off) },
            Err(e) => panic!("{e}"),
        }
    }
}

impl<T: Scalar, const N: usize> IndexMut<[usize; N]> for AccessorMut<'_, T, N> {
    /// # Panics
    /// When an index is out of range; [`AccessorMut::set`] returns an error instead.
    fn index_mut(&mut self, idx: [usize; N]) -> &mut T {
        match offset(&self.dims, &self.strides, idx) {
            // SAFETY: in bounds; the exclusive borrow is held; views never reach one
            // element through two indices, and the reference borrows `self` mutably.
            Ok(off) => unsafe { &mut *self.ptr.add(off) },
            Err(e) => panic!("{e}"),
        }
    }
}
