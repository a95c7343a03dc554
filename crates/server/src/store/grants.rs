//! The grants ledger: standing approvals made by scoped approvals, the calls
//! each let through, and their revocation. Making, using and revoking a
//! grant are writes under the write lock, so a call is never approved by a
//! grant revoked before the approval committed.

use super::row::lookup_text;
use super::{audit, begin_write, stored_time, Db, DbError, Value};
use countersign_domain::toolcall::CallHash;
use countersign_domain::toolcall::ScopeGrant;
pub use countersign_domain::wire::GrantRecord;
use sqlx::Row;

/// How a revocation ended.
#[derive(Debug)]
pub enum Revoked {
    /// Revoked now.
    Now(GrantRecord),
    /// It was revoked before (the record says when and by whom).
    Already(GrantRecord),
    /// No such grant.
    Unknown,
}

const COLUMNS: &str = "grant_id, doc, review_id, uses, revoked_at, revoked_by";

fn record(row: &sqlx::any::AnyRow) -> Result<GrantRecord, DbError> {
    let id: String = row.try_get("grant_id")?;
    let doc: String = row.try_get("doc")?;
    Ok(GrantRecord {
        grant: serde_json::from_str(&doc)
            .map_err(|e| DbError::Damaged(format!("grant {id}: {e}")))?,
        review_id: row.try_get("review_id")?,
        uses: row.try_get("uses")?,
        revoked_at: row.try_get("revoked_at")?,
        revoked_by: row.try_get("revoked_by")?,
    })
}

/// What the audit chain covers of a grant: its document and its revocation
/// (the use count is derived from the reviews it approved).
pub(crate) fn audited(doc: &str, revoked_at: Option<&str>, revoked_by: Option<&str>) -> String {
    format!(
        "{doc}\nrevoked_at={}\nrevoked_by={}",
        revoked_at.unwrap_or_default(),
        revoked_by.unwrap_or_default()
    )
}

/// A grant made by a decision, stored in the decision's own transaction.
pub(super) struct NewGrant {
    id: String,
    tool_name: String,
    doc: String,
}

impl NewGrant {
    /// The grant `review`'s approval made, if it made one.
    pub(super) fn of(review: &countersign_domain::Review) -> Result<Option<NewGrant>, DbError> {
        let Some(grant) = review
            .tool_call()
            .and_then(|c| c.outcome.as_ref())
            .and_then(|o| o.grant.as_ref())
        else {
            return Ok(None);
        };
        Ok(Some(NewGrant {
            id: grant.grant_id.to_string(),
            tool_name: lookup_text(&grant.tool_name),
            doc: serde_json::to_string(grant).map_err(|e| DbError::Damaged(e.to_string()))?,
        }))
    }

    /// The insert that stores it; nothing when it is stored already (a
    /// decision stored again after a retry).
    pub(super) const INSERT: &str = "INSERT INTO scope_grants (grant_id, review_id, tool_name, doc, created_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (grant_id) DO NOTHING";

    /// The values of [`NewGrant::INSERT`]: made by `review_id` at `now`.
    pub(super) fn values<'a>(&'a self, review_id: &'a str, now: &'a str) -> [Value<'a>; 5] {
        [
            Value::Text(&self.id),
            Value::Text(review_id),
            Value::Text(&self.tool_name),
            Value::Text(&self.doc),
            Value::Text(now),
        ]
    }

    /// Its audit entry, made at `now`.
    pub(super) fn audited(&self, now: &str) -> audit::Entry {
        audit::Entry {
            kind: "grant.made",
            subject: self.id.clone(),
            subject_type: "grant",
            doc_sha256: CallHash::of_canonical(&audited(&self.doc, None, None)),
            at: now.to_owned(),
        }
    }

    /// Stores it as made by `review_id` at `now`; its audit entry when it is
    /// new.
    pub(super) async fn insert(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        review_id: &str,
        now: &str,
    ) -> Result<Option<audit::Entry>, sqlx::Error> {
        let query = self
            .values(review_id, now)
            .into_iter()
            .fold(sqlx::query(Self::INSERT), |query, value| value.bind(query));
        let added = query.execute(&mut **tx).await?.rows_affected();
        Ok((added == 1).then(|| self.audited(now)))
    }
}

impl Db {
    /// The live (not revoked) grants made for a tool, oldest first.
    pub async fn grants_for_tool(&self, tool_name: &str) -> Result<Vec<ScopeGrant>, DbError> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM scope_grants WHERE tool_name = $1 AND revoked_at IS NULL ORDER BY created_at, grant_id"
        ))
        .bind(lookup_text(tool_name))
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(|row| Ok(record(row)?.grant)).collect()
    }

    /// Every grant, newest first; revoked ones only when asked.
    pub async fn grants(&self, with_revoked: bool) -> Result<Vec<GrantRecord>, DbError> {
        let filter = if with_revoked {
            ""
        } else {
            "WHERE revoked_at IS NULL"
        };
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM scope_grants {filter} ORDER BY created_at DESC, grant_id DESC LIMIT 1000"
        ))
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(record).collect()
    }

    /// Revokes a grant as the reviewer key `by`, with its audit entry.
    pub async fn revoke_grant(&self, grant_id: &str, by: &str) -> Result<Revoked, DbError> {
        let now = stored_time(chrono::Utc::now());
        let mut tx = begin_write(self.pool(), self.backend()).await?;
        let found = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM scope_grants WHERE grant_id = $1"
        ))
        .bind(grant_id)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(row) = found else {
            return Ok(Revoked::Unknown);
        };
        let mut grant = record(&row)?;
        if grant.revoked_at.is_some() {
            return Ok(Revoked::Already(grant));
        }
        let doc: String = row.try_get("doc")?;
        sqlx::query("UPDATE scope_grants SET revoked_at = $1, revoked_by = $2 WHERE grant_id = $3")
            .bind(&now)
            .bind(by)
            .bind(grant_id)
            .execute(&mut *tx)
            .await?;
        let entry = audit::Entry {
            kind: "grant.revoked",
            subject: grant_id.to_owned(),
            subject_type: "grant",
            doc_sha256: CallHash::of_canonical(&audited(&doc, Some(&now), Some(by))),
            at: now.clone(),
        };
        audit::append(&mut tx, &[entry]).await?;
        tx.commit().await?;
        grant.revoked_at = Some(now);
        grant.revoked_by = Some(by.to_owned());
        Ok(Revoked::Now(grant))
    }
}

/// Counts one use of a grant inside a write transaction, only while it is
/// not revoked: false (nothing counted) when it was.
pub(super) async fn count_use(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    grant_id: &str,
) -> Result<bool, sqlx::Error> {
    let counted = sqlx::query(
        "UPDATE scope_grants SET uses = uses + 1 WHERE grant_id = $1 AND revoked_at IS NULL",
    )
    .bind(grant_id)
    .execute(&mut **tx)
    .await?
    .rows_affected();
    Ok(counted == 1)
}
