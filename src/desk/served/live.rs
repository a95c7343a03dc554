//! Keeps a server-backed desk fresh: follows the server's Server-Sent Events,
//! opened with a single-use ticket (the reviewer key never goes in a URL) and
//! opened again with a fresh one after a drop, resuming after the last change
//! seen; each change (the review's new list row) patches what the desk shows.
//! When the server offers no stream, what changed since the last position is
//! asked for every 10 seconds instead (the page shown, when the server cannot
//! say). The connection state is shown in the header.

use super::Served;
use crate::backend::{HttpError, HttpStore};
use crate::desk::Link;
use countersign_domain::wire::{Change, ChangeKind};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{EventSource, MessageEvent};

const POLL_SECONDS: u32 = 10;
/// How long a dropped stream waits before it is opened again.
const REOPEN_SECONDS: u64 = 3;
/// Streams that fail before opening, in a row, before the app polls instead.
const REFUSED_STREAMS: u32 = 3;
/// Pages of changes read in one catch-up before the page shown is asked for
/// again instead (that much changed).
const CATCH_UP_PAGES: usize = 5;

/// Reads the server's approval policy, opens the live stream, counts the
/// reviews for the header (the inbox asks for its own page), and retries
/// queued decisions.
pub(in crate::desk) fn connect(served: Served) {
    let server = served.server();
    served
        .decisions
        .load_judging(server.clone(), served.notices);
    follow(served, &server);
    served.count();
    retry_queued(served);
}

/// Tries the queued decisions every 5 seconds while there are any.
fn retry_queued(served: Served) {
    let tick = Closure::<dyn Fn()>::new(move || {
        if served.decisions.any_waiting() {
            leptos::task::spawn_local(async move { served.deliver_queued().await });
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

fn follow(served: Served, server: &HttpStore) {
    leptos::task::spawn_local(open_stream(served, server.clone(), 0));
}

/// Opens the stream with a fresh ticket. `refused`: how many streams in a row
/// failed before they opened (the server refuses them: poll instead).
async fn open_stream(served: Served, server: HttpStore, refused: u32) {
    let ticket = match server.event_ticket().await {
        Ok(ticket) => ticket,
        // Down for now: tried again in a moment (the header says so).
        Err(e @ HttpError::Unreachable(_)) => {
            if served.origin.link_now() == Link::Connecting {
                served.origin.set_link(Link::Offline(e.to_string()));
            }
            return reopen_later(served, server, refused);
        }
        // A server without event tickets (or a stream) is polled instead.
        Err(_) => return poll(served, server),
    };
    let after = last_position(served).map(|p| p.to_string());
    match EventSource::new(&server.events_url(&ticket, after.as_deref())) {
        Ok(source) => attach(served, server, source, refused),
        Err(_) => poll(served, server),
    }
}

/// After the last change seen, or else after the position the first page was read at.
fn last_position(served: Served) -> Option<i64> {
    served
        .origin
        .last_seen()
        .or_else(|| served.reviews.first_position())
}

fn reopen_later(served: Served, server: HttpStore, refused: u32) {
    leptos::task::spawn_local(async move {
        crate::browser::pause(std::time::Duration::from_secs(REOPEN_SECONDS)).await;
        open_stream(served, server, refused).await;
    });
}

fn attach(served: Served, server: HttpStore, source: EventSource, refused: u32) {
    let on_change = Closure::<dyn Fn(MessageEvent)>::new(move |event: MessageEvent| {
        if let Ok(seq) = event.last_event_id().parse::<i64>() {
            served.origin.seen(seq);
        }
        if ChangeKind::parse(&event.type_()).is_none() {
            return;
        }
        let data = event.data().as_string().unwrap_or_default();
        match serde_json::from_str::<Change>(&data) {
            Ok(change) => served.announced(change),
            Err(e) => served
                .notices
                .tell(format!("A live update could not be read: {e}")),
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
                served.origin.link_now(),
                Link::Reconnecting | Link::Offline(_)
            ) {
                served.refresh_page();
            }
            served.origin.stream_opened();
        }
    });
    source.set_onopen(Some(on_open.as_ref().unchecked_ref()));
    on_open.forget();
    let stream = source.clone();
    let on_error = Closure::<dyn Fn()>::new(move || {
        // The ticket is spent, so the browser's own reconnect cannot work:
        // this stream ends and another opens with a fresh ticket.
        stream.set_onerror(None);
        stream.close();
        served.origin.stream_dropped();
        let refused = if opened.get() { 0 } else { refused + 1 };
        if refused >= REFUSED_STREAMS {
            poll(served, server.clone());
        } else {
            reopen_later(served, server.clone(), refused);
        }
    });
    source.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    on_error.forget();
}

fn poll(served: Served, server: HttpStore) {
    served.origin.polling(POLL_SECONDS);
    let tick = Closure::<dyn Fn()>::new(move || {
        leptos::task::spawn_local(catch_up(served, server.clone()));
    });
    if let Some(window) = web_sys::window() {
        let _ = window.set_interval_with_callback_and_timeout_and_arguments_0(
            tick.as_ref().unchecked_ref(),
            POLL_SECONDS as i32 * 1000,
        );
    }
    tick.forget();
}

/// Asks for what changed since the last position and patches what is shown.
/// Without a position, or when the server cannot list its changes (or too
/// much changed), the page shown is asked for again instead.
async fn catch_up(served: Served, server: HttpStore) {
    let Some(mut after) = last_position(served) else {
        return served.refresh_page();
    };
    for _ in 0..CATCH_UP_PAGES {
        let page = match server.changes(after).await {
            Ok(page) => page,
            // Unreachable, or a server without a change list: the page's own
            // request says what is wrong, or shows what is there.
            Err(_) => return served.refresh_page(),
        };
        served.origin.answered();
        for change in page.changes {
            served.announced(change);
        }
        after = page.position;
        served.origin.seen(after);
        if !page.more {
            return;
        }
    }
    served.refresh_page();
}
