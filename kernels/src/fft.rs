//! Fast Fourier transforms ([`Fft`]): complex-to-complex, in place, along one axis of a
//! dense array, batched over the others. Multi-dimensional transforms are one call per
//! axis (the transform is separable); normalisation is the caller's (the tensor op
//! scales once at the end).
//!
//! Host: `rustfft` (pure Rust, SIMD, mixed radix with Rader/Bluestein for large primes,
//! so every length is `O(n log n)`), plans cached per (length, direction) by its
//! planner, lines split across threads. GPU: cuFFT, one plan per layout cached in the
//! GPU context and bound to ctensor's stream.

use ctensor_base::{DataType, Device, Error, Result, Scalar};

/// The direction of a transform.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FftDirection {
    /// `X_k = Σ_j x_j e^{−2πi jk/n}`.
    Forward,
    /// `x_j = Σ_k X_k e^{+2πi jk/n}` (unnormalised).
    Inverse,
}

/// Complex FFTs along one axis.
pub trait Fft<T: Scalar>: Device {
    /// In place, for every `o < outer` and `i < inner`, replaces the `len` elements
    /// `data[(o·len + j)·inner + i]` (`j < len`) by their discrete Fourier transform in
    /// `direction`, unnormalised. Only `c32` and `c64` (`Error::UnsupportedDType`
    /// otherwise).
    ///
    /// # Safety
    /// `data` is valid for reads and writes of `outer · len · inner` elements.
    unsafe fn fft_axis(
        direction: FftDirection,
        outer: usize,
        len: usize,
        inner: usize,
        data: *mut T,
    ) -> Result<()>;
}

/// `Ok` for the complex types the transforms take, else the error both devices give.
pub(crate) fn check_complex(dtype: DataType) -> Result<()> {
    if dtype.is_complex() {
        return Ok(());
    }
    Err(Error::UnsupportedDType {
        op: "fft",
        dtype,
        supported: "c32, c64 (the tensor op converts real input to complex first)",
    })
}
