//! Countersign's reviewer app (Leptos, client-side rendered to WebAssembly).

mod app;
mod browser;
mod components;
mod demo;
mod desk;
mod download;
mod exchange;
mod keyboard;
mod pages;
mod router;
mod settings;
mod store;
mod time;

fn main() {
    leptos::mount::mount_to_body(app::App);
}
