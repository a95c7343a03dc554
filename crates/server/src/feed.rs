//! The change feed as this instance hands it out. One reader task per instance
//! reads what was committed after its position and fans each change out to
//! every event stream and waiting agent of the instance, so an idle subscriber
//! costs the database nothing. The reader is woken by this instance's writes,
//! by PostgreSQL notifications of other instances' writes (`LISTEN`), and every
//! few seconds as a safety net. A subscriber that resumes from an older
//! position, or falls behind the fan-out, reads the feed from the database
//! until it has caught up.

use crate::store::Change;
use crate::store::{Backend, Db, DbError};
use countersign_domain::wire::ChangeKind;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, watch, Notify};

/// The PostgreSQL notification channel a stored change is announced on (by a
/// trigger on the `changes` table).
const CHANNEL: &str = "countersign_changes";
/// How often the reader looks for changes it was not told about.
const SAFETY_NET: Duration = Duration::from_secs(5);
/// How many changes the fan-out holds for a slow subscriber before it must
/// read them from the database instead (each holds its review).
const FAN_OUT: usize = 128;
/// Changes read per query.
const PAGE: i64 = 200;

/// One change as subscribers receive it: its position and the event's JSON.
#[derive(Debug)]
pub struct FeedEvent {
    /// Position in the feed.
    pub seq: i64,
    /// What happened.
    pub kind: ChangeKind,
    /// The review it happened to.
    pub confirm_id: String,
    /// The event's data: the change with its list row and review as they now stand.
    pub data: String,
}

/// This instance's reader of the feed; cheap to clone.
#[derive(Clone)]
pub struct Feed {
    shared: Arc<Shared>,
}

struct Shared {
    db: Db,
    events: broadcast::Sender<Arc<FeedEvent>>,
    /// The newest position fanned out.
    position: watch::Sender<i64>,
    wake: Notify,
    /// Set when the server shuts down: streams end, waiters answer now.
    closing: watch::Sender<bool>,
}

/// A subscriber's place in the feed.
pub struct Subscription {
    /// The changes fanned out from now on.
    pub live: broadcast::Receiver<Arc<FeedEvent>>,
    /// The newest position the reader has passed: what came after it is
    /// fanned out to `live`, or was passed unsent while nobody followed, so a
    /// subscriber reads the database from here once before following `live`.
    pub position: i64,
}

impl Feed {
    /// Starts the reader (and on PostgreSQL its listener) on the current runtime,
    /// from the newest stored change.
    pub async fn start(db: Db) -> Result<Feed, DbError> {
        let position = db.last_change().await?;
        let shared = Arc::new(Shared {
            db,
            events: broadcast::channel(FAN_OUT).0,
            position: watch::Sender::new(position),
            wake: Notify::new(),
            closing: watch::Sender::new(false),
        });
        tokio::spawn(read(shared.clone(), position));
        if shared.db.backend() == Backend::Postgres {
            tokio::spawn(listen(shared.clone()));
        }
        Ok(Feed { shared })
    }

    /// This instance stored a change: read it now.
    pub fn wake(&self) {
        self.shared.wake.notify_one();
    }

    /// The server is shutting down: every event stream ends and every
    /// waiting agent is answered with the outcome as it stands.
    pub fn close(&self) {
        self.shared.closing.send_replace(true);
    }

    /// Resolves once [`Feed::close`] was called (at once if it was).
    pub async fn closed(&self) {
        let mut closing = self.shared.closing.subscribe();
        let _ = closing.wait_for(|closing| *closing).await;
    }

    /// How many event streams and waiting agents follow the feed now.
    pub fn followers(&self) -> usize {
        self.shared.events.receiver_count()
    }

    /// Follows the feed from now on.
    pub fn subscribe(&self) -> Subscription {
        let live = self.shared.events.subscribe();
        Subscription {
            live,
            position: *self.shared.position.borrow(),
        }
    }

    /// The changes stored after `after` (at most a page), read from the
    /// database: for a subscriber resuming from there or catching up.
    pub async fn read_after(&self, after: i64) -> Result<Vec<Arc<FeedEvent>>, DbError> {
        Ok(self
            .shared
            .db
            .feed_after(after, PAGE)
            .await?
            .into_iter()
            .map(|(change, review)| Arc::new(FeedEvent::of(change, review)))
            .collect())
    }
}

impl FeedEvent {
    fn of(change: Change, review: serde_json::Value) -> FeedEvent {
        let data = json!({
            "seq": change.seq,
            "kind": change.kind.as_str(),
            "confirm_id": change.confirm_id,
            "status": change.status,
            "at": change.at,
            "summary": change.summary,
            "review": review,
        });
        FeedEvent {
            seq: change.seq,
            kind: change.kind,
            confirm_id: change.confirm_id,
            data: data.to_string(),
        }
    }
}

/// The reader: whenever woken (or the safety net fires), fans out every
/// change stored after the last one it fanned out, in feed order.
async fn read(shared: Arc<Shared>, mut position: i64) {
    let feed = Feed {
        shared: shared.clone(),
    };
    loop {
        let _ = tokio::time::timeout(SAFETY_NET, shared.wake.notified()).await;
        if shared.events.receiver_count() == 0 {
            // Nobody follows: only the position moves (a subscriber reads what
            // it missed from the database when it opens).
            match shared.db.last_change().await {
                Ok(last) => {
                    position = position.max(last);
                    shared.position.send_replace(position);
                }
                Err(e) => {
                    tracing::warn!("reading the change feed failed (trying again): {e}")
                }
            }
            continue;
        }
        loop {
            match feed.read_after(position).await {
                Ok(events) => {
                    let full = events.len() as i64 == PAGE;
                    for event in events {
                        position = event.seq;
                        // No subscriber is not an error: the position still moves.
                        let _ = shared.events.send(event);
                    }
                    shared.position.send_replace(position);
                    if !full {
                        break;
                    }
                }
                Err(e) => {
                    tracing::warn!("reading the change feed failed (trying again): {e}");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
    }
}

/// Wakes the reader for every change another instance stores (PostgreSQL
/// `LISTEN`), reconnecting when the connection drops; after a reconnection
/// the reader looks anyway, as notifications sent meanwhile are lost.
async fn listen(shared: Arc<Shared>) {
    loop {
        match sqlx::postgres::PgListener::connect(shared.db.url()).await {
            Ok(mut listener) => match listener.listen(CHANNEL).await {
                Ok(()) => loop {
                    shared.wake.notify_one();
                    if let Err(e) = listener.try_recv().await {
                        tracing::warn!("listening for other instances' changes failed: {e}");
                        break;
                    }
                },
                Err(e) => tracing::warn!("cannot listen for other instances' changes: {e}"),
            },
            Err(e) => {
                tracing::warn!("cannot connect to listen for other instances' changes: {e}")
            }
        }
        tokio::time::sleep(SAFETY_NET).await;
    }
}
