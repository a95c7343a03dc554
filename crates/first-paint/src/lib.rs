//! The inbox's first page, drawn before the reviewer app has loaded.
//!
//! The boot script loads this small module before the app on two visits to
//! the inbox: a first visit (no demo stored yet, no server connection saved),
//! where it draws the demo's rows from their summaries, and a visit with a
//! Countersign server connection saved, where the boot script fetches the
//! server's first page of pending reviews and this module draws it. The app,
//! once loaded, replaces the drawing when its inbox shows something of its
//! own. What is drawn is inert and hidden from assistive technology: a picture
//! of the inbox, not a second inbox, so a click or a screen reader meets only
//! the app's own. Its HTML is written by `countersign-markup`, which also
//! writes the app's rows.

use chrono::{DateTime, Utc};
use countersign_domain::wire::SummaryPage;
use countersign_markup::Inbox;
use wasm_bindgen::prelude::*;

/// Draws the demo's inbox (a first visit), its links under `base` (the path
/// the app is served under); whether anything was drawn.
#[wasm_bindgen]
pub fn draw_demo(base: &str) -> bool {
    let now = now();
    // Damaged summaries draw nothing: the app then shows the inbox itself.
    let Ok(summaries) = countersign_domain::demo::summaries(now) else {
        return false;
    };
    Inbox::of(&summaries).is_some_and(|inbox| draw(&inbox.html(now, base)))
}

/// Draws the first page of pending reviews that the Countersign server at
/// `server` answered with `answer` (the body of `GET /api/v1/reviews?
/// view=summary&status=pending&order=expiring&limit=50`); whether anything was drawn. An
/// answer that is not such a page draws nothing: the app then lists the
/// inbox itself and says what is wrong. Links are under `base`.
#[wasm_bindgen]
pub fn draw_served(server: &str, answer: &str, base: &str) -> bool {
    let Ok(page) = serde_json::from_str::<SummaryPage>(answer) else {
        return false;
    };
    Inbox::served(&page, server).is_some_and(|inbox| draw(&inbox.html(now(), base)))
}

fn now() -> DateTime<Utc> {
    DateTime::from_timestamp_millis(js_sys::Date::now() as i64).unwrap_or_default()
}

/// Puts the drawing at the top of the page and hides whatever the app has
/// drawn meanwhile (class `painting`, cleared with the drawing).
fn draw(inbox: &str) -> bool {
    let Some(window) = web_sys::window() else {
        return false;
    };
    let Some(body) = window.document().and_then(|d| d.body()) else {
        return false;
    };
    let html = format!("<div class=\"first-paint\" inert aria-hidden=\"true\">{inbox}</div>");
    if body.insert_adjacent_html("afterbegin", &html).is_err() {
        return false;
    }
    let _ = body.class_list().add_1("painting");
    if let Some(performance) = window.performance() {
        let _ = performance.mark("countersign:first-row");
    }
    true
}
