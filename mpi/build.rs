//! Links ScaLAPACK (with its BLACS) built for OpenMPI: Debian's
//! `libscalapack-openmpi-dev`, found through its `scalapack-openmpi.pc`. MPI itself is
//! linked by rsmpi (`mpi-sys`), BLAS/LAPACK by ctensor-base (OpenBLAS).

fn main() {
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
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
