//! The change feed. `GET /api/v1/events` (reviewer, by key or by a
//! single-use ticket from `POST /api/v1/events/tickets`): Server-Sent Events,
//! one per change (`review.created`, `review.decided`, `review.resubmitted`,
//! `review.redeemed`) carrying the review and its list row as they now stand,
//! with the feed position as the event id so a client resumes with
//! `Last-Event-ID` (or `?after=`); keep-alive comments every 15 s.
//! `GET /api/v1/changes?after=` (reviewer): the same changes as one JSON
//! page, for a client that cannot hold a stream open (it asks for what
//! changed since its last position, never for everything again).

use super::auth::Caller;
use super::error::{ApiError, Detail};
use super::query::Params;
use super::AppState;
use crate::db::keys::KeyKind;
use crate::db::reviews::Change;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::Json;
use countersign_domain::wire::{self, ChangePage};
use futures_util::stream::{self, Stream};
use serde_json::json;
use std::collections::VecDeque;
use std::convert::Infallible;
use std::time::Duration;

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
            "expires_at": crate::db::stored_time(ticket.expires_at),
        })),
    ))
}

struct Cursor {
    state: AppState,
    after: i64,
    queue: VecDeque<Change>,
    feed: tokio::sync::watch::Receiver<i64>,
}

/// Opens the stream.
pub async fn stream(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    RawQuery(raw): RawQuery,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    caller.require(KeyKind::Reviewer)?;
    let params = Params::parse(raw.as_deref(), &["after", "ticket"])?;
    let mut after = params
        .get("after")
        .map(|value| position(value, "after"))
        .transpose()?;
    if let Some(last) = headers.get("last-event-id").and_then(|v| v.to_str().ok()) {
        after = Some(position(last, "Last-Event-ID")?);
    }
    let after = match after {
        Some(seq) => seq,
        None => state.db.last_change().await?,
    };
    let feed = state.changes.subscribe();
    let cursor = Cursor {
        state,
        after,
        queue: VecDeque::new(),
        feed,
    };
    let events = stream::unfold(cursor, |mut cursor| async move {
        loop {
            if let Some(change) = cursor.queue.pop_front() {
                cursor.after = change.seq;
                let event = to_event(&cursor.state, change).await;
                return Some((Ok(event), cursor));
            }
            // Woken at once by this instance's changes; other instances' changes
            // (a shared PostgreSQL) are picked up within a second.
            let _ = tokio::time::timeout(Duration::from_secs(1), cursor.feed.changed()).await;
            match cursor.state.db.changes_after(cursor.after, 200).await {
                Ok(changes) => cursor.queue.extend(changes),
                Err(e) => {
                    eprintln!("countersign: event stream: {e}");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}

fn position(text: &str, name: &str) -> Result<i64, ApiError> {
    text.trim()
        .parse::<i64>()
        .ok()
        .filter(|n| *n >= 0)
        .ok_or_else(|| {
            ApiError::bad_request(
                "invalid_parameter",
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
                "invalid_parameter",
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
                "invalid_parameter",
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

async fn to_event(state: &AppState, change: Change) -> Event {
    let review = match state.db.review(&change.confirm_id).await {
        Ok(Some(stored)) => Some(stored.review),
        _ => None,
    };
    let data = json!({
        "seq": change.seq,
        "kind": change.kind.as_str(),
        "confirm_id": change.confirm_id,
        "status": change.status,
        "at": change.at,
        "summary": change.summary,
        "review": review,
    });
    Event::default()
        .id(change.seq.to_string())
        .event(change.kind.as_str())
        .data(data.to_string())
}
