//! Fast Fourier transforms ([`Fft`]): complex-to-complex, in place, along one axis of a
//! dense array or over a block of up to three consecutive axes, batched over the others.
//! On the host a block is one pass per axis (the transform is separable); on the GPU one
//! batched plan of the block's rank. Normalisation is the caller's (the tensor op scales
//! once at the end).
//!
//! Host: `rustfft` by default (pure Rust, SIMD, mixed radix with Rader/Bluestein for
//! large primes, so every length is `O(n log n)`), plans cached per (length, direction)
//! by its planner, lines split across threads; or FFTW 3 ([`HostFft::Fftw`]), loaded at
//! run time, with one guru plan per block layout. GPU: cuFFT, one plan per layout cached
//! in the GPU context and bound to ctensor's stream.

use ctensor_base::{DataType, Device, Error, Result, Scalar};

use crate::memory::SyncMemory;

/// The library behind the host's transforms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum HostFft {
    /// `rustfft` (the default): pure Rust, no system library. A block of axes runs one
    /// pass per axis; lines at a stride are gathered into a buffer in blocks of 8.
    RustFft,
    /// FFTW 3 from the system (`libfftw3.so.3` and `libfftw3f.so.3`, Debian's
    /// `libfftw3-double3` and `libfftw3-single3`; `CTENSOR_FFTW_LIB` and
    /// `CTENSOR_FFTWF_LIB` name other files), loaded at run time: a block of up to three
    /// axes is one plan of FFTW's guru interface, reading strided lines where they lie.
    /// Plans are made on first use of each layout with the [`FftwPlanner`] rigour (a
    /// measured plan of a 72³ block took 0.2 s here, a patient one 2.7 s) and kept.
    Fftw,
}

/// How hard FFTW searches for a plan ([`HostFft::Fftw`]; FFTW's planner flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum FftwPlanner {
    /// `FFTW_ESTIMATE`: a plan from heuristics, made at once.
    Estimate,
    /// `FFTW_MEASURE` (the default): candidate plans timed on scratch memory.
    Measure,
    /// `FFTW_PATIENT`: a wider search, slower to plan.
    Patient,
}

/// Chooses the host FFT library for every later transform of the process. `Fftw` loads
/// the library first: `Error::Unsupported`, naming the file and the Debian package,
/// when it cannot (and the choice stays as it was).
///
/// Without a call, the environment decides on the first transform: `CTENSOR_FFT=fftw`
/// or `rustfft` (unset: `rustfft`; anything else is an `InvalidArgument` error from
/// every transform).
pub fn set_host_fft(backend: HostFft) -> Result<()> {
    crate::cpu::fftw::set_backend(backend)
}

/// The host FFT library in use ([`set_host_fft`], else `CTENSOR_FFT`); an error when
/// `CTENSOR_FFT` is malformed or names FFTW and FFTW cannot be loaded.
pub fn host_fft() -> Result<HostFft> {
    crate::cpu::fftw::backend()
}

/// Sets how hard FFTW plans ([`FftwPlanner`]) for the layouts not planned yet. Without a
/// call, `CTENSOR_FFTW_PLANNER` (`estimate`, `measure` or `patient`; unset: `measure`)
/// decides on the first plan.
pub fn set_fftw_planner(planner: FftwPlanner) {
    crate::cpu::fftw::set_planner(planner)
}

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

    /// The transform over a block of consecutive axes `dims` (1 to 3 of them) of the dense
    /// array `[outer, dims..., inner]`, batched over `outer` and `inner`: what
    /// [`fft_axis`](Self::fft_axis) along each of them gives, which is this default. The
    /// GPU runs it as one batched plan of the block's rank (one cuFFT execution for
    /// `inner == 1`, the band-by-grid case of a plane-wave code) instead of one per axis
    /// and slab.
    ///
    /// # Safety
    /// `data` is valid for reads and writes of `outer · Π dims · inner` elements.
    unsafe fn fft_block(
        direction: FftDirection,
        outer: usize,
        dims: &[usize],
        inner: usize,
        data: *mut T,
    ) -> Result<()> {
        // SAFETY: forwarded contract.
        unsafe { by_axes::<T, Self>(direction, outer, dims, inner, data) }
    }

    /// [`fft_block`](Self::fft_block) out of place: `dst` gets the transform of the dense
    /// array `src` as it was on entry; `src` is left as it is unless the two ranges
    /// overlap (any overlap is allowed: `src == dst` is the transform in place). By
    /// default a copy (with memmove semantics) and [`fft_block`](Self::fft_block) on
    /// `dst`; the host's FFTW backend runs one out-of-place plan instead, which saves the
    /// copy pass.
    ///
    /// # Safety
    /// `src` is valid for reads and `dst` for reads and writes of `outer · Π dims ·
    /// inner` elements on this device, and nothing else accesses them meanwhile.
    unsafe fn fft_block_into(
        direction: FftDirection,
        outer: usize,
        dims: &[usize],
        inner: usize,
        src: *const T,
        dst: *mut T,
    ) -> Result<()>
    where
        Self: SyncMemory<T, Self>,
    {
        check_complex(T::DTYPE)?;
        let n = block_len(outer, dims, inner)?;
        // SAFETY: forwarded contract; `sync` allows overlapping ranges.
        unsafe {
            <Self as SyncMemory<T, Self>>::sync(dst, src, n)?;
            Self::fft_block(direction, outer, dims, inner, dst)
        }
    }
}

/// [`Fft::fft_block`] as one [`Fft::fft_axis`] pass per axis of the block.
///
/// # Safety
/// As [`Fft::fft_block`].
pub(crate) unsafe fn by_axes<T: Scalar, D: Fft<T>>(
    direction: FftDirection,
    outer: usize,
    dims: &[usize],
    inner: usize,
    data: *mut T,
) -> Result<()> {
    for (k, &len) in dims.iter().enumerate() {
        let before: usize = dims[..k].iter().product();
        let after: usize = dims[k + 1..].iter().product();
        // SAFETY: `(outer·before) · len · (after·inner)` is the caller's element count.
        unsafe { D::fft_axis(direction, outer * before, len, after * inner, data) }?;
    }
    Ok(())
}

/// `outer · Π dims · inner`, or the overflow error.
pub(crate) fn block_len(outer: usize, dims: &[usize], inner: usize) -> Result<usize> {
    let points = dims.iter().try_fold(1usize, |a, &n| a.checked_mul(n));
    let n = points.and_then(|p| p.checked_mul(outer)?.checked_mul(inner));
    n.ok_or_else(|| Error::Overflow {
        op: "fft",
        what: format!("{outer} × {dims:?} × {inner} elements exceed usize"),
    })
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

/// Strided rows gathered (and scattered) four at a time by [`gather_lines`]: point `j`
/// of line `c` goes to `lines[c·count + j]`, so four consecutive rows fill 64 contiguous
/// bytes of each c64 line where one row at a time stored 16 bytes at a stride of `count`.
/// Measured on a 24×24×40 box (2H Si, ctensor-pw's band transforms, one thread): the
/// stores were 60 % of the one-row pass's time, and the four-row tile took the band
/// transforms from 0.68–0.71 s to 0.55–0.57 s.
const ROWS: usize = 4;

/// `lines[c·count + j] = *data.add(j·stride + c)` for `j < count`, `c < width`, where
/// `width = lines.len() / count`: `count` strided rows of `width` elements transposed
/// into `width` contiguous lines of `count` points.
///
/// # Safety
/// For every `j < count`, `data.add(j·stride)` is valid for reads of `width` elements,
/// and nothing writes them meanwhile.
pub(crate) unsafe fn gather_lines<T: Copy>(
    data: *const T,
    count: usize,
    stride: usize,
    lines: &mut [T],
) {
    let width = lines.len() / count.max(1);
    let row = |j: usize| {
        // SAFETY: row `j < count` (every caller below) is valid for `width` reads and
        // not written meanwhile (the contract).
        unsafe { std::slice::from_raw_parts(data.add(j * stride), width) }
    };
    let mut j = 0;
    while j + ROWS <= count {
        let r: [&[T]; ROWS] = std::array::from_fn(|i| row(j + i));
        for (c, line) in lines.chunks_exact_mut(count).enumerate() {
            let dst = &mut line[j..j + ROWS];
            for i in 0..ROWS {
                dst[i] = r[i][c];
            }
        }
        j += ROWS;
    }
    for j in j..count {
        for (line, v) in lines.chunks_exact_mut(count).zip(row(j)) {
            line[j] = *v;
        }
    }
}

/// The inverse of [`gather_lines`]: `*data.add(j·stride + c) = lines[c·count + j]`.
///
/// # Safety
/// For every `j < count`, `data.add(j·stride)` is valid for writes of `width =
/// lines.len() / count` elements that nothing else reads or writes meanwhile, and the
/// rows do not overlap (`stride ≥ width`, or one row).
pub(crate) unsafe fn scatter_lines<T: Copy>(
    lines: &[T],
    count: usize,
    stride: usize,
    data: *mut T,
) {
    let width = lines.len() / count.max(1);
    let row = |j: usize| {
        // SAFETY: row `j < count` (every caller below) is valid for `width` writes, used
        // by nothing else, and disjoint from the other rows (the contract), so the four
        // rows of a tile are four exclusive borrows.
        unsafe { std::slice::from_raw_parts_mut(data.add(j * stride), width) }
    };
    let mut j = 0;
    while j + ROWS <= count {
        let r: [&mut [T]; ROWS] = std::array::from_fn(|i| row(j + i));
        for (c, line) in lines.chunks_exact(count).enumerate() {
            let src = &line[j..j + ROWS];
            for i in 0..ROWS {
                r[i][c] = src[i];
            }
        }
        j += ROWS;
    }
    for j in j..count {
        for (v, line) in row(j).iter_mut().zip(lines.chunks_exact(count)) {
            *v = line[j];
        }
    }
}
