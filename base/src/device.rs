//! Where a tensor lives: the runtime [`DeviceType`] and the device marker types that
//! kernel traits are implemented for.

use std::fmt;
use std::str::FromStr;

use crate::error::Error;

/// The device a tensor's memory is on, chosen at run time.
///
/// The discriminants are stable: the C ABI uses the same numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum DeviceType {
    /// Host memory.
    Cpu = 0,
    /// NVIDIA GPU memory.
    Gpu = 1,
}

impl DeviceType {
    /// Both device types.
    pub const ALL: [DeviceType; 2] = [DeviceType::Cpu, DeviceType::Gpu];

    /// The stable short name: `cpu` or `gpu`.
    pub const fn name(self) -> &'static str {
        match self {
            DeviceType::Cpu => "cpu",
            DeviceType::Gpu => "gpu",
        }
    }
}

impl fmt::Display for DeviceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DeviceType {
    type Err = Error;
    /// Accepts `cpu`, `gpu`, `cuda` (any ASCII case).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "cpu" | "host" => Ok(DeviceType::Cpu),
            "gpu" | "cuda" => Ok(DeviceType::Gpu),
            _ => Err(Error::UnknownName {
                kind: "device",
                given: s.to_string(),
                expected: "cpu or gpu",
            }),
        }
    }
}

/// A device marker: a zero-sized type that kernel traits are implemented for, so generic
/// code reads `fn f<T, D: BlasGemm<T>>` like ABACUS's `template <typename T, typename Device>`.
pub trait Device: Copy + Default + Send + Sync + fmt::Debug + 'static {
    /// The runtime tag of this device.
    const TYPE: DeviceType;
}

/// The host.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CpuDevice;

/// An NVIDIA GPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct GpuDevice;

impl Device for CpuDevice {
    const TYPE: DeviceType = DeviceType::Cpu;
}

impl Device for GpuDevice {
    const TYPE: DeviceType = DeviceType::Gpu;
}

/// Alignment of every host allocation, in bytes: a cache line, and enough for AVX-512
/// loads of any element type.
pub const CPU_ALIGN: usize = 64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_names_parse() {
        for d in DeviceType::ALL {
            assert_eq!(d.to_string().parse::<DeviceType>().unwrap(), d);
        }
        assert_eq!("CUDA".parse::<DeviceType>().unwrap(), DeviceType::Gpu);
        assert!(matches!(
            "tpu".parse::<DeviceType>(),
            Err(Error::UnknownName { kind: "device", .. })
        ));
        assert_eq!(CpuDevice::TYPE, DeviceType::Cpu);
        assert_eq!(GpuDevice::TYPE, DeviceType::Gpu);
    }
}
