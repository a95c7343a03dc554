//! The change feed: one row per change of a review, in order, read by the
//! event streams and the long polls (each change with its review's list row).

use super::row::{parse_doc, Columns};
use super::{Db, DbError};
use countersign_domain::model::ConfirmStatus;
use countersign_domain::wire::{ChangeKind, ReceiptDecision, ReviewSummary};

/// One entry of the change feed.
#[derive(Debug, Clone)]
pub struct Change {
    /// Position in the feed (increasing).
    pub seq: i64,
    /// What happened.
    pub kind: ChangeKind,
    /// The confirm_id of the review.
    pub confirm_id: String,
    /// The review's status after the change.
    pub status: ConfirmStatus,
    /// When the change was stored.
    pub at: String,
    /// The decision it recorded (a decision or an expiry), with who made it.
    pub decision: Option<ReceiptDecision>,
    /// The review's list row as it is now.
    pub summary: ReviewSummary,
}

impl Db {
    /// Changes after a feed position, oldest first (at most `limit`), each
    /// with its review's list row as it is now.
    pub async fn changes_after(&self, seq: i64, limit: i64) -> Result<Vec<Change>, DbError> {
        let rows = self.change_rows(seq, limit, false).await?;
        rows.into_iter().map(|row| Ok(row.change()?.0)).collect()
    }

    /// [`Db::changes_after`], each change with its review as it is now (as JSON).
    pub async fn feed_after(
        &self,
        seq: i64,
        limit: i64,
    ) -> Result<Vec<(Change, serde_json::Value)>, DbError> {
        let rows = self.change_rows(seq, limit, true).await?;
        rows.into_iter()
            .map(|row| {
                let (change, doc) = row.change()?;
                let review = serde_json::from_str(doc.as_deref().unwrap_or_default())
                    .map_err(|e| DbError::Damaged(format!("review {}: {e}", change.confirm_id)))?;
                Ok((change, review))
            })
            .collect()
    }

    /// The changes after `seq`; the review's document always with
    /// `with_doc`, else only where no summary was stored.
    async fn change_rows(
        &self,
        seq: i64,
        limit: i64,
        with_doc: bool,
    ) -> Result<Vec<ChangeRow>, sqlx::Error> {
        let doc = if with_doc {
            "r.doc"
        } else {
            "CASE WHEN r.summary IS NULL THEN r.doc END"
        };
        sqlx::query_as(&format!(
            "SELECT c.seq, c.kind, c.review_id, c.status, c.at, c.decision, r.summary, {doc} AS doc
             FROM changes c JOIN reviews r ON r.id = c.review_id
             WHERE c.seq > $1 ORDER BY c.seq LIMIT $2"
        ))
        .bind(seq)
        .bind(limit)
        .fetch_all(self.pool())
        .await
    }

    /// The newest feed position (0 when nothing happened yet).
    pub async fn last_change(&self) -> Result<i64, DbError> {
        Ok(
            sqlx::query_scalar("SELECT COALESCE(MAX(seq), 0) FROM changes")
                .fetch_one(self.pool())
                .await?,
        )
    }
}

/// A row of the change feed joined with its review: its list row, or its
/// document where no list row was stored (or the document was asked for).
#[derive(sqlx::FromRow)]
struct ChangeRow {
    seq: i64,
    kind: String,
    review_id: String,
    status: String,
    at: String,
    decision: Option<String>,
    summary: Option<String>,
    doc: Option<String>,
}

impl ChangeRow {
    /// The change, parsed, and the review's document if it was read.
    fn change(self) -> Result<(Change, Option<String>), DbError> {
        let ChangeRow {
            seq,
            kind,
            review_id: id,
            status,
            at,
            decision,
            summary,
            doc,
        } = self;
        let decision = decision
            .map(|d| serde_json::from_str(&d))
            .transpose()
            .map_err(|e| DbError::Damaged(format!("change of review {id}: its decision: {e}")))?;
        let summary = match (summary, &doc) {
            (Some(summary), _) => serde_json::from_str(&summary)
                .map_err(|e| DbError::Damaged(format!("review {id}'s summary: {e}")))?,
            (None, Some(doc)) => ReviewSummary::of(&parse_doc(&id, doc)?),
            (None, None) => {
                return Err(DbError::Damaged(format!(
                    "review {id} has neither a summary nor a document"
                )))
            }
        };
        let change = Change {
            seq,
            kind: ChangeKind::parse(&kind).ok_or_else(|| {
                DbError::Damaged(format!("a change of the unknown kind `{kind}`"))
            })?,
            status: status
                .parse()
                .map_err(|e| DbError::Damaged(format!("change of review {id}: status {e}")))?,
            confirm_id: id,
            at,
            decision,
            summary,
        };
        Ok((change, doc))
    }
}

pub(super) async fn record_change(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    row: &Columns,
    kind: ChangeKind,
    now: &str,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "INSERT INTO changes (review_id, kind, status, at, decision) VALUES ($1, $2, $3, $4, $5) RETURNING seq",
    )
    .bind(&row.id)
    .bind(kind.as_str())
    .bind(&row.status)
    .bind(now)
    .bind(row.decision_of(kind))
    .fetch_one(&mut **tx)
    .await
}
