//! Discrete Fourier transforms on tensors, as NumPy's `numpy.fft`: [`fftn`]/[`ifftn`]
//! over any set of axes (batched over the others), [`fft`]/[`ifft`] along one,
//! in place with [`Tensor::fftn_`]/[`Tensor::ifftn_`], real input and output with
//! [`rfftn`]/[`irfftn`], the normalisations of [`FftNorm`], and the helpers
//! [`fftfreq`], [`rfftfreq`], [`fftshift`] and [`ifftshift`].
//!
//! Conventions (NumPy's): `fft` computes `X_k = Σ_j x_j e^{−2πi jk/n}` and `ifft`
//! `x_j = (1/n) Σ_k X_k e^{+2πi jk/n}` with the default [`FftNorm::Backward`]. Real
//! input becomes complex first: `f32`, `f16` and `bf16` give `c32`, `f64` and integers
//! give `c64` (NumPy 2 keeps single precision too). The kernels are
//! [`ctensor_kernels::fft`]: `rustfft` on the host, or FFTW when chosen
//! ([`set_host_fft`](ctensor_kernels::fft::set_host_fft) or `CTENSOR_FFT=fftw`; loaded
//! at run time), cuFFT on the GPU, plans cached and reused.

use ctensor_base::{DataType, DeviceType, Error, Result};
use ctensor_kernels::fft::{Fft, FftDirection};

use crate::core::dispatch::dispatch;
use crate::core::shape::Order;
use crate::core::tensor::Tensor;
use crate::ops::select::cat;

/// Where the `1/n` of a transform pair goes (NumPy's `norm`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FftNorm {
    /// The forward transform is unscaled, the inverse scaled by `1/n` (the default).
    #[default]
    Backward,
    /// Both scaled by `1/√n`: the transforms are unitary.
    Ortho,
    /// The forward transform scaled by `1/n`, the inverse unscaled.
    Forward,
}

impl FftNorm {
    /// The factor a transform of `n` points in `direction` is multiplied by.
    fn factor(self, direction: FftDirection, n: f64) -> f64 {
        match (self, direction) {
            (FftNorm::Ortho, _) => 1.0 / n.sqrt(),
            (FftNorm::Backward, FftDirection::Inverse)
            | (FftNorm::Forward, FftDirection::Forward) => 1.0 / n,
            _ => 1.0,
        }
    }
}

/// The complex type a transform of `dtype` computes in.
fn complex_for(dtype: DataType) -> DataType {
    match dtype {
        DataType::ComplexFloat | DataType::Float | DataType::Half | DataType::BFloat16 => {
            DataType::ComplexFloat
        }
        _ => DataType::ComplexDouble,
    }
}

/// `axes` checked against `ndim`: each in range and none twice.
fn check_axes(op: &'static str, ndim: usize, axes: &[usize]) -> Result<()> {
    for (k, &a) in axes.iter().enumerate() {
        if a >= ndim || axes[..k].contains(&a) {
            return Err(Error::OutOfRange {
                op,
                what: "axis".into(),
                given: a as i64,
                valid: format!("distinct axes in 0..{ndim}, got {axes:?}"),
            });
        }
    }
    Ok(())
}

impl Tensor {
    /// The transform of a dense row-major c32/c64 tensor over `axes`, in place.
    fn fft_in_place(
        &mut self,
        op: &'static str,
        direction: FftDirection,
        axes: &[usize],
        norm: FftNorm,
    ) -> Result<()> {
        check_axes(op, self.ndim(), axes)?;
        if !self.dtype().is_complex() {
            return Err(Error::UnsupportedDType {
                op,
                dtype: self.dtype(),
                supported: "c32, c64 (in place; fftn/ifftn take real tensors into a new one)",
            });
        }
        if !self.is_contiguous() {
            return Err(Error::Unsupported {
                op,
                what: format!(
                    "a tensor with dims {:?} and strides {:?} in place (this form takes a \
                     dense row-major tensor; fftn/ifftn take any other)",
                    self.dims(),
                    self.strides()
                ),
            });
        }
        let runs = runs(axes);
        self.blocks_in_place(op, direction, &runs)?;
        self.normalise(direction, axes, norm)
    }

    /// The block transforms of `runs` (see [`runs`]), in place on this dense row-major
    /// complex tensor, unnormalised.
    fn blocks_in_place(
        &mut self,
        op: &'static str,
        direction: FftDirection,
        runs: &[(usize, usize)],
    ) -> Result<()> {
        let _w = self.buffer.write(op)?;
        for &(start, end) in runs {
            let (outer, block, inner) = split(self.dims(), start, end);
            dispatch!(self.dtype(), self.device(), T, D => {
                // SAFETY: the tensor is dense row-major with outer·Π block·inner
                // elements of T on this device; the write guard excludes every other
                // access.
                unsafe { <D as Fft<T>>::fft_block(direction, outer, block, inner, self.typed_ptr::<T>()) }
            })
            .map_err(|e| e.in_op(op))?;
        }
        Ok(())
    }

    /// Scales a transform over `axes` in `direction` as `norm` says.
    fn normalise(&mut self, direction: FftDirection, axes: &[usize], norm: FftNorm) -> Result<()> {
        let n: f64 = axes.iter().map(|&a| self.dims()[a] as f64).product();
        let factor = norm.factor(direction, n);
        if factor != 1.0 && self.numel() > 0 {
            self.scale_(factor)?;
        }
        Ok(())
    }

    /// The forward transform over `axes`, in place (NumPy's `fftn` without the copy).
    /// The tensor must be dense row-major `c32` or `c64` ([`fftn`] takes any other).
    pub fn fftn_(&mut self, axes: &[usize], norm: FftNorm) -> Result<()> {
        self.fft_in_place("fftn_", FftDirection::Forward, axes, norm)
    }

    /// The inverse transform over `axes`, in place; see [`fftn_`](Self::fftn_).
    pub fn ifftn_(&mut self, axes: &[usize], norm: FftNorm) -> Result<()> {
        self.fft_in_place("ifftn_", FftDirection::Inverse, axes, norm)
    }
}

/// The axes in runs of up to three consecutive ones (first and last axis of each), each
/// one block transform (the transform is separable, so the order does not matter): a
/// batch of bands over a 3-D grid is one cuFFT execution on the GPU.
fn runs(axes: &[usize]) -> Vec<(usize, usize)> {
    let mut sorted = axes.to_vec();
    sorted.sort_unstable();
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &a in &sorted {
        match runs.last_mut() {
            Some((start, end)) if *end + 1 == a && a - *start < 3 => *end = a,
            _ => runs.push((a, a)),
        }
    }
    runs
}

/// A dense array of `dims` seen as `[outer, block..., inner]` around the axes
/// `start..=end`.
fn split(dims: &[usize], start: usize, end: usize) -> (usize, &[usize], usize) {
    let outer = dims[..start].iter().product();
    let inner = dims[end + 1..].iter().product();
    (outer, &dims[start..=end], inner)
}

/// `x` (dense row-major, complex) transformed over `axes` (at least one) into a new
/// tensor: the first block from `x` into the result ([`Fft::fft_block_into`]: one
/// out-of-place plan with the host's FFTW backend, a copy and the transform in place
/// otherwise), the rest in place on the result.
fn transform_out_of_place(
    op: &'static str,
    x: &Tensor,
    direction: FftDirection,
    axes: &[usize],
    norm: FftNorm,
) -> Result<Tensor> {
    let runs = runs(axes);
    let Some(&(start, end)) = runs.first() else {
        return x.try_clone();
    };
    // SAFETY: the first block's transform writes every element of `y` before anything
    // reads it (an error drops `y` unread).
    let mut y = unsafe { Tensor::uninit(x.dtype(), x.device(), x.dims())? };
    {
        let _r = x.buffer.read(op)?;
        let _w = y.buffer.write(op)?;
        let (outer, block, inner) = split(x.dims(), start, end);
        dispatch!(x.dtype(), x.device(), T, D => {
            // SAFETY: `x` is dense row-major with outer·Π block·inner elements of T on
            // this device, as is the fresh `y`, a buffer of its own; the guards exclude
            // writers of `x` and every other access to `y`.
            unsafe {
                <D as Fft<T>>::fft_block_into(
                    direction, outer, block, inner, x.typed_ptr::<T>(), y.typed_ptr::<T>(),
                )
            }
        })
        .map_err(|e| e.in_op(op))?;
    }
    y.blocks_in_place(op, direction, &runs[1..])?;
    y.normalise(direction, axes, norm)?;
    Ok(y)
}

/// `x` transformed over `axes` into a new tensor.
fn transform(
    op: &'static str,
    x: &Tensor,
    direction: FftDirection,
    axes: &[usize],
    norm: FftNorm,
) -> Result<Tensor> {
    check_axes(op, x.ndim(), axes)?;
    if x.dtype() == complex_for(x.dtype()) && x.is_contiguous() {
        return transform_out_of_place(op, x, direction, axes, norm);
    }
    let mut y = x.cast(complex_for(x.dtype()))?;
    if !y.is_contiguous() {
        y = y.copy_in_order(Order::RowMajor)?;
    }
    y.fft_in_place(op, direction, axes, norm)?;
    Ok(y)
}

/// The discrete Fourier transform over `axes` (NumPy's `numpy.fft.fftn(x, axes=axes)`),
/// batched over the other axes, into a new complex tensor; any dtype, layout or view.
///
/// ```
/// use ctensor_aten::{fftn, ifftn, FftNorm, Tensor};
/// // A 2 × 4 grid: the transform of a constant is a spike at the origin.
/// let x = Tensor::ones(ctensor_aten::DataType::Double, ctensor_aten::DeviceType::Cpu, &[2, 4])?;
/// let k = fftn(&x, &[0, 1], FftNorm::Backward)?;
/// let v = k.to_vec::<ctensor_aten::c64>()?;
/// assert_eq!(v[0].re, 8.0);
/// assert!(v[1..].iter().all(|z| z.norm() < 1e-12));
/// let back = ifftn(&k, &[0, 1], FftNorm::Backward)?;
/// assert!(back.to_vec::<ctensor_aten::c64>()?.iter().all(|z| (z.re - 1.0).abs() < 1e-12));
/// # Ok::<(), ctensor_aten::Error>(())
/// ```
pub fn fftn(x: &Tensor, axes: &[usize], norm: FftNorm) -> Result<Tensor> {
    transform("fftn", x, FftDirection::Forward, axes, norm)
}

/// The inverse transform over `axes` (NumPy's `numpy.fft.ifftn`); see [`fftn`].
pub fn ifftn(x: &Tensor, axes: &[usize], norm: FftNorm) -> Result<Tensor> {
    transform("ifftn", x, FftDirection::Inverse, axes, norm)
}

/// The transform along one axis (NumPy's `numpy.fft.fft(x, axis=axis)`).
pub fn fft(x: &Tensor, axis: usize, norm: FftNorm) -> Result<Tensor> {
    transform("fft", x, FftDirection::Forward, &[axis], norm)
}

/// The inverse transform along one axis (NumPy's `numpy.fft.ifft`).
pub fn ifft(x: &Tensor, axis: usize, norm: FftNorm) -> Result<Tensor> {
    transform("ifft", x, FftDirection::Inverse, &[axis], norm)
}

/// The transform of real `x` over `axes`, keeping the non-negative frequencies of the
/// last of them (NumPy's `rfftn`): that axis has `n/2 + 1` entries, the others all of
/// theirs; the rest follow from Hermitian symmetry. `c64` for `f64` and integers, `c32`
/// for `f32`, `f16` and `bf16`. Computed through the complex transform.
pub fn rfftn(x: &Tensor, axes: &[usize], norm: FftNorm) -> Result<Tensor> {
    let op = "rfftn";
    if x.dtype().is_complex() {
        return Err(Error::UnsupportedDType {
            op,
            dtype: x.dtype(),
            supported: "real types and integers (use fftn for complex input)",
        });
    }
    let y = transform(op, x, FftDirection::Forward, axes, norm)?;
    let Some(&last) = axes.last() else {
        return Ok(y);
    };
    let n = x.dims()[last];
    y.narrow(last, 0, (n / 2 + 1).min(n))?.contiguous()
}

/// The inverse of [`rfftn`] (NumPy's `irfftn`): real output whose last axis of `axes`
/// has `n_last` points (default `2·(m − 1)` for `m` input entries; fewer input entries
/// than `n_last/2 + 1` are zero-padded, more are ignored), the other axes their input
/// lengths. Only the Hermitian part is read: the imaginary parts of the zero (and, for
/// even `n_last`, the Nyquist) frequency are dropped, as NumPy does.
pub fn irfftn(x: &Tensor, axes: &[usize], n_last: Option<usize>, norm: FftNorm) -> Result<Tensor> {
    let op = "irfftn";
    check_axes(op, x.ndim(), axes)?;
    let Some((&last, rest)) = axes.split_last() else {
        return x.real()?.contiguous();
    };
    let m = x.dims()[last];
    let n = match n_last {
        Some(n) => n,
        None => m
            .saturating_sub(1)
            .checked_mul(2)
            .ok_or_else(|| Error::Overflow {
                op,
                what: format!("2·({m} − 1) output points along the last axis exceed usize"),
            })?,
    };
    if n == 0 {
        return Err(Error::InvalidArgument {
            op,
            expected: "at least one output point along the last axis".into(),
            given: format!("n_last = {n_last:?} for {m} input entries"),
        });
    }
    let mut out_dims = x.dims().to_vec();
    out_dims[last] = n;
    if ctensor_kernels::args::numel(op, &out_dims)? == 0 {
        // An empty batch: nothing to transform, whatever `n` is (no per-point work).
        return Tensor::new(complex_for(x.dtype()).real_type(), x.device(), &out_dims);
    }
    // The inverse over the other axes keeps each line along `last` Hermitian.
    let y = transform(op, x, FftDirection::Inverse, rest, norm)?;
    // The full spectrum of n points along `last`: Z[k] = Y[k] for k ≤ n/2 and
    // Z[n − k] = conj(Y[k]) for 0 < k < (n + 1)/2, zero where Y has no entry.
    let keep = (n / 2 + 1).min(m);
    let mut dims = y.dims().to_vec();
    dims[last] = n / 2 + 1;
    let head = Tensor::new(y.dtype(), y.device(), &dims)?;
    head.narrow(last, 0, keep)?
        .assign(&y.narrow(last, 0, keep)?)?;
    // The zero and (even n) Nyquist frequencies of a real signal are real: their
    // imaginary parts are not read (not even a NaN there reaches the output).
    let zero = Tensor::scalar(0.0f64)?.to_device(y.device())?;
    head.narrow(last, 0, 1)?.imag()?.assign(&zero)?;
    if n % 2 == 0 {
        head.narrow(last, n / 2, 1)?.imag()?.assign(&zero)?;
    }
    // Built after `head` (as long), whose checked allocation stands for this one too.
    let mirrored: Vec<usize> = (1..n.div_ceil(2)).rev().collect();
    let tail = head.take(last, &mirrored)?.conj()?;
    let full = cat(&[&head.narrow(last, 0, n / 2 + 1)?, &tail], last)?;
    let z = transform(op, &full, FftDirection::Inverse, &[last], norm)?;
    z.real()?.contiguous()
}

/// A sample spacing must be finite and nonzero.
fn check_spacing(op: &'static str, d: f64) -> Result<()> {
    if d == 0.0 || !d.is_finite() {
        return Err(Error::InvalidArgument {
            op,
            expected: "a finite, nonzero sample spacing".into(),
            given: format!("d = {d}"),
        });
    }
    Ok(())
}

/// The sample frequencies of an `n`-point transform with sample spacing `d` (NumPy's
/// `fftfreq`): `[0, 1, …, ⌈n/2⌉ − 1, −⌊n/2⌋, …, −1] / (d·n)`, `f64`, on `device`.
pub fn fftfreq(n: usize, d: f64, device: DeviceType) -> Result<Tensor> {
    check_spacing("fftfreq", d)?;
    let half = n.div_ceil(2);
    let host = Tensor::from_fn(n, |k| {
        let m = if k < half {
            k as f64
        } else {
            k as f64 - n as f64
        };
        m / (d * n as f64)
    })
    .map_err(|e| e.in_op("fftfreq"))?;
    to_device(host, device)
}

/// The non-negative sample frequencies of [`rfftn`]'s last axis (NumPy's `rfftfreq`):
/// `[0, 1, …, ⌊n/2⌋] / (d·n)`, `f64`, on `device`.
pub fn rfftfreq(n: usize, d: f64, device: DeviceType) -> Result<Tensor> {
    check_spacing("rfftfreq", d)?;
    let count = if n == 0 { 0 } else { n / 2 + 1 };
    let host =
        Tensor::from_fn(count, |k| k as f64 / (d * n as f64)).map_err(|e| e.in_op("rfftfreq"))?;
    to_device(host, device)
}

/// `host` on `device` (itself when that is the host).
fn to_device(host: Tensor, device: DeviceType) -> Result<Tensor> {
    if device == DeviceType::Cpu {
        Ok(host)
    } else {
        host.to_device(device)
    }
}

/// Rolls each of `axes` by `shift(len)` (positions to the right).
fn roll(op: &'static str, x: &Tensor, axes: &[usize], shift: fn(usize) -> usize) -> Result<Tensor> {
    check_axes(op, x.ndim(), axes)?;
    let mut y = x.share();
    for &a in axes {
        let n = y.dims()[a];
        let s = shift(n) % n.max(1);
        if s == 0 {
            continue;
        }
        let (head, tail) = (y.narrow(a, 0, n - s)?, y.narrow(a, n - s, s)?);
        y = cat(&[&tail, &head], a)?;
    }
    if std::ptr::eq(y.buffer.as_ref(), x.buffer.as_ref()) {
        y = y.try_clone()?; // nothing moved: still a new tensor, as NumPy
    }
    Ok(y)
}

/// The zero frequency moved to the centre of `axes` (NumPy's `fftshift`): each axis of
/// length `n` rolled by `⌊n/2⌋`.
pub fn fftshift(x: &Tensor, axes: &[usize]) -> Result<Tensor> {
    roll("fftshift", x, axes, |n| n / 2)
}

/// The inverse of [`fftshift`] (NumPy's `ifftshift`): each axis rolled by `−⌊n/2⌋`.
pub fn ifftshift(x: &Tensor, axes: &[usize]) -> Result<Tensor> {
    roll("ifftshift", x, axes, |n| n - n / 2)
}
