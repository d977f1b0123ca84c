//! Stops the build of ctensor-mpi early, with the install command, when a system library
//! it needs is missing. It has no dependencies, so cargo runs it long before rsmpi's
//! build script (which waits for bindgen to compile) could fail with a bare panic.
//!
//! Checks, as the libraries' own build steps find them: `mpicc` on `PATH` or
//! `pkg-config ompi-c` (rsmpi), `pkg-config scalapack-openmpi` and `pkg-config elpa`
//! (ctensor-mpi's build script), and libclang under `LIBCLANG_PATH` or
//! `/usr/lib/llvm-*/lib` (bindgen, for rsmpi's bindings). `PKG_CONFIG` names another
//! pkg-config, as pkg-config-rs reads it.

use std::path::Path;
use std::process::Command;

fn pkg_config_has(name: &str) -> bool {
    let tool = std::env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".into());
    Command::new(tool)
        .args(["--exists", name])
        .status()
        .is_ok_and(|s| s.success())
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|dir| dir.join(program).is_file()))
}

fn has_libclang_in(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("libclang"))
    })
}

fn libclang() -> bool {
    if let Some(dir) = std::env::var_os("LIBCLANG_PATH") {
        return has_libclang_in(Path::new(&dir));
    }
    std::fs::read_dir("/usr/lib").is_ok_and(|entries| {
        entries.flatten().any(|e| {
            e.file_name().to_string_lossy().starts_with("llvm-")
                && has_libclang_in(&e.path().join("lib"))
        })
    })
}

fn main() {
    for var in ["PATH", "PKG_CONFIG", "PKG_CONFIG_PATH", "LIBCLANG_PATH"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let mut missing: Vec<(&str, &str)> = Vec::new();
    if !on_path("mpicc") && !pkg_config_has("ompi-c") {
        missing.push(("Open MPI (mpicc, ompi-c.pc)", "openmpi-bin libopenmpi-dev"));
    }
    if std::env::var_os("CTENSOR_SCALAPACK_LIB").is_none() && !pkg_config_has("scalapack-openmpi") {
        missing.push(("ScaLAPACK for Open MPI", "libscalapack-openmpi-dev"));
    }
    if std::env::var_os("CTENSOR_ELPA_LIB").is_none() && !pkg_config_has("elpa") {
        missing.push(("ELPA", "libelpa-dev"));
    }
    if !libclang() {
        missing.push((
            "libclang (rsmpi generates its MPI bindings with bindgen)",
            "libclang-dev",
        ));
    }
    if missing.is_empty() {
        return;
    }
    let what: Vec<&str> = missing.iter().map(|(w, _)| *w).collect();
    let packages: Vec<&str> = missing.iter().map(|(_, p)| *p).collect();
    eprintln!(
        "\nctensor-mpi (the `mpi` feature) needs system libraries that are not installed: {}.\n\
         Install them with\n\n    bash scripts/ensure-deps.sh mpi\n\nor, on Debian or Ubuntu,\n\n    \
         sudo apt-get install -y {}\n",
        what.join(", "),
        packages.join(" ")
    );
    std::process::exit(1);
}
