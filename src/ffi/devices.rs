//! Devices: which ones this build and machine can use, and ctensor's thread count.

use super::status::{ct_status, guard, write_out, Fail};
use super::tensor::device_of;

/// Writes 1 to `out` when `device` can hold tensors here, 0 otherwise (then
/// `ct_last_error_message` is not changed; `ct_tensor_zeros` on it reports why).
///
/// # Safety
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_device_available(device: i32, out: *mut i32) -> ct_status {
    guard("ct_device_available", || {
        let d = device_of(device)?;
        let ok = ctensor_aten::Tensor::zeros(ctensor_aten::DataType::Float, d, &[1]).is_ok();
        // SAFETY: the caller's promise on `out`.
        unsafe { write_out(out, "out", ok as i32) }
    })
}

/// Waits until everything ctensor queued on `device` has finished, and reports a failure
/// of any of it (an asynchronous kernel fault surfaces here). GPU work is queued on
/// ctensor's own stream: `ct_gemm`/`ct_heevd` with `CT_GPU` and ops on GPU tensors may
/// return before the device is done, so call this before reading their results with
/// your own kernels or streams. A no-op for `CT_CPU`.
#[no_mangle]
pub extern "C" fn ct_device_synchronize(device: i32) -> ct_status {
    guard("ct_device_synchronize", || match device_of(device)? {
        ctensor_aten::DeviceType::Cpu => Ok(()),
        ctensor_aten::DeviceType::Gpu => ctensor_base::gpu::synchronize().map_err(Fail::from),
    })
}

/// Writes ctensor's CUDA stream (a `CUstream`/`cudaStream_t`) to `out`: the stream all
/// of ctensor's GPU work is queued on, in order. A caller that hands ctensor GPU memory
/// (`ct_tensor_map` with `CT_GPU`, `ct_tensor_from_dlpack` of `kDLCUDA` memory) whose
/// contents its own kernels are still writing orders them first: synchronize its stream,
/// or record an event there and `cudaStreamWaitEvent` this stream on it (what a DLPack
/// producer does for the `stream` a Python consumer passes). `CT_ERR_DEVICE` without a
/// usable GPU.
///
/// # Safety
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_gpu_stream(out: *mut *mut std::ffi::c_void) -> ct_status {
    guard("ct_gpu_stream", || {
        if out.is_null() {
            return Err(Fail::Null("out"));
        }
        let s = ctensor_aten::gpu_stream_handle()?;
        // SAFETY: the caller's promise on `out`.
        unsafe { write_out(out, "out", s as *mut std::ffi::c_void) }
    })
}

/// Turns the finiteness check of solver inputs on (`on != 0`, the default) or off for
/// the whole process: the eigensolvers, Cholesky and LU (also `ct_dsyevd` and the other
/// raw kernels) refuse NaN or infinities in the part of a matrix they read with
/// `CT_ERR_INVALID_ARGUMENT`, naming the entry. Turn it off only for data known to be
/// finite (it costs one pass over the matrix).
#[no_mangle]
pub extern "C" fn ct_set_check_finite(on: i32) -> ct_status {
    guard("ct_set_check_finite", || {
        ctensor_aten::set_check_finite(on != 0);
        Ok(())
    })
}

/// Sets the threads of OpenBLAS and of ctensor's own pool together (1 to 1024; more is
/// `CT_ERR_SHAPE`, out of range).
#[no_mangle]
pub extern "C" fn ct_set_num_threads(n: usize) -> ct_status {
    guard("ct_set_num_threads", || {
        ctensor_aten::set_num_threads(n).map_err(Fail::from)
    })
}
