//! Keeps a server-backed desk fresh: follows the server's Server-Sent Events,
//! opened with a single-use ticket (the reviewer key never goes in a URL) and
//! opened again with a fresh one after a drop, resuming after the last change
//! seen; each change patches what the desk shows. When the server offers no
//! stream, the page shown is asked for again every 10 seconds instead. The
//! connection state is shown in the header.

use crate::desk::{Desk, Link};
use crate::store::{review_of, HttpError, HttpStore};
use countersign_domain::wire::ChangeKind;
use leptos::prelude::*;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{EventSource, MessageEvent};

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
    /// Whether the desk polls instead of following a stream.
    static POLLING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Opens the live stream, counts the reviews for the header (the inbox asks
/// for its own page), and retries queued decisions.
pub fn connect(desk: Desk, server: HttpStore) {
    follow(desk, &server);
    desk.count();
    retry_queued(desk);
}

/// What the header says once the server answered again: live while the
/// stream is open, else polling or reconnecting.
pub fn settled_link() -> Link {
    if STREAM_OPEN.with(std::cell::Cell::get) {
        Link::Live
    } else if POLLING.with(std::cell::Cell::get) {
        Link::Polling(POLL_SECONDS)
    } else {
        Link::Reconnecting
    }
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

fn follow(desk: Desk, server: &HttpStore) {
    leptos::task::spawn_local(open_stream(desk, server.clone(), 0));
}

/// Opens the stream with a fresh ticket. `refused`: how many streams in a row
/// failed before they opened (the server refuses them: poll instead).
async fn open_stream(desk: Desk, server: HttpStore, refused: u32) {
    let ticket = match server.event_ticket().await {
        Ok(ticket) => ticket,
        // Down for now: tried again in a moment (the header says so).
        Err(e @ HttpError::Unreachable(_)) => {
            if desk.link.get_untracked() == Link::Connecting {
                desk.link.set(Link::Offline(e.to_string()));
            }
            return reopen_later(desk, server, refused);
        }
        // A server without event tickets (or a stream) is refreshed instead.
        Err(_) => return poll(desk),
    };
    // After the last change seen, or else after the position the first page was read at.
    let after = LAST_SEEN
        .with(|l| l.borrow().clone())
        .or_else(|| desk.first_position().map(|p| p.to_string()));
    match EventSource::new(&server.events_url(&ticket, after.as_deref())) {
        Ok(source) => attach(desk, server, source, refused),
        Err(_) => poll(desk),
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
        let Some(kind) = ChangeKind::parse(&event.type_()) else {
            return;
        };
        let data = event.data().as_string().unwrap_or_default();
        let review = serde_json::from_str::<serde_json::Value>(&data)
            .map_err(|e| e.to_string())
            .and_then(|v| review_of(&v["review"]).map_err(|e| e.to_string()));
        match review {
            Ok(review) => desk.apply_change(kind, review),
            Err(e) => desk.notify(format!("A live update could not be read: {e}")),
        }
    });
    for kind in ChangeKind::ALL {
        let _ = source
            .add_event_listener_with_callback(kind.as_str(), on_change.as_ref().unchecked_ref());
    }
    on_change.forget();
    let opened = std::rc::Rc::new(std::cell::Cell::new(false));
    let on_open = Closure::<dyn Fn()>::new({
        let opened = opened.clone();
        move || {
            opened.set(true);
            // After a drop, ask for the page shown again: the gap may be
            // longer than the event history.
            if matches!(
                desk.link.get_untracked(),
                Link::Reconnecting | Link::Offline(_)
            ) {
                desk.refresh_page();
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
            poll(desk);
        } else {
            reopen_later(desk, server.clone(), refused);
        }
    });
    source.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    on_error.forget();
}

fn poll(desk: Desk) {
    POLLING.with(|p| p.set(true));
    desk.link.set(Link::Polling(POLL_SECONDS));
    let tick = Closure::<dyn Fn()>::new(move || desk.refresh_page());
    if let Some(window) = web_sys::window() {
        let _ = window.set_interval_with_callback_and_timeout_and_arguments_0(
            tick.as_ref().unchecked_ref(),
            POLL_SECONDS as i32 * 1000,
        );
    }
    tick.forget();
}
