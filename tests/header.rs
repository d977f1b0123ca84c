//! `include/ctensor.h` must be what cbindgen generates from `src/ffi`: this test fails
//! when the committed header is stale. `make header` (which sets
//! `CTENSOR_WRITE_HEADER=1`) rewrites it instead.

#[test]
fn committed_header_matches_the_generated_one() {
    let dir = env!("CARGO_MANIFEST_DIR");
    // cbindgen reads the crate through `cargo metadata`. Under `cargo test` cargo is
    // always there (it sets CARGO); a test binary carried to a machine without a Rust
    // toolchain (scripts/gpu-run.sh) cannot run this check.
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    if std::process::Command::new(&cargo)
        .arg("--version")
        .output()
        .is_err()
    {
        println!("SKIP: no cargo on this machine to read the crate for cbindgen");
        return;
    }
    let config =
        cbindgen::Config::from_file(format!("{dir}/cbindgen.toml")).expect("cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_crate(dir)
        .with_config(config)
        .generate()
        .expect("cbindgen could not generate the header");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let path = format!("{dir}/include/ctensor.h");
    if std::env::var_os("CTENSOR_WRITE_HEADER").is_some() {
        std::fs::write(&path, &generated).expect("write include/ctensor.h");
        return;
    }
    let committed = std::fs::read(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/ctensor.h differs from what src/ffi generates: run `make header` and commit it"
    );
}
