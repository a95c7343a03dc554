//! Webhook storage: each endpoint's secret and place in the change feed, and
//! its deliveries. A change's feed entry is written in the change's own
//! transaction, so the feed is the outbox; turning entries into deliveries
//! and moving the webhook's place happen in one transaction, so a crash at
//! any moment loses no delivery (at worst one is sent twice, same id).

use super::Change;
use super::{stored_time, Db, DbError};
use countersign_domain::toolcall::CallHash;
use countersign_domain::wire::{ChangeKind, Delivery, DeliveryState};
use sqlx::Row;

/// A delivery claimed for sending.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Claimed {
    /// The event id.
    pub id: String,
    /// The webhook's full address.
    pub url: String,
    /// The body to send.
    pub body: String,
    /// Attempts before this one.
    pub attempts: i64,
    /// When the change happened (retries stop a day after).
    pub created_at: String,
}

/// A delivery to queue: the change it tells of and the body to send.
pub struct Queued {
    /// The event id.
    pub id: String,
    /// The change.
    pub change: Change,
    /// The body to send.
    pub body: String,
}

/// A webhook as the audit chain covers it: where it sends, since when.
pub(super) fn audited_webhook(url: &str, created_at: &str) -> String {
    serde_json::json!({"url": url, "created_at": created_at}).to_string()
}

/// The audit entry of the webhook to `url` (`webhook.added`…).
pub(super) fn webhook_entry(
    kind: &'static str,
    url: &str,
    created_at: &str,
) -> super::audit::Entry {
    super::audit::Entry {
        kind,
        subject: url.to_owned(),
        subject_type: "webhook",
        doc_sha256: CallHash::of_canonical(&audited_webhook(url, created_at)),
        at: created_at.to_owned(),
    }
}

impl Db {
    /// The webhook's secret, made (with `fresh`) and stored the first time the
    /// address is configured; it then starts at the newest change, so it is
    /// not sent the history. Also says whether it was made now.
    pub async fn webhook_secret(&self, url: &str, fresh: &str) -> Result<(String, bool), DbError> {
        let now = stored_time(chrono::Utc::now());
        let mut tx = super::begin_write(self.pool(), self.backend()).await?;
        let made = sqlx::query(
            "INSERT INTO webhooks (url, secret, position, created_at)
             VALUES ($1, $2, (SELECT COALESCE(MAX(seq), 0) FROM changes), $3) ON CONFLICT DO NOTHING",
        )
        .bind(url)
        .bind(fresh)
        .bind(&now)
        .execute(&mut *tx)
        .await?
        .rows_affected()
            == 1;
        if made {
            super::audit::append(&mut tx, &[webhook_entry("webhook.added", url, &now)]).await?;
        }
        let secret = sqlx::query_scalar("SELECT secret FROM webhooks WHERE url = $1")
            .bind(url)
            .fetch_one(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok((secret, made))
    }

    /// Every webhook ever configured, with its secret, oldest first.
    pub async fn webhook_secrets(&self) -> Result<Vec<(String, String)>, DbError> {
        let rows = sqlx::query("SELECT url, secret FROM webhooks ORDER BY created_at, url")
            .fetch_all(self.pool())
            .await?;
        rows.iter()
            .map(|row| Ok((row.try_get("url")?, row.try_get("secret")?)))
            .collect()
    }

    /// The last feed position turned into deliveries for a webhook.
    pub async fn webhook_position(&self, url: &str) -> Result<i64, DbError> {
        Ok(
            sqlx::query_scalar("SELECT position FROM webhooks WHERE url = $1")
                .bind(url)
                .fetch_one(self.pool())
                .await?,
        )
    }

    /// Queues deliveries for the changes after `from` up to `to` and moves the
    /// webhook's place there, all or nothing. False (nothing written) when
    /// another instance moved it first.
    pub async fn queue_deliveries(
        &self,
        url: &str,
        (from, to): (i64, i64),
        queued: &[Queued],
    ) -> Result<bool, DbError> {
        let now = stored_time(chrono::Utc::now());
        let mut tx = self.pool().begin().await?;
        let moved =
            sqlx::query("UPDATE webhooks SET position = $1 WHERE url = $2 AND position = $3")
                .bind(to)
                .bind(url)
                .bind(from)
                .execute(&mut *tx)
                .await?
                .rows_affected();
        if moved != 1 {
            return Ok(false);
        }
        for delivery in queued {
            sqlx::query(
                "INSERT INTO webhook_deliveries (id, url, seq, kind, review_id, body, state, attempts, next_at, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6, 'pending', 0, $7, $8) ON CONFLICT DO NOTHING",
            )
            .bind(&delivery.id)
            .bind(url)
            .bind(delivery.change.seq)
            .bind(delivery.change.kind.as_str())
            .bind(&delivery.change.confirm_id)
            .bind(&delivery.body)
            .bind(&now)
            .bind(&delivery.change.at)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(true)
    }

    /// Claims up to `limit` due deliveries for `urls` until `lease_until`, in
    /// one statement, so two instances never claim the same one at once.
    pub async fn claim_deliveries(
        &self,
        urls: &[String],
        now: chrono::DateTime<chrono::Utc>,
        lease_until: chrono::DateTime<chrono::Utc>,
        limit: i64,
    ) -> Result<Vec<Claimed>, DbError> {
        if urls.is_empty() {
            return Ok(Vec::new());
        }
        let listed: Vec<String> = (0..urls.len()).map(|i| format!("${}", i + 4)).collect();
        let sql = format!(
            "UPDATE webhook_deliveries SET next_at = $1
             WHERE id IN (SELECT id FROM webhook_deliveries
                          WHERE state = 'pending' AND next_at <= $2 AND url IN ({})
                          ORDER BY next_at LIMIT $3)
               AND state = 'pending' AND next_at <= $2
             RETURNING id, url, body, attempts, created_at",
            listed.join(", ")
        );
        let mut query = sqlx::query_as(&sql)
            .bind(stored_time(lease_until))
            .bind(stored_time(now))
            .bind(limit);
        for url in urls {
            query = query.bind(url);
        }
        Ok(query.fetch_all(self.pool()).await?)
    }

    /// When the webhook's next pending delivery falls due (a claimed one at
    /// the end of its lease), if it has one.
    pub async fn next_delivery_at(
        &self,
        url: &str,
    ) -> Result<Option<chrono::DateTime<chrono::Utc>>, DbError> {
        let next: Option<String> = sqlx::query_scalar(
            "SELECT MIN(next_at) FROM webhook_deliveries WHERE state = 'pending' AND url = $1",
        )
        .bind(url)
        .fetch_one(self.pool())
        .await?;
        let Some(next) = next else {
            return Ok(None);
        };
        super::parse_stored_time(&next, "a delivery due at").map(Some)
    }

    /// Records how an attempt ended: sent, to be tried again at `retry_at`
    /// with the error, or (no retry time) failed for good.
    pub async fn delivery_attempted(
        &self,
        id: &str,
        result: Result<(), (&str, Option<chrono::DateTime<chrono::Utc>>)>,
    ) -> Result<(), DbError> {
        let now = stored_time(chrono::Utc::now());
        let query = match result {
            Ok(()) => sqlx::query(
                "UPDATE webhook_deliveries SET state = 'sent', attempts = attempts + 1, sent_at = $1, last_error = NULL WHERE id = $2",
            )
            .bind(now),
            Err((error, retry_at)) => {
                let (state, next) = match retry_at {
                    Some(at) => (DeliveryState::Pending, stored_time(at)),
                    None => (DeliveryState::Failed, now),
                };
                sqlx::query(
                    "UPDATE webhook_deliveries SET state = $1, attempts = attempts + 1, next_at = $2, last_error = $3 WHERE id = $4",
                )
                .bind(state.as_str())
                .bind(next)
                .bind(error.to_owned())
            }
        };
        query.bind(id).execute(self.pool()).await?;
        Ok(())
    }

    /// How many deliveries of a webhook are pending, sent and failed.
    pub async fn delivery_counts(&self, url: &str) -> Result<[i64; 3], DbError> {
        let rows = sqlx::query(
            "SELECT state, COUNT(*) AS n FROM webhook_deliveries WHERE url = $1 GROUP BY state",
        )
        .bind(url)
        .fetch_all(self.pool())
        .await?;
        let mut counts = [0; 3];
        for row in &rows {
            let state: String = row.try_get("state")?;
            let slot = match DeliveryState::parse(&state) {
                Some(DeliveryState::Pending) => 0,
                Some(DeliveryState::Sent) => 1,
                Some(DeliveryState::Failed) => 2,
                None => return Err(DbError::Damaged(format!("a delivery in state `{state}`"))),
            };
            counts[slot] = row.try_get("n")?;
        }
        Ok(counts)
    }

    /// How many deliveries of all webhooks are in each state (every state,
    /// 0 when none is).
    pub async fn deliveries_by_state(&self) -> Result<Vec<(&'static str, i64)>, DbError> {
        let rows =
            sqlx::query("SELECT state, COUNT(*) AS n FROM webhook_deliveries GROUP BY state")
                .fetch_all(self.pool())
                .await?;
        let mut counts = [
            DeliveryState::Pending,
            DeliveryState::Sent,
            DeliveryState::Failed,
        ]
        .map(|state| (state.as_str(), 0));
        for row in &rows {
            let state: String = row.try_get("state")?;
            let Some(slot) = counts.iter_mut().find(|(name, _)| *name == state) else {
                return Err(DbError::Damaged(format!("a delivery in state `{state}`")));
            };
            slot.1 = row.try_get("n")?;
        }
        Ok(counts.to_vec())
    }

    /// The latest deliveries of these webhooks, newest first; each address
    /// is shown through `shown`.
    pub async fn recent_deliveries(
        &self,
        urls: &[String],
        limit: i64,
        shown: impl Fn(&str) -> String,
    ) -> Result<Vec<Delivery>, DbError> {
        if urls.is_empty() {
            return Ok(Vec::new());
        }
        let listed: Vec<String> = (0..urls.len()).map(|i| format!("${}", i + 2)).collect();
        let sql = format!(
            "SELECT id, url, kind, review_id, state, attempts, next_at, last_error, created_at, sent_at
             FROM webhook_deliveries WHERE url IN ({}) ORDER BY seq DESC, url LIMIT $1",
            listed.join(", ")
        );
        let mut query = sqlx::query(&sql).bind(limit);
        for url in urls {
            query = query.bind(url);
        }
        let rows = query.fetch_all(self.pool()).await?;
        rows.iter()
            .map(|row| {
                let id: String = row.try_get("id")?;
                let kind: String = row.try_get("kind")?;
                let state: String = row.try_get("state")?;
                let damaged = |what: &str| DbError::Damaged(format!("delivery {id}: {what}"));
                let state = DeliveryState::parse(&state).ok_or_else(|| damaged(&state))?;
                let url: String = row.try_get("url")?;
                Ok(Delivery {
                    url: shown(&url),
                    kind: ChangeKind::parse(&kind).ok_or_else(|| damaged(&kind))?,
                    review_id: row.try_get("review_id")?,
                    attempts: row.try_get("attempts")?,
                    next_at: row
                        .try_get::<String, _>("next_at")
                        .ok()
                        .filter(|_| state == DeliveryState::Pending),
                    last_error: row.try_get("last_error")?,
                    created_at: row.try_get("created_at")?,
                    sent_at: row.try_get("sent_at")?,
                    state,
                    id,
                })
            })
            .collect()
    }
}
