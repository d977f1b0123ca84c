//! Links the system OpenBLAS (CBLAS and LAPACK in one library) into every binary that uses
//! ctensor. The `cblas` and `lapack` crates only declare the symbols; this is where they
//! come from. pkg-config finds Debian's `openblas.pc` (libopenblas-dev); without it we
//! fall back to `-lopenblas` on the default search path and say so.

fn main() {
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-env-changed=CTENSOR_OPENBLAS_LIB_DIR");
    if let Ok(dir) = std::env::var("CTENSOR_OPENBLAS_LIB_DIR") {
        println!("cargo:rustc-link-search=native={dir}");
        println!("cargo:rustc-link-lib=dylib=openblas");
        return;
    }
    if let Err(e) = pkg_config::Config::new().probe("openblas") {
        println!(
            "cargo:warning=pkg-config found no openblas ({e}); linking -lopenblas from the \
             default search path (set CTENSOR_OPENBLAS_LIB_DIR, or run `make deps`)"
        );
        println!("cargo:rustc-link-lib=dylib=openblas");
    }
}
