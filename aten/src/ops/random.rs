//! Random tensors from a counter-based generator ([Philox4x32-10](ctensor_kernels::random)):
//! the same seed gives the same values on the CPU and the GPU (uniform values bit for
//! bit; normal ones to the last few bits, through each device's `log` and `cos`), and
//! any slice of the stream can be drawn without drawing what comes before it.
//!
//! - [`Tensor::rand`]: uniform on `[0, 1)`, with exactly the dtype's precision (a value
//!   never rounds up to 1).
//! - [`Tensor::randn`]: standard normal. Complex tensors have independent real and
//!   imaginary parts of variance 1/2 each, so that `E|z|² = 1` (PyTorch's convention);
//!   complex `rand` has both parts uniform on `[0, 1)`.
//! - [`Generator`]: a seed and a position in its stream, advanced by each draw, for
//!   successive tensors that do not repeat each other.
//!
//! Floating types only (f32, f64, c32, c64, f16, bf16).

use ctensor_base::{DataType, DeviceType, Error, Result};
use ctensor_kernels::random::{Distribution, FillRandom};

use crate::core::dispatch::with_device;
use crate::core::shape::TensorShape;
use crate::core::tensor::Tensor;

/// A seeded stream of random numbers and the position of the next draw in it. Each
/// draw of `k` values (`2k` for complex) moves the position by as many, so successive
/// tensors never share values; the same seed and sequence of draws gives the same
/// tensors on every device.
///
/// ```
/// use ctensor_aten::{DataType, DeviceType, Generator, Tensor};
/// let mut g = Generator::new(42);
/// let a = g.randn(DataType::Double, DeviceType::Cpu, &[3])?;
/// let b = g.randn(DataType::Double, DeviceType::Cpu, &[3])?;
/// // The two draws are one stream: together they are a draw of six values.
/// let both = Tensor::randn(DataType::Double, DeviceType::Cpu, &[6], 42)?;
/// assert_eq!([a.to_vec::<f64>()?, b.to_vec::<f64>()?].concat(), both.to_vec::<f64>()?);
/// # Ok::<(), ctensor_aten::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Generator {
    seed: u64,
    offset: u64,
}

impl Generator {
    /// The stream `seed`, at its start.
    pub fn new(seed: u64) -> Generator {
        Generator { seed, offset: 0 }
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// How many values have been drawn (the position of the next one).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Moves to position `offset` of the stream (to replay or skip draws).
    pub fn set_offset(&mut self, offset: u64) {
        self.offset = offset;
    }

    /// A tensor uniform on `[0, 1)`; see [`Tensor::rand`].
    pub fn rand(&mut self, dtype: DataType, device: DeviceType, shape: &[usize]) -> Result<Tensor> {
        let bits = match dtype.real_type() {
            DataType::Double => 53,
            DataType::Float => 24,
            DataType::Half => 11,
            _ => 8, // bf16; integers are refused below
        };
        self.draw("rand", Distribution::Uniform { bits }, dtype, device, shape)
    }

    /// A standard normal tensor; see [`Tensor::randn`].
    pub fn randn(
        &mut self,
        dtype: DataType,
        device: DeviceType,
        shape: &[usize],
    ) -> Result<Tensor> {
        self.draw("randn", Distribution::Normal, dtype, device, shape)
    }

    fn draw(
        &mut self,
        op: &'static str,
        dist: Distribution,
        dtype: DataType,
        device: DeviceType,
        shape: &[usize],
    ) -> Result<Tensor> {
        if !dtype.is_float() && !dtype.is_complex() {
            return Err(Error::UnsupportedDType {
                op,
                dtype,
                supported: "f32, f64, c32, c64, f16, bf16",
            });
        }
        let numel = TensorShape::new(shape).checked_numel(op)?;
        let parts = if dtype.is_complex() { 2 } else { 1 };
        let count = numel.checked_mul(parts).ok_or_else(|| Error::Overflow {
            op,
            what: format!("{numel} complex values"),
        })?;
        // The values in f64 (for complex: re, im interleaved), then the dtype's cast.
        let raw = Tensor::new(DataType::Double, device, &[count])?;
        {
            let _w = raw.buffer.write(op)?;
            with_device!(device, D => {
                // SAFETY: `raw` is a fresh dense buffer of `count` f64 on `device`.
                unsafe { <D as FillRandom>::fill_random(dist, self.seed, self.offset, count, raw.typed_ptr::<f64>()) }
            })?;
        }
        self.offset = self.offset.wrapping_add(count as u64);
        let mut out = if dtype.is_complex() {
            let z = raw.reinterpret_complex(shape)?;
            if dist == Distribution::Normal {
                // Parts of variance 1/2: E|z|² = 1.
                z.mul_scalar(std::f64::consts::FRAC_1_SQRT_2)?
            } else {
                z
            }
        } else {
            raw.reshape(&shape.iter().map(|&d| d as i64).collect::<Vec<_>>())?
        };
        if out.dtype() != dtype {
            out = out.cast(dtype)?;
        }
        Ok(out)
    }
}

impl Tensor {
    /// A tensor of `shape` uniform on `[0, 1)`, drawn from the stream `seed` (the same
    /// values on every device). Floating and complex dtypes; complex ones have both
    /// parts uniform.
    pub fn rand(dtype: DataType, device: DeviceType, shape: &[usize], seed: u64) -> Result<Tensor> {
        Generator::new(seed).rand(dtype, device, shape)
    }

    /// A tensor of `shape` with standard normal values, drawn from the stream `seed`
    /// (the same values on every device, to the last few bits). Complex dtypes have
    /// independent parts of variance 1/2.
    pub fn randn(
        dtype: DataType,
        device: DeviceType,
        shape: &[usize],
        seed: u64,
    ) -> Result<Tensor> {
        Generator::new(seed).randn(dtype, device, shape)
    }

    /// This dense f64 tensor of `2·numel(shape)` values as a c64 tensor of `shape` over
    /// the same memory (re, im interleaved, as `c64` lays them out).
    fn reinterpret_complex(&self, shape: &[usize]) -> Result<Tensor> {
        let mut z = self.share();
        z.dtype = DataType::ComplexDouble;
        z.shape = TensorShape::new(shape);
        z.strides = crate::core::shape::Order::RowMajor.strides(shape);
        if self.dtype() != DataType::Double
            || !self.is_contiguous()
            || self.numel() != 2 * z.numel()
        {
            return Err(Error::Internal {
                op: "randn",
                what: "the raw values are not a dense f64 buffer of twice the size".into(),
            });
        }
        Ok(z)
    }
}
