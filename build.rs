//! Links the app's wasm with its relocations (`--emit-relocs`), which
//! wasm-split-cli needs to cut the release build into on-demand chunks
//! (scripts/split-app.mjs). Given to this crate's link alone rather than as
//! rustflags: flags for every crate would make the other wasm builds (the
//! first paint, the benchmarks' Leptos floor) compile every dependency again,
//! and would leave relocations in their wasm. Builds without the `split`
//! feature (`trunk serve`, scripts/run.sh) are not cut and get none.
fn main() {
    let wasm = std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32");
    // Only the split build is cut; another build's relocations are dead weight.
    if wasm && std::env::var_os("CARGO_FEATURE_SPLIT").is_some() {
        println!("cargo:rustc-link-arg-bins=--emit-relocs");
    }
}
