//! Memory kernels: set, copy (sync) within and between devices, strided copy, cast.
//!
//! Each is a trait over the element type, implemented by the device marker that owns the
//! destination; copies between devices name the source device as a second parameter
//! (ABACUS's `synchronize_memory<T, Device_out, Device_in>`).

use ctensor_base::{Device, Result, Scalar};

/// Fills memory with one value.
pub trait SetMemory<T: Scalar>: Device {
    /// `dst[i] = value` for `i < n`.
    ///
    /// # Safety
    /// `dst` is valid for writes of `n` elements on this device (it may be null or
    /// dangling only when `n == 0`), and nothing else reads or writes them meanwhile.
    unsafe fn set(dst: *mut T, value: T, n: usize) -> Result<()>;

    /// Sets every element of the strided view `dst[sum_k i_k * strides[k]]`, `i_k < shape[k]`.
    ///
    /// # Safety
    /// `dst` is valid for writes at every offset the view reaches, on this device, and
    /// nothing else reads or writes them meanwhile.
    unsafe fn set_strided(dst: *mut T, shape: &[usize], strides: &[usize], value: T) -> Result<()>;
}

/// Copies a contiguous block from device `Src` to this device.
pub trait SyncMemory<T: Scalar, Src: Device>: Device {
    /// `dst[i] = src[i]` for `i < n`. The two ranges may overlap (memmove semantics).
    ///
    /// # Safety
    /// `dst` is valid for writes of `n` elements on this device, `src` for reads of `n`
    /// elements on `Src` (either may be null or dangling only when `n == 0`).
    unsafe fn sync(dst: *mut T, src: *const T, n: usize) -> Result<()>;
}

/// Copies a strided n-dimensional view from device `Src` into a strided view on this device.
pub trait SyncMemoryStrided<T: Scalar, Src: Device>: Device {
    /// `dst[i · dst_strides] = src[i · src_strides]` for every multi-index `i < shape`
    /// (strides in elements).
    ///
    /// # Safety
    /// Both views are valid at every offset they reach (`dst` for writes on this device,
    /// `src` for reads on `Src`); the two views do not overlap, and the destination
    /// view does not reach one element through two multi-indices.
    unsafe fn sync_strided(
        dst: *mut T,
        dst_strides: &[usize],
        src: *const T,
        src_strides: &[usize],
        shape: &[usize],
    ) -> Result<()>;
}

/// Converts elements from `Src` to `Dst` on one device, by the rules of
/// [`ctensor_base::cast`].
pub trait CastMemory<Dst: Scalar, Src: Scalar>: Device {
    /// `dst[i] = Dst::cast_from(src[i])` for `i < n`.
    ///
    /// # Safety
    /// `dst` is valid for writes of `n` elements and `src` for reads of `n` elements, both
    /// on this device; the two ranges do not overlap.
    unsafe fn cast(dst: *mut Dst, src: *const Src, n: usize) -> Result<()>;
}
