//! Streams and events on the selected GPU (CUDA builds).

use std::sync::Arc;

use cudarc::driver::result as drv;
use cudarc::driver::sys;

use super::context::{context, driver_err, GpuContext};
use crate::error::Result;
use crate::fence::Fence;

/// A queue of GPU work. Work on one stream runs in the order it was queued; work on
/// different streams may overlap (a copy with a kernel, say).
///
/// [`Stream::new`] makes a stream of its own, destroyed on drop (the driver finishes the
/// work queued on it first); [`Stream::default_stream`] is the stream every ordinary
/// ctensor operation is queued on.
pub struct Stream {
    ctx: &'static GpuContext,
    raw: sys::CUstream,
    owned: bool,
}

// SAFETY: a CUstream is a driver handle usable from any thread once its context is bound
// (`bind` is called before every use); `Stream` has no other state.
unsafe impl Send for Stream {}
// SAFETY: see `Send`; every method takes `&self` and only passes the handle to the driver,
// which serialises access to its own objects.
unsafe impl Sync for Stream {}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream")
            .field("id", &format_args!("{:#x}", self.id()))
            .field("default", &!self.owned)
            .finish()
    }
}

impl Stream {
    /// A new stream on the selected GPU that does not wait for the default stream
    /// (`CU_STREAM_NON_BLOCKING`).
    ///
    /// Errors: `DeviceUnavailable` without a usable GPU; `Cuda` when the driver refuses.
    pub fn new() -> Result<Stream> {
        let ctx = context()?;
        ctx.bind()?;
        let raw = drv::stream::create(drv::stream::StreamKind::NonBlocking)
            .map_err(driver_err("cuStreamCreate"))?;
        Ok(Stream {
            ctx,
            raw,
            owned: true,
        })
    }

    /// The stream every ordinary ctensor operation on the selected GPU is queued on.
    ///
    /// Errors: `DeviceUnavailable` without a usable GPU.
    pub fn default_stream() -> Result<Stream> {
        let ctx = context()?;
        Ok(Stream {
            ctx,
            raw: ctx.stream(),
            owned: false,
        })
    }

    /// A number naming the stream (its driver handle), for messages and pool tags.
    pub fn id(&self) -> u64 {
        self.raw as u64
    }

    /// `true` for [`Stream::default_stream`].
    pub fn is_default(&self) -> bool {
        !self.owned
    }

    /// The driver handle.
    pub fn raw(&self) -> sys::CUstream {
        self.raw
    }

    /// Blocks until all work queued on the stream has finished; a fault of that work is
    /// the error.
    pub fn synchronize(&self) -> Result<()> {
        self.ctx.bind()?;
        // SAFETY: a live stream of this context.
        unsafe { drv::stream::synchronize(self.raw) }.map_err(driver_err("cuStreamSynchronize"))
    }

    /// An event recorded now on this stream: complete once the work queued so far is.
    pub fn record(&self) -> Result<Arc<Event>> {
        self.ctx.bind()?;
        let raw = drv::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)
            .map_err(driver_err("cuEventCreate"))?;
        let event = Event {
            ctx: self.ctx,
            raw,
            stream: self.id(),
        };
        // SAFETY: a live event and stream of this context.
        unsafe { drv::event::record(raw, self.raw) }.map_err(driver_err("cuEventRecord"))?;
        Ok(Arc::new(event))
    }

    /// Makes the work queued on this stream from now on wait until `event` is complete;
    /// the host does not block.
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        self.ctx.bind()?;
        // SAFETY: a live stream and event of this context.
        unsafe {
            drv::stream::wait_event(
                self.raw,
                event.raw,
                sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
            )
        }
        .map_err(driver_err("cuStreamWaitEvent"))
    }

    /// Makes the work queued on this stream from now on wait for everything queued on
    /// the default stream so far (what produced the tensors it is about to use).
    pub fn wait_default(&self) -> Result<()> {
        if !self.owned {
            return Ok(());
        }
        let done = Stream::default_stream()?.record()?;
        self.wait_event(&done)
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if self.owned && self.ctx.bind().is_ok() {
            // SAFETY: a stream this value created, destroyed once; the driver completes
            // the work still queued on it before releasing it.
            let _ = unsafe { drv::stream::destroy(self.raw) };
        }
    }
}

/// A point in a stream's work: complete once everything queued on that stream before it
/// was recorded has finished. Made by [`Stream::record`].
pub struct Event {
    ctx: &'static GpuContext,
    raw: sys::CUevent,
    stream: u64,
}

// SAFETY: a CUevent is a driver handle usable from any thread once its context is bound;
// `Event` has no other state.
unsafe impl Send for Event {}
// SAFETY: see `Send`.
unsafe impl Sync for Event {}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Event")
            .field("stream", &format_args!("{:#x}", self.stream))
            .finish()
    }
}

impl Event {
    /// `true` once the work before the event has finished; never blocks.
    pub fn query(&self) -> Result<bool> {
        self.ctx.bind()?;
        // SAFETY: a live event of this context.
        match unsafe { sys::cuEventQuery(self.raw) } {
            sys::CUresult::CUDA_SUCCESS => Ok(true),
            sys::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
            other => Err(driver_err("cuEventQuery")(drv::DriverError(other))),
        }
    }

    /// Blocks until the work before the event has finished.
    pub fn synchronize(&self) -> Result<()> {
        self.ctx.bind()?;
        // SAFETY: a live event of this context.
        unsafe { drv::event::synchronize(self.raw) }.map_err(driver_err("cuEventSynchronize"))
    }

    /// The stream it was recorded on ([`Stream::id`]).
    pub fn stream_id(&self) -> u64 {
        self.stream
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        if self.ctx.bind().is_ok() {
            // SAFETY: an event this value created, destroyed once; the driver releases it
            // when it completes if it has not yet.
            let _ = unsafe { drv::event::destroy(self.raw) };
        }
    }
}

impl Fence for Event {
    fn is_complete(&self) -> Result<bool> {
        self.query()
    }

    fn wait(&self) -> Result<()> {
        self.synchronize()
    }

    fn order_default_stream(&self) -> Result<()> {
        Stream::default_stream()?.wait_event(self)
    }

    fn describe(&self) -> String {
        format!("work on GPU stream {:#x}", self.stream)
    }
}
