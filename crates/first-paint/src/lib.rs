//! The inbox's first page, written before the reviewer app has loaded.
//!
//! The boot script loads this small module before the app on three visits to
//! the inbox: a first visit (no demo stored yet, no server connection saved),
//! where it writes the demo's rows from their summaries; a return to the
//! local inbox, where it writes the head the app stored beside its index (the
//! default page as the app last showed it); and a visit with a
//! Countersign server connection saved on another origin than the page's,
//! where the boot script fetches the server's first page of pending reviews
//! and this module writes it. (A server that serves the page itself writes
//! the same HTML: no module is needed then.) The boot script draws what is
//! written and lets its links be followed; the app, once loaded, replaces
//! the drawing. Its HTML is written by `countersign-markup`, which also
//! writes the app's rows.

use chrono::{DateTime, Utc};
use countersign_domain::wire::{InboxHead, SummaryPage};
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

/// The local inbox's first page from `head` (the text the app stored beside
/// its inbox index), its links under `base`; `None` for a head that does not
/// parse or has no pending review (the app then lists the inbox itself).
#[wasm_bindgen]
pub fn local_inbox(head: &str, base: &str) -> Option<String> {
    let head = serde_json::from_str::<InboxHead>(head).ok()?;
    Inbox::head(&head).map(|inbox| inbox.first_paint(now(), base))
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
