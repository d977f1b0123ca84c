//! Element conversions between every pair of the eight element types.
//!
//! The rules, one per kind of pair (the same as NumPy's `astype` and C's casts, except
//! that float-to-integer saturates instead of being undefined):
//! - integer/float to integer/float: Rust's `as` — floats to integers truncate toward zero
//!   and saturate at the integer's range (`NaN` becomes 0); integers to floats round to
//!   nearest, ties to even; `i64 -> i32` keeps the low 32 bits (two's complement wrap).
//! - to `f16`/`bf16`: round to nearest, ties to even, once, from the exact value of any
//!   `f32`, `f64`, `i32` or `i64` (the GPU kernels round the same way, bit for bit).
//! - from `f16`/`bf16`: exactly through `f32`, then as above.
//! - real to complex: imaginary part zero. Complex to real: the real part, the
//!   imaginary part is dropped. Complex to complex: each part as its real type.

use crate::dtype::{bf16, f16, Complex};

/// Conversion of one element from `S`, by the rules in the [module docs](self).
pub trait CastFrom<S>: Sized {
    /// Converts `s`.
    fn cast_from(s: S) -> Self;
}

macro_rules! impl_cast {
    ($dst:ty, $src:ty, |$x:ident| $e:expr) => {
        impl CastFrom<$src> for $dst {
            #[inline]
            fn cast_from($x: $src) -> $dst {
                $e
            }
        }
    };
}

// f32, f64, i32, i64 among themselves: `as`.
macro_rules! prim_to_prims {
    ($src:ty => $($dst:ty),*) => { $( impl_cast!($dst, $src, |x| x as $dst); )* };
}
prim_to_prims!(f32 => f32, f64, i32, i64);
prim_to_prims!(f64 => f32, f64, i32, i64);
prim_to_prims!(i32 => f32, f64, i32, i64);
prim_to_prims!(i64 => f32, f64, i32, i64);

// f16/bf16 to the four primitives: widen exactly to f32, then `as`.
macro_rules! half_to_prims {
    ($src:ty => $($dst:ty),*) => { $( impl_cast!($dst, $src, |x| x.to_f32() as $dst); )* };
}
half_to_prims!(f16 => f32, f64, i32, i64);
half_to_prims!(bf16 => f32, f64, i32, i64);

/// `x` rounded to `f32` by round-to-odd: toward zero, then the last mantissa bit set when
/// anything was dropped. A value rounded to odd with at least two more bits than the
/// final format rounds from there to nearest-even exactly as the exact value would
/// (Boldo & Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms
/// using rounding to odd", IEEE Trans. Computers 57(4), 2008), so `f16`/`bf16` (11 and 8
/// bits) from this `f32` (24 bits) are rounded once. The `half` crate's own `from_f64`
/// goes through a nearest-even `f32` on x86 with F16C, which rounds twice.
fn f32_odd(x: f64) -> f32 {
    let t = x as f32; // nearest, ties to even
    if x.is_nan() || t as f64 == x {
        return t;
    }
    // Inexact (or beyond f32's range): step back toward zero when `t` overshot, then
    // mark inexact in the last bit.
    let bits = t.to_bits();
    let toward_zero = if (t as f64).abs() > x.abs() {
        bits - 1
    } else {
        bits
    };
    f32::from_bits(toward_zero | 1)
}

/// `x` rounded to `f64` by round-to-odd (see [`f32_odd`]); exact below 2^53.
fn f64_odd(x: i64) -> f64 {
    let m = x.unsigned_abs();
    if m < 1 << 53 {
        return x as f64;
    }
    let shift = 11 - m.leading_zeros(); // keep 53 significant bits
    let q = (m >> shift) | ((m & ((1 << shift) - 1) != 0) as u64);
    let v = q as f64 * (1u64 << shift) as f64; // both exact
    if x < 0 {
        -v
    } else {
        v
    }
}

// The four primitives to f16/bf16: rounded once from the exact value (through an f32
// rounded to odd).
macro_rules! prims_to_half {
    ($($dst:ty),*) => {$(
        impl_cast!($dst, f32, |x| <$dst>::from_f32(x));
        impl_cast!($dst, f64, |x| <$dst>::from_f32(f32_odd(x)));
        impl_cast!($dst, i32, |x| <$dst>::from_f32(f32_odd(x as f64)));
        impl_cast!($dst, i64, |x| <$dst>::from_f32(f32_odd(f64_odd(x))));
    )*};
}
prims_to_half!(f16, bf16);

impl_cast!(f16, f16, |x| x);
impl_cast!(bf16, bf16, |x| x);
impl_cast!(f16, bf16, |x| f16::from_f32(x.to_f32()));
impl_cast!(bf16, f16, |x| bf16::from_f32(x.to_f32()));

// Real to complex (imaginary part zero) and complex to real (real part).
macro_rules! real_complex {
    ($part:ty => $($real:ty),*) => {$(
        impl_cast!(Complex<$part>, $real, |x| Complex::new(<$part>::cast_from(x), 0.0));
        impl_cast!($real, Complex<$part>, |x| <$real>::cast_from(x.re));
    )*};
}
real_complex!(f32 => f32, f64, i32, i64, f16, bf16);
real_complex!(f64 => f32, f64, i32, i64, f16, bf16);

macro_rules! complex_complex {
    ($($src:ty => $dst:ty),*) => {$(
        impl_cast!(Complex<$dst>, Complex<$src>,
                   |x| Complex::new(<$dst>::cast_from(x.re), <$dst>::cast_from(x.im)));
    )*};
}
complex_complex!(f32 => f32, f32 => f64, f64 => f32, f64 => f64);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::{c32, c64};

    #[test]
    fn float_to_int_truncates_and_saturates() {
        assert_eq!(i32::cast_from(2.7f64), 2);
        assert_eq!(i32::cast_from(-2.7f64), -2);
        assert_eq!(i32::cast_from(1e10f64), i32::MAX);
        assert_eq!(i32::cast_from(-1e10f32), i32::MIN);
        assert_eq!(i64::cast_from(f64::NAN), 0);
        assert_eq!(i32::cast_from(f16::from_f32(-3.5)), -3);
        assert_eq!(i64::cast_from(c64::new(7.9, 100.0)), 7);
    }

    #[test]
    fn int_narrowing_wraps_like_c() {
        assert_eq!(i32::cast_from((1i64 << 32) + 5), 5);
        assert_eq!(i32::cast_from(-1i64), -1);
    }

    #[test]
    fn half_is_rounded_once_from_doubles_and_wide_integers() {
        // 1 + 2^-11 + 2^-40 lies just above the f16 tie between 1 and 1 + 2^-10; through
        // a nearest-even f32 it would become the tie and round down to 1.
        let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(f16::cast_from(x).to_f64(), 1.0 + 2f64.powi(-10));
        assert_eq!(f16::cast_from(-x).to_f64(), -(1.0 + 2f64.powi(-10)));
        // 2^60 + 2^52 + 1 lies just above the bf16 tie between 2^60 and 2^60 + 2^53; a
        // nearest-even f64 would be the tie itself.
        let n = (1i64 << 60) + (1 << 52) + 1;
        assert_eq!(
            bf16::cast_from(n).to_f64(),
            (1u64 << 60) as f64 + (1u64 << 53) as f64
        );
        assert_eq!(
            bf16::cast_from((1i64 << 60) + (1 << 52)).to_f64(),
            (1u64 << 60) as f64
        );
        // Beyond f32's range, and below its smallest subnormal.
        assert!(bf16::cast_from(1e300f64).to_f32().is_infinite());
        assert_eq!(f16::cast_from(-1e-300f64).to_bits(), 0x8000);
        assert!(f16::cast_from(f64::NAN).is_nan());
    }

    #[test]
    fn half_rounds_to_nearest_even() {
        // 0.1 lies between the f16 neighbours 1638/16384 and 1639/16384; 1638.4 -> 1638.
        assert_eq!(f16::cast_from(0.1f64).to_f64(), 1638.0 / 16384.0);
        // 2049 is halfway between the f16 neighbours 2048 and 2050: ties go to even 2048.
        assert_eq!(f16::cast_from(2049i32).to_f32(), 2048.0);
        assert_eq!(f16::cast_from(2051i64).to_f32(), 2052.0);
        // bf16 has 8 significant bits: 257 is a tie between 256 and 258 -> 256.
        assert_eq!(bf16::cast_from(257i32).to_f32(), 256.0);
        assert_eq!(bf16::cast_from(f16::from_f32(259.0)).to_f32(), 260.0);
        assert!(f16::cast_from(1e6f32).is_infinite());
    }

    #[test]
    fn complex_parts() {
        assert_eq!(c32::cast_from(2.5f64), c32::new(2.5, 0.0));
        assert_eq!(f64::cast_from(c32::new(1.5, -4.0)), 1.5);
        assert_eq!(
            c32::cast_from(c64::new(1.0 + 1e-12, -2.0)),
            c32::new(1.0, -2.0)
        );
        assert_eq!(c64::cast_from(bf16::from_f32(3.0)), c64::new(3.0, 0.0));
    }
}
