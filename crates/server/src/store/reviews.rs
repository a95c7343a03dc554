//! Reviews, the decisions' idempotency records and the change feed.
//!
//! Every change of a review is one transaction: the new document replaces the
//! old one only if nobody changed it meanwhile (compare-and-swap on `version`),
//! and the change-feed row and idempotency record commit with it or not at all.

use super::rounds::{rows_in, ReadFuture};
use super::{audit, stored_time, Backend, Db, DbError};
use countersign_domain::model::ConfirmStatus;
pub use countersign_domain::wire::ChangeKind;
use countersign_domain::wire::{Order, ReviewQuery, ReviewSummary, StatusCounts};
use countersign_domain::Review;
use sqlx::Row;

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
#[derive(Debug, Clone)]
pub(crate) struct StoredRow {
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
            .map(|row| {
                let id: String = row.try_get(0)?;
                let stored = StoredRow {
                    doc: row.try_get(1)?,
                    version: row.try_get(2)?,
                    created_by: row.try_get(3)?,
                };
                Ok((id, stored))
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(|e| e.to_string())
    })
}

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
    /// The review's list row as it is now.
    pub summary: ReviewSummary,
}

/// Where a page starts: after this (requested_at, id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    /// Stored request time of the last review of the previous page.
    pub requested_at: String,
    /// Its id.
    pub id: String,
}

impl Cursor {
    /// The opaque text given to clients.
    pub fn encode(&self) -> String {
        format!("{}~{}", self.requested_at, self.id)
    }

    /// Reads a cursor a client sent back.
    pub fn decode(text: &str) -> Option<Cursor> {
        let (at, id) = text.split_once('~')?;
        let well_formed = at.len() == 27 && at.ends_with('Z') && id.len() == 36;
        well_formed.then(|| Cursor {
            requested_at: at.to_owned(),
            id: id.to_owned(),
        })
    }
}

/// A page of reviews.
#[derive(Debug)]
pub struct Page<T> {
    /// The reviews (or what a list row shows of them), oldest request first.
    pub items: Vec<T>,
    /// Where the next page starts, if there is one.
    pub next: Option<Cursor>,
}

/// The first result of a decision post, kept under its idempotency key.
#[derive(Debug, Clone)]
pub struct IdempotentResult {
    /// The request body as first received (to spot a reused key).
    pub request: String,
    /// The response body first returned.
    pub response: String,
}

/// Why a change was not stored.
#[derive(Debug, thiserror::Error)]
pub enum ChangeError {
    /// Someone changed the review since it was read.
    #[error("the review changed meanwhile")]
    Stale,
    /// The same idempotency key was stored meanwhile by a concurrent retry.
    #[error("a retry of this request was stored meanwhile")]
    DuplicateRequest,
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbError),
}

impl From<sqlx::Error> for ChangeError {
    fn from(e: sqlx::Error) -> Self {
        ChangeError::Db(DbError::Sql(e))
    }
}

/// The columns list filters use, derived from the review.
struct Columns {
    id: String,
    status: String,
    target_type: String,
    requester: String,
    requested_at: String,
    search: String,
    doc: String,
    summary: String,
    expires_at: Option<String>,
    escalate_at: Option<String>,
    approval_id: Option<String>,
}

impl Columns {
    /// The audit entry of a change that leaves this row stored.
    fn audited(&self, kind: ChangeKind, at: &str) -> audit::Entry {
        audit::Entry {
            kind: kind.as_str(),
            subject: self.id.clone(),
            subject_type: "review",
            doc: self.doc.clone(),
            at: at.to_owned(),
        }
    }

    fn of(review: &Review) -> Columns {
        Columns::with_doc(review, serde_json::to_string(review).unwrap_or_default())
    }

    /// The columns of a review already serialized as `doc`.
    fn with_doc(review: &Review, doc: String) -> Columns {
        let confirm = &review.confirm;
        let plan = review.plan();
        let request = review.tool_call().map(|c| &c.request);
        let search = [
            plan.map(|p| p.title.as_str()).unwrap_or_default(),
            plan.map(|p| p.objective.as_str()).unwrap_or_default(),
            request
                .map(|r| r.human_summary.as_str())
                .unwrap_or_default(),
            request
                .map(|r| r.tool_call_canonical.as_str())
                .unwrap_or_default(),
            confirm.reason.as_deref().unwrap_or_default(),
            confirm.requested_by_role.as_str(),
            &confirm.confirm_id.to_string(),
        ]
        .join(" ")
        .to_lowercase();
        let search = lookup_text(&search);
        Columns {
            id: confirm.confirm_id.to_string(),
            status: confirm.status.to_string(),
            target_type: confirm.target_type.to_string(),
            requester: lookup_text(&confirm.requested_by_role),
            requested_at: stored_time(confirm.requested_at.to_utc()),
            search,
            doc,
            summary: serde_json::to_string(&ReviewSummary::of(review)).unwrap_or_default(),
            expires_at: request.map(|r| stored_time(r.expires_at.to_utc())),
            escalate_at: review.escalation_due().map(|at| stored_time(at.to_utc())),
            approval_id: request.map(|r| r.approval_id.to_string()),
        }
    }
}

/// Text as stored in a lookup column (requester, search, tool name): NUL,
/// which PostgreSQL text cannot hold, becomes U+FFFD. The JSON document keeps
/// the exact text and is what every answer and every check reads; filters
/// pass their values through here too, so they still match.
pub(super) fn lookup_text(text: &str) -> String {
    text.replace('\0', "\u{fffd}")
}

fn parse_doc(id: &str, doc: &str) -> Result<Review, DbError> {
    serde_json::from_str(doc).map_err(|e| DbError::Damaged(format!("review {id}: {e}")))
}

impl Db {
    /// Stores a new review and its `review.created` change. Returns the stored
    /// review already under that id instead when there is one (nothing is written).
    pub async fn insert_review(
        &self,
        review: &Review,
        created_by: &str,
    ) -> Result<Result<i64, Stored>, DbError> {
        let row = Columns::of(review);
        let mut tries = 0;
        let inserted = loop {
            match self.try_insert(&row, created_by).await {
                Err(e) if super::is_transient(&e) && tries < super::RETRIES => tries += 1,
                done => break done?,
            }
        };
        if let Some(seq) = inserted {
            return Ok(Ok(seq));
        }
        let existing = match self.review(&row.id).await? {
            Some(stored) => Some(stored),
            None => match &row.approval_id {
                Some(approval) => self.review_by_approval(approval).await?,
                None => None,
            },
        };
        existing
            .map(Err)
            .ok_or_else(|| DbError::Damaged(format!("review {} vanished", row.id)))
    }

    /// Inserts a new review with its change: its feed position, or None when
    /// its id (or approvalId) is taken and nothing was written.
    async fn try_insert(
        &self,
        row: &Columns,
        created_by: &str,
    ) -> Result<Option<i64>, sqlx::Error> {
        let now = stored_time(chrono::Utc::now());
        let mut tx = super::begin_write(self.pool(), self.backend()).await?;
        if !insert_row(&mut tx, row, created_by, &now).await? {
            return Ok(None);
        }
        let seq = record_change(&mut tx, row, ChangeKind::Created, &now).await?;
        audit::append(&mut tx, &[row.audited(ChangeKind::Created, &now)]).await?;
        tx.commit().await?;
        Ok(Some(seq))
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
            if insert_row(&mut tx, &row, created_by, &now).await? {
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
    ) -> Result<Vec<String>, DbError> {
        self.due(
            "status = 'pending' AND expires_at IS NOT NULL AND expires_at",
            now,
        )
        .await
    }

    /// Pending reviews whose escalation time has come.
    pub async fn escalations_due(
        &self,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<Vec<String>, DbError> {
        self.due("escalate_at IS NOT NULL AND escalate_at", now)
            .await
    }

    /// The ids (at most 500) of reviews where `condition <= now` (read
    /// through the condition's partial index).
    async fn due(
        &self,
        condition: &str,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<Vec<String>, DbError> {
        let rows = sqlx::query(&format!(
            "SELECT id FROM reviews WHERE {condition} <= $1 LIMIT 500"
        ))
        .bind(stored_time(now))
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .iter()
            .map(|row| row.try_get::<String, _>(0))
            .collect::<Result<_, _>>()?)
    }

    /// The tool-call review for an `approvalId`.
    pub async fn review_by_approval(&self, approval_id: &str) -> Result<Option<Stored>, DbError> {
        let id = sqlx::query("SELECT id FROM reviews WHERE approval_id = $1")
            .bind(approval_id)
            .fetch_optional(self.pool())
            .await?;
        match id {
            Some(row) => self.review(&row.try_get::<String, _>(0)?).await,
            None => Ok(None),
        }
    }

    /// One review by confirm_id, read by a query that started after this
    /// call (with the reads of other requests waiting meanwhile: see [`Rounds`](super::rounds::Rounds)).
    pub async fn review(&self, id: &str) -> Result<Option<Stored>, DbError> {
        let Some(row) = self.review_reader().get(id).await? else {
            return Ok(None);
        };
        Ok(Some(Stored {
            review: parse_doc(id, &row.doc)?,
            version: row.version,
            created_by: row.created_by,
        }))
    }

    /// A page of reviews matching the filter, in its order.
    pub async fn list_reviews(
        &self,
        query: &ReviewQuery,
        after: Option<&Cursor>,
    ) -> Result<Page<Review>, DbError> {
        let rows = self.page_rows(query, after, "doc").await?;
        self.page(rows, query.limit, |id, row| {
            parse_doc(id, &row.try_get::<String, _>(2)?)
        })
    }

    /// A page of what the list rows show of the reviews matching the filter,
    /// in its order: each stored summary as written with its review
    /// (a review stored before summaries were kept is summarized when read).
    pub async fn list_summaries(
        &self,
        query: &ReviewQuery,
        after: Option<&Cursor>,
    ) -> Result<Page<ReviewSummary>, DbError> {
        let columns = "summary, CASE WHEN summary IS NULL THEN doc END";
        let rows = self.page_rows(query, after, columns).await?;
        self.page(rows, query.limit, |id, row| {
            match row.try_get::<Option<String>, _>(2)? {
                Some(summary) => serde_json::from_str(&summary)
                    .map_err(|e| DbError::Damaged(format!("review {id}'s summary: {e}"))),
                None => Ok(ReviewSummary::of(&parse_doc(
                    id,
                    &row.try_get::<String, _>(3)?,
                )?)),
            }
        })
    }

    /// The rows of a page: `id, requested_at`, then `columns`; one more than
    /// `limit` when there is a next page. Uses the (status, requested_at, id)
    /// or (requested_at, id) index; a text search of 3 characters or more
    /// that few reviews hold reads only the rows holding it (trigram indexes:
    /// FTS5 on SQLite, pg_trgm on PostgreSQL), another one reads the rows in
    /// order until the page is full.
    async fn page_rows(
        &self,
        filter: &ReviewQuery,
        after: Option<&Cursor>,
        columns: &str,
    ) -> Result<Vec<sqlx::any::AnyRow>, DbError> {
        let mut sql = format!("SELECT id, requested_at, {columns} FROM reviews WHERE 1 = 1");
        let mut binds: Vec<String> = Vec::new();
        let mut push = |sql: &mut String, clause: &str, value: String| {
            binds.push(value);
            sql.push_str(&clause.replace('?', &format!("${}", binds.len())));
        };
        if let Some(status) = filter.status {
            push(&mut sql, " AND status = ?", status.as_str().to_owned());
        }
        if let Some(kind) = filter.target_type {
            push(&mut sql, " AND target_type = ?", kind.as_str().to_owned());
        }
        if let Some(requester) = &filter.requester {
            push(&mut sql, " AND requester = ?", lookup_text(requester));
        }
        if let Some(text) = Some(filter.text.trim()).filter(|t| !t.is_empty()) {
            let needle = lookup_text(&text.to_lowercase());
            // SQLite: a text few reviews hold is found through the trigram
            // index; a common one by walking the time order, where matches
            // come soon (the LIKE below keeps the exact meaning either way).
            // PostgreSQL's planner weighs its trigram index for the LIKE
            // itself, but reads every trigram's posting list: for a text of
            // several words it probes with the rarest word, and checks the
            // whole text on the rows found through an expression the index
            // does not cover (`search || ''`).
            let mut checked = "search";
            match self.backend() {
                Backend::Sqlite => {
                    if let Some(phrase) = self.rare_phrase(&needle).await? {
                        push(
                            &mut sql,
                            " AND rowid IN (SELECT rowid FROM reviews_search WHERE reviews_search MATCH ?)",
                            phrase,
                        );
                    }
                }
                Backend::Postgres => {
                    if let Some(word) = self.rarest_word(&needle).await? {
                        push(&mut sql, " AND search LIKE ? ESCAPE '\\'", like(word));
                        checked = "(search || '')";
                    }
                }
            }
            push(
                &mut sql,
                &format!(" AND {checked} LIKE ? ESCAPE '\\'"),
                like(&needle),
            );
        }
        // Newest first reads the same indexes backwards.
        let (beyond, order) = match filter.order {
            Order::Newest => ("<", "DESC"),
            Order::Oldest => (">", "ASC"),
        };
        if let Some(cursor) = after {
            push(
                &mut sql,
                &format!(" AND (requested_at {beyond} ?"),
                cursor.requested_at.clone(),
            );
            push(
                &mut sql,
                " OR (requested_at = ?",
                cursor.requested_at.clone(),
            );
            push(
                &mut sql,
                &format!(" AND id {beyond} ?))"),
                cursor.id.clone(),
            );
        }
        sql.push_str(&format!(
            " ORDER BY requested_at {order}, id {order} LIMIT {}",
            u64::from(filter.limit) + 1
        ));
        let mut query = sqlx::query(&sql);
        for value in &binds {
            query = query.bind(value);
        }
        Ok(query.fetch_all(self.pool()).await?)
    }

    /// The page of `rows` (from `page_rows`), each item read by `item`.
    fn page<T>(
        &self,
        rows: Vec<sqlx::any::AnyRow>,
        limit: u32,
        item: impl Fn(&str, &sqlx::any::AnyRow) -> Result<T, DbError>,
    ) -> Result<Page<T>, DbError> {
        let more = rows.len() > limit as usize;
        let mut items = Vec::with_capacity(rows.len().min(limit as usize));
        let mut next = None;
        for row in rows.iter().take(limit as usize) {
            let id: String = row.try_get(0)?;
            items.push(item(&id, row)?);
            if more {
                next = Some(Cursor {
                    requested_at: row.try_get(1)?,
                    id,
                });
            }
        }
        Ok(Page { items, next })
    }

    /// The FTS5 phrase for `needle` when the trigram index should find its
    /// rows: it is 3 characters or more, and fewer than `COMMON` reviews hold
    /// it (counted up to that bound through the index, so the probe stays
    /// cheap). A commoner text is found sooner by walking the time order: a
    /// page of 50 is full within about 50 × reviews / `COMMON` rows read
    /// (5,000 at 1,000,000 reviews).
    async fn rare_phrase(&self, needle: &str) -> Result<Option<String>, DbError> {
        const COMMON: i64 = 10_000;
        if needle.chars().count() < 3 {
            return Ok(None);
        }
        let phrase = format!("\"{}\"", needle.replace('"', "\"\""));
        let held: i64 = sqlx::query_scalar(&format!(
            "SELECT count(*) FROM (SELECT 1 FROM reviews_search WHERE reviews_search MATCH $1 LIMIT {COMMON})"
        ))
        .bind(&phrase)
        .fetch_one(self.pool())
        .await?;
        Ok((held < COMMON).then_some(phrase))
    }

    /// PostgreSQL: of a text's words of 3 characters or more (when it has
    /// two or more), the one the newest reviews hold least often (a sample
    /// one index walk reads), the longest on a tie. Probing the trigram index
    /// with it alone reads short posting lists only: at 1,000,000 reviews
    /// "request 99999:" read 2,500 index pages, "99999:" 100.
    async fn rarest_word<'a>(&self, needle: &'a str) -> Result<Option<&'a str>, DbError> {
        const SAMPLE: u32 = 200;
        let words: Vec<&str> = needle
            .split_whitespace()
            .filter(|w| w.chars().count() >= 3)
            .collect();
        if words.len() < 2 {
            return Ok(None);
        }
        let counts = words
            .iter()
            .enumerate()
            .map(|(i, _)| format!("count(*) FILTER (WHERE search LIKE ${} ESCAPE '\\')", i + 1))
            .collect::<Vec<_>>()
            .join(", ");
        let sql = format!(
            "SELECT {counts} FROM (SELECT search FROM reviews ORDER BY requested_at DESC, id DESC LIMIT {SAMPLE}) newest"
        );
        let mut query = sqlx::query(&sql);
        for word in &words {
            query = query.bind(like(word));
        }
        let row = query.fetch_one(self.pool()).await?;
        let mut held = Vec::with_capacity(words.len());
        for i in 0..words.len() {
            held.push(row.try_get::<i64, _>(i)?);
        }
        Ok(words
            .into_iter()
            .zip(held)
            .min_by_key(|(word, held)| (*held, std::cmp::Reverse(word.len())))
            .map(|(word, _)| word))
    }

    /// When the oldest pending review was asked for, if any is pending.
    pub async fn oldest_pending(&self) -> Result<Option<chrono::DateTime<chrono::Utc>>, DbError> {
        let row = sqlx::query("SELECT MIN(requested_at) FROM reviews WHERE status = 'pending'")
            .fetch_one(self.pool())
            .await?;
        let Some(at) = row.try_get::<Option<String>, _>(0)? else {
            return Ok(None);
        };
        super::parse_stored_time(&at, "a review asked at").map(Some)
    }

    /// How many reviews there are in each status (kept by triggers, O(statuses)).
    pub async fn status_counts(&self) -> Result<StatusCounts, DbError> {
        let rows = sqlx::query("SELECT status, n FROM review_counts WHERE n > 0")
            .fetch_all(self.pool())
            .await?;
        let mut counts = StatusCounts::default();
        for row in &rows {
            let status: String = row.try_get(0)?;
            let n: i64 = row.try_get(1)?;
            let status = status.parse().map_err(|_| {
                DbError::Damaged(format!("a count of the unknown status `{status}`"))
            })?;
            counts.set(status, u64::try_from(n).unwrap_or(0));
        }
        Ok(counts)
    }

    /// Replaces a review read at `version` with its next state, records the
    /// change and, for a decision, the first result under its idempotency key:
    /// all or nothing, committed durably before this returns. Concurrent calls
    /// share one transaction and one sync (group commit, see [`super::commit`]).
    /// Returns the change's feed position.
    pub async fn replace_review(
        &self,
        version: i64,
        next: &Review,
        kind: ChangeKind,
        idempotency: Option<(&str, &str, &IdempotentResult)>,
    ) -> Result<(), ChangeError> {
        self.replace_serialized_review(
            version,
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
        version: i64,
        next: &Review,
        doc: String,
        kind: ChangeKind,
        idempotency: Option<(&str, &str, &IdempotentResult)>,
    ) -> Result<(), ChangeError> {
        let change = Replacement {
            version,
            row: Columns::with_doc(next, doc),
            kind,
            idempotency: idempotency
                .map(|(key, idem, result)| (key.to_owned(), idem.to_owned(), result.clone())),
        };
        self.writer().submit(change).await
    }

    /// The first result stored under an idempotency key, if any.
    pub async fn idempotent_result(
        &self,
        key_id: &str,
        idem_key: &str,
    ) -> Result<Option<IdempotentResult>, DbError> {
        let row = sqlx::query(
            "SELECT request, response FROM decision_requests WHERE key_id = $1 AND idem_key = $2",
        )
        .bind(key_id)
        .bind(idem_key)
        .fetch_optional(self.pool())
        .await?;
        Ok(row
            .map(|row| -> Result<_, sqlx::Error> {
                Ok(IdempotentResult {
                    request: row.try_get(0)?,
                    response: row.try_get(1)?,
                })
            })
            .transpose()?)
    }

    /// Changes after a feed position, oldest first (at most `limit`), each
    /// with its review's list row as it is now.
    pub async fn changes_after(&self, seq: i64, limit: i64) -> Result<Vec<Change>, DbError> {
        let rows = self.change_rows(seq, limit, false).await?;
        rows.iter().map(change_of).collect()
    }

    /// [`Db::changes_after`], each change with its review as it is now (as JSON).
    pub async fn feed_after(
        &self,
        seq: i64,
        limit: i64,
    ) -> Result<Vec<(Change, serde_json::Value)>, DbError> {
        let rows = self.change_rows(seq, limit, true).await?;
        rows.iter()
            .map(|row| {
                let change = change_of(row)?;
                let doc: String = row.try_get(6)?;
                let review = serde_json::from_str(&doc)
                    .map_err(|e| DbError::Damaged(format!("review {}: {e}", change.confirm_id)))?;
                Ok((change, review))
            })
            .collect()
    }

    /// The rows [`change_of`] reads, after `seq`; the review's document always
    /// with `with_doc`, else only where no summary was stored.
    async fn change_rows(
        &self,
        seq: i64,
        limit: i64,
        with_doc: bool,
    ) -> Result<Vec<sqlx::any::AnyRow>, sqlx::Error> {
        let doc = if with_doc {
            "r.doc"
        } else {
            "CASE WHEN r.summary IS NULL THEN r.doc END"
        };
        sqlx::query(&format!(
            "SELECT c.seq, c.kind, c.review_id, c.status, c.at, r.summary, {doc}
             FROM changes c JOIN reviews r ON r.id = c.review_id
             WHERE c.seq > $1 ORDER BY c.seq LIMIT $2"
        ))
        .bind(seq)
        .bind(limit)
        .fetch_all(self.pool())
        .await
    }

    /// Every role that asked for a review, in order (at most `limit`): one
    /// index lookup per requester, however many reviews each asked for.
    pub async fn requesters(&self, limit: u32) -> Result<Vec<String>, DbError> {
        let rows = sqlx::query(
            "WITH RECURSIVE r(requester) AS ( \
               SELECT MIN(requester) FROM reviews \
               UNION ALL \
               SELECT (SELECT MIN(requester) FROM reviews WHERE requester > r.requester) \
               FROM r WHERE r.requester IS NOT NULL) \
             SELECT requester FROM r WHERE requester IS NOT NULL LIMIT $1",
        )
        .bind(i64::from(limit))
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(|row| Ok(row.try_get(0)?)).collect()
    }

    /// The newest feed position (0 when nothing happened yet).
    pub async fn last_change(&self) -> Result<i64, DbError> {
        let row = sqlx::query("SELECT COALESCE(MAX(seq), 0) FROM changes")
            .fetch_one(self.pool())
            .await?;
        Ok(row.try_get::<i64, _>(0)?)
    }
}

/// A change from a row of (seq, kind, review_id, status, at, summary, doc):
/// the doc is read only where no summary was stored.
fn change_of(row: &sqlx::any::AnyRow) -> Result<Change, DbError> {
    let kind: String = row.try_get(1)?;
    let id: String = row.try_get(2)?;
    let status: String = row.try_get(3)?;
    let summary = match row.try_get::<Option<String>, _>(5)? {
        Some(summary) => serde_json::from_str(&summary)
            .map_err(|e| DbError::Damaged(format!("review {id}'s summary: {e}")))?,
        None => ReviewSummary::of(&parse_doc(&id, &row.try_get::<String, _>(6)?)?),
    };
    Ok(Change {
        seq: row.try_get(0)?,
        kind: ChangeKind::parse(&kind)
            .ok_or_else(|| DbError::Damaged(format!("a change of the unknown kind `{kind}`")))?,
        status: status
            .parse()
            .map_err(|e| DbError::Damaged(format!("change of review {id}: status {e}")))?,
        confirm_id: id,
        at: row.try_get(4)?,
        summary,
    })
}

/// Inserts a new review's row at version 1; false when its id (or its
/// approvalId) is already taken, and then nothing is written.
async fn insert_row(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    row: &Columns,
    created_by: &str,
    now: &str,
) -> Result<bool, sqlx::Error> {
    let inserted = sqlx::query(
        "INSERT INTO reviews (id, status, target_type, requester, requested_at, search, doc, version, created_by, updated_at, expires_at, approval_id, summary, escalate_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, 1, $8, $9, $10, $11, $12, $13) ON CONFLICT DO NOTHING",
    )
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
    .bind(&row.escalate_at)
    .execute(&mut **tx)
    .await?
    .rows_affected();
    Ok(inserted == 1)
}

async fn record_change(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    row: &Columns,
    kind: ChangeKind,
    now: &str,
) -> Result<i64, sqlx::Error> {
    let inserted = sqlx::query(
        "INSERT INTO changes (review_id, kind, status, at) VALUES ($1, $2, $3, $4) RETURNING seq",
    )
    .bind(&row.id)
    .bind(kind.as_str())
    .bind(&row.status)
    .bind(now)
    .fetch_one(&mut **tx)
    .await?;
    inserted.try_get::<i64, _>(0)
}

/// One review change waiting for the group commit.
pub struct Replacement {
    version: i64,
    row: Columns,
    kind: ChangeKind,
    idempotency: Option<(String, String, IdempotentResult)>,
}

impl Replacement {
    /// A decision without an idempotency record (made by the server itself).
    pub(super) fn decided(version: i64, next: &Review) -> Replacement {
        Replacement {
            version,
            row: Columns::of(next),
            kind: ChangeKind::Decided,
            idempotency: None,
        }
    }
}

/// Applies a batch of changes inside one transaction, in a few statements
/// whatever its size (each statement is a round trip to the database, and
/// the writer's round trips are what limit how many decisions a second it
/// stores): one insert of every idempotency record, one compare-and-swap
/// update of every review, one insert of every feed entry. A change whose key was
/// taken (by an earlier change of the batch or a stored one) or whose review
/// changed since it was read leaves nothing behind; a database error fails
/// the batch.
pub async fn apply_batch(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    batch: &[&Replacement],
    now: &str,
) -> Result<Vec<Result<(), ChangeError>>, sqlx::Error> {
    let mut results: Vec<Result<(), ChangeError>> = batch.iter().map(|_| Ok(())).collect();
    let recorded = record_idempotency(tx, batch, now, &mut results).await?;
    update_reviews(tx, batch, now, &mut results).await?;
    // The records of the changes that did not land go again: a retry under
    // the same key must be able to go ahead.
    let stale_keys = recorded
        .into_iter()
        .filter(|&i| results[i].is_err())
        .filter_map(|i| batch[i].idempotency.as_ref().map(|(k, i, _)| (k, i)));
    for (key_id, idem_key) in stale_keys {
        sqlx::query("DELETE FROM decision_requests WHERE key_id = $1 AND idem_key = $2")
            .bind(key_id)
            .bind(idem_key)
            .execute(&mut **tx)
            .await?;
    }
    let stored: Vec<&Replacement> = batch
        .iter()
        .zip(&results)
        .filter(|(_, result)| result.is_ok())
        .map(|(change, _)| *change)
        .collect();
    if !stored.is_empty() {
        let sql = format!(
            "INSERT INTO changes (review_id, kind, status, at) VALUES {}",
            placeholders(stored.len(), 4)
        );
        let mut insert = sqlx::query(&sql);
        for change in &stored {
            insert = insert
                .bind(&change.row.id)
                .bind(change.kind.as_str())
                .bind(&change.row.status)
                .bind(now);
        }
        insert.execute(&mut **tx).await?;
        let entries: Vec<audit::Entry> = stored
            .iter()
            .map(|change| change.row.audited(change.kind, now))
            .collect();
        audit::append(tx, &entries).await?;
    }
    Ok(results)
}

/// Replaces every review of the batch still going ahead in one statement,
/// each only if it is still at the version its change was read at (else
/// that change is stale). Two changes of one review in a batch were read at
/// the same version, so only the first can land: the others are stale.
async fn update_reviews(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    batch: &[&Replacement],
    now: &str,
    results: &mut [Result<(), ChangeError>],
) -> Result<(), sqlx::Error> {
    let mut ids = std::collections::HashSet::new();
    let mut going = Vec::new();
    for (i, change) in batch.iter().enumerate() {
        if results[i].is_err() {
            continue;
        }
        if ids.insert(change.row.id.as_str()) {
            going.push(i);
        } else {
            results[i] = Err(ChangeError::Stale);
        }
    }
    if going.is_empty() {
        return Ok(());
    }
    const COLUMNS: usize = 8;
    let sql = format!(
        "WITH v (id, version, status, target_type, search, doc, summary, escalate_at) AS (VALUES {})
         UPDATE reviews SET status = v.status, target_type = v.target_type, search = v.search,
           doc = v.doc, summary = v.summary, escalate_at = v.escalate_at,
           version = reviews.version + 1, updated_at = ${}
         FROM v WHERE reviews.id = v.id AND reviews.version = v.version
         RETURNING reviews.id",
        placeholders(going.len(), COLUMNS),
        going.len() * COLUMNS + 1
    );
    let mut update = sqlx::query(&sql);
    for &i in &going {
        let (row, version) = (&batch[i].row, batch[i].version);
        update = update
            .bind(&row.id)
            .bind(version)
            .bind(&row.status)
            .bind(&row.target_type)
            .bind(&row.search)
            .bind(&row.doc)
            .bind(&row.summary)
            .bind(&row.escalate_at);
    }
    let updated: std::collections::HashSet<String> = update
        .bind(now)
        .fetch_all(&mut **tx)
        .await?
        .iter()
        .map(|row| row.try_get(0))
        .collect::<Result<_, _>>()?;
    for i in going {
        if !updated.contains(&batch[i].row.id) {
            results[i] = Err(ChangeError::Stale);
        }
    }
    Ok(())
}

/// Stores the idempotency records of a batch in one statement; a change
/// whose key is already stored is refused as a duplicate request. Returns
/// the changes whose record it stored.
async fn record_idempotency(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    batch: &[&Replacement],
    now: &str,
    results: &mut [Result<(), ChangeError>],
) -> Result<Vec<usize>, sqlx::Error> {
    let mut keyed = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, change) in batch.iter().enumerate() {
        if let Some((key_id, idem_key, result)) = &change.idempotency {
            if seen.insert((key_id, idem_key)) {
                keyed.push((i, key_id, idem_key, result));
            } else {
                // A retry racing its first attempt in the same batch: whether
                // the first is stored is known only after its update, so this
                // one is sent back to read again (and then finds the stored
                // first result, or goes ahead if the first did not land).
                results[i] = Err(ChangeError::Stale);
            }
        }
    }
    if keyed.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "INSERT INTO decision_requests (key_id, idem_key, review_id, request, response, created_at) VALUES {}
         ON CONFLICT (key_id, idem_key) DO NOTHING RETURNING key_id, idem_key",
        placeholders(keyed.len(), 6)
    );
    let mut insert = sqlx::query(&sql);
    for (i, key_id, idem_key, result) in &keyed {
        insert = insert
            .bind(*key_id)
            .bind(*idem_key)
            .bind(&batch[*i].row.id)
            .bind(&result.request)
            .bind(&result.response)
            .bind(now);
    }
    let inserted: std::collections::HashSet<(String, String)> = insert
        .fetch_all(&mut **tx)
        .await?
        .iter()
        .map(|row| Ok((row.try_get(0)?, row.try_get(1)?)))
        .collect::<Result<_, sqlx::Error>>()?;
    let mut recorded = Vec::new();
    for (i, key_id, idem_key, _) in keyed {
        if inserted.contains(&(key_id.clone(), idem_key.clone())) {
            recorded.push(i);
        } else {
            results[i] = Err(ChangeError::DuplicateRequest);
        }
    }
    Ok(recorded)
}

/// `($1, $2), ($3, $4)` for `rows` rows of `columns` values each (numbered
/// placeholders, which both SQLite and PostgreSQL read).
fn placeholders(rows: usize, columns: usize) -> String {
    (0..rows)
        .map(|r| {
            let row: Vec<String> = (1..=columns)
                .map(|c| format!("${}", r * columns + c))
                .collect();
            format!("({})", row.join(", "))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `LIKE` pattern matching `text` anywhere (its wildcards escaped with `\`).
fn like(text: &str) -> String {
    let escaped = text
        .replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_");
    format!("%{escaped}%")
}
