//! The [`Tensor`]: a runtime-typed, strided view of a shared buffer. This file holds the
//! type, its constructors, its metadata and raw access; views, copies and values have
//! their own files.

use std::fmt;
use std::sync::Arc;

use ctensor_base::{DataType, DeviceType, Error, Result, Scalar};
use ctensor_kernels::memory::SetMemory;
use ctensor_kernels::strides::{is_col_major, is_row_major};

use super::buffer::{ReadGuard, TensorBuffer, WriteGuard};
use super::dispatch::dispatch;
use super::shape::{Order, TensorShape};

/// An n-dimensional array whose element type ([`DataType`]) and device ([`DeviceType`])
/// are chosen at run time.
///
/// A tensor is a view: a shape, strides and an offset (in elements) into a
/// [`TensorBuffer`] shared through `Arc`. Shallow copies ([`copy_from`](Tensor::copy_from),
/// [`share`](Tensor::share)) and views ([`narrow`](Tensor::narrow),
/// [`index`](Tensor::index), [`permute`](Tensor::permute), ...) share the buffer;
/// [`clone`](Clone::clone) is a deep copy. Row-major (C order) is the default layout;
/// column-major tensors and arbitrary strided views are first-class.
///
/// Reads and writes of values take a run-time borrow of the buffer (many readers or one
/// writer), so sharing memory never makes the safe API unsound: a conflicting access is
/// [`Error::BorrowConflict`].
pub struct Tensor {
    pub(crate) dtype: DataType,
    pub(crate) device: DeviceType,
    pub(crate) shape: TensorShape,
    pub(crate) strides: Vec<usize>,
    pub(crate) offset: usize,
    pub(crate) buffer: Arc<TensorBuffer>,
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tensor")
            .field("dtype", &self.dtype)
            .field("device", &self.device)
            .field("shape", &self.shape.dims())
            .field("strides", &self.strides)
            .field("offset", &self.offset)
            .field("buffer", &self.buffer)
            .finish()
    }
}

// ---- creation ---------------------------------------------------------------------

/// What fresh memory a constructor asks for.
#[derive(Clone, Copy)]
enum Memory {
    Zeroed,
    Uninit,
    Pinned,
}

impl Tensor {
    /// A zero-filled tensor in the given memory order.
    pub fn new_in_order(
        dtype: DataType,
        device: DeviceType,
        shape: &[usize],
        order: Order,
    ) -> Result<Tensor> {
        Tensor::allocated(dtype, device, shape, order, Memory::Zeroed)
    }

    /// A zero-filled tensor in pinned (page-locked) host memory, in the given order:
    /// host memory like any other, which the GPU's copy engine reads and writes
    /// directly, so [`to_device_async`](Self::to_device_async) and
    /// [`sync_async`](Self::sync_async) between it and the GPU run while the host goes
    /// on. It comes from a caching pool of its own
    /// ([`gpu::pinned_memory_stats`](ctensor_base::gpu::pinned_memory_stats)).
    ///
    /// Errors: `DeviceUnavailable` without a usable GPU (pinning is the CUDA driver's
    /// service); allocation failure.
    pub fn pinned(dtype: DataType, shape: &[usize], order: Order) -> Result<Tensor> {
        Tensor::allocated(dtype, DeviceType::Cpu, shape, order, Memory::Pinned)
    }

    /// A tensor in the given order whose values are unspecified, for results that a
    /// kernel is about to overwrite whole: the pages are first touched by that kernel's
    /// threads instead of a single-threaded zero fill.
    ///
    /// # Safety
    /// Every element is written before the tensor, or any view or shallow copy of it,
    /// is read or returned to a caller; dropping it unread needs nothing.
    pub(crate) unsafe fn uninit_in_order(
        dtype: DataType,
        device: DeviceType,
        shape: &[usize],
        order: Order,
    ) -> Result<Tensor> {
        Tensor::allocated(dtype, device, shape, order, Memory::Uninit)
    }

    /// [`uninit_in_order`](Self::uninit_in_order) with `tail` zeroed elements of the same
    /// buffer after the tensor's own: for operands of host LAPACK kernels, whose
    /// over-read on some OpenBLAS builds must stay in mapped memory
    /// (`ctensor_kernels::openblas::with_mapped_tails`).
    ///
    /// # Safety
    /// As for [`uninit_in_order`](Self::uninit_in_order).
    pub(crate) unsafe fn uninit_with_tail(
        dtype: DataType,
        device: DeviceType,
        shape: &[usize],
        order: Order,
        tail: usize,
    ) -> Result<Tensor> {
        let numel = TensorShape::new(shape).checked_numel("Tensor::new")?;
        let total = numel.checked_add(tail).ok_or_else(|| Error::Overflow {
            op: "Tensor::new",
            what: format!("{numel} elements and a tail of {tail} exceed usize"),
        })?;
        // The caller writes the first `numel` elements before reading them (this
        // function's contract); the tail is zeroed below.
        let mut t = Tensor::allocated(dtype, device, &[total], order, Memory::Uninit)?;
        if tail > 0 {
            t.narrow(0, numel, tail)?.fill(0.0)?;
        }
        t.shape = TensorShape::new(shape);
        t.strides = order.strides(shape);
        Ok(t)
    }

    /// [`uninit_in_order`](Self::uninit_in_order), row-major.
    ///
    /// # Safety
    /// As for [`uninit_in_order`](Self::uninit_in_order).
    pub(crate) unsafe fn uninit(
        dtype: DataType,
        device: DeviceType,
        shape: &[usize],
    ) -> Result<Tensor> {
        Tensor::allocated(dtype, device, shape, Order::RowMajor, Memory::Uninit)
    }

    /// The constructors' body: zero-filled memory, pinned zero-filled host memory, or
    /// (for the `unsafe` `uninit` constructors only) memory with unspecified contents.
    fn allocated(
        dtype: DataType,
        device: DeviceType,
        shape: &[usize],
        order: Order,
        memory: Memory,
    ) -> Result<Tensor> {
        let shape = TensorShape::new(shape);
        let numel = shape.checked_numel("Tensor::new")?;
        let bytes = numel
            .checked_mul(dtype.size_of())
            .ok_or_else(|| Error::Overflow {
                op: "Tensor::new",
                what: format!("{numel} elements of {dtype} exceed usize bytes"),
            })?;
        let buffer = match memory {
            Memory::Zeroed => TensorBuffer::allocate(device, bytes)?,
            Memory::Pinned => TensorBuffer::allocate_pinned(bytes)?,
            // SAFETY: only the `unsafe` constructors pass `Uninit`, and their callers
            // write every element before anything reads it.
            Memory::Uninit => unsafe { TensorBuffer::allocate_uninit(device, bytes)? },
        };
        let strides = order.strides(shape.dims());
        Ok(Tensor {
            dtype,
            device,
            shape,
            strides,
            offset: 0,
            buffer,
        })
    }

    /// A zero-filled, row-major tensor (ABACUS `Tensor(dtype, device, shape)`).
    pub fn new(dtype: DataType, device: DeviceType, shape: &[usize]) -> Result<Tensor> {
        Tensor::new_in_order(dtype, device, shape, Order::RowMajor)
    }

    /// A row-major tensor whose values are about to be overwritten. Safe Rust cannot read
    /// uninitialised memory, so this is [`new`](Tensor::new): zeroing fresh pages costs
    /// the operating system, not us.
    pub fn empty(dtype: DataType, device: DeviceType, shape: &[usize]) -> Result<Tensor> {
        Tensor::new(dtype, device, shape)
    }

    /// A tensor of zeros (the same as [`new`](Tensor::new)).
    pub fn zeros(dtype: DataType, device: DeviceType, shape: &[usize]) -> Result<Tensor> {
        Tensor::new(dtype, device, shape)
    }

    /// A tensor of ones.
    pub fn ones(dtype: DataType, device: DeviceType, shape: &[usize]) -> Result<Tensor> {
        let mut t = Tensor::new(dtype, device, shape)?;
        dispatch!(dtype, device, T, D => t.fill_with::<T, D>(T::one()))?;
        Ok(t)
    }

    /// A tensor with every element equal to `value`; its data type is `T`'s.
    pub fn full<T: Scalar>(value: T, device: DeviceType, shape: &[usize]) -> Result<Tensor> {
        let mut t = Tensor::new(T::DTYPE, device, shape)?;
        t.set_value(value)?;
        Ok(t)
    }

    /// A rank-0 tensor holding `value`, on the CPU.
    pub fn scalar<T: Scalar>(value: T) -> Result<Tensor> {
        Tensor::full(value, DeviceType::Cpu, &[])
    }

    /// A row-major CPU tensor with a copy of `data`; `shape` must have `data.len()` elements.
    pub fn from_slice<T: Scalar>(data: &[T], shape: &[usize]) -> Result<Tensor> {
        let t = Tensor::new(T::DTYPE, DeviceType::Cpu, shape)?;
        if t.numel() != data.len() {
            return Err(Error::ShapeMismatch {
                op: "Tensor::from_slice",
                expected: format!(
                    "a shape of {} elements (the slice length), not of {} elements",
                    data.len(),
                    t.numel()
                ),
                got: vec![shape.to_vec()],
            });
        }
        if !data.is_empty() {
            // SAFETY: `t` is fresh, dense, of dtype T and holds exactly data.len() elements.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), t.typed_ptr::<T>(), data.len()) };
        }
        Ok(t)
    }

    /// A host vector of `n` elements, element `k` being `f(k)`: the memory is ctensor's
    /// checked allocation, made before any element is computed, so a length that cannot
    /// be held is `Error::Overflow` or an allocation error, never an abort.
    pub(crate) fn from_fn<T: Scalar>(n: usize, f: impl Fn(usize) -> T) -> Result<Tensor> {
        // SAFETY: every element is written below before the tensor is returned.
        let t = unsafe { Tensor::uninit(T::DTYPE, DeviceType::Cpu, &[n])? };
        let p = t.typed_ptr::<T>();
        for k in 0..n {
            // SAFETY: `t` is fresh, dense and holds `n` elements of T.
            unsafe { p.add(k).write(f(k)) };
        }
        Ok(t)
    }

    /// A row-major CPU tensor holding `data`. The values are copied into 64-byte-aligned
    /// memory, so every tensor's memory has the same alignment for the kernels.
    pub fn from_vec<T: Scalar>(data: Vec<T>, shape: &[usize]) -> Result<Tensor> {
        Tensor::from_slice(&data, shape)
    }

    /// The `n x n` identity matrix.
    pub fn eye(dtype: DataType, device: DeviceType, n: usize) -> Result<Tensor> {
        let t = Tensor::new(dtype, device, &[n, n])?;
        if n > 0 {
            // The diagonal is a rank-1 view with stride n + 1.
            let mut diag = t.share();
            diag.shape = TensorShape::new(&[n]);
            diag.strides = vec![n + 1];
            dispatch!(dtype, device, T, D => diag.fill_with::<T, D>(T::one()))?;
        }
        Ok(t)
    }

    /// `start, start + step, ...` up to but excluding `end`, as NumPy's `arange`: the count
    /// is `ceil((end - start) / step)` (0 if negative) and element `i` is
    /// `start + i * step` computed in `f64`, then cast to `dtype`.
    ///
    /// Errors: a zero or non-finite `step`, non-finite bounds.
    pub fn arange(
        dtype: DataType,
        device: DeviceType,
        start: f64,
        end: f64,
        step: f64,
    ) -> Result<Tensor> {
        if step == 0.0 || !step.is_finite() || !start.is_finite() || !end.is_finite() {
            return Err(Error::InvalidArgument {
                op: "Tensor::arange",
                expected: "finite start and end and a finite, non-zero step".into(),
                given: format!("start {start}, end {end}, step {step}"),
            });
        }
        let count = ((end - start) / step).ceil().max(0.0);
        if count >= usize::MAX as f64 {
            return Err(Error::Overflow {
                op: "Tensor::arange",
                what: format!("{count} elements"),
            });
        }
        let n = count as usize;
        let host = Tensor::from_fn(n, |i| start + i as f64 * step)?.cast(dtype)?;
        if device == DeviceType::Cpu {
            Ok(host)
        } else {
            host.to_device(device)
        }
    }

    /// Fills this view with `value` through the device's `SetMemory` kernel; the caller has
    /// checked that `T` is the dtype and `D` the device.
    pub(crate) fn fill_with<T: Scalar, D: SetMemory<T>>(&mut self, value: T) -> Result<()> {
        let _w = self.buffer.write("fill")?;
        // SAFETY: the view lies inside the buffer (an invariant of every constructor and
        // view), T is its dtype, and the write guard excludes every other access.
        unsafe {
            D::set_strided(
                self.typed_ptr::<T>(),
                self.shape.dims(),
                &self.strides,
                value,
            )
        }
    }
}

// ---- metadata ---------------------------------------------------------------------

impl Tensor {
    /// The element type.
    pub fn dtype(&self) -> DataType {
        self.dtype
    }

    /// The device the memory is on.
    pub fn device(&self) -> DeviceType {
        self.device
    }

    /// The shape.
    pub fn shape(&self) -> &TensorShape {
        &self.shape
    }

    /// The dimension sizes.
    pub fn dims(&self) -> &[usize] {
        self.shape.dims()
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape.ndim()
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        self.shape.numel()
    }

    /// Strides in elements, one per dimension.
    pub fn strides(&self) -> &[usize] {
        &self.strides
    }

    /// Offset of the first element from the start of the buffer, in elements.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The shared buffer.
    pub fn buffer(&self) -> &Arc<TensorBuffer> {
        &self.buffer
    }

    /// `true` when ctensor allocated the memory (not a [`TensorMap`](crate::TensorMap)).
    pub fn owns_memory(&self) -> bool {
        self.buffer.owns_memory()
    }

    /// `true` when `self` and `other` may touch the same memory: they view the same
    /// buffer, or two buffers over one memory (two [`TensorMap`](crate::TensorMap)s, a
    /// DLPack or NumPy import of an array ctensor already holds) whose elements' address
    /// ranges overlap on one device (NumPy's `may_share_memory`). Every op that writes
    /// into an existing tensor asks this, and reads such a source through a copy first.
    #[doc(alias = "may_share_memory")]
    pub fn shares_memory_with(&self, other: &Tensor) -> bool {
        if Arc::ptr_eq(&self.buffer, &other.buffer) {
            return true;
        }
        if self.device != other.device {
            return false;
        }
        match (self.byte_range(), other.byte_range()) {
            (Some(a), Some(b)) => a.start < b.end && b.start < a.end,
            _ => false,
        }
    }

    /// The addresses from the first element's to one past the last element's (GPU
    /// addresses on the GPU); `None` when there are no elements.
    fn byte_range(&self) -> Option<std::ops::Range<usize>> {
        if self.numel() == 0 {
            return None;
        }
        // Strides are non-negative, so the first element is the lowest address.
        let last: usize = self
            .dims()
            .iter()
            .zip(&self.strides)
            .map(|(&d, &s)| (d - 1) * s)
            .sum();
        let start = self.elem_ptr() as usize;
        Some(start..start + (last + 1) * self.dtype.size_of())
    }

    fn is_dense_with(&self, order: Order) -> bool {
        if self.numel() == 0 {
            return true;
        }
        match order {
            Order::RowMajor => is_row_major(self.dims(), &self.strides),
            Order::ColMajor => is_col_major(self.dims(), &self.strides),
        }
    }

    /// `true` when the elements are dense in row-major order.
    pub fn is_contiguous(&self) -> bool {
        self.is_dense_with(Order::RowMajor)
    }

    /// `true` when the elements are dense in column-major order.
    pub fn is_fortran_contiguous(&self) -> bool {
        self.is_dense_with(Order::ColMajor)
    }

    /// The memory order of a dense tensor: `Some(RowMajor)` when row-major (also for
    /// tensors that are both), `Some(ColMajor)` when only column-major, `None` otherwise.
    pub fn dense_order(&self) -> Option<Order> {
        if self.is_contiguous() {
            Some(Order::RowMajor)
        } else if self.is_fortran_contiguous() {
            Some(Order::ColMajor)
        } else {
            None
        }
    }
}

// ---- raw and borrowed access ----------------------------------------------------------

impl Tensor {
    /// Address of the first element (for kernels that take the dtype from elsewhere).
    pub(crate) fn elem_ptr(&self) -> *mut u8 {
        self.buffer
            .as_ptr()
            .wrapping_add(self.offset * self.dtype.size_of())
    }

    /// Address of the first element as `*mut T`, unchecked: callers dispatch on the dtype.
    pub(crate) fn typed_ptr<T>(&self) -> *mut T {
        self.elem_ptr().cast::<T>()
    }

    /// The `NotContiguous` error for this tensor's layout.
    pub(crate) fn not_contiguous(&self, op: &'static str) -> Error {
        Error::NotContiguous {
            op,
            shape: self.dims().to_vec(),
            strides: self.strides.clone(),
        }
    }

    pub(crate) fn check_dtype<T: Scalar>(&self, op: &'static str) -> Result<()> {
        if T::DTYPE != self.dtype {
            return Err(Error::DTypeMismatch {
                op,
                expected: self.dtype,
                got: T::DTYPE,
            });
        }
        Ok(())
    }

    pub(crate) fn check_host(&self, op: &'static str) -> Result<()> {
        if self.device != DeviceType::Cpu {
            return Err(Error::DeviceMismatch {
                op,
                expected: DeviceType::Cpu,
                got: self.device,
            });
        }
        Ok(())
    }

    /// Address of the first element, checked against `T`. Dereferencing it is `unsafe`:
    /// the caller must respect the tensor's strides and the buffer's borrow state.
    pub fn as_ptr<T: Scalar>(&self) -> Result<*const T> {
        self.check_dtype::<T>("as_ptr")?;
        Ok(self.typed_ptr::<T>())
    }

    /// Mutable address of the first element, checked against `T`; see [`as_ptr`](Self::as_ptr).
    pub fn as_mut_ptr<T: Scalar>(&mut self) -> Result<*mut T> {
        self.check_dtype::<T>("as_mut_ptr")?;
        Ok(self.typed_ptr::<T>())
    }

    /// Untyped address of the first element, for FFI.
    pub fn data_ptr(&self) -> *mut std::ffi::c_void {
        self.elem_ptr().cast()
    }

    fn dense_len<T: Scalar>(&self, op: &'static str) -> Result<usize> {
        self.check_host(op)?;
        self.check_dtype::<T>(op)?;
        if self.dense_order().is_none() {
            return Err(self.not_contiguous(op));
        }
        Ok(self.numel())
    }

    /// The elements of a dense host tensor, in memory order (row-major for a
    /// [`is_contiguous`](Self::is_contiguous) tensor, column-major for a
    /// [`is_fortran_contiguous`](Self::is_fortran_contiguous) one), held under a shared
    /// borrow until the guard is dropped.
    ///
    /// Errors: `DTypeMismatch` when `T` is not the dtype, `NotContiguous` for a strided
    /// view (use [`to_vec`](Self::to_vec) or [`contiguous`](Self::contiguous)),
    /// `BorrowConflict` while the memory is borrowed mutably, `InvalidArgument` off the host.
    pub fn data<T: Scalar>(&self) -> Result<DataRef<'_, T>> {
        let n = self.dense_len::<T>("data")?;
        let guard = self.buffer.read("data")?;
        let slice = if n == 0 {
            &[][..]
        } else {
            // SAFETY: the dense view covers n elements of type T inside the buffer; the
            // shared borrow excludes writers for the guard's lifetime.
            unsafe { std::slice::from_raw_parts(self.typed_ptr::<T>(), n) }
        };
        Ok(DataRef {
            slice,
            _guard: guard,
        })
    }

    /// Mutable access to the elements of a dense host tensor, in memory order, held under
    /// the exclusive borrow until the guard is dropped. Errors as [`data`](Self::data).
    pub fn data_mut<T: Scalar>(&mut self) -> Result<DataMut<'_, T>> {
        let n = self.dense_len::<T>("data_mut")?;
        let guard = self.buffer.write("data_mut")?;
        let slice = if n == 0 {
            &mut [][..]
        } else {
            // SAFETY: as in `data`; the exclusive borrow excludes every other access.
            unsafe { std::slice::from_raw_parts_mut(self.typed_ptr::<T>(), n) }
        };
        Ok(DataMut {
            slice,
            _guard: guard,
        })
    }
}

/// Shared access to a dense tensor's elements; see [`Tensor::data`].
pub struct DataRef<'a, T> {
    slice: &'a [T],
    _guard: ReadGuard<'a>,
}

impl<T> std::ops::Deref for DataRef<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.slice
    }
}

/// Exclusive access to a dense tensor's elements; see [`Tensor::data_mut`].
pub struct DataMut<'a, T> {
    slice: &'a mut [T],
    _guard: WriteGuard<'a>,
}

impl<T> std::ops::Deref for DataMut<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.slice
    }
}

impl<T> std::ops::DerefMut for DataMut<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.slice
    }
}
