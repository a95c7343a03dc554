//! Countersign's own messages in Slack: where each review's message is, to
//! update it (the bot's place in the feed is a [reader](super::readers)).

use super::{stored_time, Db, DbError};
use countersign_domain::MplpId;
use sqlx::Row;

/// A review's message in one channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Posted {
    /// The channel's ID.
    pub channel: String,
    /// The message's timestamp, Slack's id for it within the channel.
    pub ts: String,
}

impl Db {
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
