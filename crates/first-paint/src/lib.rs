//! The inbox's first page, written before the reviewer app has loaded.
//!
//! The boot script loads this small module before the app on two visits to
//! the inbox: a first visit (no demo stored yet, no server connection saved),
//! where it writes the demo's rows from their summaries, and a visit with a
//! Countersign server connection saved on another origin than the page's,
//! where the boot script fetches the server's first page of pending reviews
//! and this module writes it. (A server that serves the page itself writes
//! the same HTML: no module is needed then.) The boot script draws what is
//! written and lets its links be followed; the app, once loaded, replaces
//! the drawing. Its HTML is written by `countersign-markup`, which also
//! writes the app's rows.

use chrono::{DateTime, Utc};
use countersign_domain::wire::SummaryPage;
use countersign_markup::Inbox;
use wasm_bindgen::prelude::*;

/// The demo's inbox (a first visit), its links under `base` (the path the app
/// is served under); `None` when there is nothing to draw.
#[wasm_bindgen]
pub fn demo_inbox(base: &str) -> Option<String> {
    let now = now();
    // Damaged summaries draw nothing: the app then shows the inbox itself.
    let summaries = countersign_domain::demo::summaries(now).ok()?;
    Inbox::of(&summaries).map(|inbox| inbox.first_paint(now, base))
}

/// The first page of pending reviews that the Countersign server at `server`
/// answered with `answer` (the body of `GET /api/v1/reviews?
/// view=summary&status=pending&order=expiring&limit=50`), its links under
/// `base`; `None` for an answer that is not such a page or an empty one (the
/// app then lists the inbox itself and says what is wrong).
#[wasm_bindgen]
pub fn served_inbox(server: &str, answer: &str, base: &str) -> Option<String> {
    let page = serde_json::from_str::<SummaryPage>(answer).ok()?;
    Inbox::served(&page, server).map(|inbox| inbox.first_paint(now(), base))
}

fn now() -> DateTime<Utc> {
    DateTime::from_timestamp_millis(js_sys::Date::now() as i64).unwrap_or_default()
}
