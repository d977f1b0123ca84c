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

/// Runs `$f::<T>()` for the four BLAS/LAPACK element types.
#[macro_export]
macro_rules! for_blas_dtypes {
    ($f:ident) => {{
        $f::<f32>();
        $f::<f64>();
        $f::<ctensor_base::c32>();
        $f::<ctensor_base::c64>();
    }};
}

/// The unit roundoff of `T`'s real type (0 for integers, which must be exact).
pub fn eps<T: Scalar>() -> f64 {
    use ctensor_base::DataType::*;
    match T::DTYPE {
        Float | ComplexFloat => f32::EPSILON as f64,
        Double | ComplexDouble => f64::EPSILON,
        Half => 9.765625e-4,
        BFloat16 => 7.8125e-3,
        Int | Int64 => 0.0,
    }
}

/// Index in memory of logical element `i` of an `n`-vector with increment `inc`
/// (reference BLAS: a negative increment starts from the far end).
pub fn vidx(i: usize, n: usize, inc: isize) -> usize {
    if inc > 0 {
        i * inc as usize
    } else {
        (n - 1 - i) * inc.unsigned_abs()
    }
}

/// Memory span of an `n`-vector with increment `inc`.
pub fn vspan(n: usize, inc: isize) -> usize {
    if n == 0 {
        0
    } else {
        1 + (n - 1) * inc.unsigned_abs()
    }
}

/// Asserts `|got - want| <= tol` with a message naming the case.
pub fn assert_close(got: c64, want: c64, tol: f64, what: &str) {
    let err = (got - want).norm();
    assert!(
        err <= tol,
        "{what}: got {got}, want {want}, |error| {err:e} > tolerance {tol:e}"
    );
}
