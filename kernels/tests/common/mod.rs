//! Test helpers: seeded random data of every dtype and a loop over all dtypes.
#![allow(dead_code)]

use ctensor_base::{c64, CastFrom, Scalar};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// A seeded generator, so failures reproduce.
pub fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

/// `n` random values of `T`: integers in -1000..1000 (exact in every dtype but bf16,
/// where they are rounded consistently), complex parts independent.
pub fn random_vec<T: Scalar>(rng: &mut StdRng, n: usize) -> Vec<T> {
    (0..n)
        .map(|_| {
            let re = rng.gen_range(-1000i32..1000) as f64
                / if T::DTYPE.is_integer() { 1.0 } else { 8.0 };
            let im = rng.gen_range(-1000i32..1000) as f64 / 8.0;
            T::cast_from(c64::new(re, im))
        })
        .collect()
}

/// Runs `$f::<T>()` for each of the eight element types.
#[macro_export]
macro_rules! for_all_dtypes {
    ($f:ident) => {{
        $f::<f32>();
        $f::<f64>();
        $f::<i32>();
        $f::<i64>();
        $f::<ctensor_base::c32>();
        $f::<ctensor_base::c64>();
        $f::<ctensor_base::f16>();
        $f::<ctensor_base::bf16>();
    }};
}

/// Sizes every kernel test covers: empty, one, odd, and more than 256.
pub const SIZES: [usize; 6] = [0, 1, 2, 7, 257, 1000];

/// Converts `x` for comparisons that print well.
pub fn c<T: Scalar>(x: T) -> c64 {
    c64::cast_from(x.to_c64())
}
