//! [`FillRandom`] on the GPU: the `random_f64` kernel of `random.cu`, one grid-stride
//! thread per value.

use ctensor_base::{GpuDevice, Result};

use super::launch::{args, dev, launch_1d};
use super::source::RANDOM_F64;
use crate::args as check;
use crate::random::{Distribution, FillRandom};

impl FillRandom for GpuDevice {
    unsafe fn fill_random(
        dist: Distribution,
        seed: u64,
        offset: u64,
        n: usize,
        dst: *mut f64,
    ) -> Result<()> {
        check::non_null("fill_random", "dst", dst, n)?;
        let (normal, bits): (i32, i32) = match dist {
            Distribution::Uniform { bits } => (0, bits.min(53) as i32),
            Distribution::Normal => (1, 53),
        };
        let (n64, d) = (n as u64, dev(dst));
        // SAFETY: `dst` is device memory for `n` values (caller); the arguments match
        // the kernel's parameters.
        unsafe {
            launch_1d(
                RANDOM_F64.get::<f64>()?,
                n,
                &mut args![&n64, &normal, &bits, &seed, &offset, &d],
            )
        }
    }
}
