//! Every CUDA C source compiles with NVRTC, and every kernel name the Rust side launches
//! is an entry point of the PTX made from its source. No GPU is needed, only the NVRTC
//! library; `make check-cuda` provides it from PyPI and sets `CTENSOR_REQUIRE_NVRTC=1`,
//! which turns the SKIP (no NVRTC) into a failure.
#![cfg(feature = "cuda")]

use ctensor_base::Error;
use ctensor_kernels::gpu::source::{KERNELS, SOURCES};

/// `true` when NVRTC can be used; otherwise prints the SKIP line, or fails when NVRTC is
/// required.
fn nvrtc_or_skip() -> bool {
    let probe = ctensor_base::gpu::KernelSource {
        name: "probe",
        code: "extern \"C\" __global__ void probe() {}",
    };
    match probe.compile(None) {
        Ok(_) => true,
        Err(Error::DeviceUnavailable { reason, .. }) => {
            assert!(
                std::env::var("CTENSOR_REQUIRE_NVRTC").is_err(),
                "CTENSOR_REQUIRE_NVRTC is set but NVRTC is unavailable: {reason}"
            );
            println!("SKIP: {reason}");
            false
        }
        Err(e) => panic!("NVRTC is present but cannot compile an empty kernel: {e}"),
    }
}

/// The names of the `.entry` points in a PTX text.
fn entries(ptx: &str) -> Vec<String> {
    ptx.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let rest = l
                .strip_prefix(".visible .entry ")
                .or_else(|| l.strip_prefix(".entry "))?;
            Some(rest.split(['(', ' ']).next()?.to_string())
        })
        .collect()
}

#[test]
fn cuda_every_source_compiles_and_defines_every_launched_kernel() {
    if !nvrtc_or_skip() {
        return;
    }
    let mut checked = 0;
    for src in SOURCES.iter().copied() {
        // compute_70 (Volta) is the oldest architecture ctensor targets; NVRTC 13
        // dropped it, and there compute_75 is the oldest. The runtime compiles for the
        // GPU it finds.
        let ptx = match src.compile(Some("compute_70")) {
            Err(e) if ctensor_base::gpu::is_unknown_arch(&e) => src.compile(Some("compute_75")),
            other => other,
        }
        .unwrap_or_else(|e| panic!("{}.cu does not compile:\n{e}", src.name));
        let have = entries(&ptx);
        for k in KERNELS.iter().filter(|k| std::ptr::eq(k.source, src)) {
            for name in k.names() {
                assert!(
                    have.contains(&name),
                    "kernel {name} is launched from Rust but {}.cu does not define it",
                    src.name
                );
                checked += 1;
            }
        }
        println!("{}.cu: {} entry points", src.name, have.len());
    }
    // 13 element-wise kernels, 64 casts, 4 layout, 2 reductions and the matmul loop.
    assert!(checked > 150, "only {checked} kernel names checked");
    println!("{checked} launched kernel names found in the PTX");
}

#[test]
fn cuda_a_source_that_does_not_compile_is_an_nvrtc_error_with_the_log() {
    if !nvrtc_or_skip() {
        return;
    }
    let bad = ctensor_base::gpu::KernelSource {
        name: "broken",
        code: "extern \"C\" __global__ void k(float* x) { x[0] = undefined_name; }",
    };
    match bad.compile(None) {
        Err(Error::Cuda {
            library,
            call,
            detail,
        }) => {
            assert_eq!(library, "NVRTC");
            assert!(call.contains("broken.cu"), "{call}");
            assert!(
                detail.contains("undefined_name"),
                "the log should name the error: {detail}"
            );
        }
        other => panic!("expected an NVRTC error, got {other:?}"),
    }
}

/// An architecture NVRTC does not know is `NVRTC_ERROR_INVALID_OPTION`: the runtime
/// recognises that status to retry for an older architecture (and only that status).
#[test]
fn cuda_an_unknown_architecture_is_an_invalid_option() {
    if !nvrtc_or_skip() {
        return;
    }
    match SOURCES[0].compile(Some("compute_1")) {
        Err(Error::Cuda {
            library: "NVRTC",
            detail,
            ..
        }) => {
            assert!(detail.starts_with("NVRTC_ERROR_INVALID_OPTION"), "{detail}");
        }
        other => panic!("expected NVRTC_ERROR_INVALID_OPTION, got {other:?}"),
    }
}

/// The runtime loads SASS for the GPU's exact architecture first (so a driver older than
/// NVRTC's PTX version still runs the kernels): every source must compile to a CUBIN for
/// the data-centre GPUs ctensor is used on, and the image must be an ELF file.
#[test]
fn cuda_every_source_compiles_to_sass_for_ampere_and_hopper() {
    if !nvrtc_or_skip() {
        return;
    }
    for arch in ["sm_80", "sm_90"] {
        for src in SOURCES.iter().copied() {
            let bin = src
                .compile_cubin(arch)
                .unwrap_or_else(|e| panic!("{}.cu does not compile for {arch}:\n{e}", src.name));
            assert_eq!(
                &bin[..4],
                b"\x7fELF",
                "{}.cu for {arch}: not an ELF image",
                src.name
            );
        }
    }
}
