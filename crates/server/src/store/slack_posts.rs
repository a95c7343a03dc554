//! Countersign's own messages in Slack: the bot's place in the change feed,
//! taken by one instance at a time for a lease (so two instances never post
//! the same message), and where each review's message is, to update it.

use super::{stored_time, Db, DbError};
use countersign_domain::MplpId;
use sqlx::Row;

/// The one row of `slack_poster`.
const POSTER: &str = "bot";

/// A review's message in one channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Posted {
    /// The channel's ID.
    pub channel: String,
    /// The message's timestamp, Slack's id for it within the channel.
    pub ts: String,
}

impl Db {
    /// Takes (or keeps) the turn to post for `holder` until `until`: the
    /// feed position it continues from, or None while another instance
    /// holds it. The first turn ever starts at the newest change, so the
    /// channel is not sent the history.
    pub async fn slack_turn(
        &self,
        holder: &str,
        now: chrono::DateTime<chrono::Utc>,
        until: chrono::DateTime<chrono::Utc>,
    ) -> Result<Option<i64>, DbError> {
        sqlx::query(
            "INSERT INTO slack_poster (id, position, holder, lease_until)
             VALUES ($1, (SELECT COALESCE(MAX(seq), 0) FROM changes), '', '') ON CONFLICT DO NOTHING",
        )
        .bind(POSTER)
        .execute(self.pool())
        .await?;
        let position = sqlx::query_scalar(
            "UPDATE slack_poster SET holder = $1, lease_until = $2
             WHERE id = $3 AND (holder = $1 OR lease_until <= $4) RETURNING position",
        )
        .bind(holder)
        .bind(stored_time(until))
        .bind(POSTER)
        .bind(stored_time(now))
        .fetch_optional(self.pool())
        .await?;
        Ok(position)
    }

    /// Moves the bot's place to `seq` and its lease to `until`, if `holder`
    /// still has the turn (false: another instance took it).
    pub async fn slack_moved(
        &self,
        holder: &str,
        seq: i64,
        until: chrono::DateTime<chrono::Utc>,
    ) -> Result<bool, DbError> {
        let moved = sqlx::query(
            "UPDATE slack_poster SET position = $1, lease_until = $2 WHERE id = $3 AND holder = $4",
        )
        .bind(seq)
        .bind(stored_time(until))
        .bind(POSTER)
        .bind(holder)
        .execute(self.pool())
        .await?;
        Ok(moved.rows_affected() == 1)
    }

    /// Records where a review's message was posted.
    pub async fn slack_posted(&self, review: MplpId, posted: &Posted) -> Result<(), DbError> {
        sqlx::query(
            "INSERT INTO slack_messages (review_id, channel, ts, posted_at) VALUES ($1, $2, $3, $4)
             ON CONFLICT (review_id, channel) DO UPDATE SET ts = excluded.ts, posted_at = excluded.posted_at",
        )
        .bind(review.to_string())
        .bind(&posted.channel)
        .bind(&posted.ts)
        .bind(stored_time(chrono::Utc::now()))
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Where a review's messages are.
    pub async fn slack_messages(&self, review: &str) -> Result<Vec<Posted>, DbError> {
        let rows = sqlx::query(
            "SELECT channel, ts FROM slack_messages WHERE review_id = $1 ORDER BY posted_at",
        )
        .bind(review)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|row| {
                Ok(Posted {
                    channel: row.try_get("channel")?,
                    ts: row.try_get("ts")?,
                })
            })
            .collect()
    }
}
