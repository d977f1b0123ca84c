//! Asynchronous copies between host and GPU on a [`Stream`], pinned host tensors, and
//! the fences that keep the host from racing with a copy in flight.
//!
//! A copy queued with [`Tensor::sync_async`] or [`Tensor::to_device_async`] records an
//! event on its stream in the buffers it uses. Until that event completes:
//! - host memory the copy writes (a pinned destination) can be neither read nor
//!   written: every borrow is a [`BorrowConflict`](Error::BorrowConflict) that names the
//!   copy; host memory it reads (a pinned source) can be read but not written;
//! - GPU memory it uses is used by later ctensor work only after the copy (ctensor's
//!   default stream waits for the event; the host does not);
//! - the memory is not freed or reused.
//!
//! [`Tensor::synchronize`], [`Stream::synchronize`] or [`Event::synchronize`](ctensor_base::gpu::Event::synchronize)
//! ends the wait.
//!
//! ```
//! use ctensor_aten::{DataType, DeviceType, Order, Stream, Tensor};
//! # fn main() -> ctensor_aten::Result<()> {
//! let Ok(stream) = Stream::new() else {
//!     return Ok(()); // no GPU here: streams, pinned memory and async copies need one
//! };
//! let mut host = Tensor::pinned(DataType::Double, &[1024, 64], Order::RowMajor)?;
//! host.fill(1.0f64)?;
//! let dev = host.to_device_async(DeviceType::Gpu, &stream)?; // returns at once
//! assert!(host.data_mut::<f64>().is_err()); // the copy still reads it
//! stream.synchronize()?;
//! host.data_mut::<f64>()?[0] = 2.0;
//! # let _ = dev;
//! # Ok(())
//! # }
//! ```

use std::sync::Arc;

use ctensor_base::fence::Fence;
use ctensor_base::gpu::{copy_async, CopyKind, Stream};
use ctensor_base::{DeviceType, Error, Result};

use super::tensor::Tensor;

impl Tensor {
    /// `true` when the tensor's memory is pinned host memory ([`Tensor::pinned`]).
    pub fn is_pinned(&self) -> bool {
        self.buffer.is_pinned()
    }

    /// Blocks until every asynchronous copy that uses this tensor's memory has finished.
    ///
    /// Errors: a fault of that work (`Cuda`).
    pub fn synchronize(&self) -> Result<()> {
        self.buffer.synchronize()
    }

    /// Records device work that the caller queued on this tensor's memory (through a
    /// raw pointer, on a stream of its own), so that ctensor's rules cover it as they
    /// cover its own asynchronous copies: until `fence` completes, host borrows that
    /// would race with the work are refused, later ctensor work on GPU memory waits for
    /// it, and the memory is not freed. `writes`: whether the work writes the memory.
    ///
    /// Errors: `BorrowConflict` while the memory is borrowed in a way that excludes the
    /// work (mutably, or at all when `writes`).
    pub fn record_fence(&self, fence: Arc<dyn Fence>, writes: bool) -> Result<()> {
        const OP: &str = "record_fence";
        // The borrow the work needs, held while the fence is recorded.
        let _held = if writes {
            (Some(self.buffer.write(OP)?), None)
        } else {
            (None, Some(self.buffer.read(OP)?))
        };
        self.buffer.record_fence(fence, writes);
        Ok(())
    }

    /// A copy on `device`, queued on `stream`, in the same memory order; the call
    /// returns without waiting for the copy where the host side allows it:
    /// - to the GPU from pinned memory, and GPU to GPU: at once;
    /// - to the GPU from pageable memory: once the source has been read into the
    ///   staging buffers (the copy to the device may still be in flight);
    /// - to the host: into a fresh pinned tensor, at once.
    ///
    /// The copy sees everything ctensor queued before it; what it uses is protected as
    /// the [module](self) says. The tensor must be dense (row- or column-major).
    ///
    /// Errors: `DeviceUnavailable` without a GPU, `NotContiguous`, `BorrowConflict`,
    /// allocation failure, `Cuda` for a driver failure.
    pub fn to_device_async(&self, device: DeviceType, stream: &Stream) -> Result<Tensor> {
        let order = self
            .dense_order()
            .ok_or_else(|| self.not_contiguous("to_device_async"))?;
        let mut out = match device {
            DeviceType::Cpu => Tensor::pinned(self.dtype, self.dims(), order)?,
            // SAFETY: `sync_async` below writes every element before anything can read
            // `out`; on failure it is dropped unread.
            DeviceType::Gpu => unsafe {
                Tensor::uninit_in_order(self.dtype, device, self.dims(), order)?
            },
        };
        out.sync_async(self, stream)?;
        Ok(out)
    }

    /// Copies `src` into this tensor's memory on `stream`, returning without waiting
    /// where the host side allows it (see [`to_device_async`](Self::to_device_async)).
    /// Same dtype and shape; both dense in the same memory order (one block of memory
    /// moves); not overlapping. Host to host is an ordinary synchronous copy.
    ///
    /// Errors: `DTypeMismatch`, `ShapeMismatch`, `InvalidArgument` (different layouts,
    /// or overlapping memory), `BorrowConflict` (this memory is in use, also by a copy
    /// still in flight), `DeviceUnavailable`, `Cuda`.
    pub fn sync_async(&mut self, src: &Tensor, stream: &Stream) -> Result<()> {
        const OP: &str = "sync_async";
        if src.dtype != self.dtype {
            return Err(Error::DTypeMismatch {
                op: OP,
                expected: self.dtype,
                got: src.dtype,
            });
        }
        if src.dims() != self.dims() {
            return Err(Error::ShapeMismatch {
                op: OP,
                expected: format!("the destination's shape {:?}", self.dims()),
                got: vec![src.dims().to_vec()],
            });
        }
        if self.device == DeviceType::Cpu && src.device == DeviceType::Cpu {
            return Tensor::copy_values(self, src, OP);
        }
        let same_layout = match (self.dense_order(), src.dense_order()) {
            (Some(a), Some(b)) => a == b || self.numel() <= 1,
            _ => false,
        };
        if !same_layout {
            return Err(Error::Unsupported {
                op: OP,
                what: format!(
                    "shape {} with strides {:?} into strides {:?} (both tensors must be dense in \
                     the same memory order: one block of memory is copied; call contiguous() first)",
                    src.shape, src.strides, self.strides
                ),
            });
        }
        if self.shares_memory_with(src) {
            return Err(Error::InvalidArgument {
                op: OP,
                expected: "source and destination in different memory".into(),
                given: "two views of one buffer".into(),
            });
        }
        let bytes = self.numel() * self.dtype.size_of();
        let kind = match (src.device, self.device) {
            (DeviceType::Cpu, _) => CopyKind::HostToDevice,
            (_, DeviceType::Cpu) => CopyKind::DeviceToHost,
            _ => CopyKind::DeviceToDevice,
        };
        let host_pinned = match kind {
            CopyKind::HostToDevice => src.is_pinned(),
            CopyKind::DeviceToHost => self.is_pinned(),
            CopyKind::DeviceToDevice => false,
        };
        // The borrows cover the queueing and the recording of the fences, so that a
        // borrow taken after them sees the fences (see `TensorBuffer::record_fence`).
        let _w = self.buffer.write(OP)?;
        let _r = src.buffer.read(OP)?;
        // The copy comes after the work that made its operands (queued on the default
        // stream, which also waits for earlier copies into them: the borrows above).
        stream.wait_default()?;
        // SAFETY: both views are dense blocks of `bytes` bytes inside their buffers, on
        // the devices `kind` names, in different buffers; the fences recorded below keep
        // the host from touching them and their memory from being freed until the copy
        // has finished.
        unsafe {
            copy_async(
                kind,
                self.elem_ptr() as u64,
                src.elem_ptr() as u64,
                bytes,
                host_pinned,
                stream,
            )?
        };
        let event: Arc<dyn Fence> = stream.record()?;
        // A pageable host side is done with when the call returns (the staging copy).
        if self.device == DeviceType::Gpu || self.is_pinned() {
            self.buffer.record_fence(event.clone(), true);
        }
        if src.device == DeviceType::Gpu || src.is_pinned() {
            src.buffer.record_fence(event, false);
        }
        Ok(())
    }
}
