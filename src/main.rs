//! Countersign's reviewer app (Leptos, client-side rendered to WebAssembly).

mod app;
mod demo;

fn main() {
    leptos::mount::mount_to_body(app::App);
}
