//! Counter-based random numbers: Philox4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel
//! random numbers: as easy as 1, 2, 3", SC'11). Value number `q` of the stream `seed` is
//! a pure function of `(seed, q)`, so any device computes any part of the stream, in any
//! order, and gets the same numbers: the CUDA kernel in `gpu/cuda/random.cu` is this file's
//! formula line for line.
//!
//! Value `q`: the four 32-bit words `w = philox(counter = [q_lo, q_hi, 0, 0], key =
//! [seed_lo, seed_hi])`.
//! - Uniform on `[0, 1)` with `p` bits (53 for f64, 24 for f32, 11 for f16, 8 for bf16):
//!   the top `p` bits of `w0·2³² + w1`, times `2⁻ᵖ`, so the value is exact in the target
//!   type and never rounds up to 1.
//! - Standard normal (Box–Muller): `u1 = ((w0·2³² + w1) >> 11 + 1)·2⁻⁵³ ∈ (0, 1]`,
//!   `u2 = ((w2·2³² + w3) >> 11)·2⁻⁵³`, `√(−2 ln u1)·cos(2π u2)`. Uniform values are
//!   bit-identical on every device; normal ones go through the device's `log` and `cos`
//!   and agree to a few units in the last place between host and GPU.

use ctensor_base::{Device, Result};

/// Which distribution [`FillRandom`] draws from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Distribution {
    /// Uniform on `[0, 1)` with the given number of bits (1 to 53).
    Uniform {
        /// Bits of the fraction: the target type's precision.
        bits: u32,
    },
    /// Standard normal (mean 0, variance 1).
    Normal,
}

const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

/// The Philox4x32 block function with 10 rounds.
pub fn philox4x32_10(mut c: [u32; 4], mut k: [u32; 2]) -> [u32; 4] {
    for round in 0..10 {
        if round > 0 {
            k = [k[0].wrapping_add(W0), k[1].wrapping_add(W1)];
        }
        let p0 = u64::from(M0) * u64::from(c[0]);
        let p1 = u64::from(M1) * u64::from(c[2]);
        c = [
            (p1 >> 32) as u32 ^ c[1] ^ k[0],
            p1 as u32,
            (p0 >> 32) as u32 ^ c[3] ^ k[1],
            p0 as u32,
        ];
    }
    c
}

/// Value number `q` of the stream `seed` (see the module docs).
pub fn random_value(dist: Distribution, seed: u64, q: u64) -> f64 {
    let w = philox4x32_10(
        [q as u32, (q >> 32) as u32, 0, 0],
        [seed as u32, (seed >> 32) as u32],
    );
    let x = (u64::from(w[0]) << 32) | u64::from(w[1]);
    match dist {
        Distribution::Uniform { bits } => {
            let bits = bits.clamp(1, 53);
            (x >> (64 - bits)) as f64 * (-(bits as f64)).exp2()
        }
        Distribution::Normal => {
            let y = (u64::from(w[2]) << 32) | u64::from(w[3]);
            let u1 = ((x >> 11) + 1) as f64 * TWO_M53;
            let u2 = (y >> 11) as f64 * TWO_M53;
            (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
        }
    }
}

const TWO_M53: f64 = 1.0 / (1u64 << 53) as f64;

/// Fills memory with values of a counter-based stream (the one kernel behind
/// `Tensor::rand`/`randn`; other types are cast from it).
pub trait FillRandom: Device {
    /// `dst[i] = random_value(dist, seed, offset + i)` for `i < n` (in `f64`).
    ///
    /// # Safety
    /// `dst` is valid for writes of `n` values on this device.
    unsafe fn fill_random(
        dist: Distribution,
        seed: u64,
        offset: u64,
        n: usize,
        dst: *mut f64,
    ) -> Result<()>;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random123's `tests/kat_vectors`, the three `philox4x32 10` lines (counter, key,
    /// result).
    #[test]
    fn philox_matches_the_random123_known_answers() {
        let cases = [
            (
                [0u32; 4],
                [0u32; 2],
                [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8],
            ),
            (
                [u32::MAX; 4],
                [u32::MAX; 2],
                [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd],
            ),
            (
                [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
                [0xa4093822, 0x299f31d0],
                [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1],
            ),
        ];
        for (c, k, want) in cases {
            assert_eq!(philox4x32_10(c, k), want, "counter {c:x?}, key {k:x?}");
        }
    }

    #[test]
    fn uniform_values_stay_below_one_with_few_bits() {
        for bits in [8, 11, 24, 53] {
            for q in 0..2000 {
                let u = random_value(Distribution::Uniform { bits }, 7, q);
                assert!((0.0..1.0).contains(&u), "{u}");
                assert_eq!(u * (bits as f64).exp2(), (u * (bits as f64).exp2()).trunc());
            }
        }
    }
}
