//! The C ABI's shared library gets a versioned SONAME, `libctensor.so.0`, so programs
//! linked with `-lctensor` record the ABI version they were built against (the `0`
//! changes when the ABI breaks). The static library and the rlib need nothing here.

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os == "linux" {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libctensor.so.0");
    }
    // Which features this build has, for the demo's banner (a shared target directory
    // can hold a facade built with other features).
    let features: Vec<String> = std::env::vars()
        .filter_map(|(k, _)| k.strip_prefix("CARGO_FEATURE_").map(|f| f.to_lowercase()))
        .collect();
    println!(
        "cargo:rustc-env=CTENSOR_BUILD_FEATURES={}",
        features.join(",")
    );
}
