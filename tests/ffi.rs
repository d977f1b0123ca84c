//! The C ABI's error paths, entry point by entry point: null pointers, dead or foreign
//! handles, wrong dtypes, bad shapes and codes, unavailable devices. Each returns its
//! status and leaves a message naming the entry point; nothing panics across the border.
#![allow(clippy::missing_safety_doc)]
#![deny(unused_must_use)]

use std::ffi::{c_void, CStr};
use std::ptr::{null, null_mut};

use ctensor::ffi::kernels::*;
use ctensor::ffi::ops::*;
use ctensor::ffi::status::{ct_last_error_message, ct_status, ct_status::*, ct_version};
use ctensor::ffi::tensor::*;

/// What a test returns: a failing step names its error.
type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

fn message() -> String {
    // SAFETY: the thread's message is a valid C string until the next failing call.
    unsafe { CStr::from_ptr(ct_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

/// `status` is `want` and the message names `entry` and contains `hint`.
fn expect(status: ct_status, want: ct_status, entry: &str, hint: &str) {
    let m = message();
    assert_eq!(status, want, "{entry}: {m}");
    assert!(
        m.starts_with(entry),
        "{entry}: message {m:?} does not name the entry point"
    );
    assert!(m.contains(hint), "{entry}: message {m:?} lacks {hint:?}");
}

fn zeros(dtype: i32, shape: &[usize]) -> *mut ct_tensor {
    let mut t = null_mut();
    // SAFETY: valid shape and out-pointer.
    let s = unsafe { ct_tensor_zeros(dtype, 0, shape.len(), shape.as_ptr(), &mut t) };
    assert_eq!(s, CT_OK, "{}", message());
    t
}

/// A pointer that was never a handle (checked against the live set, never dereferenced).
fn foreign() -> *mut ct_tensor {
    0x1000 as *mut ct_tensor
}

#[test]
fn version_and_message_are_c_strings() -> TestResult {
    // SAFETY: static NUL-terminated storage.
    let v = unsafe { CStr::from_ptr(ct_version()) }.to_str()?;
    assert_eq!(v, env!("CARGO_PKG_VERSION"));
    Ok(())
}

#[test]
fn tensor_creation_rejects_nulls_codes_and_devices() -> TestResult {
    let shape = [2usize, 3];
    let mut t = null_mut();
    // SAFETY (all calls): pointers are valid or deliberately null; the entry points
    // check them before use.
    unsafe {
        expect(
            ct_tensor_zeros(1, 0, 2, null(), &mut t),
            CT_ERR_NULL,
            "ct_tensor_zeros",
            "`shape`",
        );
        expect(
            ct_tensor_zeros(1, 0, 2, shape.as_ptr(), null_mut()),
            CT_ERR_NULL,
            "ct_tensor_zeros",
            "`out`",
        );
        expect(
            ct_tensor_zeros(9, 0, 2, shape.as_ptr(), &mut t),
            CT_ERR_INVALID_ARGUMENT,
            "ct_tensor_zeros",
            "dtype code 9",
        );
        expect(
            ct_tensor_zeros(1, 7, 2, shape.as_ptr(), &mut t),
            CT_ERR_INVALID_ARGUMENT,
            "ct_tensor_zeros",
            "device code 7",
        );
        if ctensor::gpu_available() {
            assert_eq!(ct_tensor_zeros(1, 1, 2, shape.as_ptr(), &mut t), CT_OK);
            assert_eq!(ct_tensor_free(t), CT_OK);
        } else {
            expect(
                ct_tensor_zeros(1, 1, 2, shape.as_ptr(), &mut t),
                CT_ERR_DEVICE,
                "ct_tensor_zeros",
                "unavailable",
            );
        }
        expect(
            ct_tensor_from_host(1, 2, shape.as_ptr(), 0, null(), &mut t),
            CT_ERR_NULL,
            "ct_tensor_from_host",
            "null",
        );
        expect(
            ct_tensor_from_host(1, 2, shape.as_ptr(), 5, null(), &mut t),
            CT_ERR_INVALID_ARGUMENT,
            "ct_tensor_from_host",
            "order code 5",
        );
        let mut data = [0.0f64; 6];
        // Host memory mapped as GPU memory: refused either way.
        let (code, text) = if ctensor::gpu_available() {
            (CT_ERR_INVALID_ARGUMENT, "the driver does not know")
        } else {
            (CT_ERR_DEVICE, "unavailable")
        };
        expect(
            ct_tensor_map(
                data.as_mut_ptr() as *mut c_void,
                1,
                1,
                2,
                shape.as_ptr(),
                1,
                &mut t,
            ),
            code,
            "ct_tensor_map",
            text,
        );
        expect(
            ct_tensor_map(null_mut(), 1, 0, 2, shape.as_ptr(), 1, &mut t),
            CT_ERR_INVALID_ARGUMENT,
            "ct_tensor_map",
            "null",
        );
        // A good map, freed once; the second free is detected.
        assert_eq!(
            ct_tensor_map(
                data.as_mut_ptr() as *mut c_void,
                1,
                0,
                2,
                shape.as_ptr(),
                1,
                &mut t
            ),
            CT_OK
        );
        assert_eq!(ct_tensor_free(t), CT_OK);
        expect(
            ct_tensor_free(t),
            CT_ERR_INVALID_HANDLE,
            "ct_tensor_free",
            "not a live ct_tensor",
        );
        expect(
            ct_tensor_free(null_mut()),
            CT_ERR_NULL,
            "ct_tensor_free",
            "`t`",
        );
    }
    Ok(())
}

#[test]
fn every_handle_entry_point_rejects_null_and_foreign_handles() -> TestResult {
    // Raw out-pointers, so the boxed closures below can share them.
    let (mut slot, mut pslot, mut nslot, mut cslot) =
        (null_mut(), null_mut::<c_void>(), 0usize, 0i32);
    let out: *mut *mut ct_tensor = &mut slot;
    let p: *mut *mut c_void = &mut pslot;
    let n: *mut usize = &mut nslot;
    let code: *mut i32 = &mut cslot;
    let mut dims = [0usize; 4];
    let dp = dims.as_mut_ptr();
    let shape = [6i64];
    // SAFETY (all calls): the handles are null or foreign on purpose; out-pointers are
    // valid; the entry points check handles before any use.
    unsafe {
        type Case<'a> = (&'a str, Box<dyn Fn(*mut ct_tensor) -> ct_status + 'a>);
        let cases: Vec<Case> = vec![
            ("ct_tensor_clone", Box::new(|h| ct_tensor_clone(h, out))),
            (
                "ct_tensor_copy_from",
                Box::new(|h| ct_tensor_copy_from(h, h)),
            ),
            ("ct_tensor_sync", Box::new(|h| ct_tensor_sync(h, h))),
            (
                "ct_tensor_to_device",
                Box::new(|h| ct_tensor_to_device(h, 0, out)),
            ),
            ("ct_tensor_cast", Box::new(|h| ct_tensor_cast(h, 1, out))),
            (
                "ct_tensor_reshape",
                Box::new(|h| ct_tensor_reshape(h, 1, shape.as_ptr(), out)),
            ),
            (
                "ct_tensor_narrow",
                Box::new(|h| ct_tensor_narrow(h, 0, 0, 1, out)),
            ),
            ("ct_tensor_index", Box::new(|h| ct_tensor_index(h, 0, out))),
            ("ct_tensor_data", Box::new(|h| ct_tensor_data(h, p))),
            ("ct_tensor_ndim", Box::new(|h| ct_tensor_ndim(h, n))),
            ("ct_tensor_shape", Box::new(|h| ct_tensor_shape(h, dp))),
            ("ct_tensor_strides", Box::new(|h| ct_tensor_strides(h, dp))),
            ("ct_tensor_dtype", Box::new(|h| ct_tensor_dtype(h, code))),
            ("ct_tensor_device", Box::new(|h| ct_tensor_device(h, code))),
            ("ct_tensor_zero", Box::new(|h| ct_tensor_zero(h))),
            (
                "ct_tensor_set_value",
                Box::new(|h| ct_tensor_set_value(h, 1.0, 0.0)),
            ),
            ("ct_add", Box::new(|h| ct_add(h, h, out))),
            ("ct_sub", Box::new(|h| ct_sub(h, h, out))),
            ("ct_mul", Box::new(|h| ct_mul(h, h, out))),
            ("ct_div", Box::new(|h| ct_div(h, h, out))),
            ("ct_matmul", Box::new(|h| ct_matmul(h, h, out))),
            (
                "ct_eigh",
                Box::new(|h| ct_eigh(h, null(), 0, out, null_mut())),
            ),
            (
                "ct_eigh_generalized",
                Box::new(|h| ct_eigh_generalized(h, h, 1, null(), out, out)),
            ),
            ("ct_cholesky", Box::new(|h| ct_cholesky(h, b'L' as _, out))),
            (
                "ct_tri_inverse",
                Box::new(|h| ct_tri_inverse(h, b'L' as _, b'N' as _, out)),
            ),
            ("ct_solve", Box::new(|h| ct_solve(h, h, out))),
            (
                "ct_einsum",
                Box::new(|h| {
                    let ops = [h.cast_const()];
                    ct_einsum(c"ij->ji".as_ptr(), 1, ops.as_ptr(), null(), out)
                }),
            ),
            (
                "ct_einsum_into",
                Box::new(|h| {
                    let ops = [h.cast_const()];
                    ct_einsum_into(c"ij->ji".as_ptr(), 1, ops.as_ptr(), null(), h)
                }),
            ),
        ];
        for (entry, call) in &cases {
            expect(call(null_mut()), CT_ERR_NULL, entry, "must not be null");
            expect(
                call(foreign()),
                CT_ERR_INVALID_HANDLE,
                entry,
                "not a live ct_tensor",
            );
        }
    }
    Ok(())
}

#[test]
fn handle_entry_points_report_dtype_shape_and_argument_errors() -> TestResult {
    let a = zeros(1, &[2, 3]);
    let i = zeros(2, &[3, 3]);
    let f = zeros(0, &[2, 3]);
    let mut out = null_mut();
    let mut w = null_mut();
    let mut v = null_mut();
    let bad_range = ct_eig_range {
        kind: 9,
        lo: 0,
        hi: 0,
        vl: 0.0,
        vu: 0.0,
    };
    let shape = [4i64, -1];
    // SAFETY (all calls): live handles and valid out-pointers.
    unsafe {
        // Mixed data types promote (f64 with f32 is f64, code 1) ...
        assert_eq!(ct_add(a, f, &mut out), CT_OK, "{}", message());
        let mut dtype = -1;
        assert_eq!(ct_tensor_dtype(out, &mut dtype), CT_OK);
        assert_eq!(dtype, 1, "f64 + f32 is f64");
        assert_eq!(ct_tensor_free(out), CT_OK);
        // ... so a failing mixed op fails on what is really wrong.
        expect(ct_mul(a, i, &mut out), CT_ERR_SHAPE, "ct_mul", "broadcast");
        expect(
            ct_matmul(a, a, &mut out),
            CT_ERR_SHAPE,
            "ct_matmul",
            "label 'j'",
        );
        expect(
            ct_tensor_reshape(a, 2, shape.as_ptr(), &mut out),
            CT_ERR_SHAPE,
            "ct_tensor_reshape",
            "-1",
        );
        expect(
            ct_tensor_narrow(a, 5, 0, 1, &mut out),
            CT_ERR_SHAPE,
            "ct_tensor_narrow",
            "dimension",
        );
        expect(
            ct_tensor_index(a, 9, &mut out),
            CT_ERR_SHAPE,
            "ct_tensor_index",
            "9",
        );
        expect(
            ct_tensor_sync(a, f),
            CT_ERR_DTYPE,
            "ct_tensor_sync",
            "data type mismatch",
        );
        if ctensor::gpu_available() {
            assert_eq!(ct_tensor_to_device(a, 1, &mut out), CT_OK);
            assert_eq!(ct_tensor_free(out), CT_OK);
        } else {
            expect(
                ct_tensor_to_device(a, 1, &mut out),
                CT_ERR_DEVICE,
                "ct_tensor_to_device",
                "unavailable",
            );
        }
        expect(
            ct_tensor_cast(a, -1, &mut out),
            CT_ERR_INVALID_ARGUMENT,
            "ct_tensor_cast",
            "dtype code -1",
        );
        expect(
            ct_eigh(a, null(), 0, &mut w, &mut v),
            CT_ERR_SHAPE,
            "ct_eigh",
            "square matrix",
        );
        expect(
            ct_eigh(i, null(), 0, &mut w, &mut v),
            CT_ERR_DTYPE,
            "ct_eigh",
            "not supported",
        );
        expect(
            ct_eigh(i, &bad_range, 0, &mut w, &mut v),
            CT_ERR_INVALID_ARGUMENT,
            "ct_eigh",
            "range kind 9",
        );
        expect(
            ct_eigh(i, null(), 7, &mut w, &mut v),
            CT_ERR_INVALID_ARGUMENT,
            "ct_eigh",
            "backend 7",
        );
        expect(
            ct_eigh(a, null(), 0, null_mut(), &mut v),
            CT_ERR_NULL,
            "ct_eigh",
            "`w_out`",
        );
        expect(
            ct_eigh_generalized(a, a, 1, null(), &mut w, &mut v),
            CT_ERR_SHAPE,
            "ct_eigh_generalized",
            "square",
        );
        expect(
            ct_eigh_generalized(i, i, 1, null(), null_mut(), &mut v),
            CT_ERR_NULL,
            "ct_eigh_generalized",
            "`w_out`",
        );
        expect(
            ct_cholesky(a, b'X' as _, &mut out),
            CT_ERR_INVALID_ARGUMENT,
            "ct_cholesky",
            "uplo",
        );
        expect(
            ct_cholesky(a, b'L' as _, &mut out),
            CT_ERR_SHAPE,
            "ct_cholesky",
            "square",
        );
        expect(
            ct_tri_inverse(i, b'L' as _, b'Q' as _, &mut out),
            CT_ERR_INVALID_ARGUMENT,
            "ct_tri_inverse",
            "diag",
        );
        expect(ct_solve(a, a, &mut out), CT_ERR_SHAPE, "ct_solve", "square");
        let ops = [a.cast_const()];
        expect(
            ct_einsum(null(), 1, ops.as_ptr(), null(), &mut out),
            CT_ERR_NULL,
            "ct_einsum",
            "`eq`",
        );
        expect(
            ct_einsum(c"ij->j?".as_ptr(), 1, ops.as_ptr(), null(), &mut out),
            CT_ERR_INVALID_ARGUMENT,
            "ct_einsum",
            "position 5",
        );
        expect(
            ct_einsum(c"ij->ji".as_ptr(), 0, ops.as_ptr(), null(), &mut out),
            CT_ERR_NULL,
            "ct_einsum",
            "`operands`",
        );
        expect(
            ct_einsum_into(c"ij->ji".as_ptr(), 1, ops.as_ptr(), null(), a),
            CT_ERR_SHAPE,
            "ct_einsum_into",
            "[3, 2]",
        );
        for t in [a, i, f] {
            assert_eq!(ct_tensor_free(t), CT_OK);
        }
    }
    Ok(())
}

#[test]
fn raw_kernels_report_bad_characters_sizes_nulls_and_dtypes() -> TestResult {
    let a = [1.0f64; 4];
    let mut c = [0.0f64; 4];
    let z = [ct_c64 { re: 1.0, im: 0.0 }; 4];
    let mut zc = [ct_c64 { re: 0.0, im: 0.0 }; 4];
    let one = ct_c64 { re: 1.0, im: 0.0 };
    let mut w = [0.0f64; 2];
    let (alpha, beta) = (1.0f64, 0.0f64);
    // SAFETY (all calls): arrays of the sizes the arguments describe, or rejected first.
    unsafe {
        expect(
            ct_dgemm(
                b'Q' as _,
                b'N' as _,
                2,
                2,
                2,
                1.0,
                a.as_ptr(),
                2,
                a.as_ptr(),
                2,
                0.0,
                c.as_mut_ptr(),
                2,
            ),
            CT_ERR_INVALID_ARGUMENT,
            "ct_dgemm",
            "trans",
        );
        expect(
            ct_dgemm(
                b'N' as _,
                b'N' as _,
                2,
                2,
                2,
                1.0,
                a.as_ptr(),
                1,
                a.as_ptr(),
                2,
                0.0,
                c.as_mut_ptr(),
                2,
            ),
            CT_ERR_INVALID_ARGUMENT,
            "ct_dgemm",
            "`lda`",
        );
        expect(
            ct_zgemm(
                b'N' as _,
                b'N' as _,
                2,
                2,
                2,
                null(),
                z.as_ptr(),
                2,
                z.as_ptr(),
                2,
                &one,
                zc.as_mut_ptr(),
                2,
            ),
            CT_ERR_NULL,
            "ct_zgemm",
            "`alpha`",
        );
        expect(
            ct_zgemm(
                b'N' as _,
                b'C' as _,
                2,
                2,
                2,
                &one,
                null(),
                2,
                z.as_ptr(),
                2,
                &one,
                zc.as_mut_ptr(),
                2,
            ),
            CT_ERR_INVALID_ARGUMENT,
            "ct_zgemm",
            "null pointer",
        );
        let mut m = [2.0f64, 0.0, 0.0, 3.0];
        expect(
            ct_dsyevd(b'Z' as _, b'L' as _, 2, m.as_mut_ptr(), 2, w.as_mut_ptr()),
            CT_ERR_INVALID_ARGUMENT,
            "ct_dsyevd",
            "jobz",
        );
        expect(
            ct_dsyevd(b'V' as _, b'L' as _, 2, m.as_mut_ptr(), 1, w.as_mut_ptr()),
            CT_ERR_INVALID_ARGUMENT,
            "ct_dsyevd",
            "`lda`",
        );
        // NaN in the triangle that is read: an error naming the entry, never CT_OK.
        let mut m = [0.0f64, f64::NAN, 0.0, 4.0];
        expect(
            ct_dsyevd(b'V' as _, b'L' as _, 2, m.as_mut_ptr(), 2, w.as_mut_ptr()),
            CT_ERR_INVALID_ARGUMENT,
            "ct_dsyevd",
            "finite values in the lower triangle of a, got NaN at (1, 0)",
        );
        let mut zm = [one; 4];
        expect(
            ct_zheevd(b'V' as _, b'?' as _, 2, zm.as_mut_ptr(), 2, w.as_mut_ptr()),
            CT_ERR_INVALID_ARGUMENT,
            "ct_zheevd",
            "uplo",
        );
        let ap = a.as_ptr() as *const c_void;
        let cp = c.as_mut_ptr() as *mut c_void;
        let (al, be) = (
            &alpha as *const f64 as *const c_void,
            &beta as *const f64 as *const c_void,
        );
        expect(
            ct_gemm(
                2, 0, b'N' as _, b'N' as _, 2, 2, 2, al, ap, 2, ap, 2, be, cp, 2,
            ),
            CT_ERR_DTYPE,
            "ct_gemm",
            "not supported",
        );
        // Host arrays with CT_GPU: no GPU here, or memory the driver does not know.
        let (code, text) = if ctensor::gpu_available() {
            (CT_ERR_INVALID_ARGUMENT, "not GPU memory")
        } else {
            (CT_ERR_DEVICE, "unavailable")
        };
        expect(
            ct_gemm(
                1, 1, b'N' as _, b'N' as _, 2, 2, 2, al, ap, 2, ap, 2, be, cp, 2,
            ),
            code,
            "ct_gemm",
            text,
        );
        expect(
            ct_gemm(
                1,
                0,
                b'N' as _,
                b'N' as _,
                2,
                2,
                2,
                null(),
                ap,
                2,
                ap,
                2,
                be,
                cp,
                2,
            ),
            CT_ERR_NULL,
            "ct_gemm",
            "`alpha`",
        );
        expect(
            ct_heevd(
                3,
                0,
                b'V' as _,
                b'L' as _,
                2,
                cp,
                2,
                w.as_mut_ptr() as *mut c_void,
            ),
            CT_ERR_DTYPE,
            "ct_heevd",
            "not supported",
        );
        expect(
            ct_heevd(
                1,
                1,
                b'V' as _,
                b'L' as _,
                2,
                cp,
                2,
                w.as_mut_ptr() as *mut c_void,
            ),
            code,
            "ct_heevd",
            text,
        );
        // And the good paths, against known values.
        assert_eq!(
            ct_gemm(1, 0, b'N' as _, b'N' as _, 2, 2, 2, al, ap, 2, ap, 2, be, cp, 2),
            CT_OK
        );
        assert_eq!(c, [2.0; 4]);
        let mut d = [2.0f64, 0.0, 0.0, 3.0];
        assert_eq!(
            ct_heevd(
                1,
                0,
                b'N' as _,
                b'L' as _,
                2,
                d.as_mut_ptr() as *mut c_void,
                2,
                w.as_mut_ptr() as *mut c_void
            ),
            CT_OK
        );
        assert_eq!(w, [2.0, 3.0]);
    }
    Ok(())
}

#[test]
fn devices_report_availability_and_thread_counts_are_checked() -> TestResult {
    use ctensor::ffi::devices::*;
    let mut ok = -1;
    // SAFETY: valid out-pointer, or deliberately null.
    unsafe {
        assert_eq!(ct_device_available(0, &mut ok), CT_OK);
        assert_eq!(ok, 1);
        assert_eq!(ct_device_available(1, &mut ok), CT_OK);
        assert_eq!(
            ok,
            ctensor::gpu_available() as i32,
            "the GPU as ctensor sees it"
        );
        assert_eq!(ct_device_synchronize(0), CT_OK);
        let mut stream = null_mut();
        expect(
            ctensor::ffi::devices::ct_gpu_stream(null_mut()),
            CT_ERR_NULL,
            "ct_gpu_stream",
            "`out`",
        );
        if ctensor::gpu_available() {
            assert_eq!(ctensor::ffi::devices::ct_gpu_stream(&mut stream), CT_OK);
            assert_eq!(stream as usize, ctensor::gpu_stream_handle()?);
            assert_eq!(ct_device_synchronize(1), CT_OK);
        } else {
            expect(
                ctensor::ffi::devices::ct_gpu_stream(&mut stream),
                CT_ERR_DEVICE,
                "ct_gpu_stream",
                "unavailable",
            );
            expect(
                ct_device_synchronize(1),
                CT_ERR_DEVICE,
                "ct_device_synchronize",
                "unavailable",
            );
        }
        expect(
            ct_device_synchronize(7),
            CT_ERR_INVALID_ARGUMENT,
            "ct_device_synchronize",
            "device code 7",
        );
        expect(
            ct_device_available(3, &mut ok),
            CT_ERR_INVALID_ARGUMENT,
            "ct_device_available",
            "device code 3",
        );
        expect(
            ct_device_available(0, null_mut()),
            CT_ERR_NULL,
            "ct_device_available",
            "`out`",
        );
    }
    for bad in [0, 1025, usize::MAX] {
        expect(
            ct_set_num_threads(bad),
            CT_ERR_SHAPE,
            "ct_set_num_threads",
            "1..=1024",
        );
    }
    assert_eq!(ct_set_num_threads(2), CT_OK);
    Ok(())
}

#[test]
fn from_host_copies_unaligned_buffers_and_clones_keep_the_memory_order() -> TestResult {
    // f64 values at an odd byte offset: misaligned for the dtype.
    let vals = [1.5f64, -2.0, 3.25, 4.0, 5.0, 6.5];
    let mut bytes = [0u8; 1 + 48];
    for (i, v) in vals.iter().enumerate() {
        bytes[1 + 8 * i..9 + 8 * i].copy_from_slice(&v.to_ne_bytes());
    }
    let shape = [2usize, 3];
    for order in [0, 1] {
        let mut t = null_mut();
        // SAFETY: `bytes[1..]` holds 6 f64 (unaligned), `shape` 2 sizes, `t` an out-pointer.
        let st = unsafe {
            ct_tensor_from_host(
                1,
                2,
                shape.as_ptr(),
                order,
                bytes[1..].as_ptr() as *const c_void,
                &mut t,
            )
        };
        assert_eq!(st, CT_OK, "{}", message());
        // The handle holds a copy in the requested order: read it back through the strides.
        let (mut p, mut strides) = (null_mut(), [0usize; 2]);
        // SAFETY: `t` is live; out-pointers valid.
        unsafe {
            assert_eq!(ct_tensor_data(t, &mut p), CT_OK);
            assert_eq!(ct_tensor_strides(t, strides.as_mut_ptr()), CT_OK);
        }
        let want_strides = if order == 0 { [3, 1] } else { [1, 2] };
        assert_eq!(strides, want_strides, "order {order}");
        for (k, v) in vals.iter().enumerate() {
            // SAFETY: the tensor holds 6 f64 at `p`.
            assert_eq!(unsafe { *(p as *const f64).add(k) }, *v);
        }
        // A clone keeps the memory order.
        let mut c = null_mut();
        let mut cs = [0usize; 2];
        // SAFETY: `t` live, out-pointers valid.
        unsafe {
            assert_eq!(ct_tensor_clone(t, &mut c), CT_OK);
            assert_eq!(ct_tensor_strides(c, cs.as_mut_ptr()), CT_OK);
            ct_tensor_free(c);
            ct_tensor_free(t);
        }
        assert_eq!(cs, want_strides, "clone of order {order}");
    }
    Ok(())
}

#[test]
fn every_kind_of_stale_or_foreign_handle_is_one_status() -> TestResult {
    use ctensor::ffi::memory::*;
    // SAFETY: every pointer is either valid or checked against the live sets before use.
    unsafe {
        let shape = [4usize];
        let mut m = null_mut();
        assert_eq!(ct_mirrored_new(1, 1, shape.as_ptr(), &mut m), CT_OK);
        assert_eq!(ct_mirrored_free(m), CT_OK);
        expect(
            ct_mirrored_free(m),
            CT_ERR_INVALID_HANDLE,
            "ct_mirrored_free",
            "not a live ct_mirrored",
        );
        let mut v = null_mut();
        expect(
            ct_mirrored_read(m, 0, &mut v),
            CT_ERR_INVALID_HANDLE,
            "ct_mirrored_read",
            "not a live ct_mirrored",
        );
        // A stream needs a GPU to exist; a pointer that never was one is refused alike.
        let never = 0x2000 as *mut ct_stream;
        expect(
            ct_stream_synchronize(never),
            CT_ERR_INVALID_HANDLE,
            "ct_stream_synchronize",
            "not a live ct_stream",
        );
        expect(
            ct_stream_free(never),
            CT_ERR_INVALID_HANDLE,
            "ct_stream_free",
            "not a live ct_stream",
        );
        let t = zeros(1, &[2]);
        assert_eq!(ct_tensor_free(t), CT_OK);
        expect(
            ct_tensor_free(t),
            CT_ERR_INVALID_HANDLE,
            "ct_tensor_free",
            "not a live ct_tensor",
        );
    }
    Ok(())
}
