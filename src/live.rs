//! Keeps a server-backed desk fresh: loads every review, then follows the
//! server's Server-Sent Events, opened with a single-use ticket (the reviewer
//! key never goes in a URL) and opened again with a fresh one after a drop,
//! resuming after the last change seen. When the server offers no stream,
//! refreshes every 10 seconds instead. The connection state is shown in the header.

use crate::desk::{Desk, Link};
use crate::store::{review_of, HttpError, HttpStore};
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
/// How long a dropped stream waits before it is opened again.
const REOPEN_SECONDS: u64 = 3;
/// Streams that fail before opening, in a row, before the app polls instead.
const REFUSED_STREAMS: u32 = 3;

thread_local! {
    /// Whether the live stream is open now (only then is the desk "Live").
    static STREAM_OPEN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// The feed position of the last change received (a reopened stream resumes after it).
    static LAST_SEEN: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
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
    leptos::task::spawn_local(open_stream(desk, server.clone(), 0));
}

/// Opens the stream with a fresh ticket. `refused`: how many streams in a row
/// failed before they opened (the server refuses them: poll instead).
async fn open_stream(desk: Desk, server: HttpStore, refused: u32) {
    let ticket = match server.event_ticket().await {
        Ok(ticket) => ticket,
        // Down for now: tried again in a moment (the header says Reconnecting).
        Err(HttpError::Unreachable(_)) => return reopen_later(desk, server, refused),
        // A server without event tickets (or a stream) is refreshed instead.
        Err(_) => return poll(desk, server),
    };
    let after = LAST_SEEN.with(|l| l.borrow().clone());
    match EventSource::new(&server.events_url(&ticket, after.as_deref())) {
        Ok(source) => attach(desk, server, source, refused),
        Err(_) => poll(desk, server),
    }
}

fn reopen_later(desk: Desk, server: HttpStore, refused: u32) {
    leptos::task::spawn_local(async move {
        crate::browser::pause(std::time::Duration::from_secs(REOPEN_SECONDS)).await;
        open_stream(desk, server, refused).await;
    });
}

fn attach(desk: Desk, server: HttpStore, source: EventSource, refused: u32) {
    let on_change = Closure::<dyn Fn(MessageEvent)>::new(move |event: MessageEvent| {
        let id = event.last_event_id();
        if !id.is_empty() {
            LAST_SEEN.with(|l| *l.borrow_mut() = Some(id));
        }
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
    let opened = std::rc::Rc::new(std::cell::Cell::new(false));
    let on_open = Closure::<dyn Fn()>::new({
        let opened = opened.clone();
        move || {
            opened.set(true);
            // After a drop, load again: the gap may be longer than the event history.
            if matches!(
                desk.link.get_untracked(),
                Link::Reconnecting | Link::Offline(_)
            ) {
                leptos::task::spawn_local(refresh(desk, reopened.clone()));
            }
            STREAM_OPEN.with(|o| o.set(true));
            desk.link.set(Link::Live);
        }
    });
    source.set_onopen(Some(on_open.as_ref().unchecked_ref()));
    on_open.forget();
    let stream = source.clone();
    let on_error = Closure::<dyn Fn()>::new(move || {
        STREAM_OPEN.with(|o| o.set(false));
        // The ticket is spent, so the browser's own reconnect cannot work:
        // this stream ends and another opens with a fresh ticket.
        stream.set_onerror(None);
        stream.close();
        if desk.link.get_untracked() == Link::Live {
            desk.link.set(Link::Reconnecting);
        }
        let refused = if opened.get() { 0 } else { refused + 1 };
        if refused >= REFUSED_STREAMS {
            poll(desk, server.clone());
        } else {
            reopen_later(desk, server.clone(), refused);
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
