//! Keeps a server-backed desk fresh: loads every review, then follows the
//! server's Server-Sent Events; when the stream is unavailable, refreshes every
//! 10 seconds instead. The connection state is shown in the header.

use crate::desk::{Desk, Link};
use crate::store::{review_of, HttpStore};
use leptos::prelude::*;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{EventSource, MessageEvent};

const CHANGE_EVENTS: [&str; 4] = [
    "review.created",
    "review.decided",
    "review.resubmitted",
    "review.redeemed",
];
const POLL_SECONDS: u32 = 10;

thread_local! {
    /// Whether the live stream is open now (only then is the desk "Live").
    static STREAM_OPEN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Opens the live stream first (so nothing is missed), then loads every review.
pub fn connect(desk: Desk, server: HttpStore) {
    follow(desk, &server);
    leptos::task::spawn_local(refresh(desk, server));
    retry_queued(desk);
}

/// Tries the queued decisions every 5 seconds while there are any.
fn retry_queued(desk: Desk) {
    let tick = Closure::<dyn Fn()>::new(move || {
        if desk.outbox.with_untracked(|q| !q.is_empty()) {
            leptos::task::spawn_local(async move { desk.deliver_queued().await });
        }
    });
    if let Some(window) = web_sys::window() {
        let _ = window.set_interval_with_callback_and_timeout_and_arguments_0(
            tick.as_ref().unchecked_ref(),
            5_000,
        );
    }
    tick.forget();
}

async fn refresh(desk: Desk, server: HttpStore) {
    match server.list_all().await {
        Ok(reviews) => {
            desk.merge(reviews);
            desk.deliver_queued().await;
            if desk.link.get_untracked() != Link::Polling(POLL_SECONDS) {
                let open = STREAM_OPEN.with(std::cell::Cell::get);
                desk.link
                    .set(if open { Link::Live } else { Link::Reconnecting });
            }
        }
        Err(e) => match desk.link.get_untracked() {
            // Nothing loaded yet: the server cannot be reached.
            Link::Connecting | Link::Offline(_) => desk.link.set(Link::Offline(e.to_string())),
            // The stream reconnects by itself and loads again once it is back.
            Link::Reconnecting => {}
            // What is shown stays; the reviewer is told this load failed.
            _ => desk.notices.update(|n| {
                let message = format!("Refreshing failed: {e}");
                if n.last() != Some(&message) {
                    n.push(message);
                }
            }),
        },
    }
}

fn follow(desk: Desk, server: &HttpStore) {
    let Ok(source) = EventSource::new(&server.events_url()) else {
        poll(desk, server.clone());
        return;
    };
    let on_change = Closure::<dyn Fn(MessageEvent)>::new(move |event: MessageEvent| {
        let data = event.data().as_string().unwrap_or_default();
        let review = serde_json::from_str::<serde_json::Value>(&data)
            .map_err(|e| e.to_string())
            .and_then(|v| review_of(&v["review"]).map_err(|e| e.to_string()));
        match review {
            Ok(review) => desk.merge(vec![review]),
            Err(e) => desk.notify(format!("A live update could not be read: {e}")),
        }
    });
    for name in CHANGE_EVENTS {
        let _ = source.add_event_listener_with_callback(name, on_change.as_ref().unchecked_ref());
    }
    on_change.forget();
    let reopened = server.clone();
    let on_open = Closure::<dyn Fn()>::new(move || {
        // After a drop, load again: the gap may be longer than the event history.
        if matches!(
            desk.link.get_untracked(),
            Link::Reconnecting | Link::Offline(_)
        ) {
            leptos::task::spawn_local(refresh(desk, reopened.clone()));
        }
        STREAM_OPEN.with(|o| o.set(true));
        desk.link.set(Link::Live);
    });
    source.set_onopen(Some(on_open.as_ref().unchecked_ref()));
    on_open.forget();
    let stream = source.clone();
    let server = server.clone();
    let on_error = Closure::<dyn Fn()>::new(move || {
        STREAM_OPEN.with(|o| o.set(false));
        if stream.ready_state() == EventSource::CLOSED {
            // The server refused the stream (or has none): fall back to polling.
            stream.close();
            poll(desk, server.clone());
        } else if desk.link.get_untracked() == Link::Live {
            // The browser reconnects by itself, resuming with Last-Event-ID.
            desk.link.set(Link::Reconnecting);
        }
    });
    source.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    on_error.forget();
}

fn poll(desk: Desk, server: HttpStore) {
    desk.link.set(Link::Polling(POLL_SECONDS));
    let tick = Closure::<dyn Fn()>::new(move || {
        let server = server.clone();
        leptos::task::spawn_local(async move {
            refresh(desk, server).await;
        });
    });
    if let Some(window) = web_sys::window() {
        let _ = window.set_interval_with_callback_and_timeout_and_arguments_0(
            tick.as_ref().unchecked_ref(),
            POLL_SECONDS as i32 * 1000,
        );
    }
    tick.forget();
}
