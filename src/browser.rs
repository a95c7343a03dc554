//! What `decide` needs from the browser: the time and fresh identifiers.

use chrono::{DateTime, Utc};
use countersign_domain::MplpId;

/// The current time from the browser's clock.
pub fn now() -> DateTime<Utc> {
    DateTime::from_timestamp_millis(js_sys::Date::now() as i64).unwrap_or_default()
}

/// A fresh UUID v4 from `crypto.getRandomValues` (falls back to `Math.random`
/// only where the Web Crypto API is missing).
pub fn new_id() -> MplpId {
    let mut bytes = [0u8; 16];
    let filled = web_sys::window()
        .and_then(|w| w.crypto().ok())
        .is_some_and(|c| c.get_random_values_with_u8_array(&mut bytes).is_ok());
    if !filled {
        for b in &mut bytes {
            *b = (js_sys::Math::random() * 256.0) as u8;
        }
    }
    MplpId::from_random_bytes(bytes)
}

/// Resolves in a later task (the browser handles input and paints in between).
pub async fn next_task() {
    called_back(|w, callback| w.set_timeout_with_callback(callback).is_ok()).await;
}

/// Resolves after `delay` (in a later task).
pub async fn pause(delay: std::time::Duration) {
    let ms = i32::try_from(delay.as_millis()).unwrap_or(i32::MAX);
    called_back(|w, callback| {
        w.set_timeout_with_callback_and_timeout_and_arguments_0(callback, ms)
            .is_ok()
    })
    .await;
}

/// Waits for `work`, for `delay` at most (the work goes on after that).
pub async fn at_most(
    delay: std::time::Duration,
    work: impl std::future::Future<Output = ()> + 'static,
) {
    let settled = |f: std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>| {
        wasm_bindgen_futures::future_to_promise(async move {
            f.await;
            Ok(wasm_bindgen::JsValue::NULL)
        })
    };
    let first = js_sys::Promise::race(&js_sys::Array::of2(
        &settled(Box::pin(work)),
        &settled(Box::pin(pause(delay))),
    ));
    let _ = wasm_bindgen_futures::JsFuture::from(first).await;
}

/// Resolves once the next frame is painted.
pub async fn after_paint() {
    called_back(|w, callback| w.request_animation_frame(callback).is_ok()).await;
    // Animation frame callbacks run before the paint; the next task runs after it.
    next_task().await;
}

/// Resolves when the browser calls back what `schedule` gave it (at once if
/// it could not be scheduled).
async fn called_back(schedule: impl Fn(&web_sys::Window, &js_sys::Function) -> bool) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        if !web_sys::window().is_some_and(|w| schedule(&w, &resolve)) {
            let _ = resolve.call0(&wasm_bindgen::JsValue::NULL);
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}

/// `text` in lower case, folded by the browser's `toLowerCase` (the same
/// Unicode mapping as Rust's `to_lowercase`) so the first load does not carry
/// Rust's case tables; ASCII text is folded here without crossing into JS.
pub fn lowercase(text: &str) -> String {
    if text.is_ascii() {
        text.to_ascii_lowercase()
    } else {
        js_sys::JsString::from(text).to_lower_case().into()
    }
}

/// Removes what the first paint drew while this code loaded (the inbox, and
/// a review the server drew over it), and shows what the app has drawn
/// (hidden meanwhile by the body's `painting` class). Called once the screen
/// shows something of its own.
pub fn remove_first_paint() {
    let Some(body) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.body())
    else {
        return;
    };
    while let Ok(Some(drawn)) = body.query_selector(".first-paint") {
        drawn.remove();
    }
    let _ = body.class_list().remove_1("painting");
}

/// Whether the first paint on screen is the drawing of review `id` (the
/// server's, `GET /api/v1/reviews/{id}/page`): the review page removes it once
/// it shows something of its own.
pub fn drawn_review(id: &str) -> bool {
    let drawn = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.query_selector(".first-paint[data-review]").ok().flatten());
    drawn.is_some_and(|d| d.get_attribute("data-review").as_deref() == Some(id))
}

/// Whether a Countersign server serves this copy of the app (its
/// `index.html` carries the server's mark; a static host's does not): the
/// app then opens on that server, not on the local demo.
pub fn served_by_server() -> bool {
    meta("countersign-server").is_some()
}

/// The page's `<meta name="{name}">`, if it has one.
pub fn meta(name: &str) -> Option<web_sys::Element> {
    web_sys::window()?
        .document()?
        .query_selector(&format!("meta[name=\"{name}\"]"))
        .ok()?
}

/// The name of this build of the app, which the release build's boot script
/// shares (its `countersign-build` meta); `None` in a build without one.
pub fn build() -> Option<String> {
    meta("countersign-build")?
        .get_attribute("content")
        .filter(|name| !name.is_empty())
}

/// Records a performance mark (read by the benchmarks; harmless otherwise).
pub fn mark(name: &str) {
    if let Some(performance) = web_sys::window().and_then(|w| w.performance()) {
        let _ = performance.mark(name);
    }
}

/// Runs `work` between two marks and records a performance measure `name`
/// (its duration is what the benchmarks read).
pub fn timed<T>(name: &str, work: impl FnOnce() -> T) -> T {
    let start = format!("{name}:start");
    mark(&start);
    let result = work();
    if let Some(performance) = web_sys::window().and_then(|w| w.performance()) {
        let _ = performance.measure_with_start_mark(name, &start);
        performance.clear_marks_with_mark_name(&start);
    }
    result
}

/// Replaces the page with a plain message when the app stops on a bug, so the
/// reviewer never faces a blank page. Saved decisions are in storage already.
pub fn show_fatal(detail: &str) {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let Some(body) = document.body() else { return };
    remove_first_paint();
    body.set_text_content(None);
    if let Ok(panel) = document.create_element("div") {
        panel.set_attribute("role", "alert").ok();
        panel.set_attribute("class", "fatal").ok();
        panel.set_text_content(Some(&format!(
            "Countersign stopped because of a bug: {detail}. Reload the page to continue; \
             every decision saved before this is kept."
        )));
        let _ = body.append_child(&panel);
    }
    web_sys::console::error_1(&detail.into());
}
