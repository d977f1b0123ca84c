//! Streams and events in a build without the `cuda` feature: the types exist so that code
//! using them builds everywhere, and no value of them can be made.

use std::convert::Infallible;
use std::sync::Arc;

use super::{unavailable, NOT_BUILT};
use crate::error::Result;
use crate::fence::Fence;

/// A queue of GPU work (see the CUDA build's documentation). In this build
/// [`Stream::new`] and [`Stream::default_stream`] return `DeviceUnavailable`.
#[derive(Debug)]
pub struct Stream {
    never: Infallible,
}

impl Stream {
    /// Always `DeviceUnavailable` in this build.
    pub fn new() -> Result<Stream> {
        Err(unavailable(NOT_BUILT.to_string()))
    }

    /// Always `DeviceUnavailable` in this build.
    pub fn default_stream() -> Result<Stream> {
        Err(unavailable(NOT_BUILT.to_string()))
    }

    /// A number naming the stream.
    pub fn id(&self) -> u64 {
        match self.never {}
    }

    /// `true` for the default stream.
    pub fn is_default(&self) -> bool {
        match self.never {}
    }

    /// Blocks until the stream's work has finished.
    pub fn synchronize(&self) -> Result<()> {
        match self.never {}
    }

    /// An event recorded now on this stream.
    pub fn record(&self) -> Result<Arc<Event>> {
        match self.never {}
    }

    /// Makes later work on this stream wait for `event`.
    pub fn wait_event(&self, _event: &Event) -> Result<()> {
        match self.never {}
    }

    /// Makes later work on this stream wait for the default stream's work so far.
    pub fn wait_default(&self) -> Result<()> {
        match self.never {}
    }
}

/// A point in a stream's work. No value can be made in this build.
#[derive(Debug)]
pub struct Event {
    never: Infallible,
}

impl Event {
    /// `true` once the work before the event has finished.
    pub fn query(&self) -> Result<bool> {
        match self.never {}
    }

    /// Blocks until the work before the event has finished.
    pub fn synchronize(&self) -> Result<()> {
        match self.never {}
    }

    /// The stream it was recorded on.
    pub fn stream_id(&self) -> u64 {
        match self.never {}
    }
}

impl Fence for Event {
    fn is_complete(&self) -> Result<bool> {
        match self.never {}
    }
    fn wait(&self) -> Result<()> {
        match self.never {}
    }
    fn order_default_stream(&self) -> Result<()> {
        match self.never {}
    }
    fn describe(&self) -> String {
        match self.never {}
    }
}
