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
use axum::body::Bytes;
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
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

/// One change as subscribers receive it: its position and the event, encoded
/// once for every stream that sends it.
#[derive(Debug)]
pub struct FeedEvent {
    /// Position in the feed.
    pub seq: i64,
    /// The review it happened to.
    pub confirm_id: String,
    /// The Server-Sent Event as sent: `id` (the position), `event` (the
    /// kind) and `data` (the change with its list row and review as they
    /// now stand, JSON on one line).
    pub frame: Bytes,
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
    /// Waiting agents by the review they wait on: a change wakes only its
    /// review's waiters, however many others wait.
    waiters: Mutex<HashMap<String, (usize, Arc<Notify>)>>,
}

/// An agent waiting on one review's changes, from any instance; it stops
/// being counted when dropped.
pub struct Waiting {
    shared: Arc<Shared>,
    id: String,
    changed: Arc<Notify>,
}

impl Waiting {
    /// Resolves at the review's next change fanned out after this was
    /// enabled (`Notified::enable`), or was first polled.
    pub fn changed(&self) -> tokio::sync::futures::Notified<'_> {
        self.changed.notified()
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        let mut waiters = self.shared.waiting();
        if let Some((count, _)) = waiters.get_mut(&self.id) {
            *count -= 1;
            if *count == 0 {
                waiters.remove(&self.id);
            }
        }
    }
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
            waiters: Mutex::new(HashMap::new()),
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
        let waiting: usize = self.shared.waiting().values().map(|(n, _)| n).sum();
        self.shared.events.receiver_count() + waiting
    }

    /// Waits on review `id`'s changes from now on.
    pub fn wait_on(&self, id: &str) -> Waiting {
        let mut waiters = self.shared.waiting();
        let (count, changed) = waiters
            .entry(id.to_owned())
            .or_insert_with(|| (0, Arc::new(Notify::new())));
        *count += 1;
        Waiting {
            shared: self.shared.clone(),
            id: id.to_owned(),
            changed: changed.clone(),
        }
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
        let frame = format!(
            "id: {}\nevent: {}\ndata: {data}\n\n",
            change.seq,
            change.kind.as_str()
        );
        FeedEvent {
            seq: change.seq,
            confirm_id: change.confirm_id,
            frame: Bytes::from(frame),
        }
    }
}

impl Shared {
    /// The waiters' table (a panic elsewhere while it was held leaves it usable).
    fn waiting(&self) -> std::sync::MutexGuard<'_, HashMap<String, (usize, Arc<Notify>)>> {
        self.waiters.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether anyone on this instance follows the feed.
    fn followed(&self) -> bool {
        self.events.receiver_count() > 0 || !self.waiting().is_empty()
    }

    /// Hands `event` to every stream and to its review's waiters.
    fn fan_out(&self, event: Arc<FeedEvent>) {
        if let Some((_, changed)) = self.waiting().get(&event.confirm_id) {
            changed.notify_waiters();
        }
        // No stream is not an error.
        let _ = self.events.send(event);
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
        if !shared.followed() {
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
                        shared.fan_out(event);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_change_wakes_its_reviews_waiters_only_and_a_dropped_waiter_is_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("feed.db").display());
        let feed = Feed::start(Db::open(&url).await.unwrap()).await.unwrap();
        let (mine, again, other) = (feed.wait_on("a"), feed.wait_on("a"), feed.wait_on("b"));
        assert_eq!(feed.followers(), 3);
        {
            let (woken, twice, not_woken) = (mine.changed(), again.changed(), other.changed());
            tokio::pin!(woken, twice, not_woken);
            for n in [woken.as_mut(), twice.as_mut(), not_woken.as_mut()] {
                n.enable();
            }
            feed.shared.fan_out(Arc::new(FeedEvent {
                seq: 1,
                confirm_id: "a".into(),
                frame: Bytes::new(),
            }));
            let soon = Duration::from_millis(50);
            assert!(tokio::time::timeout(soon, woken).await.is_ok());
            assert!(tokio::time::timeout(soon, twice).await.is_ok());
            assert!(tokio::time::timeout(soon, not_woken).await.is_err());
        }
        drop((mine, again));
        assert_eq!(feed.followers(), 1);
        assert!(!feed.shared.waiting().contains_key("a"));
    }
}
