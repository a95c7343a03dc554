//! Reviews: created, read (by id or by approval), replaced. Every change of
//! a review is one transaction: the new document replaces the old one only if
//! nobody changed it meanwhile (compare-and-swap on `version`), and the
//! change-feed row and idempotency record commit with it or not at all
//! (`commit`, the group commit).

use super::commit::{ChangeError, IdempotencyRecord, Replacement};
use super::feed::record_change;
use super::grants::NewGrant;
use super::listing::NO_DEADLINE;
use super::rounds::{rows_in, ReadFuture};
use super::row::{parse_doc, Columns, ROOM};
use super::{audit, stored_time, Backend, Db, DbError};
use countersign_domain::wire::ChangeKind;
use countersign_domain::{MplpId, Review};
use sqlx::FromRow;

/// A review as stored, with its version for compare-and-swap.
#[derive(Debug, Clone)]
pub struct Stored {
    /// The review.
    pub review: Review,
    /// Bumped by every change.
    pub version: i64,
    /// The agent key that created it.
    pub created_by: String,
}

/// A stored review's row, not parsed yet (each caller parses its own).
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct StoredRow {
    id: String,
    doc: String,
    version: i64,
    created_by: String,
}

/// The rows of these reviews, by id (one round of [`Rounds`](super::rounds::Rounds)).
pub(super) fn stored_rows(pool: sqlx::AnyPool, ids: Vec<String>) -> ReadFuture<StoredRow> {
    Box::pin(async move {
        let select = "SELECT id, doc, version, created_by FROM reviews WHERE id IN";
        let rows = rows_in(&pool, select, &ids).await?;
        rows.iter()
            .map(|row| StoredRow::from_row(row).map(|stored| (stored.id.clone(), stored)))
            .collect::<Result<_, sqlx::Error>>()
            .map_err(|e| e.to_string())
    })
}

/// How storing a new review ended.
#[derive(Debug)]
pub enum Insert {
    /// Stored, at this feed position.
    Stored(i64),
    /// Its id (or approvalId) is taken: the review stored under it, nothing written.
    Taken(Box<Stored>),
    /// The grant that was to approve it was revoked meanwhile: nothing written.
    GrantGone,
}

impl Db {
    /// Stores a new review and its `review.created` change; with `grant`,
    /// the review as that grant approved it, the grant's use and the
    /// `review.decided` change too, all in one transaction, so nothing ever
    /// reads it pending. Nothing is written when the id (or approvalId) is
    /// taken or the grant was revoked.
    pub async fn insert_review(
        &self,
        review: &Review,
        created_by: &str,
        grant: Option<&str>,
    ) -> Result<Insert, DbError> {
        let row = Columns::of(review);
        let mut tries = 0;
        let inserted = loop {
            match self.try_insert(&row, created_by, grant).await {
                Err(e) if super::is_transient(&e) && tries < super::RETRIES => tries += 1,
                done => break done?,
            }
        };
        match inserted {
            Some(Some(seq)) => return Ok(Insert::Stored(seq)),
            None => return Ok(Insert::GrantGone),
            Some(None) => {}
        }
        let existing = match self.review_stored_as(&row.id).await? {
            Some(stored) => Some(stored),
            None => match &row.approval_id {
                Some(approval) => self.review_by_approval(approval).await?,
                None => None,
            },
        };
        existing
            .map(|stored| Insert::Taken(Box::new(stored)))
            .ok_or_else(|| DbError::Damaged(format!("review {} vanished", row.id)))
    }

    /// Inserts a new review with its change (and, with `grant`, that grant's
    /// use and the decision's change): its feed position, `Some(None)` when its
    /// id (or approvalId) is taken, `None` when the grant is revoked.
    async fn try_insert(
        &self,
        row: &Columns,
        created_by: &str,
        grant: Option<&str>,
    ) -> Result<Option<Option<i64>>, sqlx::Error> {
        let now = stored_time(chrono::Utc::now());
        let mut tx = super::begin_write(self.pool(), self.backend()).await?;
        if let Some(grant) = grant {
            if !super::grants::count_use(&mut tx, grant).await? {
                return Ok(None);
            }
        }
        if !insert_row(&mut tx, self.backend(), row, created_by, &now).await? {
            return Ok(Some(None));
        }
        let mut seq = record_change(&mut tx, row, ChangeKind::Created, &now).await?;
        let mut entries = vec![row.audited(ChangeKind::Created, &now)];
        if grant.is_some() {
            seq = record_change(&mut tx, row, ChangeKind::Decided, &now).await?;
            entries.push(row.audited(ChangeKind::Decided, &now));
        }
        audit::append(&mut tx, &entries).await?;
        tx.commit().await?;
        Ok(Some(Some(seq)))
    }

    /// Stores many reviews in one transaction (seeding: the demo data, a
    /// benchmark's 100,000 reviews); ids already present are left as they are.
    /// Returns how many were new.
    pub async fn insert_reviews(
        &self,
        reviews: &[Review],
        created_by: &str,
    ) -> Result<u64, DbError> {
        let now = stored_time(chrono::Utc::now());
        let mut tx = super::begin_write(self.pool(), self.backend()).await?;
        let mut added = Vec::new();
        for review in reviews {
            let row = Columns::of(review);
            if insert_row(&mut tx, self.backend(), &row, created_by, &now).await? {
                record_change(&mut tx, &row, ChangeKind::Created, &now).await?;
                added.push(row.audited(ChangeKind::Created, &now));
            }
        }
        audit::append(&mut tx, &added).await?;
        tx.commit().await?;
        Ok(added.len() as u64)
    }

    /// The pending tool-call reviews whose `expiresAt` is at or before `now`.
    pub async fn expired_pending(
        &self,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<Vec<MplpId>, DbError> {
        self.due(&expiry(), now).await
    }

    /// Pending reviews whose escalation time has come.
    pub async fn escalations_due(
        &self,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<Vec<MplpId>, DbError> {
        self.due("escalate_at IS NOT NULL AND escalate_at", now)
            .await
    }

    /// The ids (at most 500) of reviews where `condition <= now` (read
    /// through an index that holds the condition).
    async fn due(
        &self,
        condition: &str,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<Vec<MplpId>, DbError> {
        let ids: Vec<String> = sqlx::query_scalar(&format!(
            "SELECT id FROM reviews WHERE {condition} <= $1 LIMIT 500"
        ))
        .bind(stored_time(now))
        .fetch_all(self.pool())
        .await?;
        ids.iter()
            .map(|id| {
                MplpId::parse(id)
                    .map_err(|e| DbError::Damaged(format!("stored review id {id:?} {e}")))
            })
            .collect()
    }

    /// The tool-call review for an `approvalId`.
    pub async fn review_by_approval(&self, approval_id: &str) -> Result<Option<Stored>, DbError> {
        let id: Option<String> =
            sqlx::query_scalar("SELECT id FROM reviews WHERE approval_id = $1")
                .bind(approval_id)
                .fetch_optional(self.pool())
                .await?;
        match id {
            Some(id) => self.review_stored_as(&id).await,
            None => Ok(None),
        }
    }

    /// One review by confirm_id, read by a query that started after this
    /// call (with the reads of other requests waiting meanwhile: see [`Rounds`](super::rounds::Rounds)).
    pub async fn review(&self, id: MplpId) -> Result<Option<Stored>, DbError> {
        self.review_stored_as(&id.to_string()).await
    }

    /// One review by its id as stored.
    async fn review_stored_as(&self, id: &str) -> Result<Option<Stored>, DbError> {
        let Some(row) = self.review_reader().get(id).await? else {
            return Ok(None);
        };
        Ok(Some(Stored {
            review: parse_doc(id, &row.doc)?,
            version: row.version,
            created_by: row.created_by,
        }))
    }

    /// Replaces a review as it was `read` with its next state, records the
    /// change and, for a decision, the first result under its idempotency key:
    /// all or nothing, committed durably before this returns. Concurrent calls
    /// share one transaction and one sync (group commit, see [`super::commit`]).
    /// A review changed since it was read is refused ([`ChangeError::Stale`]).
    pub async fn replace_review(
        &self,
        read: &Stored,
        next: &Review,
        kind: ChangeKind,
        idempotency: Option<IdempotencyRecord>,
    ) -> Result<(), ChangeError> {
        self.replace_serialized_review(
            read,
            next,
            serde_json::to_string(next).unwrap_or_default(),
            kind,
            idempotency,
        )
        .await
    }

    /// [`Db::replace_review`] for a review the caller already serialized as
    /// `doc` (a decision sends the same text back, so it is written once).
    pub async fn replace_serialized_review(
        &self,
        read: &Stored,
        next: &Review,
        doc: String,
        kind: ChangeKind,
        idempotency: Option<IdempotencyRecord>,
    ) -> Result<(), ChangeError> {
        let grant = match kind {
            ChangeKind::Decided => NewGrant::of(next)?,
            _ => None,
        };
        let change = Replacement::new(read, Columns::with_doc(next, doc), kind, idempotency)
            .with_grant(grant);
        let change = match self.backend() {
            Backend::Sqlite => change.packed(),
            // PostgreSQL compresses long values itself.
            Backend::Postgres => change,
        };
        self.writer().submit(change).await
    }
}

/// Inserts a new review's row at version 1 (on SQLite with room for its
/// decision: [`ROOM`]); false when its id (or its approvalId) is already
/// taken, and then nothing is written.
async fn insert_row(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    backend: Backend,
    row: &Columns,
    created_by: &str,
    now: &str,
) -> Result<bool, sqlx::Error> {
    let (spare, room) = match backend {
        Backend::Sqlite => (", spare", ", zeroblob($14)"),
        Backend::Postgres => ("", ""),
    };
    let sql = format!(
        "INSERT INTO reviews (id, status, target_type, requester, requested_at, search, doc, version, created_by, updated_at, expires_at, approval_id, summary, escalate_at{spare})
         VALUES ($1, $2, $3, $4, $5, $6, $7, 1, $8, $9, $10, $11, $12, $13{room}) ON CONFLICT DO NOTHING"
    );
    let mut insert = sqlx::query(&sql)
        .bind(&row.id)
        .bind(&row.status)
        .bind(&row.target_type)
        .bind(&row.requester)
        .bind(&row.requested_at)
        .bind(&row.search)
        .bind(&row.doc)
        .bind(created_by)
        .bind(now)
        .bind(&row.expires_at)
        .bind(&row.approval_id)
        .bind(&row.summary)
        .bind(&row.escalate_at);
    if backend == Backend::Sqlite {
        insert = insert.bind(ROOM);
    }
    let inserted = insert.execute(&mut **tx).await?.rows_affected();
    Ok(inserted == 1)
}

/// What makes a review come due to expire, compared with the time: the
/// deadline as the inbox orders by it (a review without one never comes
/// due), so the (status, deadline) index holds exactly the due rows.
fn expiry() -> String {
    format!("status = 'pending' AND COALESCE(expires_at, {NO_DEADLINE})")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing::{plan, scratch};
    use sqlx::Row;

    /// What review `n`'s row uses of its room and what it has left: the
    /// bytes of its resized columns and of its spare (None: it has no room).
    async fn room(db: &Db, n: usize) -> (i64, Option<i64>) {
        let row = sqlx::query(
            "SELECT octet_length(doc) + octet_length(summary) + octet_length(search) + octet_length(status)
               + octet_length(COALESCE(escalate_at, '')) AS used, octet_length(spare) AS spare
             FROM reviews WHERE id = $1",
        )
        .bind(countersign_domain::demo::numbered_id(n))
        .fetch_one(db.pool())
        .await
        .unwrap();
        (row.try_get("used").unwrap(), row.try_get("spare").unwrap())
    }

    /// Approves stored review `n`.
    async fn approve(db: &Db, n: usize) {
        let id = countersign_domain::demo::numbered_id(n).parse().unwrap();
        let stored = db.review(id).await.unwrap().unwrap();
        let approved =
            countersign_domain::demo::approved(&stored.review, chrono::Utc::now()).unwrap();
        db.replace_review(&stored, &approved, ChangeKind::Decided, None)
            .await
            .unwrap();
    }

    /// A review's row is stored with room for its decision, which the
    /// decision takes: the row keeps its size, so SQLite rewrites its page in
    /// place instead of rebalancing it with its neighbours.
    #[tokio::test]
    async fn a_decision_takes_its_room_from_the_row_which_keeps_its_size() {
        let (_dir, db) = scratch().await;
        let reviews: Vec<Review> = (1..=2)
            .map(|n| countersign_domain::demo::numbered(n).unwrap())
            .collect();
        db.insert_reviews(&reviews, "key_test").await.unwrap();
        let (used, spare) = room(&db, 1).await;
        assert_eq!(spare, Some(ROOM));
        approve(&db, 1).await;
        let (decided, left) = room(&db, 1).await;
        assert!(
            decided > used + 500,
            "a decision adds its entry and receipt: {used} → {decided}"
        );
        assert_eq!(decided + left.unwrap(), used + ROOM);
        // A row stored before rows had room keeps none.
        sqlx::query("UPDATE reviews SET spare = NULL WHERE id = $1")
            .bind(countersign_domain::demo::numbered_id(2))
            .execute(db.pool())
            .await
            .unwrap();
        approve(&db, 2).await;
        assert_eq!(room(&db, 2).await.1, None);
    }

    /// SQLite's planner, which keeps no statistics, must read only the due
    /// rows: before, it scanned every pending review once a second.
    #[tokio::test]
    async fn expired_requests_are_read_through_the_deadline_index() {
        let (_dir, db) = scratch().await;
        let sql = format!(
            "SELECT id FROM reviews WHERE {} <= '2026-12-02' LIMIT 500",
            expiry()
        );
        assert_eq!(
            plan(&db, &sql, &[]).await,
            ["SEARCH reviews USING INDEX reviews_pending_by_deadline (<expr><?)"]
        );
    }
}
