//! [`Fft`] on the host with `rustfft`: contiguous lines (`inner == 1`) are transformed
//! where they lie, many per call; strided lines are gathered in blocks of [`BLOCK`]
//! into a contiguous buffer, transformed and scattered back. Lines are split across
//! threads.

use std::sync::{Arc, Mutex, OnceLock};

use ctensor_base::{CpuDevice, DataType, Result, Scalar};
use rustfft::num_complex::Complex;
use rustfft::{FftNum, FftPlanner};

use crate::args as check;
use crate::fft::{
    block_len, check_complex, gather_lines, host_fft, scatter_lines, Fft, FftDirection, HostFft,
};
use crate::memory::SyncMemory;
use crate::parallel::{for_each_range, SendPtr};

/// Strided lines gathered per block: 8 c64 columns are two cache lines of each row.
/// Measured (`make bench`, table "fft", 1 thread, ours / FFTW): blocks of 8 gave 0.79,
/// 1.12, 1.20, 1.22, 1.15 at 36³, 48³, 60³, 64³, 72³; blocks of 16 gave 1.00, 1.17-1.26,
/// 1.34, 1.32-1.45, 1.28; blocks of 4 about as 8, a little slower at 72³ and 128³. With
/// the four-row gather of [`gather_lines`], 16 again measured no better than 8.
const BLOCK: usize = 8;

/// Below this much work (elements × log2 of the line length) a transform stays on one
/// thread: waking the pool costs more than it saves. Measured (`make bench`, table
/// "fft", 2 cores): two threads took 2.2×, 1.14× and 1.05× the time of one at 36³, 45³
/// and 48³ (0.28 M, 0.55 M and 0.66 M units) and 0.82× at 60³ (1.3 M).
const PARALLEL_WORK: usize = 1 << 20;

/// `f` over `0..count` items, split across threads when `work` is large enough.
fn lines(count: usize, cost: usize, work: usize, f: impl Fn(std::ops::Range<usize>) + Sync) {
    if work < PARALLEL_WORK {
        f(0..count);
    } else {
        for_each_range(count, cost, f);
    }
}

/// A real type `rustfft` computes in, with its process-wide planner.
trait Real: FftNum {
    fn planner() -> &'static Mutex<FftPlanner<Self>>;
}

macro_rules! real {
    ($($f:ty),*) => {$(
        impl Real for $f {
            fn planner() -> &'static Mutex<FftPlanner<$f>> {
                static PLANNER: OnceLock<Mutex<FftPlanner<$f>>> = OnceLock::new();
                PLANNER.get_or_init(|| Mutex::new(FftPlanner::new()))
            }
        }
    )*};
}
real!(f32, f64);

/// The cached plan of `len` points in `direction`.
fn plan<F: Real>(len: usize, direction: FftDirection) -> Arc<dyn rustfft::Fft<F>> {
    let mut p = F::planner().lock().unwrap_or_else(|e| e.into_inner());
    match direction {
        FftDirection::Forward => p.plan_fft_forward(len),
        FftDirection::Inverse => p.plan_fft_inverse(len),
    }
}

/// The transform of [`Fft::fft_axis`] for `Complex<F>` data.
///
/// # Safety
/// As for [`Fft::fft_axis`].
unsafe fn run<F: Real>(
    direction: FftDirection,
    outer: usize,
    len: usize,
    inner: usize,
    data: *mut Complex<F>,
) -> Result<()> {
    let n = check::numel("fft", &[outer, len, inner])?;
    check::non_null("fft", "data", data, n)?;
    if n == 0 || len == 1 {
        return Ok(()); // a 1-point transform is the identity
    }
    let fft = plan::<F>(len, direction);
    let scratch = fft.get_inplace_scratch_len();
    let zero = Complex::new(F::zero(), F::zero());
    let d = SendPtr(data);
    // Work per line, for the parallel threshold: about len · log2(len).
    let cost = len * (usize::BITS - len.leading_zeros()) as usize;
    let work = (outer * inner).saturating_mul(cost);
    if inner == 1 {
        lines(outer, cost, work, |lines| {
            let mut work = vec![zero; scratch];
            // SAFETY: lines `lines` span elements [start·len, end·len) of `data`, which
            // this range alone touches.
            let block = unsafe {
                std::slice::from_raw_parts_mut(d.get().add(lines.start * len), lines.len() * len)
            };
            fft.process_with_scratch(block, &mut work);
        });
        return Ok(());
    }
    let per_outer = inner.div_ceil(BLOCK);
    lines(outer * per_outer, cost * BLOCK, work, |blocks| {
        let mut work = vec![zero; scratch];
        let mut buf = vec![zero; BLOCK * len];
        for b in blocks {
            let (o, first) = (b / per_outer, (b % per_outer) * BLOCK);
            let width = BLOCK.min(inner - first);
            let base = o * len * inner + first;
            // SAFETY: columns first..first + width of slab `o` (rows of `width` at a
            // stride of `inner` ≥ width) belong to block `b` alone; every index is below
            // outer · len · inner.
            unsafe {
                let cols = &mut buf[..width * len];
                gather_lines(d.get().add(base), len, inner, cols);
                fft.process_with_scratch(cols, &mut work);
                scatter_lines(cols, len, inner, d.get().add(base));
            }
        }
    });
    Ok(())
}

/// The FFTW block transform ([`super::fftw::block`]) of c32/c64 `T` in its precision.
///
/// # Safety
/// `T` is c32 or c64; the rest as for [`super::fftw::block`].
unsafe fn fftw_block<T: Scalar>(
    direction: FftDirection,
    outer: usize,
    dims: &[usize],
    inner: usize,
    data: *mut T,
    src: Option<*const T>,
) -> Result<()> {
    // SAFETY: c32/c64 (the caller's contract) are `{re, im}` pairs of f32/f64, the
    // layout of `Complex<f32/f64>`; forwarded contract.
    unsafe {
        match T::DTYPE {
            DataType::ComplexFloat => {
                let src = src.map(|s| s.cast());
                super::fftw::block::<f32>(false, direction, outer, dims, inner, data.cast(), src)
            }
            _ => {
                let src = src.map(|s| s.cast());
                super::fftw::block::<f64>(true, direction, outer, dims, inner, data.cast(), src)
            }
        }
    }
}

impl<T: Scalar> Fft<T> for CpuDevice {
    unsafe fn fft_axis(
        direction: FftDirection,
        outer: usize,
        len: usize,
        inner: usize,
        data: *mut T,
    ) -> Result<()> {
        check_complex(T::DTYPE)?;
        if host_fft()? == HostFft::Fftw {
            // SAFETY: forwarded contract.
            return unsafe { Self::fft_block(direction, outer, &[len], inner, data) };
        }
        // SAFETY: c32/c64 (checked above) are `{re, im}` pairs of f32/f64, the layout of
        // `Complex<f32/f64>`; forwarded contract.
        unsafe {
            match T::DTYPE {
                DataType::ComplexFloat => run::<f32>(direction, outer, len, inner, data.cast()),
                _ => run::<f64>(direction, outer, len, inner, data.cast()),
            }
        }
    }

    unsafe fn fft_block(
        direction: FftDirection,
        outer: usize,
        dims: &[usize],
        inner: usize,
        data: *mut T,
    ) -> Result<()> {
        check_complex(T::DTYPE)?;
        let n = block_len(outer, dims, inner)?;
        check::non_null("fft", "data", data, n)?;
        // rustfft runs a block as one pass per axis; so does FFTW beyond rank 3 (its
        // guru plans of rank ≤ 3, as cuFFT's): each axis is then a plan of its own.
        if host_fft()? == HostFft::RustFft || dims.len() > 3 {
            // SAFETY: forwarded contract.
            return unsafe { crate::fft::by_axes::<T, Self>(direction, outer, dims, inner, data) };
        }
        if n == 0 || dims.iter().all(|&d| d == 1) {
            return Ok(()); // nothing to transform, or 1-point transforms (the identity)
        }
        // SAFETY: as above.
        unsafe { fftw_block(direction, outer, dims, inner, data, None) }
    }

    unsafe fn fft_block_into(
        direction: FftDirection,
        outer: usize,
        dims: &[usize],
        inner: usize,
        src: *const T,
        dst: *mut T,
    ) -> Result<()> {
        check_complex(T::DTYPE)?;
        let n = block_len(outer, dims, inner)?;
        check::non_null("fft", "src", src, n)?;
        check::non_null("fft", "dst", dst, n)?;
        let (s, d) = (src as usize, dst as usize);
        let bytes = n * std::mem::size_of::<T>();
        let overlap = s < d + bytes && d < s + bytes;
        // FFTW's plan reads `src` and writes `dst` where they are apart. Otherwise a copy
        // (memmove: any overlap) and the transform in place: beyond FFTW's rank-3 plans,
        // for the trivial blocks, and with rustfft, which transforms lines in place (its
        // out-of-place calls use the input as scratch). Reading the input in the first
        // pass of the rustfft path instead of copying it first was measured (`make
        // bench`, table "fft", fftn into a new tensor / FFTW's out-of-place plan, two
        // interleaved runs each): the block's first axis first took 1.23–1.69 at
        // 60³–128³ against 0.95–1.43 for the copy (scattered first touches of the fresh
        // output), its last axis first 1.15–1.52 against 1.05–1.39: no gain, so no path.
        if host_fft()? == HostFft::RustFft
            || dims.len() > 3
            || overlap
            || n == 0
            || dims.iter().all(|&d| d == 1)
        {
            // SAFETY: forwarded contract; `sync` allows overlapping ranges.
            return unsafe {
                <Self as SyncMemory<T, Self>>::sync(dst, src, n)?;
                Self::fft_block(direction, outer, dims, inner, dst)
            };
        }
        // SAFETY: forwarded contract: `n` elements each, apart (checked above).
        unsafe { fftw_block(direction, outer, dims, inner, dst, Some(src)) }
    }
}
