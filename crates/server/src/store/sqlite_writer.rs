//! SQLite's writer: the one connection that stores review changes, on a
//! thread of its own that calls SQLite itself. A query of sqlx's is a round
//! trip to the worker thread of its connection, and each row it returns a
//! message back; under a decision load those trips, each waiting for busy
//! cores to run the other thread again, took about half the writer's time,
//! and the writer is the one serial stage of every change. Here a batch is
//! one transaction of a few small statements a change, each prepared once.
//! The log is copied into the database file beside it, by a checkpointer
//! thread with a connection of its own, never inside the writer's commits.

use super::commit::{
    admitted, changes_sql, records_sql, update_sql, ChangeError, Commit, Replacement, Results,
    FORGET_RECORD,
};
use super::grants::NewGrant;
use super::{audit, DbError, Marks, SQLITE_SETTINGS};
use rusqlite::{params_from_iter, Connection, OpenFlags, OptionalExtension, ToSql};
use rusqlite::{Transaction, TransactionBehavior};
use std::path::{Path, PathBuf};

/// The writer's connection to the database file (and its checkpointer),
/// opened when first needed and again after a failure.
pub(super) struct SqliteWriter {
    file: PathBuf,
    conn: Option<(Connection, Checkpointer)>,
    sql: Statements,
}

impl SqliteWriter {
    /// The writer of the database at `file` (its schema already made).
    pub(super) fn new(file: PathBuf) -> SqliteWriter {
        SqliteWriter {
            file,
            conn: None,
            sql: Statements::new(),
        }
    }
}

impl Commit for SqliteWriter {
    async fn commit(&mut self, batch: &[&Replacement], now: &str) -> Result<Results, DbError> {
        let SqliteWriter { file, conn, sql } = self;
        let (conn, checkpointer) = match conn {
            Some(open) => open,
            none => none.insert(open_writer(file)?),
        };
        // Dropped without a commit (an error below), it rolls back.
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut results = admitted(batch);
        let mut entries = Vec::new();
        for (change, result) in batch.iter().zip(&mut results) {
            if result.is_ok() {
                *result = sql.apply(&tx, change, now, &mut entries)?;
            }
        }
        if !entries.is_empty() {
            sql.append(&tx, &entries)?;
        }
        tx.commit()?;
        checkpointer.nudge();
        Ok(results)
    }

    fn release(&mut self) {
        self.conn = None;
    }
}

/// The writer's connection, which leaves copying the log into the file to
/// its checkpointer.
fn open_writer(file: &Path) -> Result<(Connection, Checkpointer), DbError> {
    let conn = open(file)?;
    conn.execute_batch("PRAGMA wal_autocheckpoint = 0")?;
    Ok((conn, Checkpointer::start(open(file)?)?))
}

fn open(file: &Path) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(file, flags)?;
    conn.execute_batch(SQLITE_SETTINGS)?;
    Ok(conn)
}

/// Copies the write-ahead log into the database file on a thread of its own
/// while the writer goes on committing. Inside a commit (SQLite's automatic
/// checkpoint) the copy and the file's sync held up every decision queued
/// behind that commit. A passive checkpoint never blocks the writer or the
/// readers; frames a reader may still need wait for the next one.
struct Checkpointer {
    nudge: std::sync::mpsc::SyncSender<()>,
}

impl Checkpointer {
    /// How long the checkpointer rests after each checkpoint: under load the
    /// log grows by this much of the writer's time between two copies, so a
    /// page many commits change is copied once for all of them.
    const REST: std::time::Duration = std::time::Duration::from_millis(200);

    /// Starts the thread on `conn`; it ends (and closes `conn`) once this
    /// handle is dropped.
    fn start(conn: Connection) -> Result<Checkpointer, DbError> {
        // One nudge waits at most: commits during a checkpoint or its rest
        // ask for one more checkpoint, not one each.
        let (nudge, nudged) = std::sync::mpsc::sync_channel(1);
        std::thread::Builder::new()
            .name("countersign-checkpointer".into())
            .spawn(move || {
                while nudged.recv().is_ok() {
                    let copied = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
                    if let Err(e) = copied {
                        tracing::warn!(
                            "the write-ahead log was not copied into the database file: {e}"
                        );
                    }
                    std::thread::sleep(Self::REST);
                }
            })
            .map_err(DbError::Thread)?;
        Ok(Checkpointer { nudge })
    }

    /// Asks for a checkpoint after a commit (one already asked for will do).
    fn nudge(&self) {
        let _ = self.nudge.try_send(());
    }
}

/// The texts of the writer's statements, each for one row.
struct Statements {
    record: String,
    kept: String,
    replaced: String,
    change: String,
    audit: String,
}

impl Statements {
    fn new() -> Statements {
        let marks = Marks::Anonymous;
        Statements {
            record: records_sql(marks, 1),
            kept: update_sql(marks, 1, true),
            replaced: update_sql(marks, 1, false),
            change: changes_sql(marks, 1),
            audit: audit::insert_sql(marks, 1),
        }
    }

    /// Stores `change` unless its idempotency key was taken or its review
    /// changed since it was read (then nothing of it is left); its audit
    /// entries (and those of the grant it made) go to `entries`.
    fn apply(
        &self,
        tx: &Transaction,
        change: &Replacement,
        now: &str,
        entries: &mut Vec<audit::Entry>,
    ) -> Result<Result<(), ChangeError>, DbError> {
        if let Some(values) = change.record_values(now) {
            if !returns_row(tx, &self.record, values)? {
                return Ok(Err(ChangeError::DuplicateRequest));
            }
        }
        let update = if change.search_kept {
            &self.kept
        } else {
            &self.replaced
        };
        let values = change.update_values().chain([super::Value::Text(now)]);
        if !returns_row(tx, update, values)? {
            if let Some(key) = change.record_key() {
                tx.prepare_cached(FORGET_RECORD)?
                    .execute(params_from_iter(key))?;
            }
            return Ok(Err(ChangeError::Stale));
        }
        tx.prepare_cached(&self.change)?
            .execute(params_from_iter(change.change_values(now)))?;
        entries.push(change.row.audited(change.kind, now));
        if let Some(grant) = &change.grant {
            let values = grant.values(&change.row.id, now);
            if tx
                .prepare_cached(NewGrant::INSERT)?
                .execute(params_from_iter(values))?
                == 1
            {
                entries.push(grant.audited(now));
            }
        }
        Ok(Ok(()))
    }

    /// Appends `entries` to the audit chain after its head.
    fn append(&self, tx: &Transaction, entries: &[audit::Entry]) -> Result<(), DbError> {
        let head = tx
            .prepare_cached(audit::HEAD)?
            .query_row([], |row| Ok((row.get(0)?, row.get(1)?)))
            .optional()?
            .unwrap_or_else(|| (0, audit::GENESIS.to_owned()));
        let mut insert = tx.prepare_cached(&self.audit)?;
        for entry in audit::chain(head, entries)? {
            insert.execute(params_from_iter(entry.values()))?;
        }
        Ok(())
    }
}

/// Whether statement `sql` with `values` returned a row (its `RETURNING`
/// names what it stored).
fn returns_row(
    tx: &Transaction,
    sql: &str,
    values: impl IntoIterator<Item = impl ToSql>,
) -> rusqlite::Result<bool> {
    let mut statement = tx.prepare_cached(sql)?;
    let mut rows = statement.query(params_from_iter(values))?;
    Ok(rows.next()?.is_some())
}
