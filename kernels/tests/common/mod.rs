//! Test helpers: seeded random data of every dtype and a loop over all dtypes.
#![allow(dead_code)]

use ctensor_base::{c64, CastFrom, Scalar};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// What a test function returns: a failing step names its error rather than a line in a
/// panic.
pub type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

/// A helper's outcome as a [`TestResult`]: `()` for helpers that only assert, the
/// `Result` for those that use `?`, so the dtype loops below take both.
pub trait Outcome {
    /// `Ok(())`, or the helper's error.
    fn outcome(self) -> TestResult;
}

impl Outcome for () {
    fn outcome(self) -> TestResult {
        Ok(())
    }
}

impl<E: Into<Box<dyn std::error::Error>>> Outcome for std::result::Result<(), E> {
    fn outcome(self) -> TestResult {
        self.map_err(Into::into)
    }
}

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

/// Runs `$f::<T>()` (or `$f::<D, T>()`) for each of the eight element types.
#[macro_export]
macro_rules! for_all_dtypes {
    ($f:ident, $D:ty) => {{
        $crate::common::Outcome::outcome($f::<$D, f32>())?;
        $crate::common::Outcome::outcome($f::<$D, f64>())?;
        $crate::common::Outcome::outcome($f::<$D, i32>())?;
        $crate::common::Outcome::outcome($f::<$D, i64>())?;
        $crate::common::Outcome::outcome($f::<$D, ctensor_base::c32>())?;
        $crate::common::Outcome::outcome($f::<$D, ctensor_base::c64>())?;
        $crate::common::Outcome::outcome($f::<$D, ctensor_base::f16>())?;
        $crate::common::Outcome::outcome($f::<$D, ctensor_base::bf16>())?;
    }};
    ($f:ident) => {{
        $crate::common::Outcome::outcome($f::<f32>())?;
        $crate::common::Outcome::outcome($f::<f64>())?;
        $crate::common::Outcome::outcome($f::<i32>())?;
        $crate::common::Outcome::outcome($f::<i64>())?;
        $crate::common::Outcome::outcome($f::<ctensor_base::c32>())?;
        $crate::common::Outcome::outcome($f::<ctensor_base::c64>())?;
        $crate::common::Outcome::outcome($f::<ctensor_base::f16>())?;
        $crate::common::Outcome::outcome($f::<ctensor_base::bf16>())?;
    }};
}

/// Sizes every kernel test covers: empty, one, odd, and more than 256.
pub const SIZES: [usize; 6] = [0, 1, 2, 7, 257, 1000];

/// Converts `x` for comparisons that print well.
pub fn c<T: Scalar>(x: T) -> c64 {
    c64::cast_from(x.to_c64())
}

/// Runs `$f::<T>()` (or `$f::<D, T>()`) for the four BLAS/LAPACK element types.
#[macro_export]
macro_rules! for_blas_dtypes {
    ($f:ident, $D:ty) => {{
        $crate::common::Outcome::outcome($f::<$D, f32>())?;
        $crate::common::Outcome::outcome($f::<$D, f64>())?;
        $crate::common::Outcome::outcome($f::<$D, ctensor_base::c32>())?;
        $crate::common::Outcome::outcome($f::<$D, ctensor_base::c64>())?;
    }};
    ($f:ident) => {{
        $crate::common::Outcome::outcome($f::<f32>())?;
        $crate::common::Outcome::outcome($f::<f64>())?;
        $crate::common::Outcome::outcome($f::<ctensor_base::c32>())?;
        $crate::common::Outcome::outcome($f::<ctensor_base::c64>())?;
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

/// The devices a kernel test runs on: the CPU always, the GPU when one is usable.
pub trait TestDevice: ctensor_base::Device {}
impl TestDevice for ctensor_base::CpuDevice {}
#[cfg(feature = "cuda")]
impl TestDevice for ctensor_base::GpuDevice {}

/// A test buffer on device `D`: the host vector itself on the CPU, a device copy of it
/// on the GPU. Kernels take [`Buf::ptr`]; [`Buf::get`] reads the contents back.
pub struct Buf<T: Scalar> {
    host: Vec<T>,
    #[cfg(feature = "cuda")]
    dev: Option<ctensor_base::alloc::Allocation>,
}

impl<T: Scalar> Buf<T> {
    /// `host` placed where device `D` computes.
    pub fn on<D: TestDevice>(host: Vec<T>) -> Buf<T> {
        #[cfg(feature = "cuda")]
        if D::TYPE == ctensor_base::DeviceType::Gpu {
            let bytes = std::mem::size_of_val(&host[..]);
            let a = ctensor_base::alloc::Allocation::zeroed(ctensor_base::DeviceType::Gpu, bytes)
                .unwrap();
            // SAFETY: `a` holds `bytes` device bytes, `host` as many host bytes.
            unsafe {
                ctensor_base::gpu::copy_h2d(a.as_ptr() as u64, host.as_ptr() as *const u8, bytes)
                    .unwrap()
            };
            return Buf { host, dev: Some(a) };
        }
        Buf {
            host,
            #[cfg(feature = "cuda")]
            dev: None,
        }
    }

    /// The pointer kernels on `D` take.
    pub fn ptr(&mut self) -> *mut T {
        #[cfg(feature = "cuda")]
        if let Some(a) = &self.dev {
            return a.as_ptr() as *mut T;
        }
        self.host.as_mut_ptr()
    }

    /// The contents now.
    pub fn get(&self) -> Vec<T> {
        #[cfg(feature = "cuda")]
        if let Some(a) = &self.dev {
            let mut out = self.host.clone();
            // SAFETY: both hold `host.len()` elements.
            unsafe {
                ctensor_base::gpu::copy_d2h(
                    out.as_mut_ptr() as *mut u8,
                    a.as_ptr() as u64,
                    a.bytes(),
                )
                .unwrap()
            };
            return out;
        }
        self.host.clone()
    }
}

/// Prints the `SKIP` line of a GPU case that cannot run here, or fails when
/// `CTENSOR_REQUIRE_GPU` is set (scripts/gpu-run.sh sets it: on the GPU machine a skipped
/// GPU case means the GPU could not be used, which must not pass unseen).
pub fn skip_gpu(test: &str, reason: &str) {
    assert!(
        std::env::var_os("CTENSOR_REQUIRE_GPU").is_none(),
        "{test}: CTENSOR_REQUIRE_GPU is set but the GPU is unusable: {reason}"
    );
    println!("SKIP: {test}: {reason}");
}

/// Declares a GPU-only test: runs `$body` when a GPU is usable, otherwise prints one
/// `SKIP: <test>: <reason>` line and passes.
#[macro_export]
macro_rules! gpu_test {
    ($name:ident, $body:block) => {
        #[test]
        fn $name() {
            if let Some(reason) = ctensor_base::gpu::unavailable_reason() {
                $crate::common::skip_gpu(stringify!($name), &reason);
                return;
            }
            $body
        }
    };
    // The same, for a body that uses `?` and ends in `Ok(())`.
    ($name:ident, -> Result $body:block) => {
        #[test]
        fn $name() -> $crate::common::TestResult {
            if let Some(reason) = ctensor_base::gpu::unavailable_reason() {
                $crate::common::skip_gpu(stringify!($name), &reason);
                return Ok(());
            }
            $body
        }
    };
}

/// Declares test `$name` with a `cpu` and a `gpu` case, each running `$body` with the
/// device marker bound to `$D`. Without a usable GPU the `gpu` case prints one
/// `SKIP: <test>: <reason>` line and passes.
#[macro_export]
macro_rules! device_test {
    ($name:ident, $D:ident => $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            #[test]
            fn cpu() {
                #[allow(dead_code)]
                type $D = ctensor_base::CpuDevice;
                $body
            }

            #[cfg(feature = "cuda")]
            #[test]
            fn gpu() {
                if let Some(reason) = ctensor_base::gpu::unavailable_reason() {
                    $crate::common::skip_gpu(&format!("{}::gpu", module_path!()), &reason);
                    return;
                }
                #[allow(dead_code)]
                type $D = ctensor_base::GpuDevice;
                $body
            }
        }
    };
    // The same, for a body that uses `?` and ends in `Ok(())`.
    ($name:ident, $D:ident -> Result $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            #[test]
            fn cpu() -> std::result::Result<(), Box<dyn std::error::Error>> {
                #[allow(dead_code)]
                type $D = ctensor_base::CpuDevice;
                $body
            }

            #[cfg(feature = "cuda")]
            #[test]
            fn gpu() -> std::result::Result<(), Box<dyn std::error::Error>> {
                if let Some(reason) = ctensor_base::gpu::unavailable_reason() {
                    $crate::common::skip_gpu(&format!("{}::gpu", module_path!()), &reason);
                    return Ok(());
                }
                #[allow(dead_code)]
                type $D = ctensor_base::GpuDevice;
                $body
            }
        }
    };
}

/// The special real and imaginary parts of the element-wise tests: signed zeros, a
/// finite value of each sign, the infinities and NaN.
pub const SPECIAL_PARTS: [f64; 7] = [
    0.0,
    -0.0,
    1.0,
    -2.5,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
];

/// Every pair of the 49 complex numbers whose parts are each one of 0, −0, 1, −2.5, ∞, −∞
/// and NaN, as `x` and `y` (2 401 elements), and a third operand `z` from the same values
/// in another order: the element-wise tests on special values.
pub fn special_value_operands() -> [Vec<c64>; 3] {
    let parts = SPECIAL_PARTS;
    let vals: Vec<c64> = parts
        .iter()
        .flat_map(|&re| parts.iter().map(move |&im| c64::new(re, im)))
        .collect();
    let m = vals.len();
    [
        (0..m * m).map(|k| vals[k / m]).collect(),
        (0..m * m).map(|k| vals[k % m]).collect(),
        (0..m * m).map(|k| vals[(k * 5 + 3) % m]).collect(),
    ]
}
