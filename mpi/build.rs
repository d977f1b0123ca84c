//! Links ELPA and ScaLAPACK (with its BLACS) built for OpenMPI: Debian's `libelpa-dev`
//! and `libscalapack-openmpi-dev`, found through `elpa.pc` and `scalapack-openmpi.pc`.
//! MPI itself is linked by rsmpi (`mpi-sys`), BLAS/LAPACK by ctensor-base (OpenBLAS).

fn main() {
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-env-changed=CTENSOR_ELPA_LIB");
    match std::env::var("CTENSOR_ELPA_LIB") {
        // e.g. `elpa_openmp`, on the default search path or through RUSTFLAGS=-L.
        Ok(lib) => println!("cargo:rustc-link-lib=dylib={lib}"),
        Err(_) => {
            if let Err(e) = pkg_config::Config::new().probe("elpa") {
                println!(
                    "cargo:warning=pkg-config found no elpa ({e}); linking -lelpa from the \
                     default search path (set CTENSOR_ELPA_LIB, or run `bash \
                     scripts/ensure-deps.sh mpi`)"
                );
                println!("cargo:rustc-link-lib=dylib=elpa");
            }
        }
    }
    println!("cargo:rerun-if-env-changed=CTENSOR_SCALAPACK_LIB");
    if let Ok(lib) = std::env::var("CTENSOR_SCALAPACK_LIB") {
        // e.g. `scalapack` or `mkl_scalapack_lp64`, found on the default search path or
        // through RUSTFLAGS=-L.
        println!("cargo:rustc-link-lib=dylib={lib}");
        return;
    }
    if let Err(e) = pkg_config::Config::new().probe("scalapack-openmpi") {
        println!(
            "cargo:warning=pkg-config found no scalapack-openmpi ({e}); linking \
             -lscalapack-openmpi from the default search path (set CTENSOR_SCALAPACK_LIB, \
             or run `bash scripts/ensure-deps.sh mpi`)"
        );
        println!("cargo:rustc-link-lib=dylib=scalapack-openmpi");
    }
}
