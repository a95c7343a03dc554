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
use super::{begin_write_on, is_transient, stored_time, Backend, Db, DbError, RETRIES};
use countersign_domain::wire::ChangeKind;
use sqlx::{AnyPool, Row};
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
    pub fn start(pool: AnyPool, backend: Backend) -> Writer {
        let (queue, jobs) = mpsc::channel(4 * MAX_BATCH);
        tokio::spawn(run(pool, backend, jobs));
        Writer { queue }
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
        let mut tx = begin_write_on(conn, backend).await?;
        let changes: Vec<&Replacement> = batch.iter().map(|(change, _)| change).collect();
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
    let mut results: Vec<Result<(), ChangeError>> = batch.iter().map(|_| Ok(())).collect();
    let recorded = record_idempotency(tx, backend, batch, now, &mut results).await?;
    update_reviews(tx, backend, batch, now, &mut results).await?;
    // The records of the changes that did not land go again: a retry under
    // the same key must be able to go ahead.
    let stale_keys = recorded
        .into_iter()
        .filter(|&i| results[i].is_err())
        .filter_map(|i| batch[i].idempotency.as_ref().map(|r| (&r.key_id, &r.key)));
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
            "INSERT INTO changes (review_id, kind, status, at, decision) VALUES {}",
            placeholders(backend, stored.len(), 5)
        );
        let mut insert = sqlx::query(&sql);
        for change in &stored {
            insert = insert
                .bind(&change.row.id)
                .bind(change.kind.as_str())
                .bind(&change.row.status)
                .bind(now)
                .bind(change.row.decision_of(change.kind));
        }
        insert.execute(&mut **tx).await?;
        let mut entries = Vec::with_capacity(stored.len());
        for change in &stored {
            entries.push(change.row.audited(change.kind, now));
            if let Some(grant) = &change.grant {
                entries.extend(grant.insert(tx, &change.row.id, now).await?);
            }
        }
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
    backend: Backend,
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
    // A decision keeps the search text (the usual case) and then leaves it
    // out of the statement, so the list indexes that carry it are not
    // rewritten; the changes that replace it go in a second statement.
    let (kept, replaced): (Vec<usize>, Vec<usize>) =
        going.into_iter().partition(|&i| batch[i].search_kept);
    let mut updated = std::collections::HashSet::new();
    for (group, with_search) in [(kept, false), (replaced, true)] {
        if !group.is_empty() {
            updated.extend(update_group(tx, backend, batch, &group, with_search, now).await?);
        }
        for i in group {
            if !updated.contains(&batch[i].row.id) {
                results[i] = Err(ChangeError::Stale);
            }
        }
    }
    Ok(())
}

/// One compare-and-swap update of the changes `group` of `batch`, setting
/// the search text only `with_search` (and on SQLite the row's room left for
/// its next change). Returns the ids it updated.
async fn update_group(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    backend: Backend,
    batch: &[&Replacement],
    group: &[usize],
    with_search: bool,
    now: &str,
) -> Result<Vec<String>, sqlx::Error> {
    let (columns, search, set_search) = if with_search {
        (7, ", search", "search = v.search, ")
    } else {
        (6, "", "")
    };
    let set_spare = match backend {
        Backend::Sqlite => format!("spare = {}, ", room_left(with_search)),
        Backend::Postgres => String::new(),
    };
    let sql = format!(
        "WITH v (id, version, status, doc, summary, escalate_at{search}) AS (VALUES {})
         UPDATE reviews SET status = v.status, {set_search}{set_spare}doc = v.doc, summary = v.summary,
           escalate_at = v.escalate_at, version = reviews.version + 1, updated_at = {}
         FROM v WHERE reviews.id = v.id AND reviews.version = v.version
         RETURNING reviews.id AS id",
        placeholders(backend, group.len(), columns),
        placeholder(backend, group.len() * columns + 1)
    );
    let mut update = sqlx::query(&sql);
    for &i in group {
        let (row, version) = (&batch[i].row, batch[i].version);
        update = update
            .bind(&row.id)
            .bind(version)
            .bind(&row.status)
            .bind(&row.doc)
            .bind(&row.summary)
            .bind(&row.escalate_at);
        if with_search {
            update = update.bind(&row.search);
        }
    }
    update
        .bind(now)
        .fetch_all(&mut **tx)
        .await?
        .iter()
        .map(|row| row.try_get("id"))
        .collect()
}

/// Stores the idempotency records of a batch in one statement; a change
/// whose key is already stored is refused as a duplicate request. Returns
/// the changes whose record it stored.
async fn record_idempotency(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    backend: Backend,
    batch: &[&Replacement],
    now: &str,
    results: &mut [Result<(), ChangeError>],
) -> Result<Vec<usize>, sqlx::Error> {
    let mut keyed = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, change) in batch.iter().enumerate() {
        if let Some(record) = &change.idempotency {
            let (key_id, idem_key, result) = (&record.key_id, &record.key, &record.first);
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
        placeholders(backend, keyed.len(), 6)
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
        .map(|row| Ok((row.try_get("key_id")?, row.try_get("idem_key")?)))
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

/// `($1, $2), ($3, $4)` for `rows` rows of `columns` values each, in bind
/// order: numbered on PostgreSQL, anonymous (`?`) on SQLite.
fn placeholders(backend: Backend, rows: usize, columns: usize) -> String {
    (0..rows)
        .map(|r| {
            let row: Vec<String> = (1..=columns)
                .map(|c| placeholder(backend, r * columns + c))
                .collect();
            format!("({})", row.join(", "))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `n`th value bound to a statement whose values are all bound in order.
/// SQLite finds a numbered parameter's name by walking a list, when it
/// parses the statement and again as each value is bound, so a batch's
/// hundreds of numbered values would cost it time quadratic in their count;
/// an anonymous one it numbers as it goes.
fn placeholder(backend: Backend, n: usize) -> String {
    match backend {
        Backend::Sqlite => "?".to_owned(),
        Backend::Postgres => format!("${n}"),
    }
}
