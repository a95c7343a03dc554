//! The change feed. `GET /api/v1/events` (reviewer, by key or by a
//! single-use ticket from `POST /api/v1/events/tickets`): Server-Sent Events,
//! one per change (`review.created`, `review.decided`, `review.expired`,
//! `review.escalated`, `review.resubmitted`, `review.redeemed`) carrying the review and its list row as they now stand,
//! with the feed position as the event id so a client resumes with
//! `Last-Event-ID` (or `?after=`); keep-alive comments every 15 s.
//! `GET /api/v1/changes?after=` (reviewer): the same changes as one JSON
//! page, for a client that cannot hold a stream open (it asks for what
//! changed since its last position, never for everything again).

use super::auth::Caller;
use super::error::{ApiError, Detail, ErrorCode};
use super::query::Params;
use super::AppState;
use crate::feed::{Feed, FeedEvent};
use crate::store::keys::KeyKind;
use axum::body::{Body, Bytes};
use axum::extract::{RawQuery, State};
use axum::http::{header, HeaderMap, HeaderName, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use countersign_domain::wire::{self, ChangePage};
use futures_util::stream::{self, StreamExt};
use serde_json::json;
use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;

/// How long a stream stays quiet before it sends a keep-alive comment.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// How long an event ticket may wait before it opens its stream.
const TICKET_SECONDS: i64 = 60;

/// `POST /api/v1/events/tickets` (reviewer): a single-use ticket that opens
/// one event stream within a minute (`GET /api/v1/events?ticket=`), so the
/// reviewer key itself never goes in a URL.
pub async fn ticket(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<(StatusCode, Json<serde_json::Value>), ApiError> {
    caller.require(KeyKind::Reviewer)?;
    let ticket = state
        .db
        .add_event_ticket(&caller.0, chrono::Duration::seconds(TICKET_SECONDS))
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(json!({
            "ticket": ticket.secret,
            "expires_at": crate::store::stored_time(ticket.expires_at),
        })),
    ))
}

/// Where one stream stands: the last position it sent, what it has read but
/// not sent yet, and whether it must read the database to catch up (it
/// resumed from an older position, or fell behind the fan-out).
struct Cursor {
    feed: Feed,
    after: i64,
    queue: VecDeque<Arc<FeedEvent>>,
    live: broadcast::Receiver<Arc<FeedEvent>>,
    behind: bool,
    /// Counted as open until the stream is dropped.
    _open: OpenStream,
}

impl Cursor {
    /// The next change to send, in feed order, each once.
    async fn next(&mut self) -> Option<Arc<FeedEvent>> {
        loop {
            if let Some(event) = self.queue.pop_front() {
                if event.seq > self.after {
                    self.after = event.seq;
                    return Some(event);
                }
                continue;
            }
            if self.behind {
                match self.feed.read_after(self.after).await {
                    Ok(events) if events.is_empty() => self.behind = false,
                    Ok(events) => self.queue.extend(events),
                    Err(e) => {
                        tracing::warn!("an event stream could not read the feed: {e}");
                        tokio::time::sleep(Duration::from_secs(1)).await;
                    }
                }
                continue;
            }
            match self.live.recv().await {
                Ok(event) => self.queue.push_back(event),
                Err(broadcast::error::RecvError::Lagged(_)) => self.behind = true,
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}

/// Opens the stream.
pub async fn stream(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    caller.require(KeyKind::Reviewer)?;
    let params = Params::parse(raw.as_deref(), &["after", "ticket"])?;
    let mut after = params
        .get("after")
        .map(|value| position(value, "after"))
        .transpose()?;
    if let Some(last) = headers.get("last-event-id").and_then(|v| v.to_str().ok()) {
        after = Some(position(last, "Last-Event-ID")?);
    }
    // Opened before the position is read, so nothing fanned out in between is
    // missed; the database is read once from there (see `Subscription`).
    let subscription = state.feed.subscribe();
    let cursor = Cursor {
        feed: state.feed.clone(),
        after: after.unwrap_or(subscription.position),
        queue: VecDeque::new(),
        live: subscription.live,
        behind: true,
        _open: OpenStream::new(),
    };
    let feed = state.feed.clone();
    // Each change's frame was encoded once for every stream; a comment keeps
    // a quiet stream alive through proxies and tells a dead peer apart.
    let events = stream::unfold(cursor, move |mut cursor| {
        let feed = feed.clone();
        async move {
            // Ends the stream when the server shuts down, so it can stop.
            let frame = tokio::select! {
                event = tokio::time::timeout(KEEP_ALIVE, cursor.next()) => match event {
                    Ok(event) => event?.frame.clone(),
                    Err(_) => Bytes::from_static(b":\n\n"),
                },
                () = feed.closed() => return None,
            };
            Some((Ok::<_, Infallible>(frame), cursor))
        }
    });
    // A first comment gets the stream's head through proxies that hold it
    // until the body starts (nginx over HTTP/2), so the client knows it is live.
    let opened = stream::once(async { Ok(Bytes::from_static(b":open\n\n")) });
    Ok((
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
            // A proxy passes each event on at once (nginx reads this header).
            (HeaderName::from_static("x-accel-buffering"), "no"),
        ],
        Body::from_stream(opened.chain(events)),
    )
        .into_response())
}

/// Counts an open event stream for the metrics while it lives.
struct OpenStream;

impl OpenStream {
    fn new() -> OpenStream {
        crate::metrics::event_streams(1.0);
        OpenStream
    }
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        crate::metrics::event_streams(-1.0);
    }
}

fn position(text: &str, name: &str) -> Result<i64, ApiError> {
    text.trim()
        .parse::<i64>()
        .ok()
        .filter(|n| *n >= 0)
        .ok_or_else(|| {
            ApiError::bad_request(
                ErrorCode::InvalidParameter,
                format!("{name} must be an event id this server sent"),
            )
            .with_details(vec![Detail::new(name, "a non-negative whole number")])
        })
}

/// How many changes one `GET /changes` answers at most, and by default.
const CHANGES_LISTED: i64 = 500;
const CHANGES_BY_DEFAULT: i64 = 200;

/// `GET /api/v1/changes?after=N&limit=L` (reviewer): the changes after
/// position N, oldest first, each with its review's list row as it is now.
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(raw): RawQuery,
) -> Result<Json<ChangePage>, ApiError> {
    caller.require(KeyKind::Reviewer)?;
    let params = Params::parse(raw.as_deref(), &["after", "limit"])?;
    let after = match params.get("after") {
        Some(value) => position(value, "after")?,
        None => {
            return Err(ApiError::bad_request(
                ErrorCode::InvalidParameter,
                "say which changes: after=<the position of the last change seen>",
            )
            .with_details(vec![Detail::new("after", "required")]))
        }
    };
    let limit = match params.get("limit").map(|l| l.trim().parse::<i64>()) {
        None => CHANGES_BY_DEFAULT,
        Some(Ok(n)) if (1..=CHANGES_LISTED).contains(&n) => n,
        Some(_) => {
            return Err(ApiError::bad_request(
                ErrorCode::InvalidParameter,
                format!("limit is a number of changes from 1 to {CHANGES_LISTED}"),
            )
            .with_details(vec![Detail::new(
                "limit",
                format!("a whole number from 1 to {CHANGES_LISTED}"),
            )]))
        }
    };
    let changes = state.db.changes_after(after, limit).await?;
    let more = changes.len() as i64 == limit;
    Ok(Json(ChangePage {
        position: changes.last().map_or(after, |c| c.seq),
        more,
        changes: changes
            .into_iter()
            .map(|c| wire::Change {
                seq: c.seq,
                kind: c.kind,
                summary: c.summary,
            })
            .collect(),
    }))
}
