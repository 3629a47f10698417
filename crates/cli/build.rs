//! Links `pmu` as a position-dependent executable on Linux: the event tables are
//! static data full of pointers, and a position-independent binary has the dynamic
//! loader patch each of them (16,000 relocations, which touch every page of the
//! tables) before `main`; fixed addresses need none (docs/PERFORMANCE.md, start-up).

fn main() {
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    let gnu_or_musl = std::env::var("CARGO_CFG_TARGET_ENV").is_ok_and(|env| env == "gnu" || env == "musl");
    // A static build (`-C target-feature=+crt-static`) is linked by rustc as a static
    // PIE, or without PIE under `-C relocation-model=static`; `-no-pie` beside
    // `-static-pie` gives a binary that cannot run.
    let crt_static = std::env::var("CARGO_CFG_TARGET_FEATURE").is_ok_and(|f| f.split(',').any(|f| f == "crt-static"));
    if linux && gnu_or_musl && !crt_static {
        println!("cargo::rustc-link-arg-bins=-no-pie");
    }
}
