//! The change feed as an outbox for what tells the outside world in order
//! (the Slack bot, the mailer). A [`Reader`] is given each change once, in
//! feed order, by one instance at a time (a lease in the database, see
//! [`crate::store::readers`]), and its place moves past a change once it is
//! told. What the outside may take later (rate limited, unreachable,
//! failing) is tried again with backoff, for up to a day; what it refuses
//! for good is logged with what to do and skipped, so one bad address holds
//! up nothing else. A reader starts at the newest change when first placed.

use crate::store::{Change, Db, DbError};
use std::future::Future;
use std::time::Duration;

/// How long an instance's turn lasts unless it renews it.
const LEASE: chrono::TimeDelta = chrono::TimeDelta::seconds(60);
/// How often the feed is read for new changes.
const EVERY: Duration = Duration::from_secs(1);
/// Feed entries read per query.
const PAGE: i64 = 100;
/// How long a change is tried before it is given up.
const GIVE_UP_AFTER: chrono::TimeDelta = chrono::TimeDelta::hours(24);

/// Why the outside was not told of a change.
#[derive(Debug)]
pub enum Failed {
    /// It may take it later: tried again.
    Passing(String),
    /// It refused for good: logged, skipped.
    Lasting(String),
}

impl From<DbError> for Failed {
    fn from(e: DbError) -> Failed {
        Failed::Passing(format!("the database failed: {e}"))
    }
}

/// Something that tells the outside world of changes, in feed order.
pub trait Reader: Send + Sync + 'static {
    /// Its name in the database (`feed_readers.id`).
    const NAME: &'static str;
    /// Whom it tells, for the log: "Slack", "the mail server".
    const TOLD: &'static str;
    /// Tells of one change.
    fn tell(&self, change: &Change) -> impl Future<Output = Result<(), Failed>> + Send;
}

/// Places `reader` in the feed, then gives it each change from there, in
/// a task, for as long as the server runs. Awaited before the server
/// serves, so no change made from its first request on is skipped.
pub async fn start<R: Reader>(db: Db, reader: R) -> Result<(), DbError> {
    db.reader_placed(R::NAME).await?;
    tokio::spawn(run(db, reader));
    Ok(())
}

/// Gives `reader` each change as it is stored, for as long as the server
/// runs; waits longer after each failure, up to a minute.
async fn run<R: Reader>(db: Db, reader: R) {
    let holder = crate::changes::new_id().to_string();
    let mut failures: u32 = 0;
    loop {
        let wait = match turn(&db, &reader, &holder).await {
            Ok(()) => {
                failures = 0;
                EVERY
            }
            Err(said) => {
                failures = failures.saturating_add(1);
                tracing::warn!("telling {} failed (trying again): {said}", R::TOLD);
                EVERY * 2u32.saturating_pow(failures.min(6))
            }
        };
        tokio::time::sleep(wait).await;
    }
}

/// One turn: if this instance has it, every change since the reader's
/// place, in order, each moving the place once told.
async fn turn<R: Reader>(db: &Db, reader: &R, holder: &str) -> Result<(), String> {
    let failed = |e: DbError| e.to_string();
    let now = chrono::Utc::now();
    let turn = db.reader_turn(R::NAME, holder, now, now + LEASE).await;
    let Some(mut position) = turn.map_err(failed)? else {
        return Ok(());
    };
    loop {
        let changes = db.changes_after(position, PAGE).await.map_err(failed)?;
        if changes.is_empty() {
            return Ok(());
        }
        for change in changes {
            match reader.tell(&change).await {
                Ok(()) => {}
                Err(Failed::Lasting(said)) => {
                    tracing::error!(review = %change.confirm_id, "{} was not told of a change ({said})", R::TOLD);
                }
                Err(Failed::Passing(said)) if given_up(&change) => {
                    tracing::error!(review = %change.confirm_id, "{} was not told of a change within a day: {said}", R::TOLD);
                }
                Err(Failed::Passing(said)) => return Err(said),
            }
            let until = chrono::Utc::now() + LEASE;
            let moved = db.reader_moved(R::NAME, holder, change.seq, until).await;
            if !moved.map_err(failed)? {
                // Another instance took the turn (this one was too slow).
                return Ok(());
            }
            position = change.seq;
        }
    }
}

/// Whether a change is older than it is tried for.
fn given_up(change: &Change) -> bool {
    chrono::DateTime::parse_from_rfc3339(&change.at)
        .is_ok_and(|at| chrono::Utc::now() - at.to_utc() > GIVE_UP_AFTER)
}
