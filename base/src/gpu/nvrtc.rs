//! Custom CUDA C kernels: their sources ([`KernelSource`]), compiled by NVRTC to a cubin
//! for the device (or PTX for the newest architecture the compiler knows when the device
//! is newer), and their names ([`KernelName`]).

use std::ffi::CString;
use std::panic::{catch_unwind, AssertUnwindSafe};

use cudarc::nvrtc::result as nvrtc;

use super::unavailable;
use crate::error::{Error, Result};

/// A CUDA C source of custom kernels, compiled by NVRTC the first time one of its
/// kernels is launched and cached per context.
#[derive(Debug, Clone, Copy)]
pub struct KernelSource {
    /// A short name, unique among the sources (e.g. `elementwise`); it names the
    /// program in compiler messages.
    pub name: &'static str,
    /// The CUDA C source text. It includes no headers, so it compiles with NVRTC alone.
    pub code: &'static str,
}

impl KernelSource {
    /// Compiles the source to PTX with NVRTC for `arch` (e.g. `compute_90`; NVRTC's
    /// default when `None`). Needs only the NVRTC library, no driver and no GPU.
    ///
    /// Errors: [`Error::DeviceUnavailable`] when `libnvrtc` cannot be loaded;
    /// [`Error::Cuda`] with the compiler's log when the source does not compile.
    pub fn compile(&self, arch: Option<&str>) -> Result<String> {
        self.build(arch, false)
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Compiles the source to SASS (a CUBIN image) for the real architecture `arch`
    /// (e.g. `sm_90`): code the driver loads without a JIT step, so it does not depend on
    /// the driver understanding NVRTC's PTX version. Needs only NVRTC.
    ///
    /// Errors: as [`compile`](Self::compile).
    pub fn compile_cubin(&self, arch: &str) -> Result<Vec<u8>> {
        self.build(Some(arch), true)
    }

    /// NVRTC on the source: the PTX text (`cubin == false`) or the CUBIN image.
    fn build(&self, arch: Option<&str>, cubin: bool) -> Result<Vec<u8>> {
        // SAFETY: only loads the library to see whether it is there.
        if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
            return Err(unavailable(
                "the NVRTC library (libnvrtc.so) was not found: install the CUDA toolkit \
                 or add its lib directory to LD_LIBRARY_PATH"
                    .into(),
            ));
        }
        let nvrtc_err = |call: &str, e: nvrtc::NvrtcError| Error::Cuda {
            library: "NVRTC",
            call: format!("{call} ({})", self.name),
            detail: format!("{:?}", e.0),
        };
        let code = CString::new(self.code).map_err(|_| Error::InvalidArgument {
            op: "nvrtc",
            expected: "a kernel source without NUL bytes".into(),
            given: format!("source `{}` with a NUL byte", self.name),
        })?;
        let name = CString::new(format!("{}.cu", self.name)).unwrap_or_default();
        let mut options = vec!["--std=c++17".to_string(), "--fmad=false".to_string()];
        if let Some(arch) = arch {
            options.push(format!("--gpu-architecture={arch}"));
        }
        catch_unwind(AssertUnwindSafe(|| {
            let prog = nvrtc::create_program(&code, Some(&name))
                .map_err(|e| nvrtc_err("nvrtcCreateProgram", e))?;
            // SAFETY: `prog` was just created and is destroyed once, below.
            let compiled = unsafe { nvrtc::compile_program(prog, &options) };
            // SAFETY: as above; the log and the image are copied out before the program
            // goes.
            let out = unsafe {
                match compiled {
                    Ok(()) if cubin => get_cubin(prog).map_err(|e| nvrtc_err("nvrtcGetCUBIN", e)),
                    Ok(()) => nvrtc::get_ptx(prog)
                        .map(|p| c_chars_to_string(&p).into_bytes())
                        .map_err(|e| nvrtc_err("nvrtcGetPTX", e)),
                    Err(e) => {
                        let log = nvrtc::get_program_log(prog)
                            .map(|l| c_chars_to_string(&l))
                            .unwrap_or_default();
                        Err(Error::Cuda {
                            library: "NVRTC",
                            call: format!("nvrtcCompileProgram ({}.cu)", self.name),
                            detail: format!("{:?}:\n{log}", e.0),
                        })
                    }
                }
            };
            // SAFETY: `prog` is live and not used after this.
            let _ = unsafe { nvrtc::destroy_program(prog) };
            out
        }))
        .unwrap_or_else(|_| {
            Err(unavailable(
                "the NVRTC library lacks a function ctensor needs (too old?)".into(),
            ))
        })
    }
}

/// The CUBIN image of a compiled program.
///
/// # Safety
/// `prog` is a live, successfully compiled NVRTC program.
unsafe fn get_cubin(
    prog: cudarc::nvrtc::sys::nvrtcProgram,
) -> std::result::Result<Vec<u8>, nvrtc::NvrtcError> {
    use cudarc::nvrtc::sys as nv;
    let mut size = 0usize;
    // SAFETY: the caller's promise; `size` is an out-parameter.
    unsafe { nv::nvrtcGetCUBINSize(prog, &mut size) }.result()?;
    let mut image = vec![0u8; size];
    // SAFETY: `image` holds the `size` bytes NVRTC reported.
    unsafe { nv::nvrtcGetCUBIN(prog, image.as_mut_ptr() as *mut std::ffi::c_char) }.result()?;
    Ok(image)
}

/// The virtual architectures to try for PTX, newest first: the device's own, then the
/// older ones NVRTC releases keep (NVRTC 13 dropped `compute_70`, older ones do not know
/// the newest); none newer than the device, whose driver could not run it.
pub fn ptx_arch_candidates(major: i32, minor: i32) -> Vec<String> {
    let own = major * 10 + minor;
    let mut out = vec![format!("compute_{own}")];
    for a in [120, 100, 90, 89, 86, 80, 75, 70] {
        if a < own {
            out.push(format!("compute_{a}"));
        }
    }
    out
}

/// Whether NVRTC refused an architecture it does not know.
pub fn is_unknown_arch(e: &Error) -> bool {
    matches!(e, Error::Cuda { detail, .. } if detail.starts_with("NVRTC_ERROR_INVALID_OPTION"))
}

/// Whether a driver status says it refused PTX newer than it understands.
pub(super) fn ptx_too_new(detail: &str) -> bool {
    detail.contains("CUDA_ERROR_UNSUPPORTED_PTX_VERSION")
        || detail.contains("CUDA_ERROR_INVALID_PTX")
}

/// A kernel's name as its parts, joined by `_` (e.g. `["cast", "f16", "f64"]` names
/// `cast_f16_f64`; empty parts are left out). Static parts make a cache key that needs
/// no allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KernelName(pub [&'static str; 3]);

impl std::fmt::Display for KernelName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut first = true;
        for part in self.0.iter().filter(|p| !p.is_empty()) {
            if !first {
                f.write_str("_")?;
            }
            f.write_str(part)?;
            first = false;
        }
        Ok(())
    }
}

pub(super) fn c_chars_to_string(v: &[std::ffi::c_char]) -> String {
    let bytes: Vec<u8> = v.iter().map(|&c| c as u8).take_while(|&b| b != 0).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod arch_tests {
    use super::*;

    #[test]
    fn ptx_fallbacks_go_from_the_device_down_and_never_above_it() {
        assert_eq!(
            ptx_arch_candidates(9, 0),
            [
                "compute_90",
                "compute_89",
                "compute_86",
                "compute_80",
                "compute_75",
                "compute_70"
            ]
        );
        assert_eq!(ptx_arch_candidates(7, 5), ["compute_75", "compute_70"]);
        assert_eq!(ptx_arch_candidates(7, 0), ["compute_70"]);
        assert_eq!(
            ptx_arch_candidates(12, 0)[..2],
            ["compute_120".to_string(), "compute_100".to_string()]
        );
    }

    #[test]
    fn load_errors_are_classified_by_the_library_status() {
        let cuda = |detail: &str| Error::Cuda {
            library: "x",
            call: "y".into(),
            detail: detail.into(),
        };
        assert!(is_unknown_arch(&cuda("NVRTC_ERROR_INVALID_OPTION: ...")));
        assert!(!is_unknown_arch(&cuda("NVRTC_ERROR_COMPILATION")));
        assert!(ptx_too_new("CUDA_ERROR_UNSUPPORTED_PTX_VERSION"));
        assert!(!ptx_too_new("CUDA_ERROR_OUT_OF_MEMORY"));
    }
}
