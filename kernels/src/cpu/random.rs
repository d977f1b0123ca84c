//! [`FillRandom`] on the host, split across threads above the parallel threshold.

use ctensor_base::{CpuDevice, Result};

use crate::args as check;
use crate::parallel::{for_each_range, SendPtr};
use crate::random::{random_value, Distribution, FillRandom};

impl FillRandom for CpuDevice {
    unsafe fn fill_random(
        dist: Distribution,
        seed: u64,
        offset: u64,
        n: usize,
        dst: *mut f64,
    ) -> Result<()> {
        check::non_null("fill_random", "dst", dst, n)?;
        let dst = SendPtr(dst);
        // A value costs about as much as 30 element-wise operations.
        for_each_range(n, 30, |range| {
            for i in range {
                // SAFETY: `i < n` and each range is written by one thread only.
                unsafe {
                    *dst.get().add(i) = random_value(dist, seed, offset.wrapping_add(i as u64))
                };
            }
        });
        Ok(())
    }
}
