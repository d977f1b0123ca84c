//! The FFTW backend's refusals (a binary of its own: the environment is read once per
//! process): a malformed `CTENSOR_FFT`, and an FFTW library that cannot be loaded, are
//! errors that say what was expected, and the rustfft backend keeps working.

use ctensor_base::{c64, CpuDevice, Error};
use ctensor_kernels::fft::{host_fft, set_host_fft, Fft, FftDirection, HostFft};
use ctensor_kernels::sphere_fft::SpherePlan;

#[test]
fn a_bad_choice_or_a_missing_library_is_an_error_and_rustfft_stays() {
    // The only test of this binary: the variables are set before anything reads them.
    std::env::set_var("CTENSOR_FFT", "fastest");
    std::env::set_var("CTENSOR_FFTW_LIB", "/nonexistent/libfftw3.so.3");
    match host_fft() {
        Err(Error::InvalidArgument {
            given, expected, ..
        }) => {
            assert!(
                given.contains("fastest") && expected.contains("fftw"),
                "{given} / {expected}"
            );
        }
        other => panic!("expected InvalidArgument for CTENSOR_FFT=fastest, got {other:?}"),
    }
    let mut x = [c64::new(1.0, 0.0), c64::new(0.0, 0.0)];
    // SAFETY: two elements.
    let r = unsafe { CpuDevice::fft_axis(FftDirection::Forward, 1, 2, 1, x.as_mut_ptr()) };
    assert!(matches!(r, Err(Error::InvalidArgument { .. })), "{r:?}");
    match set_host_fft(HostFft::Fftw) {
        Err(e) => {
            let m = e.to_string();
            assert!(
                m.contains("/nonexistent/libfftw3.so.3") && m.contains("libfftw3-double3"),
                "{m}"
            );
        }
        Ok(()) => panic!("a missing FFTW must be refused"),
    }
    // The sphere transform: the malformed choice, and FFTW asked for by name, are errors.
    match SpherePlan::<f64>::new([2, 2, 2], &[0]) {
        Err(Error::InvalidArgument { given, .. }) => assert!(given.contains("fastest"), "{given}"),
        other => panic!("expected InvalidArgument, got {:?}", other.err()),
    }
    match SpherePlan::<f64>::with_backend([2, 2, 2], &[0], HostFft::Fftw) {
        Err(e) => assert!(e.to_string().contains("/nonexistent/libfftw3.so.3"), "{e}"),
        Ok(_) => panic!("a missing FFTW must be refused by the sphere plan"),
    }
    set_host_fft(HostFft::RustFft).unwrap();
    assert_eq!(host_fft().unwrap(), HostFft::RustFft);
    // ... and with rustfft chosen, the sphere plan works: one coefficient at G = 0 is the
    // constant 1 on the box.
    let plan = SpherePlan::<f64>::new([2, 2, 2], &[0]).unwrap();
    assert_eq!(plan.backend(), HostFft::RustFft);
    let mut grid = [c64::new(0.0, 0.0); 8];
    plan.to_grid(1, &[c64::new(1.0, 0.0)], &mut grid).unwrap();
    assert!(grid.iter().all(|&g| g == c64::new(1.0, 0.0)), "{grid:?}");
    // SAFETY: two elements.
    unsafe { CpuDevice::fft_axis(FftDirection::Forward, 1, 2, 1, x.as_mut_ptr()) }.unwrap();
    assert_eq!(x, [c64::new(1.0, 0.0), c64::new(1.0, 0.0)]);
}
