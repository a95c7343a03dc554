//! Reaching the reviewer who looks elsewhere, only after they opted in
//! (Settings): a desktop notification for each new pending request while the
//! tab is hidden (clicking it opens the review), and the pending count as the
//! installed app's badge. The permission prompt only ever follows a click.

use countersign_domain::wire::ReviewSummary;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Notification, NotificationOptions, NotificationPermission};

/// Whether the browser can show notifications at all.
pub fn supported() -> bool {
    web_sys::window()
        .and_then(|w| js_sys::Reflect::has(&w, &"Notification".into()).ok())
        .unwrap_or(false)
}

/// Whether this site may show notifications.
pub fn allowed() -> bool {
    supported() && Notification::permission() == NotificationPermission::Granted
}

/// Asks for permission (call it from a click); whether it was given.
pub async fn ask() -> bool {
    if !supported() {
        return false;
    }
    let Ok(promise) = Notification::request_permission() else {
        return false;
    };
    let answer = wasm_bindgen_futures::JsFuture::from(promise).await;
    answer.ok().and_then(|a| a.as_string()).as_deref() == Some("granted")
}

/// Shows one notification for a new pending request, if the tab is hidden
/// and notifications are allowed; clicking it opens the review here.
pub fn tell_new(summary: &ReviewSummary) {
    let hidden = web_sys::window()
        .and_then(|w| w.document())
        .is_some_and(|d| d.hidden());
    if !hidden || !allowed() {
        return;
    }
    let options = NotificationOptions::new();
    options.set_body(&format!("{} · asked by {}", summary.kind, summary.by));
    // One notification per request, even if the change is announced twice.
    options.set_tag(&summary.id.to_string());
    let title = format!("Waiting for you: {}", summary.title);
    let Ok(shown) = Notification::new_with_options(&title, &options) else {
        return;
    };
    let path = crate::router::href(&format!("/reviews/{}", summary.id));
    let opened = shown.clone();
    let open = Closure::once_into_js(move || {
        opened.close();
        open_here(&path);
    });
    shown.set_onclick(Some(open.unchecked_ref()));
}

/// Brings this tab forward on `path` (the router follows `popstate`).
fn open_here(path: &str) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let _ = window.focus();
    if let Ok(history) = window.history() {
        let _ = history.push_state_with_url(&JsValue::NULL, "", Some(path));
    }
    if let Ok(event) = web_sys::PopStateEvent::new("popstate") {
        let _ = window.dispatch_event(&event);
    }
}

/// Shows `pending` as the installed app's badge (cleared at 0), where the
/// browser supports app badges.
pub fn show_badge(pending: u64) {
    let Some(navigator) = web_sys::window().map(|w| w.navigator()) else {
        return;
    };
    let (name, args) = if pending == 0 {
        ("clearAppBadge", js_sys::Array::new())
    } else {
        (
            "setAppBadge",
            js_sys::Array::of1(&JsValue::from_f64(pending as f64)),
        )
    };
    let method = js_sys::Reflect::get(&navigator, &name.into()).ok();
    if let Some(method) = method.and_then(|m| m.dyn_into::<js_sys::Function>().ok()) {
        // A refused badge (not installed, no permission) changes nothing.
        if let Ok(promise) = method.apply(&navigator, &args) {
            if let Ok(promise) = promise.dyn_into::<js_sys::Promise>() {
                wasm_bindgen_futures::spawn_local(async move {
                    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
                });
            }
        }
    }
}
