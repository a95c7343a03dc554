//! Links the app's wasm with its relocations (`--emit-relocs`), which
//! wasm-split-cli needs to cut the release build into on-demand chunks
//! (scripts/split-app.mjs). Given to this crate's link alone rather than as
//! rustflags: flags for every crate would make the other wasm builds (the
//! first paint, the benchmarks' Leptos floor) compile every dependency again,
//! and would leave relocations in their wasm.
fn main() {
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32") {
        println!("cargo:rustc-link-arg-bins=--emit-relocs");
    }
}
