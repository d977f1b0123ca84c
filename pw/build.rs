//! Links libxc (Debian's libxc-dev, 5.x), the exchange–correlation library ctensor-pw calls.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    match pkg_config::Config::new()
        .atleast_version("5.0")
        .probe("libxc")
    {
        Ok(_) => {}
        Err(e) => {
            // Debian's libxc-dev ships libxc.pc; without it fall back to -lxc and say what
            // to install if that fails too.
            println!("cargo:warning=pkg-config found no libxc ({e}); install it with: apt-get install libxc-dev");
            println!("cargo:rustc-link-lib=xc");
        }
    }
}
