//! Runtime `(DataType, DeviceType)` to a typed call: the one place where ops turn the
//! tensor's tags into type parameters. No other code matches on data types to pick a type:
//! the C ABI (`src/ffi`) uses these macros too (exported, hidden from the docs). Error
//! arms convert with `.into()`, so a body may return any error type that has
//! `From<ctensor_base::Error>`.

/// Evaluates `$body` with the type alias `$T` bound to the Rust element type of `$dtype`.
#[macro_export]
#[doc(hidden)]
macro_rules! with_dtype {
    ($dtype:expr, $T:ident => $body:expr) => {{
        match $dtype {
            ctensor_base::DataType::Float => {
                type $T = f32;
                $body
            }
            ctensor_base::DataType::Double => {
                type $T = f64;
                $body
            }
            ctensor_base::DataType::Int => {
                type $T = i32;
                $body
            }
            ctensor_base::DataType::Int64 => {
                type $T = i64;
                $body
            }
            ctensor_base::DataType::ComplexFloat => {
                type $T = ctensor_base::c32;
                $body
            }
            ctensor_base::DataType::ComplexDouble => {
                type $T = ctensor_base::c64;
                $body
            }
            ctensor_base::DataType::Half => {
                type $T = ctensor_base::f16;
                $body
            }
            ctensor_base::DataType::BFloat16 => {
                type $T = ctensor_base::bf16;
                $body
            }
        }
    }};
}

/// Evaluates `$body` (which returns a `Result`) with `$T` bound to the element type of
/// `$dtype` when it is one of the BLAS/LAPACK types (f32, f64, c32, c64); any other data
/// type is `Error::UnsupportedDType` for `$op`.
#[macro_export]
#[doc(hidden)]
macro_rules! with_blas_dtype {
    ($dtype:expr, $op:expr, $T:ident => $body:expr) => {{
        match $dtype {
            ctensor_base::DataType::Float => {
                type $T = f32;
                $body
            }
            ctensor_base::DataType::Double => {
                type $T = f64;
                $body
            }
            ctensor_base::DataType::ComplexFloat => {
                type $T = ctensor_base::c32;
                $body
            }
            ctensor_base::DataType::ComplexDouble => {
                type $T = ctensor_base::c64;
                $body
            }
            other => Err(ctensor_base::Error::UnsupportedDType {
                op: $op,
                dtype: other,
                supported: "f32, f64, c32, c64",
            }
            .into()),
        }
    }};
}

/// Evaluates `$body` (which returns a `Result`) with `$D` bound to the device marker of
/// `$device`. Without the `cuda` feature the GPU is `Error::DeviceUnavailable`; with it,
/// a GPU that is not usable at run time gives the same error from the first kernel.
#[macro_export]
#[doc(hidden)]
macro_rules! with_device {
    ($device:expr, $D:ident => $body:expr) => {{
        match $device {
            ctensor_base::DeviceType::Cpu => {
                type $D = ctensor_base::CpuDevice;
                $body
            }
            #[cfg(feature = "cuda")]
            ctensor_base::DeviceType::Gpu => {
                type $D = ctensor_base::GpuDevice;
                $body
            }
            #[cfg(not(feature = "cuda"))]
            ctensor_base::DeviceType::Gpu => Err(ctensor_base::alloc::gpu_unavailable().into()),
        }
    }};
}

/// [`with_device!`] and [`with_blas_dtype!`] together.
#[macro_export]
#[doc(hidden)]
macro_rules! dispatch_blas {
    ($dtype:expr, $device:expr, $op:expr, $T:ident, $D:ident => $body:expr) => {
        $crate::with_device!($device, $D => $crate::with_blas_dtype!($dtype, $op, $T => $body))
    };
}

/// [`with_device!`] and [`with_dtype!`] together.
#[macro_export]
#[doc(hidden)]
macro_rules! dispatch {
    ($dtype:expr, $device:expr, $T:ident, $D:ident => $body:expr) => {
        $crate::with_device!($device, $D => $crate::with_dtype!($dtype, $T => $body))
    };
}

pub(crate) use crate::{dispatch, dispatch_blas, with_device, with_dtype};

/// `Error::UnsupportedDType` for `op` unless `dtype` is one of the BLAS/LAPACK types
/// ([`with_blas_dtype!`]'s test, for an op that may return before any kernel runs).
pub(crate) fn check_blas_dtype(
    op: &'static str,
    dtype: ctensor_base::DataType,
) -> ctensor_base::Result<()> {
    crate::with_blas_dtype!(dtype, op, T => {
        let _ = std::marker::PhantomData::<T>;
        Ok(())
    })
}
