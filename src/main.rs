//! Countersign's reviewer app (Leptos, client-side rendered to WebAssembly).

mod app;
mod backend;
mod browser;
mod components;

mod desk;
mod download;
mod exchange;
mod keyboard;
mod notify;
mod pages;
mod router;
mod settings;
mod split;

fn main() {
    browser::mark("countersign:start");
    std::panic::set_hook(Box::new(|info| browser::show_fatal(&info.to_string())));
    leptos::mount::mount_to_body(app::App);
}
