//! Readers of the change feed that act outside (the Slack bot, the mailer):
//! each one's place in the feed, taken by one instance at a time for a
//! lease, so what a reader sends goes in order and from one instance.

use super::{stored_time, Db, DbError};

impl Db {
    /// Gives reader `reader` its place in the feed if it has none: the newest
    /// change, so the history is not sent. The server does this before it
    /// serves, so a change made while the reader's first turn is pending is
    /// still told.
    pub async fn reader_placed(&self, reader: &str) -> Result<(), DbError> {
        sqlx::query(
            "INSERT INTO feed_readers (id, position, holder, lease_until)
             VALUES ($1, (SELECT COALESCE(MAX(seq), 0) FROM changes), '', '') ON CONFLICT DO NOTHING",
        )
        .bind(reader)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Takes (or keeps) reader `reader`'s turn for `holder` until `until`:
    /// the feed position it continues from, or None while another instance
    /// holds it. A reader not yet placed is placed first
    /// ([`Db::reader_placed`]).
    pub async fn reader_turn(
        &self,
        reader: &str,
        holder: &str,
        now: chrono::DateTime<chrono::Utc>,
        until: chrono::DateTime<chrono::Utc>,
    ) -> Result<Option<i64>, DbError> {
        self.reader_placed(reader).await?;
        let position = sqlx::query_scalar(
            "UPDATE feed_readers SET holder = $1, lease_until = $2
             WHERE id = $3 AND (holder = $1 OR lease_until <= $4) RETURNING position",
        )
        .bind(holder)
        .bind(stored_time(until))
        .bind(reader)
        .bind(stored_time(now))
        .fetch_optional(self.pool())
        .await?;
        Ok(position)
    }

    /// Moves reader `reader` to `seq` and its lease to `until`, if `holder`
    /// still has the turn (false: another instance took it).
    pub async fn reader_moved(
        &self,
        reader: &str,
        holder: &str,
        seq: i64,
        until: chrono::DateTime<chrono::Utc>,
    ) -> Result<bool, DbError> {
        let moved = sqlx::query(
            "UPDATE feed_readers SET position = $1, lease_until = $2 WHERE id = $3 AND holder = $4",
        )
        .bind(seq)
        .bind(stored_time(until))
        .bind(reader)
        .bind(holder)
        .execute(self.pool())
        .await?;
        Ok(moved.rows_affected() == 1)
    }
}
