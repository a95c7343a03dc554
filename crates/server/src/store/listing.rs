//! Reading reviews in lists: a page of the reviews matching a query, in its
//! order, through the indexes (trigram search on SQLite and PostgreSQL); the
//! counts by status, the oldest pending review, the requesters.

use super::row::{lookup_text, parse_doc};
use super::{Backend, Db, DbError};
use countersign_domain::model::ConfirmStatus;
use countersign_domain::wire::{Order, ReviewQuery, ReviewSummary, StatusCounts};
use countersign_domain::Review;
use sqlx::Row;

/// The deadline that orders a review without one last (see migration 0016,
/// whose indexes hold the same expression).
pub(super) const NO_DEADLINE: &str = "'9999-12-31T23:59:59.999999Z'";

/// PostgreSQL: the reviews whose search text its list index holds, and the
/// others, as migration 0023's partial indexes say them.
const SHORT_SEARCH: &str = "octet_length(search) <= 2000";
const LONG_SEARCH: &str = "octet_length(search) > 2000";

/// Where a page starts: after this (deadline, requested_at, id), the
/// deadline only in the order of what expires first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    /// Stored deadline of the last review of the previous page (its stand-in
    /// when it has none), in the order of what expires first.
    pub deadline: Option<String>,
    /// Its stored request time.
    pub requested_at: String,
    /// Its id.
    pub id: String,
}

impl Cursor {
    /// The opaque text given to clients.
    pub fn encode(&self) -> String {
        match &self.deadline {
            Some(deadline) => format!("{deadline}~{}~{}", self.requested_at, self.id),
            None => format!("{}~{}", self.requested_at, self.id),
        }
    }

    /// Reads a cursor a client sent back for a list in `order`.
    pub fn decode(text: &str, order: Order) -> Option<Cursor> {
        let time = |t: &str| t.len() == 27 && t.ends_with('Z');
        let (deadline, rest) = match order {
            Order::Expiring => text
                .split_once('~')
                .map(|(d, rest)| (Some(d.to_owned()), rest))?,
            Order::Oldest | Order::Newest => (None, text),
        };
        let (at, id) = rest.split_once('~')?;
        let well_formed = time(at) && id.len() == 36 && deadline.as_deref().is_none_or(time);
        well_formed.then(|| Cursor {
            deadline,
            requested_at: at.to_owned(),
            id: id.to_owned(),
        })
    }
}

/// A page of reviews.
#[derive(Debug)]
pub struct Page<T> {
    /// The reviews (or what a list row shows of them), in the asked order.
    pub items: Vec<T>,
    /// Where the next page starts, if there is one.
    pub next: Option<Cursor>,
}

impl Db {
    /// A page of reviews matching the filter, in its order. `counts` are the
    /// counts by status as just read ([`Db::status_counts`]): on SQLite they
    /// choose how a decided status's reviews are read.
    pub async fn list_reviews(
        &self,
        query: &ReviewQuery,
        after: Option<&Cursor>,
        counts: &StatusCounts,
    ) -> Result<Page<Review>, DbError> {
        let rows = self.page_rows(query, after, "doc", counts).await?;
        self.page(rows, query, |id, row| {
            parse_doc(id, &row.try_get::<String, _>("doc")?)
        })
    }

    /// A page of what the list rows show of the reviews matching the filter,
    /// in its order: each stored summary as written with its review
    /// (a review stored before summaries were kept is summarized when read);
    /// `counts` as for [`Db::list_reviews`].
    pub async fn list_summaries(
        &self,
        query: &ReviewQuery,
        after: Option<&Cursor>,
        counts: &StatusCounts,
    ) -> Result<Page<ReviewSummary>, DbError> {
        let columns = "summary, CASE WHEN summary IS NULL THEN doc END AS doc";
        let rows = self.page_rows(query, after, columns, counts).await?;
        self.page(rows, query, |id, row| {
            match row.try_get::<Option<String>, _>("summary")? {
                Some(summary) => serde_json::from_str(&summary)
                    .map_err(|e| DbError::Damaged(format!("review {id}'s summary: {e}"))),
                None => Ok(ReviewSummary::of(&parse_doc(
                    id,
                    &row.try_get::<String, _>("doc")?,
                )?)),
            }
        })
    }

    /// The rows of a page: `id, requested_at, deadline`, then `columns`; one
    /// more than `limit` when there is a next page. Walks an index in the
    /// page's order (on SQLite, pending reviews have their own: migration
    /// 0025); a text search of 3 characters or more
    /// that few reviews hold reads only the rows holding it (trigram indexes:
    /// FTS5 on SQLite, pg_trgm on PostgreSQL), another one reads the rows in
    /// order until the page is full.
    async fn page_rows(
        &self,
        filter: &ReviewQuery,
        after: Option<&Cursor>,
        columns: &str,
        counts: &StatusCounts,
    ) -> Result<Vec<sqlx::any::AnyRow>, DbError> {
        let sql = self.page_sql(filter, after, columns, counts).await?;
        // A search is planned for its own text each time: a plan PostgreSQL
        // keeps for any text (after five runs of one statement) walks the
        // whole index for a text that no review holds (0.4-0.6 s at
        // 1,000,000 reviews) where the trigram index answers it at once.
        let searching = !filter.text.trim().is_empty();
        Ok(sql
            .query()
            .persistent(!searching)
            .fetch_all(self.pool())
            .await?)
    }

    /// The statement of `page_rows`.
    async fn page_sql(
        &self,
        filter: &ReviewQuery,
        after: Option<&Cursor>,
        columns: &str,
        counts: &StatusCounts,
    ) -> Result<Sql, DbError> {
        let deadline = format!("COALESCE(expires_at, {NO_DEADLINE})");
        // The conditions first; the statement around them is written last.
        let mut sql = Sql::new("");
        if let Some(status) = filter.status {
            // Written, not bound: SQLite uses a partial index (migrations
            // 0025, 0026) only when the statement's own terms say its
            // condition, the decided reviews' one word for word.
            sql.push(&format!(" AND status = '{}'", status.as_str()));
            let sqlite = self.backend() == Backend::Sqlite;
            if sqlite
                && status != ConfirmStatus::Pending
                && sorted_sooner(counts, status, filter.limit)
            {
                sql.push(" AND status <> 'pending'");
            }
        }
        if let Some(kind) = filter.target_type {
            sql.push(" AND target_type = ").bind(kind.as_str());
        }
        if let Some(requester) = &filter.requester {
            sql.push(" AND requester = ").bind(lookup_text(requester));
        }
        let text = Some(filter.text.trim()).filter(|t| !t.is_empty());
        if let Some(text) = text {
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
                        sql.push(" AND rowid IN (SELECT rowid FROM reviews_search WHERE reviews_search MATCH ")
                            .bind(phrase)
                            .push(")");
                    }
                }
                Backend::Postgres => {
                    if let Some(word) = self.rarest_word(&needle).await? {
                        sql.push(" AND search LIKE ")
                            .bind(like(word))
                            .push(" ESCAPE '\\'");
                        checked = "(search || '')";
                    }
                }
            }
            sql.push(&format!(" AND {checked} LIKE "))
                .bind(like(&needle))
                .push(" ESCAPE '\\'");
        }
        // Newest first reads the same indexes backwards.
        let (beyond, direction) = match filter.order {
            Order::Newest => ("<", "DESC"),
            Order::Oldest | Order::Expiring => (">", "ASC"),
        };
        if let Some(cursor) = after {
            sql.push(" AND (");
            if let Some(at) = &cursor.deadline {
                sql.push(&format!("{deadline} > "))
                    .bind(at)
                    .push(&format!(" OR ({deadline} = "))
                    .bind(at)
                    .push(" AND (");
            }
            sql.push(&format!("requested_at {beyond} "))
                .bind(&cursor.requested_at)
                .push(" OR (requested_at = ")
                .bind(&cursor.requested_at)
                .push(&format!(" AND id {beyond} "))
                .bind(&cursor.id)
                .push(")");
            if cursor.deadline.is_some() {
                sql.push("))");
            }
            sql.push(")");
        }
        let first = match filter.order {
            Order::Expiring => format!("{deadline} ASC, "),
            Order::Oldest | Order::Newest => String::new(),
        };
        let order = format!(
            " ORDER BY {first}requested_at {direction}, id {direction} LIMIT {}",
            u64::from(filter.limit) + 1
        );
        let select =
            format!("SELECT id, requested_at, {deadline} AS deadline, {columns} FROM reviews");
        let conditions = std::mem::take(&mut sql.text);
        // PostgreSQL, a status's reviews by deadline (the inbox): the text is
        // checked inside an index that holds it (migration 0023) for the
        // reviews whose text fits in one, beside the others; each part's page
        // ids, then the page (the same numbered values serve both parts).
        // Other orders read as before: without such an index, the part of
        // the long texts would walk every row.
        let searchable = filter.status.is_some() && filter.order == Order::Expiring;
        sql.text = match (self.backend(), text) {
            (Backend::Postgres, Some(_)) if searchable => format!(
                "{select} WHERE id IN ((SELECT id FROM reviews WHERE {SHORT_SEARCH}{conditions}{order}) \
                 UNION ALL (SELECT id FROM reviews WHERE {LONG_SEARCH}{conditions}{order})){order}"
            ),
            _ => format!("{select} WHERE 1 = 1{conditions}{order}"),
        };
        Ok(sql)
    }

    /// The page of `rows` (from `page_rows`), each item read by `item`.
    fn page<T>(
        &self,
        rows: Vec<sqlx::any::AnyRow>,
        query: &ReviewQuery,
        item: impl Fn(&str, &sqlx::any::AnyRow) -> Result<T, DbError>,
    ) -> Result<Page<T>, DbError> {
        let limit = query.limit;
        let more = rows.len() > limit as usize;
        let mut items = Vec::with_capacity(rows.len().min(limit as usize));
        let mut next = None;
        for row in rows.iter().take(limit as usize) {
            let id: String = row.try_get("id")?;
            items.push(item(&id, row)?);
            if more {
                next = Some(Cursor {
                    deadline: match query.order {
                        Order::Expiring => Some(row.try_get("deadline")?),
                        Order::Oldest | Order::Newest => None,
                    },
                    requested_at: row.try_get("requested_at")?,
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
            .map(|(i, _)| {
                format!(
                    "count(*) FILTER (WHERE search LIKE ${} ESCAPE '\\') AS held_{i}",
                    i + 1
                )
            })
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
            held.push(row.try_get::<i64, _>(format!("held_{i}").as_str())?);
        }
        Ok(words
            .into_iter()
            .zip(held)
            .min_by_key(|(word, held)| (*held, std::cmp::Reverse(word.len())))
            .map(|(word, _)| word))
    }

    /// When the oldest pending review was asked for, if any is pending.
    pub async fn oldest_pending(&self) -> Result<Option<chrono::DateTime<chrono::Utc>>, DbError> {
        let oldest: Option<String> =
            sqlx::query_scalar("SELECT MIN(requested_at) FROM reviews WHERE status = 'pending'")
                .fetch_one(self.pool())
                .await?;
        let Some(at) = oldest else {
            return Ok(None);
        };
        super::parse_stored_time(&at, "a review asked at").map(Some)
    }

    /// How many reviews there are in each status (kept by triggers, O(statuses)).
    pub async fn status_counts(&self) -> Result<StatusCounts, DbError> {
        let rows: Vec<StatusCount> =
            sqlx::query_as("SELECT status, n FROM review_counts WHERE n > 0")
                .fetch_all(self.pool())
                .await?;
        let mut counts = StatusCounts::default();
        for StatusCount { status, n } in rows {
            let status = status.parse().map_err(|_| {
                DbError::Damaged(format!("a count of the unknown status `{status}`"))
            })?;
            counts.set(status, u64::try_from(n).unwrap_or(0));
        }
        Ok(counts)
    }

    /// Every role that asked for a review, in order (at most `limit`): one
    /// index lookup per requester, however many reviews each asked for.
    pub async fn requesters(&self, limit: u32) -> Result<Vec<String>, DbError> {
        Ok(sqlx::query_scalar(
            "WITH RECURSIVE r(requester) AS ( \
               SELECT MIN(requester) FROM reviews \
               UNION ALL \
               SELECT (SELECT MIN(requester) FROM reviews WHERE requester > r.requester) \
               FROM r WHERE r.requester IS NOT NULL) \
             SELECT requester FROM r WHERE requester IS NOT NULL LIMIT $1",
        )
        .bind(i64::from(limit))
        .fetch_all(self.pool())
        .await?)
    }
}

/// A row of the counts by status.
#[derive(sqlx::FromRow)]
struct StatusCount {
    status: String,
    n: i64,
}

/// SQLite: whether the reviews of decided `status` are read sooner through
/// their own index (migration 0026) and sorted than by walking the order's
/// index of every review, checking the status in each row: sorting reads
/// the status's n reviews, the walk about (`limit` + 1) × all ÷ n before a
/// page is full. At 1,000,000 reviews either reads at most about 7,000 rows
/// for a page of 50.
fn sorted_sooner(counts: &StatusCounts, status: ConfirmStatus, limit: u32) -> bool {
    let few = counts.of(status);
    few.saturating_mul(few) <= (u64::from(limit) + 1).saturating_mul(counts.total())
}

/// The `LIKE` pattern matching `text` anywhere (its wildcards escaped with `\`).
fn like(text: &str) -> String {
    let escaped = text
        .replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_");
    format!("%{escaped}%")
}

/// A statement put together from text and values, each value bound as a
/// numbered placeholder (`$1`, `$2`, ...), which SQLite and PostgreSQL both
/// read. (sqlx's `QueryBuilder` for the `Any` driver writes `?`, which
/// PostgreSQL refuses: sqlx issue 3000.)
struct Sql {
    text: String,
    binds: Vec<String>,
}

impl Sql {
    fn new(text: &str) -> Sql {
        Sql {
            text: text.to_owned(),
            binds: Vec::new(),
        }
    }

    fn push(&mut self, text: &str) -> &mut Sql {
        self.text.push_str(text);
        self
    }

    fn bind(&mut self, value: impl Into<String>) -> &mut Sql {
        self.binds.push(value.into());
        self.text.push_str(&format!("${}", self.binds.len()));
        self
    }

    fn query(&self) -> sqlx::query::Query<'_, sqlx::Any, sqlx::any::AnyArguments<'_>> {
        self.binds
            .iter()
            .fold(sqlx::query(&self.text), |query, value| query.bind(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing::{plan, scratch};

    /// SQLite keeps no statistics: the inbox, and a requester's part of it,
    /// must be paged through the partial indexes of migration 0025 in every
    /// order, not by reading each pending review's row to check who asked.
    #[tokio::test]
    async fn pending_reviews_are_paged_through_their_own_indexes() {
        let (_dir, db) = scratch().await;
        let by = |requester: Option<&str>, order| ReviewQuery {
            status: Some(ConfirmStatus::Pending),
            requester: requester.map(str::to_owned),
            order,
            limit: 50,
            ..ReviewQuery::default()
        };
        for (query, expected) in [
            (
                by(None, Order::Expiring),
                "SCAN reviews USING INDEX reviews_pending_by_deadline",
            ),
            (
                by(None, Order::Oldest),
                "SCAN reviews USING INDEX reviews_pending_by_time",
            ),
            (
                by(Some("agent-3"), Order::Expiring),
                "SEARCH reviews USING INDEX reviews_pending_by_requester_deadline (requester=?)",
            ),
            (
                by(Some("agent-3"), Order::Oldest),
                "SEARCH reviews USING INDEX reviews_pending_by_requester (requester=?)",
            ),
            (
                by(Some("agent-3"), Order::Newest),
                "SEARCH reviews USING INDEX reviews_pending_by_requester (requester=?)",
            ),
        ] {
            let counts = db.status_counts().await.unwrap();
            let sql = db.page_sql(&query, None, "summary", &counts).await.unwrap();
            let steps = plan(&db, &sql.text, &sql.binds).await;
            assert_eq!(steps, [expected], "{query:?}");
        }
    }

    /// A decided status held by few reviews is found through its own index
    /// (migration 0026) and sorted; a common one is read by walking the
    /// order's index until the page is full, in every order.
    #[tokio::test]
    async fn a_rare_decided_status_is_sorted_and_a_common_one_walked() {
        let (_dir, db) = scratch().await;
        // The counts the choice reads, as at 1,000,010 reviews.
        sqlx::query(
            "INSERT INTO review_counts (status, n) VALUES ('approved', 1000000), ('rejected', 10)",
        )
        .execute(db.pool())
        .await
        .unwrap();
        let sorted = [
            "SEARCH reviews USING INDEX reviews_decided_by_time (status=?)",
            "USE TEMP B-TREE FOR ORDER BY",
        ];
        for (status, order, expected) in [
            (ConfirmStatus::Rejected, Order::Expiring, &sorted[..]),
            (ConfirmStatus::Rejected, Order::Newest, &sorted[..]),
            (
                ConfirmStatus::Approved,
                Order::Expiring,
                &["SCAN reviews USING INDEX reviews_all_by_deadline"][..],
            ),
            (
                ConfirmStatus::Approved,
                Order::Oldest,
                &["SCAN reviews USING INDEX reviews_by_time"][..],
            ),
        ] {
            let query = ReviewQuery {
                status: Some(status),
                order,
                limit: 50,
                ..ReviewQuery::default()
            };
            let counts = db.status_counts().await.unwrap();
            let sql = db.page_sql(&query, None, "summary", &counts).await.unwrap();
            let steps = plan(&db, &sql.text, &sql.binds).await;
            assert_eq!(steps, expected, "{query:?}");
        }
    }
}
