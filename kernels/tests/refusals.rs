//! The host kernels of the toolkit's last pieces refuse what they cannot do, with the
//! error the tensor ops pass on, before touching memory: `Fft` for real and integer
//! types, null pointers and sizes that overflow; `ArgExtreme` for complex types and
//! empty rows; `CumSum` and `Pow` for null pointers and overflowing sizes; and the
//! empty cases return at once however large the other extents (a [2^40, 0] running sum
//! once walked its 2^40 empty rows).
#![deny(unused_must_use)]

use ctensor_base::{c64, CpuDevice, Error};
use ctensor_kernels::fft::{Fft, FftDirection};
use ctensor_kernels::linalg::{ArgExtreme, CumSum};
use ctensor_kernels::math::Pow;

/// What a test returns: a failing step names its error.
type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

#[test]
fn fft_refuses_real_types_null_pointers_and_overflow() -> TestResult {
    let mut x = [1.0f64, 2.0];
    // SAFETY: valid memory; the dtype is refused first.
    let e =
        unsafe { CpuDevice::fft_axis(FftDirection::Forward, 1, 2, 1, x.as_mut_ptr()) }.unwrap_err();
    assert!(
        matches!(e, Error::UnsupportedDType { op: "fft", .. }),
        "{e}"
    );
    let mut i = [1i32, 2];
    // SAFETY: as above.
    let e =
        unsafe { CpuDevice::fft_axis(FftDirection::Inverse, 1, 2, 1, i.as_mut_ptr()) }.unwrap_err();
    assert!(matches!(e, Error::UnsupportedDType { .. }), "{e}");
    let null = std::ptr::null_mut::<c64>();
    // SAFETY: the null pointer is reported, not read.
    let e = unsafe { CpuDevice::fft_axis(FftDirection::Forward, 2, 3, 1, null) }.unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
    // SAFETY: the size overflows before any pointer is used.
    let e =
        unsafe { CpuDevice::fft_axis(FftDirection::Forward, usize::MAX, 4, 2, null) }.unwrap_err();
    assert!(matches!(e, Error::Overflow { .. }), "{e}");
    // Empty: nothing to do, however long the lines (no plan of 2^40 points is made).
    // SAFETY: no element is touched.
    unsafe { CpuDevice::fft_axis(FftDirection::Forward, 0, 1 << 40, 3, null) }?;
    // One point: the identity.
    let mut one = [c64::new(3.0, -1.0)];
    // SAFETY: one element.
    unsafe { CpuDevice::fft_axis(FftDirection::Forward, 1, 1, 1, one.as_mut_ptr()) }?;
    assert_eq!(one, [c64::new(3.0, -1.0)]);
    Ok(())
}

#[test]
fn arg_extreme_refuses_complex_types_and_empty_rows() -> TestResult {
    let z = [c64::new(1.0, 0.0)];
    let mut at = [0i64; 3];
    // SAFETY: valid memory; the dtype is refused first.
    let e = unsafe { CpuDevice::arg_extreme(true, 1, 1, z.as_ptr(), at.as_mut_ptr()) }.unwrap_err();
    assert!(
        matches!(e, Error::UnsupportedDType { op: "argmax", .. }),
        "{e}"
    );
    let x = [1.0f64];
    // SAFETY: three rows of nothing: refused before any read.
    let e =
        unsafe { CpuDevice::arg_extreme(false, 3, 0, x.as_ptr(), at.as_mut_ptr()) }.unwrap_err();
    assert!(
        matches!(e, Error::InvalidArgument { op: "argmin", .. }),
        "{e}"
    );
    assert!(e.to_string().contains("argmin"), "{e}");
    // SAFETY: the null pointer is reported, not read.
    let e = unsafe { CpuDevice::arg_extreme(true, 1, 1, std::ptr::null::<f64>(), at.as_mut_ptr()) }
        .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
    // No rows: nothing to write, however long they would be.
    // SAFETY: no element is touched.
    unsafe { CpuDevice::arg_extreme(true, 0, 1 << 40, x.as_ptr(), at.as_mut_ptr()) }?;
    Ok(())
}

#[test]
fn cumsum_and_pow_refuse_null_pointers_and_overflow() -> TestResult {
    let x = [1.0f32, 2.0];
    let mut y = [0.0f32; 2];
    // SAFETY: the null pointer is reported, not read.
    let e =
        unsafe { CpuDevice::cumsum(1, 2, std::ptr::null::<f32>(), y.as_mut_ptr()) }.unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
    // SAFETY: the size overflows before any pointer is used.
    let e = unsafe { CpuDevice::cumsum(usize::MAX, 3, x.as_ptr(), y.as_mut_ptr()) }.unwrap_err();
    assert!(matches!(e, Error::Overflow { .. }), "{e}");
    // 2^40 empty rows: an immediate Ok (this once took minutes).
    let start = std::time::Instant::now();
    // SAFETY: no element is touched.
    unsafe { CpuDevice::cumsum(1 << 40, 0, x.as_ptr(), y.as_mut_ptr()) }?;
    // A hang guard, not a speed claim: walking the rows took minutes.
    assert!(start.elapsed().as_secs() < 60, "the empty rows were walked");
    // SAFETY: the null pointer is reported, not read.
    let e = unsafe { CpuDevice::pow(2, x.as_ptr(), std::ptr::null(), y.as_mut_ptr()) }.unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
    // In place: the output may be either input.
    let mut b = [2.0f64, 3.0];
    let e2 = [3.0f64, 2.0];
    // SAFETY: two elements each; `b` is both the base and the output.
    unsafe { CpuDevice::pow(2, b.as_ptr(), e2.as_ptr(), b.as_mut_ptr()) }?;
    assert_eq!(b, [8.0, 9.0]);
    Ok(())
}

/// cuFFT takes `int` sizes: a line longer than `i32::MAX`, or interleaved lines that span
/// more, is `Error::Overflow`, reported before any pointer is used or the GPU is touched
/// (so it is checked here without one). (More lines than an `int` counts are run in
/// batches of fewer: see the layout test in `kernels/src/gpu/fft.rs`.)
#[cfg(feature = "cuda")]
#[test]
fn gpu_fft_refuses_sizes_beyond_cuffts_int() -> TestResult {
    use ctensor_base::GpuDevice;
    let fake = std::ptr::NonNull::<c64>::dangling().as_ptr();
    for (outer, len, inner) in [
        (1usize, 1usize << 31, 1usize),
        (2, 3, 1 << 31),
        (1, 1 << 16, 1 << 16),
    ] {
        // SAFETY: the sizes are refused before the pointer is read.
        let e = unsafe { GpuDevice::fft_axis(FftDirection::Forward, outer, len, inner, fake) }
            .unwrap_err();
        assert!(
            matches!(e, Error::Overflow { op: "fft", .. }),
            "{outer} {len} {inner}: {e}"
        );
    }
    Ok(())
}
