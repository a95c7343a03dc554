//! Group commit: one writer task per server applies every review change that
//! is waiting in one transaction, so many concurrent decisions share one
//! durable sync instead of one each. Each caller is answered only after the
//! transaction holding its change has committed. A batch is a few
//! statements whatever its size ([`apply_batch`]); a decision's idempotency
//! record commits with it, and is read back here ([`Db::idempotent_result`]).

use super::audit;
use super::grants::NewGrant;
use super::reviews::Stored;
use super::row::{room_left, search_text, Columns};
use super::{
    begin_write_on, is_transient, placeholder, placeholders, stored_time, AnyQuery, Backend, Db,
    DbError, Marks, RETRIES,
};
use countersign_domain::wire::ChangeKind;
use sqlx::any::AnyRow;
use sqlx::{AnyPool, Row};
use std::collections::HashSet;
use tokio::sync::{mpsc, oneshot};

/// Most changes in one transaction.
const MAX_BATCH: usize = 256;

type Job = (Replacement, oneshot::Sender<Result<(), ChangeError>>);

/// The handle that queues changes for the writer task.
#[derive(Clone)]
pub struct Writer {
    queue: mpsc::Sender<Job>,
}

impl Writer {
    /// Starts the writer task on the current runtime.
    pub fn start(pool: AnyPool, backend: Backend) -> std::io::Result<Writer> {
        let (queue, jobs) = mpsc::channel(4 * MAX_BATCH);
        super::spawn_apart("countersign-writer", run(pool, backend, jobs))?;
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

async fn run(pool: AnyPool, backend: Backend, mut jobs: mpsc::Receiver<Job>) {
    let mut closing = pool.close_event();
    let mut writer = Connection { pool, held: None };
    loop {
        // The writer keeps its connection while it waits, until the pool
        // closes: a clean stop waits for every connection to come back.
        let first = match closing.do_until(jobs.recv()).await {
            Ok(Some(job)) => job,
            Ok(None) => break,
            Err(_closed) => {
                writer.held = None;
                match jobs.recv().await {
                    Some(job) => job,
                    None => break,
                }
            }
        };
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        match writer.commit_retrying(backend, &batch).await {
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
                    match writer
                        .commit_retrying(backend, std::slice::from_ref(&job))
                        .await
                    {
                        Ok(results) => answer(vec![job], results),
                        Err(e) => {
                            let _ = job.1.send(Err(ChangeError::Db(DbError::Sql(e))));
                        }
                    }
                }
            }
            Err(e) => {
                if let Some((_, reply)) = batch.pop() {
                    let _ = reply.send(Err(ChangeError::Db(DbError::Sql(e))));
                }
            }
        }
    }
}

fn answer(batch: Vec<Job>, results: Vec<Result<(), ChangeError>>) {
    for ((_, reply), result) in batch.into_iter().zip(results) {
        let _ = reply.send(result);
    }
}

/// The writer's own connection, kept from one batch to the next: on SQLite
/// its page cache stays valid across commits (a connection that sees
/// another's commit drops its whole cache and reads its pages again). It is
/// given back after a failure, and the next batch takes a fresh one.
struct Connection {
    pool: AnyPool,
    held: Option<sqlx::pool::PoolConnection<sqlx::Any>>,
}

impl Connection {
    /// [`Connection::commit`], run again when it failed for a transient
    /// reason (a deadlock or serialization failure), a few times.
    async fn commit_retrying(
        &mut self,
        backend: Backend,
        batch: &[Job],
    ) -> Result<Vec<Result<(), ChangeError>>, sqlx::Error> {
        let mut tries = 0;
        loop {
            match self.commit(backend, batch).await {
                Err(e) if is_transient(&e) && tries < RETRIES => tries += 1,
                Err(e) => {
                    self.held = None;
                    return Err(e);
                }
                done => return done,
            }
        }
    }

    async fn commit(
        &mut self,
        backend: Backend,
        batch: &[Job],
    ) -> Result<Vec<Result<(), ChangeError>>, sqlx::Error> {
        // A kept PostgreSQL connection is tested first, as the pool tests
        // the ones it hands out: the server may have restarted meanwhile.
        if let (Backend::Postgres, Some(conn)) = (backend, &mut self.held) {
            if let Err(e) = sqlx::Connection::ping(&mut **conn).await {
                tracing::warn!("the writer's connection stopped answering ({e}); taking another");
                self.held = None;
            }
        }
        let conn = match &mut self.held {
            Some(conn) => conn,
            held => held.insert(self.pool.acquire().await?),
        };
        let now = stored_time(chrono::Utc::now());
        let changes: Vec<&Replacement> = batch.iter().map(|(change, _)| change).collect();
        if backend == Backend::Sqlite {
            match at_once(conn, &changes, &now).await {
                Ok(Some(results)) => return Ok(results),
                // Rolled back: sorted out below.
                Ok(None) => {}
                Err(e) => {
                    // Whether its transaction is still open is not known:
                    // the connection is closed rather than kept or pooled.
                    conn.close_on_drop();
                    self.held = None;
                    return Err(e);
                }
            }
        }
        let mut tx = begin_write_on(conn, backend).await?;
        let results = apply_batch(&mut tx, backend, &changes, &now).await?;
        tx.commit().await?;
        Ok(results)
    }
}

/// The first result of a decision post, kept under its idempotency key.
#[derive(Debug, Clone, sqlx::FromRow)]
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
    search_kept: bool,
    row: Columns,
    kind: ChangeKind,
    idempotency: Option<IdempotencyRecord>,
    grant: Option<NewGrant>,
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
            grant: None,
        }
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
        Ok(sqlx::query_as(
            "SELECT request, response FROM decision_requests WHERE key_id = $1 AND idem_key = $2",
        )
        .bind(key_id)
        .bind(idem_key)
        .fetch_optional(self.pool())
        .await?)
    }
}

/// Applies a batch of changes inside one transaction, in a few statements
/// whatever its size (each statement is a round trip to the database, and
/// the writer's round trips are what limit how many decisions a second it
/// stores): one insert of every idempotency record, one compare-and-swap
/// update of every review, one insert of every feed entry (and one of each
/// grant a decision made, which are rare). A change whose key was
/// taken (by an earlier change of the batch or a stored one) or whose review
/// changed since it was read leaves nothing behind; a database error fails
/// the batch.
pub async fn apply_batch(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    backend: Backend,
    batch: &[&Replacement],
    now: &str,
) -> Result<Vec<Result<(), ChangeError>>, sqlx::Error> {
    let marks = backend.marks();
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
            let sql = update_sql(marks, group.len(), search_kept);
            let rows = bind_updates(sqlx::query(&sql), batch, group, search_kept, now)
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
        .filter_map(|i| batch[i].idempotency.as_ref().map(|r| (&r.key_id, &r.key)));
    for (key_id, idem_key) in stale_keys {
        sqlx::query("DELETE FROM decision_requests WHERE key_id = $1 AND idem_key = $2")
            .bind(key_id)
            .bind(idem_key)
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

/// [`apply_batch`] on SQLite in two round trips instead of seven, for a
/// batch in which nothing goes wrong (the usual case). The writer is the
/// one serial stage of every change, and under load each round trip waits
/// for its threads to be scheduled again (half a millisecond on 2 busy
/// cores), more than most statements take. The first text begins the
/// transaction and stores the records, the updates and reads the audit
/// chain's head; the second stores the feed's and the chain's entries and
/// commits. When a record's key was taken or a review changed meanwhile,
/// the transaction is rolled back and `None` returned: [`apply_batch`] then
/// sorts out which changes go ahead (and stores the grants approvals make,
/// which are rare). On an error the transaction may be
/// open still, and the caller closes the connection.
async fn at_once(
    conn: &mut sqlx::AnyConnection,
    batch: &[&Replacement],
    now: &str,
) -> Result<Option<Vec<Result<(), ChangeError>>>, sqlx::Error> {
    if batch.iter().any(|change| change.grant.is_some()) {
        return Ok(None);
    }
    let marks = Marks::Anonymous;
    let results = admitted(batch);
    let keyed = with_records(batch, &results);
    let (kept, replaced) = update_groups(batch, &results);
    let mut sql = "BEGIN IMMEDIATE;\n".to_owned();
    if !keyed.is_empty() {
        sql += &records_sql(marks, keyed.len());
        sql += ";\n";
    }
    for (group, search_kept) in [(&kept, true), (&replaced, false)] {
        if !group.is_empty() {
            sql += &update_sql(marks, group.len(), search_kept);
            sql += ";\n";
        }
    }
    sql += audit::HEAD;
    let mut query = bind_records(sqlx::query(&sql), batch, &keyed, now);
    for (group, search_kept) in [(&kept, true), (&replaced, false)] {
        if !group.is_empty() {
            query = bind_updates(query, batch, group, search_kept, now);
        }
    }
    let rows = query.fetch_all(&mut *conn).await?;
    let recorded = recorded_keys(&rows)?.len();
    let updated = returned(&rows, "id")?.len();
    let stored = stored(batch, &results);
    if recorded != keyed.len() || updated != stored.len() {
        sqlx::query("ROLLBACK").execute(&mut *conn).await?;
        return Ok(None);
    }
    let head = rows.iter().find(|row| row.try_column("seq").is_ok());
    let entries: Vec<audit::Entry> = stored
        .iter()
        .map(|change| change.row.audited(change.kind, now))
        .collect();
    let linked = audit::chain(audit::head_of(head)?, &entries)?;
    let inserts = audit::inserts(marks, &linked);
    let mut sql = changes_sql(marks, stored.len());
    for (insert, _) in &inserts {
        sql += ";\n";
        sql += insert;
    }
    sql += ";\nCOMMIT";
    let mut query = bind_changes(sqlx::query(&sql), &stored, now);
    for (_, rows) in inserts {
        query = audit::bind(query, rows);
    }
    query.execute(&mut *conn).await?;
    Ok(Some(results))
}

/// Which changes of a batch may go ahead before the database is asked: of
/// changes under one idempotency key, or of one review, only the first.
/// The others were read at the same version as the first, so they are sent
/// back to read again (a retry racing its first attempt then finds the
/// first's stored result, or goes ahead if the first did not land).
fn admitted(batch: &[&Replacement]) -> Vec<Result<(), ChangeError>> {
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
fn records_sql(marks: Marks, rows: usize) -> String {
    format!(
        "INSERT INTO decision_requests (key_id, idem_key, review_id, request, response, created_at) VALUES {}
         ON CONFLICT (key_id, idem_key) DO NOTHING RETURNING key_id, idem_key",
        placeholders(marks, rows, 6)
    )
}

fn bind_records<'q>(
    mut query: AnyQuery<'q>,
    batch: &[&'q Replacement],
    keyed: &[usize],
    now: &'q str,
) -> AnyQuery<'q> {
    for &i in keyed {
        if let Some(record) = &batch[i].idempotency {
            query = query
                .bind(&record.key_id)
                .bind(&record.key)
                .bind(&batch[i].row.id)
                .bind(&record.first.request)
                .bind(&record.first.response)
                .bind(now);
        }
    }
    query
}

/// One compare-and-swap update of `rows` reviews, each only if it is still
/// at the version its change was read at, setting the search text unless
/// `search_kept` (and on SQLite the row's room left for its next change).
/// Returns the ids it updated.
fn update_sql(marks: Marks, rows: usize, search_kept: bool) -> String {
    let (columns, search, set_search) = if search_kept {
        (6, "", "")
    } else {
        (7, ", search", "search = v.search, ")
    };
    let set_spare = match marks {
        Marks::Anonymous => format!("spare = {}, ", room_left(!search_kept)),
        Marks::Numbered => String::new(),
    };
    format!(
        "WITH v (id, version, status, doc, summary, escalate_at{search}) AS (VALUES {})
         UPDATE reviews SET status = v.status, {set_search}{set_spare}doc = v.doc, summary = v.summary,
           escalate_at = v.escalate_at, version = reviews.version + 1, updated_at = {}
         FROM v WHERE reviews.id = v.id AND reviews.version = v.version
         RETURNING reviews.id AS id",
        placeholders(marks, rows, columns),
        placeholder(marks, rows * columns + 1)
    )
}

fn bind_updates<'q>(
    mut query: AnyQuery<'q>,
    batch: &[&'q Replacement],
    group: &[usize],
    search_kept: bool,
    now: &'q str,
) -> AnyQuery<'q> {
    for &i in group {
        let (row, version) = (&batch[i].row, batch[i].version);
        query = query
            .bind(&row.id)
            .bind(version)
            .bind(&row.status)
            .bind(&row.doc)
            .bind(&row.summary)
            .bind(&row.escalate_at);
        if !search_kept {
            query = query.bind(&row.search);
        }
    }
    query.bind(now)
}

/// One insert of the feed's entries of `rows` changes.
fn changes_sql(marks: Marks, rows: usize) -> String {
    format!(
        "INSERT INTO changes (review_id, kind, status, at, decision) VALUES {}",
        placeholders(marks, rows, 5)
    )
}

fn bind_changes<'q>(
    mut query: AnyQuery<'q>,
    stored: &[&'q Replacement],
    now: &'q str,
) -> AnyQuery<'q> {
    for change in stored {
        query = query
            .bind(&change.row.id)
            .bind(change.kind.as_str())
            .bind(&change.row.status)
            .bind(now)
            .bind(change.row.decision_of(change.kind));
    }
    query
}
