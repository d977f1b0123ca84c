//! Device memory on the GPU. The GPU backend is not part of this build yet: every request
//! is answered with [`Error::DeviceUnavailable`], never a silent no-op.

use std::ptr::NonNull;

use crate::device::DeviceType;
use crate::error::{Error, Result};

/// The error every GPU path returns in a build without the GPU backend.
pub fn gpu_unavailable() -> Error {
    Error::DeviceUnavailable {
        device: DeviceType::Gpu,
        reason: "this build of ctensor has no GPU backend; use DeviceType::Cpu".to_string(),
    }
}

pub(super) fn alloc_zeroed(_bytes: usize) -> Result<NonNull<u8>> {
    Err(gpu_unavailable())
}

/// # Safety
/// Never called: no GPU allocation can be made in this build.
pub(super) unsafe fn dealloc(_ptr: NonNull<u8>, _bytes: usize) {}
