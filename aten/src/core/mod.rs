//! The container: shapes, buffers, tensors, maps, accessors and display.

pub mod accessor;
pub mod borrowed;
pub mod buffer;
mod copy;
pub(crate) mod dispatch;
mod display;
pub mod growable;
pub mod mirrored;
pub mod offload;
pub mod promotion;
pub mod shape;
pub mod tensor;
pub mod tensor_map;
pub mod transfer;
mod values;
mod views;
