//! Group commit: one writer per server applies every review change that is
//! waiting in one transaction, so many concurrent decisions share one
//! durable sync instead of one each. Each caller is answered only after the
//! transaction holding its change has committed. On SQLite the writer is a
//! thread that calls SQLite itself ([`super::sqlite_writer`]); on PostgreSQL
//! a task that sends a batch in a few statements whatever its size
//! ([`apply_batch`]). A decision's idempotency record commits with it, and
//! is read back here ([`Db::idempotent_result`]).

use super::audit;
use super::grants::NewGrant;
use super::reviews::Stored;
use super::row::{room_left, search_text, Columns};
use super::sqlite_writer::SqliteWriter;
use super::{
    begin_write_on, placeholder, placeholders, stored_time, AnyQuery, Backend, Db, DbError, Marks,
    Value, RETRIES,
};
use countersign_domain::wire::ChangeKind;
use sqlx::any::AnyRow;
use sqlx::{AnyPool, Row, TypeInfo, ValueRef};
use std::collections::HashSet;
use std::path::PathBuf;
use tokio::sync::{mpsc, oneshot};

/// Most changes in one transaction.
const MAX_BATCH: usize = 256;

type Job = (Replacement, oneshot::Sender<Result<(), ChangeError>>);

/// What each change of a batch came to.
pub(super) type Results = Vec<Result<(), ChangeError>>;

/// The handle that queues changes for the writer.
#[derive(Clone)]
pub struct Writer {
    queue: mpsc::Sender<Job>,
}

impl Writer {
    /// Starts SQLite's writer: a thread with a connection of its own to
    /// `file`, whose statements run on that thread (sqlx's run on a worker
    /// thread of each connection, a round trip between threads each).
    /// It closes that connection when `pool` closes.
    pub fn sqlite(file: PathBuf, pool: &AnyPool) -> std::io::Result<Writer> {
        let (queue, jobs) = mpsc::channel(4 * MAX_BATCH);
        let closing = Some(pool.close_event());
        super::spawn_apart(
            "countersign-writer",
            run(SqliteWriter::new(file), closing, jobs),
        )?;
        Ok(Writer { queue })
    }

    /// Starts PostgreSQL's writer: a task on a thread of its own, with a
    /// connection of the pool kept from one batch to the next.
    pub fn postgres(pool: AnyPool) -> std::io::Result<Writer> {
        let (queue, jobs) = mpsc::channel(4 * MAX_BATCH);
        let closing = Some(pool.close_event());
        let writer = PostgresWriter { pool, held: None };
        super::spawn_apart("countersign-writer", run(writer, closing, jobs))?;
        Ok(Writer { queue })
    }

    /// Queues a change and waits until it is committed (or refused).
    pub async fn submit(&self, change: Replacement) -> Result<(), ChangeError> {
        let (reply, answer) = oneshot::channel();
        let stopped = || ChangeError::Db(DbError::Damaged("the database writer stopped".into()));
        self.queue
            .send((change, reply))
            .await
            .map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }
}

/// How a writer stores a batch in one transaction.
pub(super) trait Commit {
    /// Stores what of `batch` may go ahead, at `now`; a change whose key
    /// was taken or whose review changed since it was read leaves nothing
    /// behind. A database error fails the whole batch.
    async fn commit(&mut self, batch: &[&Replacement], now: &str) -> Result<Results, DbError>;

    /// Gives the connection back: the pool is closing, or a commit failed.
    fn release(&mut self);
}

async fn run(
    mut writer: impl Commit,
    mut closing: Option<sqlx::pool::CloseEvent>,
    mut jobs: mpsc::Receiver<Job>,
) {
    loop {
        // The writer keeps its connection while it waits, until the pool
        // closes: a clean stop waits for every connection to come back.
        let first = match &mut closing {
            Some(close) => match close.do_until(jobs.recv()).await {
                Ok(job) => job,
                Err(_closed) => {
                    writer.release();
                    closing = None;
                    jobs.recv().await
                }
            },
            None => jobs.recv().await,
        };
        let Some(first) = first else { break };
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        match commit_retrying(&mut writer, &batch).await {
            Ok(results) => answer(batch, results),
            // One change the database refuses must not fail the others that
            // shared its transaction: each is tried again alone, and only the
            // ones that fail alone are refused, with their own cause.
            Err(e) if batch.len() > 1 => {
                tracing::warn!(
                    "a group commit of {} changes failed ({e}); committing them one by one",
                    batch.len()
                );
                for job in batch {
                    match commit_retrying(&mut writer, std::slice::from_ref(&job)).await {
                        Ok(results) => answer(vec![job], results),
                        Err(e) => {
                            let _ = job.1.send(Err(ChangeError::Db(e)));
                        }
                    }
                }
            }
            Err(e) => {
                if let Some((_, reply)) = batch.pop() {
                    let _ = reply.send(Err(ChangeError::Db(e)));
                }
            }
        }
    }
}

fn answer(batch: Vec<Job>, results: Results) {
    for ((_, reply), result) in batch.into_iter().zip(results) {
        let _ = reply.send(result);
    }
}

/// [`Commit::commit`], run again when it failed for a transient reason (a
/// deadlock or serialization failure, a busy database), a few times; the
/// connection is given back when it fails.
async fn commit_retrying(writer: &mut impl Commit, batch: &[Job]) -> Result<Results, DbError> {
    let changes: Vec<&Replacement> = batch.iter().map(|(change, _)| change).collect();
    let mut tries = 0;
    loop {
        let now = stored_time(chrono::Utc::now());
        match writer.commit(&changes, &now).await {
            Err(e) if e.is_transient() && tries < RETRIES => tries += 1,
            Err(e) => {
                writer.release();
                return Err(e);
            }
            done => return done,
        }
    }
}

/// PostgreSQL's writer: a connection of the pool, kept from one batch to
/// the next and tested before each (the server may have restarted).
struct PostgresWriter {
    pool: AnyPool,
    held: Option<sqlx::pool::PoolConnection<sqlx::Any>>,
}

impl Commit for PostgresWriter {
    async fn commit(&mut self, batch: &[&Replacement], now: &str) -> Result<Results, DbError> {
        if let Some(conn) = &mut self.held {
            if let Err(e) = sqlx::Connection::ping(&mut **conn).await {
                tracing::warn!("the writer's connection stopped answering ({e}); taking another");
                self.held = None;
            }
        }
        let conn = match &mut self.held {
            Some(conn) => conn,
            held => held.insert(self.pool.acquire().await?),
        };
        let mut tx = begin_write_on(conn, Backend::Postgres).await?;
        let results = apply_batch(&mut tx, batch, now).await?;
        tx.commit().await?;
        Ok(results)
    }

    fn release(&mut self) {
        self.held = None;
    }
}

/// The first result of a decision post, kept under its idempotency key.
#[derive(Debug, Clone)]
pub struct IdempotentResult {
    /// The request body as first received (to spot a reused key).
    pub request: String,
    /// The response body first returned.
    pub response: String,
}

/// A decision's first result under its caller's idempotency key: stored with
/// the decision, so a retry under the key is answered with it.
#[derive(Debug, Clone)]
pub struct IdempotencyRecord {
    /// The key (API key id) that decided.
    pub key_id: String,
    /// The caller's `Idempotency-Key`.
    pub key: String,
    /// What was asked and answered first.
    pub first: IdempotentResult,
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

/// One review change waiting for the group commit.
pub struct Replacement {
    version: i64,
    /// Whether the search text is the one stored: then the statement leaves
    /// it out, and the indexes that carry it are not rewritten.
    pub(super) search_kept: bool,
    pub(super) row: Columns,
    pub(super) kind: ChangeKind,
    idempotency: Option<IdempotencyRecord>,
    /// Its record's response as SQLite stores it ([`Replacement::packed`]).
    packed: Option<Vec<u8>>,
    pub(super) grant: Option<NewGrant>,
}

impl Replacement {
    /// The change of review `read` to the state in `row`, with the
    /// decision's idempotency record.
    pub(super) fn new(
        read: &Stored,
        row: Columns,
        kind: ChangeKind,
        idempotency: Option<IdempotencyRecord>,
    ) -> Replacement {
        Replacement {
            version: read.version,
            search_kept: search_text(&read.review) == row.search,
            row,
            kind,
            idempotency,
            packed: None,
            grant: None,
        }
    }

    /// The same change, its record's response to be stored compressed (on
    /// SQLite: a decision's answer is about 3 KB of JSON, a page of its own
    /// in the file; LZ4 makes it about a third, so records share pages).
    /// Made on the request's thread, not the writer's.
    pub(super) fn packed(self) -> Replacement {
        let packed = self
            .idempotency
            .as_ref()
            .map(|record| lz4_flex::compress_prepend_size(record.first.response.as_bytes()));
        Replacement { packed, ..self }
    }

    /// The same change, storing the grant its approval made with it.
    pub(super) fn with_grant(self, grant: Option<NewGrant>) -> Replacement {
        Replacement { grant, ..self }
    }
}

impl Db {
    /// The first result stored under an idempotency key, if any.
    pub async fn idempotent_result(
        &self,
        key_id: &str,
        idem_key: &str,
    ) -> Result<Option<IdempotentResult>, DbError> {
        let row: Option<AnyRow> = sqlx::query(
            "SELECT request, response FROM decision_requests WHERE key_id = $1 AND idem_key = $2",
        )
        .bind(key_id)
        .bind(idem_key)
        .fetch_optional(self.pool())
        .await?;
        let Some(row) = row else { return Ok(None) };
        let packed = row.try_get_raw("response")?.type_info().name() == "BLOB";
        let response = if packed {
            unpack(&row.try_get::<Vec<u8>, _>("response")?)?
        } else {
            row.try_get("response")?
        };
        Ok(Some(IdempotentResult {
            request: row.try_get("request")?,
            response,
        }))
    }
}

/// A response stored by [`Replacement::packed`], as it was first sent.
fn unpack(packed: &[u8]) -> Result<String, DbError> {
    let damaged = |e: &dyn std::fmt::Display| {
        DbError::Damaged(format!("a stored decision's first answer: {e}"))
    };
    // LZ4 expands at most 255 times: a larger size is damage, not a
    // reason to allocate it.
    let size = packed
        .first_chunk::<4>()
        .map(|size| u32::from_le_bytes(*size) as usize)
        .filter(|&size| size <= packed.len().saturating_mul(255))
        .ok_or_else(|| damaged(&"its length is wrong"))?;
    let bytes = lz4_flex::decompress(&packed[4..], size).map_err(|e| damaged(&e))?;
    String::from_utf8(bytes).map_err(|e| damaged(&e))
}

/// Applies a batch of changes inside one transaction on PostgreSQL, in a
/// few statements whatever its size (each statement is a round trip to the
/// database, and the writer's round trips are what limit how many decisions
/// a second it stores): one insert of every idempotency record, one
/// compare-and-swap update of every review, one insert of every feed entry
/// (and one of each grant a decision made, which are rare). A change whose
/// key was taken (by an earlier change of the batch or a stored one) or
/// whose review changed since it was read leaves nothing behind; a database
/// error fails the batch.
async fn apply_batch(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    batch: &[&Replacement],
    now: &str,
) -> Result<Results, sqlx::Error> {
    let marks = Marks::Numbered;
    let mut results = admitted(batch);
    let keyed = with_records(batch, &results);
    let recorded = if keyed.is_empty() {
        HashSet::new()
    } else {
        let sql = records_sql(marks, keyed.len());
        let rows = bind_records(sqlx::query(&sql), batch, &keyed, now)
            .fetch_all(&mut **tx)
            .await?;
        recorded_keys(&rows)?
    };
    for &i in &keyed {
        let key = batch[i]
            .idempotency
            .as_ref()
            .map(|r| (r.key_id.clone(), r.key.clone()));
        if !key.is_some_and(|key| recorded.contains(&key)) {
            results[i] = Err(ChangeError::DuplicateRequest);
        }
    }
    let (kept, replaced) = update_groups(batch, &results);
    let mut updated = HashSet::new();
    for (group, search_kept) in [(&kept, true), (&replaced, false)] {
        if !group.is_empty() {
            let sql = update_sql(group.len(), search_kept);
            let rows = bind_updates(sqlx::query(&sql), batch, group, now)
                .fetch_all(&mut **tx)
                .await?;
            updated.extend(returned(&rows, "id")?);
        }
    }
    stale_unless_updated(batch, &mut results, &updated);
    // The records of the changes that did not land go again: a retry under
    // the same key must be able to go ahead.
    let stale_keys = keyed
        .into_iter()
        .filter(|&i| matches!(results[i], Err(ChangeError::Stale)))
        .filter_map(|i| batch[i].record_key());
    for key in stale_keys {
        key.into_iter()
            .fold(sqlx::query(FORGET_RECORD), |query, value| value.bind(query))
            .execute(&mut **tx)
            .await?;
    }
    let stored = stored(batch, &results);
    if !stored.is_empty() {
        let sql = changes_sql(marks, stored.len());
        bind_changes(sqlx::query(&sql), &stored, now)
            .execute(&mut **tx)
            .await?;
        let entries = audited(tx, &stored, now).await?;
        let head = sqlx::query(audit::HEAD).fetch_optional(&mut **tx).await?;
        let linked = audit::chain(audit::head_of(head.as_ref())?, &entries)?;
        for (sql, rows) in audit::inserts(marks, &linked) {
            audit::bind(sqlx::query(&sql), rows)
                .execute(&mut **tx)
                .await?;
        }
    }
    Ok(results)
}

/// Which changes of a batch may go ahead before the database is asked: of
/// changes under one idempotency key, or of one review, only the first.
/// The others were read at the same version as the first, so they are sent
/// back to read again (a retry racing its first attempt then finds the
/// first's stored result, or goes ahead if the first did not land).
pub(super) fn admitted(batch: &[&Replacement]) -> Results {
    let (mut keys, mut reviews) = (HashSet::new(), HashSet::new());
    batch
        .iter()
        .map(|change| {
            let key = change.idempotency.as_ref().map(|r| (&r.key_id, &r.key));
            let first = key.is_none_or(|key| keys.insert(key)) && reviews.insert(&change.row.id);
            if first {
                Ok(())
            } else {
                Err(ChangeError::Stale)
            }
        })
        .collect()
}

/// The changes going ahead that store an idempotency record.
fn with_records(batch: &[&Replacement], results: &[Result<(), ChangeError>]) -> Vec<usize> {
    (0..batch.len())
        .filter(|&i| results[i].is_ok() && batch[i].idempotency.is_some())
        .collect()
}

/// The changes going ahead, as two groups: those that keep the stored
/// search text (a decision, the usual case: their statement leaves it out,
/// so the list indexes that carry it are not rewritten) and those that
/// replace it.
fn update_groups(
    batch: &[&Replacement],
    results: &[Result<(), ChangeError>],
) -> (Vec<usize>, Vec<usize>) {
    (0..batch.len())
        .filter(|&i| results[i].is_ok())
        .partition(|&i| batch[i].search_kept)
}

/// The changes going ahead whose review the updates did not change: it was
/// changed since they read it.
fn stale_unless_updated(
    batch: &[&Replacement],
    results: &mut [Result<(), ChangeError>],
    updated: &HashSet<String>,
) {
    for (change, result) in batch.iter().zip(results) {
        if result.is_ok() && !updated.contains(&change.row.id) {
            *result = Err(ChangeError::Stale);
        }
    }
}

/// The changes that landed.
fn stored<'a>(
    batch: &[&'a Replacement],
    results: &[Result<(), ChangeError>],
) -> Vec<&'a Replacement> {
    batch
        .iter()
        .zip(results)
        .filter(|(_, result)| result.is_ok())
        .map(|(change, _)| *change)
        .collect()
}

/// The audit entries of the `stored` changes, with those of the grants
/// their approvals made (stored here: they are rare).
async fn audited(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    stored: &[&Replacement],
    now: &str,
) -> Result<Vec<audit::Entry>, sqlx::Error> {
    let mut entries = Vec::with_capacity(stored.len());
    for change in stored {
        entries.push(change.row.audited(change.kind, now));
        if let Some(grant) = &change.grant {
            entries.extend(grant.insert(tx, &change.row.id, now).await?);
        }
    }
    Ok(entries)
}

/// The values of column `name` in the rows that have it: the rows a
/// statement's `RETURNING` gave back, among others of the same text.
fn returned(rows: &[AnyRow], name: &str) -> Result<HashSet<String>, sqlx::Error> {
    rows.iter()
        .filter(|row| row.try_column(name).is_ok())
        .map(|row| row.try_get(name))
        .collect()
}

/// The keys of the idempotency records an insert of [`records_sql`] stored.
fn recorded_keys(rows: &[AnyRow]) -> Result<HashSet<(String, String)>, sqlx::Error> {
    rows.iter()
        .filter(|row| row.try_column("idem_key").is_ok())
        .map(|row| Ok((row.try_get("key_id")?, row.try_get("idem_key")?)))
        .collect()
}

/// One insert of `rows` idempotency records; a record whose key is stored
/// already is left out, and only the others' keys are returned.
pub(super) fn records_sql(marks: Marks, rows: usize) -> String {
    format!(
        "{} RETURNING key_id, idem_key",
        unreturned_records_sql(marks, rows)
    )
}

/// [`records_sql`] without its answer: SQLite's writer, which stores one
/// record a statement, counts the rows it changed instead, as SQLite keeps
/// the rows of a `RETURNING` in a table of their own before answering
/// (bench/notes.md (27)).
pub(super) fn unreturned_records_sql(marks: Marks, rows: usize) -> String {
    format!(
        "INSERT INTO decision_requests (key_id, idem_key, review_id, request, response, created_at) VALUES {}
         ON CONFLICT (key_id, idem_key) DO NOTHING",
        placeholders(marks, rows, 6)
    )
}

/// Forgets the idempotency record of a change that did not land: a retry
/// under the same key must be able to go ahead.
pub(super) const FORGET_RECORD: &str =
    "DELETE FROM decision_requests WHERE key_id = $1 AND idem_key = $2";

impl Replacement {
    /// The values of its idempotency record, in [`records_sql`]' order.
    pub(super) fn record_values<'a>(&'a self, now: &'a str) -> Option<[Value<'a>; 6]> {
        let record = self.idempotency.as_ref()?;
        Some([
            Value::Text(&record.key_id),
            Value::Text(&record.key),
            Value::Text(&self.row.id),
            Value::Text(&record.first.request),
            match &self.packed {
                Some(packed) => Value::Blob(packed),
                None => Value::Text(&record.first.response),
            },
            Value::Text(now),
        ])
    }

    /// The key of its idempotency record, in [`FORGET_RECORD`]'s order.
    pub(super) fn record_key(&self) -> Option<[Value<'_>; 2]> {
        let record = self.idempotency.as_ref()?;
        Some([Value::Text(&record.key_id), Value::Text(&record.key)])
    }

    /// Its row of [`update_sql`]'s values, in [`update_one_sql`]'s order
    /// (without the time, bound last).
    pub(super) fn update_values(&self) -> impl Iterator<Item = Value<'_>> {
        let row = &self.row;
        let search = (!self.search_kept).then_some(Value::Text(&row.search));
        [
            Value::Text(&row.id),
            Value::Int(self.version),
            Value::Text(&row.status),
            Value::Text(&row.doc),
            Value::Text(&row.summary),
            Value::MaybeText(row.escalate_at.as_deref()),
        ]
        .into_iter()
        .chain(search)
    }

    /// Its feed entry's values, in [`changes_sql`]' order.
    pub(super) fn change_values<'a>(&'a self, now: &'a str) -> [Value<'a>; 5] {
        [
            Value::Text(&self.row.id),
            Value::Text(self.kind.as_str()),
            Value::Text(&self.row.status),
            Value::Text(now),
            Value::MaybeText(self.row.decision_of(self.kind)),
        ]
    }
}

fn bind_records<'q>(
    query: AnyQuery<'q>,
    batch: &[&'q Replacement],
    keyed: &[usize],
    now: &'q str,
) -> AnyQuery<'q> {
    keyed
        .iter()
        .filter_map(|&i| batch[i].record_values(now))
        .flatten()
        .fold(query, |query, value| value.bind(query))
}

/// PostgreSQL's compare-and-swap update of `rows` reviews, each only if it
/// is still at the version its change was read at, setting the search text
/// unless `search_kept`. Returns the ids it updated.
pub(super) fn update_sql(rows: usize, search_kept: bool) -> String {
    let marks = Marks::Numbered;
    let (columns, search, set_search) = if search_kept {
        (6, "", "")
    } else {
        (7, ", search", "search = v.search, ")
    };
    format!(
        "WITH v (id, version, status, doc, summary, escalate_at{search}) AS (VALUES {})
         UPDATE reviews SET status = v.status, {set_search}doc = v.doc, summary = v.summary,
           escalate_at = v.escalate_at, version = reviews.version + 1, updated_at = {}
         FROM v WHERE reviews.id = v.id AND reviews.version = v.version
         RETURNING reviews.id AS id",
        placeholders(marks, rows, columns),
        placeholder(marks, rows * columns + 1)
    )
}

/// SQLite's compare-and-swap update of one review, as [`update_sql`] of
/// one row, which also gives the row's room left for its next change; the
/// writer counts the rows it changed (one, or none if the review is stale).
/// A plain update: SQLite runs the form with a table of values as a join
/// (bench/notes.md (27)).
pub(super) fn update_one_sql(search_kept: bool) -> String {
    // The values of `Replacement::update_values`, then the time.
    let new = |column: &str| match column {
        "status" => Some("?3"),
        "doc" => Some("?4"),
        "summary" => Some("?5"),
        "escalate_at" => Some("?6"),
        "search" if !search_kept => Some("?7"),
        _ => None,
    };
    let (set_search, now) = if search_kept {
        ("", "?7")
    } else {
        ("search = ?7, ", "?8")
    };
    format!(
        "UPDATE reviews SET status = ?3, {set_search}spare = {}, doc = ?4, summary = ?5,
           escalate_at = ?6, version = version + 1, updated_at = {now}
         WHERE id = ?1 AND version = ?2",
        room_left(new)
    )
}

fn bind_updates<'q>(
    query: AnyQuery<'q>,
    batch: &[&'q Replacement],
    group: &[usize],
    now: &'q str,
) -> AnyQuery<'q> {
    group
        .iter()
        .flat_map(|&i| batch[i].update_values())
        .chain([Value::Text(now)])
        .fold(query, |query, value| value.bind(query))
}

/// One insert of the feed's entries of `rows` changes.
pub(super) fn changes_sql(marks: Marks, rows: usize) -> String {
    format!(
        "INSERT INTO changes (review_id, kind, status, at, decision) VALUES {}",
        placeholders(marks, rows, 5)
    )
}

fn bind_changes<'q>(query: AnyQuery<'q>, stored: &[&'q Replacement], now: &'q str) -> AnyQuery<'q> {
    stored
        .iter()
        .flat_map(|change| change.change_values(now))
        .fold(query, |query, value| value.bind(query))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing::scratch;

    /// A decision on review `n` of the demo's numbered ones, its first answer
    /// kept under `key`.
    async fn decide(db: &Db, n: usize, key: &str, response: &str) {
        let id = countersign_domain::demo::numbered_id(n).parse().unwrap();
        let stored = db.review(id).await.unwrap().unwrap();
        let next = countersign_domain::demo::approved(&stored.review, chrono::Utc::now()).unwrap();
        let record = IdempotencyRecord {
            key_id: "key_r".into(),
            key: key.into(),
            first: IdempotentResult {
                request: "{}".into(),
                response: response.into(),
            },
        };
        db.replace_review(&stored, &next, ChangeKind::Decided, Some(record))
            .await
            .unwrap();
    }

    async fn seeded() -> (tempfile::TempDir, Db) {
        let (dir, db) = scratch().await;
        let reviews: Vec<_> = (1..=2)
            .map(|n| countersign_domain::demo::numbered(n).unwrap())
            .collect();
        db.insert_reviews(&reviews, "key_test").await.unwrap();
        (dir, db)
    }

    /// SQLite keeps a first answer compressed, and gives it back as sent.
    #[tokio::test]
    async fn a_first_answer_is_stored_compressed_and_read_back_as_sent() {
        let (_dir, db) = seeded().await;
        let answer = format!("{{\"review\":{}}}", "[\"a long answer\"],".repeat(150));
        decide(&db, 1, "idem-1", &answer).await;
        let (kind, size): (String, i64) = sqlx::query_as(
            "SELECT typeof(response), length(response) FROM decision_requests WHERE idem_key = 'idem-1'",
        )
        .fetch_one(db.pool())
        .await
        .unwrap();
        assert_eq!(kind, "blob");
        assert!(
            size < answer.len() as i64 / 4,
            "{size} bytes for {}",
            answer.len()
        );
        let kept = db.idempotent_result("key_r", "idem-1").await.unwrap();
        assert_eq!(kept.unwrap().response, answer);
    }

    /// SQLite: a committed decision reaches the database file itself soon,
    /// copied there by the checkpointer while the writer goes on (the
    /// writer's own connection never copies the log: far fewer than its
    /// automatic checkpoint's pages are written here).
    #[tokio::test]
    async fn the_checkpointer_copies_decisions_into_the_database_file() {
        let (dir, db) = seeded().await;
        let id = countersign_domain::demo::numbered_id(1);
        let in_file = |copy: &std::path::Path| -> rusqlite::Result<String> {
            std::fs::copy(dir.path().join("scratch.db"), copy).expect("copy of the database file");
            rusqlite::Connection::open(copy)?.query_row(
                "SELECT status FROM reviews WHERE id = ?1",
                [&id],
                |row| row.get(0),
            )
        };
        let copy = tempfile::tempdir().unwrap();
        decide(&db, 1, "idem-1", "{}").await;
        let mut seen = String::new();
        for attempt in 0..100 {
            // The file alone, without its log: only what was checkpointed.
            match in_file(&copy.path().join(format!("copy-{attempt}.db"))) {
                Ok(status) if status == "approved" => return,
                other => seen = format!("{other:?}"),
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        panic!("the decision never reached the database file (last read: {seen})");
    }

    /// A clean stop that meets another checkpoint under way (SQLite answers
    /// "busy" then, as a row) waits for it and still copies the whole log.
    #[tokio::test]
    async fn a_clean_stop_copies_the_whole_log_even_past_another_checkpoint() {
        let (dir, db) = seeded().await;
        let file = dir.path().join("scratch.db");
        let connect = || {
            let conn = rusqlite::Connection::open(&file).unwrap();
            conn.busy_timeout(std::time::Duration::from_secs(5))
                .unwrap();
            conn
        };
        // A reader on the snapshot before the decision keeps it in the log,
        let reader = connect();
        reader
            .execute_batch("BEGIN; SELECT COUNT(*) FROM reviews;")
            .unwrap();
        decide(&db, 1, "idem-1", "{}").await;
        // and, once the checkpointer's copy after that commit is over, a
        // full checkpoint waits for that reader holding SQLite's one
        // checkpoint lock.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let other = std::thread::spawn({
            let conn = connect();
            move || {
                conn.query_row("PRAGMA wal_checkpoint(FULL)", [], |row| {
                    row.get::<_, i64>(0)
                })
            }
        });
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let release = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            reader.execute_batch("COMMIT").unwrap();
        });
        db.close().await.unwrap();
        let copy = tempfile::tempdir().unwrap();
        std::fs::copy(&file, copy.path().join("copy.db")).unwrap();
        let status: String = rusqlite::Connection::open(copy.path().join("copy.db"))
            .unwrap()
            .query_row(
                "SELECT status FROM reviews WHERE id = ?1",
                [countersign_domain::demo::numbered_id(1)],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(status, "approved");
        release.join().unwrap();
        assert_eq!(other.join().unwrap().unwrap(), 0);
    }

    /// Puts SQL literal `value` in place of every stored first answer.
    async fn overwrite_response(db: &Db, value: &str) {
        sqlx::query(&format!("UPDATE decision_requests SET response = {value}"))
            .execute(db.pool())
            .await
            .unwrap();
    }

    /// Records stored before answers were compressed hold text: still read.
    #[tokio::test]
    async fn a_first_answer_stored_as_text_is_read_as_it_was() {
        let (_dir, db) = seeded().await;
        decide(&db, 1, "idem-1", "{\"first\":true}").await;
        overwrite_response(&db, "'{\"old\":true}'").await;
        let kept = db.idempotent_result("key_r", "idem-1").await.unwrap();
        assert_eq!(kept.unwrap().response, "{\"old\":true}");
    }

    /// A damaged answer is an error naming it, never another answer.
    #[tokio::test]
    async fn a_damaged_first_answer_is_refused_with_its_cause() {
        let (_dir, db) = seeded().await;
        decide(&db, 1, "idem-1", "{\"first\":true}").await;
        overwrite_response(&db, "x'ffffff7fff'").await;
        let read = db.idempotent_result("key_r", "idem-1").await;
        let Err(DbError::Damaged(why)) = read else {
            panic!("{read:?}")
        };
        assert!(why.contains("its length is wrong"), "{why}");
        overwrite_response(&db, "x'0a000000ff'").await;
        let read = db.idempotent_result("key_r", "idem-1").await;
        assert!(matches!(read, Err(DbError::Damaged(_))), "{read:?}");
    }
}
