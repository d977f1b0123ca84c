//! Tensor handles: create, map, free, copies, views, queries.
//!
//! A `ct_tensor*` is an opaque handle owned by the caller until `ct_tensor_free`. Every
//! handle is checked against the set of live handles, so a freed or foreign pointer is
//! `CT_ERR_INVALID_HANDLE` rather than memory corruption (unless its address has been
//! reused by a newer handle). Data types, devices and orders are passed as `int32_t`
//! codes (the `ct_dtype`, `ct_device` and `ct_order` constants), and checked.

use std::ffi::c_void;

use ctensor_aten::{DataType, DeviceType, Order, Tensor, TensorMap};

use super::status::{ct_status, guard, write_out, Fail, Handles};

/// An opaque tensor handle.
#[allow(non_camel_case_types)]
pub struct ct_tensor {
    pub(crate) t: Tensor,
}

/// Element types (the values of a `dtype` argument).
#[allow(non_camel_case_types)]
#[repr(C)]
pub enum ct_dtype {
    /// `float`
    CT_F32 = 0,
    /// `double`
    CT_F64 = 1,
    /// `int32_t`
    CT_I32 = 2,
    /// `int64_t`
    CT_I64 = 3,
    /// `float _Complex` / `std::complex<float>` / `complex(4)`
    CT_C32 = 4,
    /// `double _Complex` / `std::complex<double>` / `complex(8)`
    CT_C64 = 5,
    /// IEEE half precision
    CT_F16 = 6,
    /// bfloat16
    CT_BF16 = 7,
}

/// Devices (the values of a `device` argument).
#[allow(non_camel_case_types)]
#[repr(C)]
pub enum ct_device {
    /// Host memory.
    CT_CPU = 0,
    /// GPU memory (CUDA).
    CT_GPU = 1,
}

/// Memory orders (the values of an `order` argument).
#[allow(non_camel_case_types)]
#[repr(C)]
pub enum ct_order {
    /// C order: the last index varies fastest.
    CT_ROW_MAJOR = 0,
    /// Fortran order: the first index varies fastest.
    CT_COL_MAJOR = 1,
}

static LIVE: Handles = Handles::new();

/// A new handle for `t`, registered as live.
pub(crate) fn new_handle(t: Tensor) -> *mut ct_tensor {
    let p = Box::into_raw(Box::new(ct_tensor { t }));
    LIVE.insert(p);
    p
}

/// The tensor behind a live handle.
pub(crate) fn handle<'a>(p: *const ct_tensor, name: &'static str) -> Result<&'a Tensor, Fail> {
    if p.is_null() {
        return Err(Fail::Null(name));
    }
    if !LIVE.contains(p) {
        return Err(Fail::Handle(name, "ct_tensor"));
    }
    // SAFETY: `p` is a live handle from `new_handle` (a leaked Box), freed only by
    // `ct_tensor_free`, which removes it from the set first.
    Ok(unsafe { &(*p).t })
}

/// The tensor behind a live handle, mutably.
pub(crate) fn handle_mut<'a>(
    p: *mut ct_tensor,
    name: &'static str,
) -> Result<&'a mut Tensor, Fail> {
    handle(p, name)?;
    // SAFETY: as in `handle`; C callers must not use one handle from two threads at once
    // (documented in the header).
    Ok(unsafe { &mut (*p).t })
}

/// Writes a new handle for `t` through `out`.
///
/// # Safety
/// A non-null `out` is valid for a write.
pub(crate) unsafe fn give(out: *mut *mut ct_tensor, t: Tensor) -> Result<(), Fail> {
    if out.is_null() {
        return Err(Fail::Null("out"));
    }
    // SAFETY: non-null and valid for writes (caller).
    unsafe { out.write(new_handle(t)) };
    Ok(())
}

pub(crate) fn dtype_of(code: i32) -> Result<DataType, Fail> {
    DataType::ALL
        .iter()
        .copied()
        .find(|d| *d as i32 == code)
        .ok_or_else(|| {
            Fail::Arg(format!(
                "dtype code {code} is unknown: expected 0..7 (CT_F32 .. CT_BF16)"
            ))
        })
}

pub(crate) fn device_of(code: i32) -> Result<DeviceType, Fail> {
    match code {
        0 => Ok(DeviceType::Cpu),
        1 => Ok(DeviceType::Gpu),
        _ => Err(Fail::Arg(format!(
            "device code {code} is unknown: expected 0 (CT_CPU) or 1 (CT_GPU)"
        ))),
    }
}

pub(crate) fn order_of(code: i32) -> Result<Order, Fail> {
    match code {
        0 => Ok(Order::RowMajor),
        1 => Ok(Order::ColMajor),
        _ => Err(Fail::Arg(format!(
            "order code {code} is unknown: expected 0 (CT_ROW_MAJOR) or 1 (CT_COL_MAJOR)"
        ))),
    }
}

/// `ndim` sizes at `shape` (which may be null when `ndim == 0`).
///
/// # Safety
/// A non-null `shape` is valid for `ndim` reads.
pub(crate) unsafe fn dims<'a>(ndim: usize, shape: *const usize) -> Result<&'a [usize], Fail> {
    if ndim == 0 {
        return Ok(&[]);
    }
    if shape.is_null() {
        return Err(Fail::Null("shape"));
    }
    // SAFETY: the caller's promise.
    Ok(unsafe { std::slice::from_raw_parts(shape, ndim) })
}

/// Creates a zero tensor of `dtype` on `device` with `ndim` sizes at `shape`.
///
/// # Safety
/// `shape` is valid for `ndim` reads (may be null when `ndim == 0`); `out` for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_tensor_zeros(
    dtype: i32,
    device: i32,
    ndim: usize,
    shape: *const usize,
    out: *mut *mut ct_tensor,
) -> ct_status {
    guard("ct_tensor_zeros", || {
        // SAFETY: the caller's promise on `shape`.
        let d = unsafe { dims(ndim, shape) }?;
        let t = Tensor::zeros(dtype_of(dtype)?, device_of(device)?, d)?;
        // SAFETY: the caller's promise on `out`.
        unsafe { give(out, t) }
    })
}

/// Creates a host tensor holding a copy of `data`, which is laid out in `order`; the
/// tensor keeps that order. `data` need not be aligned for the dtype (it is copied byte
/// for byte); only `ct_tensor_map` needs alignment.
///
/// # Safety
/// `shape` is valid for `ndim` reads; `data` for reads of the tensor's bytes (any
/// alignment); `out` for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_tensor_from_host(
    dtype: i32,
    ndim: usize,
    shape: *const usize,
    order: i32,
    data: *const c_void,
    out: *mut *mut ct_tensor,
) -> ct_status {
    guard("ct_tensor_from_host", || {
        // SAFETY: the caller's promise on `shape`.
        let d = unsafe { dims(ndim, shape) }?;
        let (dt, ord) = (dtype_of(dtype)?, order_of(order)?);
        let t = Tensor::new_in_order(dt, DeviceType::Cpu, d, ord)?;
        let bytes = t.numel() * dt.size_of(); // allocated above, so it fits
        if bytes > 0 {
            if data.is_null() {
                return Err(Fail::Null("data"));
            }
            // SAFETY: the caller's promise: `data` is readable for the tensor's bytes; `t`
            // is a fresh dense allocation of exactly that many bytes, held by nothing else.
            unsafe {
                std::ptr::copy_nonoverlapping(data as *const u8, t.data_ptr() as *mut u8, bytes)
            };
        }
        // SAFETY: the caller's promise on `out`.
        unsafe { give(out, t) }
    })
}

/// Wraps the caller's array without copying: `ndim` sizes at `shape`, laid out in
/// `order` (C or Fortran). ctensor never frees `data`; it must outlive the handle.
///
/// # Safety
/// `data` is valid for reads and writes of the tensor's bytes for the handle's lifetime
/// and aligned for `dtype`; `shape` for `ndim` reads; `out` for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_tensor_map(
    data: *mut c_void,
    dtype: i32,
    device: i32,
    ndim: usize,
    shape: *const usize,
    order: i32,
    out: *mut *mut ct_tensor,
) -> ct_status {
    guard("ct_tensor_map", || {
        // SAFETY: the caller's promise on `shape`.
        let d = unsafe { dims(ndim, shape) }?;
        let strides = order_of(order)?.strides(d);
        // SAFETY: the caller's promise on `data`.
        let map = unsafe {
            TensorMap::from_raw(
                data,
                dtype_of(dtype)?,
                device_of(device)?,
                d,
                &strides,
                None,
            )
        }?;
        // SAFETY: the caller's promise on `out`.
        unsafe { give(out, map.into_tensor()) }
    })
}

/// Frees a handle (the tensor's memory goes when no other handle or view shares it; a
/// mapped array is never freed). Freeing a handle twice is `CT_ERR_INVALID_HANDLE`.
///
/// # Safety
/// `t` is null, or a pointer that may be compared with the live handles.
#[no_mangle]
pub unsafe extern "C" fn ct_tensor_free(t: *mut ct_tensor) -> ct_status {
    guard("ct_tensor_free", || {
        if t.is_null() {
            return Err(Fail::Null("t"));
        }
        if !LIVE.remove(t) {
            return Err(Fail::Handle("t", "ct_tensor"));
        }
        // SAFETY: `t` was live: a Box leaked by `new_handle`, now unregistered.
        drop(unsafe { Box::from_raw(t) });
        Ok(())
    })
}

/// A deep copy into new memory, in the memory order of `t` when `t` is dense (a
/// column-major map stays column-major), row-major for a strided view.
///
/// # Safety
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_tensor_clone(
    t: *const ct_tensor,
    out: *mut *mut ct_tensor,
) -> ct_status {
    guard("ct_tensor_clone", || {
        let c = handle(t, "t")?.try_clone()?;
        // SAFETY: the caller's promise on `out`.
        unsafe { give(out, c) }
    })
}

/// Makes `dst` a shallow copy of `src`: both then view the same memory.
///
/// # Safety
/// Handles only (checked).
#[no_mangle]
pub unsafe extern "C" fn ct_tensor_copy_from(
    dst: *mut ct_tensor,
    src: *const ct_tensor,
) -> ct_status {
    guard("ct_tensor_copy_from", || {
        let s = handle(src, "src")?.share();
        handle_mut(dst, "dst")?.copy_from(&s);
        Ok(())
    })
}

/// Copies the values of `src` into `dst`'s existing memory (same dtype and shape; e.g. a
/// map over the caller's array).
///
/// # Safety
/// Handles only (checked).
#[no_mangle]
pub unsafe extern "C" fn ct_tensor_sync(dst: *mut ct_tensor, src: *const ct_tensor) -> ct_status {
    guard("ct_tensor_sync", || {
        let s = handle(src, "src")?.share();
        handle_mut(dst, "dst")?.sync(&s)?;
        Ok(())
    })
}

/// A copy on `device`.
///
/// # Safety
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_tensor_to_device(
    t: *const ct_tensor,
    device: i32,
    out: *mut *mut ct_tensor,
) -> ct_status {
    guard("ct_tensor_to_device", || {
        let c = handle(t, "t")?.to_device(device_of(device)?)?;
        // SAFETY: the caller's promise on `out`.
        unsafe { give(out, c) }
    })
}

/// A copy converted to `dtype`.
///
/// # Safety
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_tensor_cast(
    t: *const ct_tensor,
    dtype: i32,
    out: *mut *mut ct_tensor,
) -> ct_status {
    guard("ct_tensor_cast", || {
        let c = handle(t, "t")?.cast(dtype_of(dtype)?)?;
        // SAFETY: the caller's promise on `out`.
        unsafe { give(out, c) }
    })
}

/// The same elements with a new shape (`ndim` sizes at `shape`, one of them may be -1).
///
/// # Safety
/// `shape` is valid for `ndim` reads; `out` for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_tensor_reshape(
    t: *const ct_tensor,
    ndim: usize,
    shape: *const i64,
    out: *mut *mut ct_tensor,
) -> ct_status {
    guard("ct_tensor_reshape", || {
        let d: &[i64] = if ndim == 0 {
            &[]
        } else if shape.is_null() {
            return Err(Fail::Null("shape"));
        } else {
            // SAFETY: the caller's promise on `shape`.
            unsafe { std::slice::from_raw_parts(shape, ndim) }
        };
        let c = handle(t, "t")?.reshape(d)?;
        // SAFETY: the caller's promise on `out`.
        unsafe { give(out, c) }
    })
}

/// A view of `len` entries of axis `dim` from `start` (shares memory).
///
/// # Safety
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_tensor_narrow(
    t: *const ct_tensor,
    dim: usize,
    start: usize,
    len: usize,
    out: *mut *mut ct_tensor,
) -> ct_status {
    guard("ct_tensor_narrow", || {
        let c = handle(t, "t")?.narrow(dim, start, len)?;
        // SAFETY: the caller's promise on `out`.
        unsafe { give(out, c) }
    })
}

/// A view of entry `i` of the first axis (one rank less; shares memory).
///
/// # Safety
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_tensor_index(
    t: *const ct_tensor,
    i: usize,
    out: *mut *mut ct_tensor,
) -> ct_status {
    guard("ct_tensor_index", || {
        let c = handle(t, "t")?.index(i)?;
        // SAFETY: the caller's promise on `out`.
        unsafe { give(out, c) }
    })
}

/// The address of the first element (device memory for GPU tensors). While an
/// asynchronous copy that uses the memory is in flight (`ct_tensor_sync_async`) this is
/// `CT_ERR_BORROW`, since C code could then race with the copy: wait with
/// `ct_tensor_synchronize` or `ct_stream_synchronize` first.
///
/// # Safety
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_tensor_data(t: *const ct_tensor, out: *mut *mut c_void) -> ct_status {
    guard("ct_tensor_data", || {
        let t = handle(t, "t")?;
        // The pointer may be written through: the borrow a writer would take, released at
        // once (memory lent read-only is checked as a reader).
        if t.buffer().is_read_only() {
            drop(t.buffer().read("ct_tensor_data")?);
        } else {
            drop(t.buffer().write("ct_tensor_data")?);
        }
        let p = t.data_ptr();
        // SAFETY: the caller's promise on `out`.
        unsafe { write_out(out, "out", p) }
    })
}

/// The number of axes.
///
/// # Safety
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_tensor_ndim(t: *const ct_tensor, out: *mut usize) -> ct_status {
    guard("ct_tensor_ndim", || {
        let n = handle(t, "t")?.ndim();
        // SAFETY: the caller's promise on `out`.
        unsafe { write_out(out, "out", n) }
    })
}

/// Copies `v` to `out` (nothing to write, and `out` unread, when `v` is empty).
///
/// # Safety
/// A non-null `out` is valid for writes of `v.len()` entries.
unsafe fn write_list(v: &[usize], out: *mut usize) -> Result<(), Fail> {
    if v.is_empty() {
        return Ok(());
    }
    if out.is_null() {
        return Err(Fail::Null("out"));
    }
    // SAFETY: the caller's promise: room for `v.len()` entries.
    unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), out, v.len()) };
    Ok(())
}

/// Writes the `ndim` sizes into `out` (which holds at least `ct_tensor_ndim` entries).
///
/// # Safety
/// `out` is valid for writes of `ndim` entries.
#[no_mangle]
pub unsafe extern "C" fn ct_tensor_shape(t: *const ct_tensor, out: *mut usize) -> ct_status {
    // SAFETY: the caller's promise on `out`.
    guard("ct_tensor_shape", || unsafe {
        write_list(handle(t, "t")?.dims(), out)
    })
}

/// Writes the `ndim` strides (in elements) into `out`.
///
/// # Safety
/// `out` is valid for writes of `ndim` entries.
#[no_mangle]
pub unsafe extern "C" fn ct_tensor_strides(t: *const ct_tensor, out: *mut usize) -> ct_status {
    // SAFETY: the caller's promise on `out`.
    guard("ct_tensor_strides", || unsafe {
        write_list(handle(t, "t")?.strides(), out)
    })
}

/// The data type code (`ct_dtype`).
///
/// # Safety
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_tensor_dtype(t: *const ct_tensor, out: *mut i32) -> ct_status {
    guard("ct_tensor_dtype", || {
        let d = handle(t, "t")?.dtype() as i32;
        // SAFETY: the caller's promise on `out`.
        unsafe { write_out(out, "out", d) }
    })
}

/// The device code (`ct_device`).
///
/// # Safety
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_tensor_device(t: *const ct_tensor, out: *mut i32) -> ct_status {
    guard("ct_tensor_device", || {
        let d = handle(t, "t")?.device() as i32;
        // SAFETY: the caller's promise on `out`.
        unsafe { write_out(out, "out", d) }
    })
}

/// Sets every element to zero.
///
/// # Safety
/// Handles only (checked).
#[no_mangle]
pub unsafe extern "C" fn ct_tensor_zero(t: *mut ct_tensor) -> ct_status {
    guard("ct_tensor_zero", || Ok(handle_mut(t, "t")?.zero()?))
}

/// Sets every element to `re + i·im` (cast to the dtype; real types take `re`).
///
/// # Safety
/// Handles only (checked).
#[no_mangle]
pub unsafe extern "C" fn ct_tensor_set_value(t: *mut ct_tensor, re: f64, im: f64) -> ct_status {
    guard("ct_tensor_set_value", || {
        Ok(handle_mut(t, "t")?.fill(ctensor_aten::c64::new(re, im))?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    /// A fence the test completes.
    #[derive(Debug, Default)]
    struct Pending(AtomicBool);

    impl ctensor_aten::Fence for Pending {
        fn is_complete(&self) -> ctensor_aten::Result<bool> {
            Ok(self.0.load(Ordering::SeqCst))
        }
        fn wait(&self) -> ctensor_aten::Result<()> {
            self.0.store(true, Ordering::SeqCst);
            Ok(())
        }
        fn order_default_stream(&self) -> ctensor_aten::Result<()> {
            Ok(())
        }
        fn describe(&self) -> String {
            "a pending copy".into()
        }
    }

    #[test]
    fn the_data_pointer_is_refused_while_a_copy_uses_the_memory() {
        let t = Tensor::zeros(DataType::Double, DeviceType::Cpu, &[4]).unwrap();
        let f = Arc::new(Pending::default());
        t.record_fence(f.clone(), false).unwrap(); // a copy reads it: C could write
        let h = new_handle(t);
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        let st = unsafe { ct_tensor_data(h, &mut p) };
        assert_eq!(st, ct_status::CT_ERR_BORROW);
        assert!(p.is_null());
        f.0.store(true, Ordering::SeqCst);
        // SAFETY: as above.
        assert_eq!(unsafe { ct_tensor_data(h, &mut p) }, ct_status::CT_OK);
        assert!(!p.is_null());
        // SAFETY: a live handle, freed once.
        assert_eq!(unsafe { ct_tensor_free(h) }, ct_status::CT_OK);
    }
}
