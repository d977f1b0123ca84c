//! Work queued on a device that may not have finished: the device-independent face of a
//! GPU event, so that the rules built on it (a host borrow of memory that an
//! asynchronous copy still writes is refused; device memory is reused only after the
//! work that used it) are written and tested once, on any machine.
//!
//! [`gpu::Event`](crate::gpu::Event) is the fence of real GPU work. Tests use fences
//! whose completion they control.

use std::fmt::Debug;
use std::sync::Arc;

use crate::error::Result;

/// A point in a device's queue of work: complete once everything queued before it has
/// finished.
pub trait Fence: Debug + Send + Sync {
    /// `true` once the work has finished; never blocks. A fault of that work is the
    /// error.
    fn is_complete(&self) -> Result<bool>;

    /// Blocks the calling thread until the work has finished.
    fn wait(&self) -> Result<()>;

    /// Makes the work ctensor queues on its default stream from now on wait for this
    /// fence, without blocking the host: what is queued there later sees everything
    /// the fenced work wrote.
    fn order_default_stream(&self) -> Result<()>;

    /// What is in flight, for error messages ("a copy on stream 0x5a3…").
    fn describe(&self) -> String;
}

/// Lets unfinished `fences` go before memory their work uses is released by an owner that
/// cannot defer the release: for GPU memory (`on_gpu`) ctensor's default stream is made
/// to wait for each one (the memory's next use is queued there), otherwise — or when
/// that is refused — the host waits. A fence that reports a fault has no work left.
pub fn settle_before_release(fences: impl IntoIterator<Item = Arc<dyn Fence>>, on_gpu: bool) {
    for f in fences {
        if f.is_complete().unwrap_or(true) || (on_gpu && f.order_default_stream().is_ok()) {
            continue;
        }
        // A fault of the work leaves nothing to wait for.
        let _ = f.wait();
    }
}
