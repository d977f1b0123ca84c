//! Tensors on the wire: the MPI datatype that carries each ctensor dtype, where the bytes
//! are when MPI reads or writes them, and messages longer than MPI's `int` counts.
//!
//! MPI reads a tensor as one dense row-major run. A strided view, a column-major tensor
//! or a GPU tensor under an MPI that is not CUDA-aware is first copied into such a run
//! (on the host); a tensor that already is one is handed to MPI as it lies, without a
//! copy.

use std::ffi::{c_int, c_void};
use std::sync::OnceLock;

use ctensor_aten::Tensor;
use ctensor_base::{DataType, DeviceType, Result};
use mpi::ffi::{self, MPI_Datatype};

/// The MPI datatype of one element. f16 and bf16 have none in MPI: they travel as their
/// 16 bits (`MPI_UINT16_T`), and reductions of them are done in f32 (see
/// [`Comm::allreduce`](crate::Comm::allreduce)).
pub(crate) fn datatype(dtype: DataType) -> MPI_Datatype {
    // SAFETY: the RSMPI_* statics are MPI's predefined datatype handles, read-only after
    // MPI_Init (which every Comm implies).
    unsafe {
        match dtype {
            DataType::Float => ffi::RSMPI_FLOAT,
            DataType::Double => ffi::RSMPI_DOUBLE,
            DataType::Int => ffi::RSMPI_INT32_T,
            DataType::Int64 => ffi::RSMPI_INT64_T,
            DataType::ComplexFloat => ffi::RSMPI_FLOAT_COMPLEX,
            DataType::ComplexDouble => ffi::RSMPI_DOUBLE_COMPLEX,
            DataType::Half | DataType::BFloat16 => ffi::RSMPI_UINT16_T,
        }
    }
}

/// Whether MPI can read and write GPU memory directly: `CTENSOR_MPI_CUDA_AWARE=1` or `0`
/// when set, otherwise what Open MPI's `MPIX_Query_cuda_support()` says (looked up at run
/// time, so other MPI libraries, which lack it, count as not CUDA-aware).
pub fn cuda_aware() -> bool {
    static AWARE: OnceLock<bool> = OnceLock::new();
    *AWARE.get_or_init(|| {
        if let Ok(v) = std::env::var("CTENSOR_MPI_CUDA_AWARE") {
            return v.trim() == "1";
        }
        // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name only looks a symbol up.
        let sym = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"MPIX_Query_cuda_support".as_ptr()) };
        if sym.is_null() {
            return false;
        }
        // SAFETY: Open MPI declares `int MPIX_Query_cuda_support(void)` (mpi-ext.h).
        let query: extern "C" fn() -> c_int = unsafe { std::mem::transmute(sym) };
        query() == 1
    })
}

/// Where MPI reads and writes data for a tensor on `device`: the GPU itself when MPI is
/// CUDA-aware, the host otherwise.
pub(crate) fn wire_device(device: DeviceType) -> DeviceType {
    match device {
        DeviceType::Gpu if cuda_aware() => DeviceType::Gpu,
        _ => DeviceType::Cpu,
    }
}

/// `t` as MPI reads it: dense, row-major, on its wire device. The tensor itself (shared,
/// no copy) when it already is; otherwise a copy.
pub(crate) fn outgoing(t: &Tensor) -> Result<Tensor> {
    let dev = wire_device(t.device());
    let t = if t.device() != dev {
        t.to_device(dev)?
    } else {
        t.share()
    };
    if t.is_contiguous() {
        Ok(t)
    } else {
        t.contiguous()
    }
}

/// A fresh dense tensor for MPI to fill, on the wire device for `device`.
pub(crate) fn incoming(dtype: DataType, device: DeviceType, dims: &[usize]) -> Result<Tensor> {
    Tensor::empty(dtype, wire_device(device), dims)
}

/// A received tensor moved to the device the caller asked for.
pub(crate) fn arrive(t: Tensor, device: DeviceType) -> Result<Tensor> {
    if t.device() == device {
        Ok(t)
    } else {
        t.to_device(device)
    }
}

/// Runs `f` with the address of `t`'s first element under a shared borrow of its memory
/// (a GPU tensor's queued work is finished first, as MPI reads it from outside the stream).
pub(crate) fn with_read<R>(
    t: &Tensor,
    op: &'static str,
    f: impl FnOnce(*const c_void) -> Result<R>,
) -> Result<R> {
    let _guard = t.buffer().read(op)?;
    if t.device() == DeviceType::Gpu {
        ctensor_base::gpu::synchronize()?;
    }
    f(t.data_ptr())
}

/// Runs `f` with the address of `t`'s first element under the exclusive borrow of its
/// memory (queued GPU work finished first).
pub(crate) fn with_write<R>(
    t: &Tensor,
    op: &'static str,
    f: impl FnOnce(*mut c_void) -> Result<R>,
) -> Result<R> {
    let _guard = t.buffer().write(op)?;
    if t.device() == DeviceType::Gpu {
        ctensor_base::gpu::synchronize()?;
    }
    f(t.data_ptr())
}

/// The most elements one MPI call carries: `c_int::MAX`, or `CTENSOR_MPI_MAX_COUNT` when
/// set (the tests set it small, so the chunked paths run on small tensors).
pub(crate) fn max_count() -> usize {
    static MAX: OnceLock<usize> = OnceLock::new();
    *MAX.get_or_init(|| {
        std::env::var("CTENSOR_MPI_MAX_COUNT")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&n| n > 0)
            .map_or(c_int::MAX as usize, |n| n.min(c_int::MAX as usize))
    })
}

/// Calls `f(offset_bytes, count)` for consecutive pieces of `n` elements of `elem` bytes,
/// each small enough for one MPI call; once with count 0 when `n` is 0 (MPI allows empty
/// messages, and a matching receive expects one).
pub(crate) fn in_pieces(
    n: usize,
    elem: usize,
    mut f: impl FnMut(usize, c_int) -> Result<()>,
) -> Result<()> {
    let max = max_count();
    let mut done = 0;
    loop {
        let len = (n - done).min(max);
        f(done * elem, len as c_int)?;
        done += len;
        if done >= n {
            return Ok(());
        }
    }
}
