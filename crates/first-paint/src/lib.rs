//! A first visit's inbox, drawn before the reviewer app has loaded.
//!
//! On a first visit (no demo stored yet, no server connection saved) the boot
//! script loads this small module before the app: it draws the inbox of the
//! demo's rows from their summaries, as the app will draw it, and the app,
//! once loaded, replaces it in the same frame. What it draws is inert and
//! hidden from assistive technology: a picture of the inbox, not a second
//! inbox, so a click or a screen reader meets only the app's own.
//!
//! - `markup`: the inbox's HTML for a list of summaries (pure, tested natively).

mod markup;

use chrono::DateTime;
use wasm_bindgen::prelude::*;

/// Where the drawing goes; the app removes the element with this class.
const CLASS: &str = "first-paint";

#[wasm_bindgen(start)]
fn start() {
    let now = DateTime::from_timestamp_millis(js_sys::Date::now() as i64).unwrap_or_default();
    // Damaged summaries draw nothing: the app then shows the inbox itself.
    let Ok(summaries) = countersign_domain::demo::summaries(now) else {
        return;
    };
    let Some(inbox) = markup::inbox(&summaries, now) else {
        return;
    };
    let Some(window) = web_sys::window() else {
        return;
    };
    let Some(body) = window.document().and_then(|d| d.body()) else {
        return;
    };
    let html = format!("<div class=\"{CLASS}\" inert aria-hidden=\"true\">{inbox}</div>");
    if body.insert_adjacent_html("afterbegin", &html).is_ok() {
        if let Some(performance) = window.performance() {
            let _ = performance.mark("countersign:first-row");
        }
    }
}
