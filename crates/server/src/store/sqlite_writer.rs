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
    admitted, changes_sql, unreturned_records_sql, update_one_sql, ChangeError, Commit,
    Replacement, Results, FORGET_RECORD,
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
        if checkpointer.restart_wanted() {
            if let Err(e) = restart_log(conn) {
                tracing::warn!("the write-ahead log did not start over: {e}");
            }
        }
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
    // The log starts over once the checkpointer has copied all of it; a
    // log that grew past this (a burst while readers held it) is cut back
    // to it then.
    conn.execute_batch("PRAGMA wal_autocheckpoint = 0; PRAGMA journal_size_limit = 67108864")?;
    let pace = Pace {
        rest: Checkpointer::REST,
        restart_at: Checkpointer::RESTART_AT,
    };
    Ok((conn, Checkpointer::start(open(file)?, pace)?))
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
///
/// The log starts over from its beginning only when a write begins with
/// every frame copied, and under a steady load the writer commits during
/// every passive copy: the log then grew by every decision (1.2 GB in 20 s
/// of the load benchmark), each write landing past the file's end. Once it
/// holds [`Pace::restart_at`] frames, the checkpointer asks the writer to
/// have it start over ([`restart_log`]) between two commits: a restart
/// checkpoint from this thread waited for the writer's lock, which the
/// writer takes again at once under load.
struct Checkpointer {
    nudge: std::sync::mpsc::SyncSender<()>,
    restart: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

/// How often the checkpointer copies, and when it has the log start over.
#[derive(Debug, Clone, Copy)]
struct Pace {
    /// How long it rests after each checkpoint.
    rest: std::time::Duration,
    /// The log's length in frames (pages) from which it starts over.
    restart_at: i64,
}

impl Checkpointer {
    /// How long the checkpointer rests after each checkpoint: under load the
    /// log grows by this much of the writer's time between two copies, so a
    /// page many commits change is copied once for all of them.
    const REST: std::time::Duration = std::time::Duration::from_millis(200);

    /// The log's length (4 KiB pages) from which it starts over: 32 MiB,
    /// where SQLite's automatic checkpoint was set before.
    const RESTART_AT: i64 = 8_000;

    /// Starts the thread on `conn`; it ends (and closes `conn`) once this
    /// handle is dropped.
    fn start(conn: Connection, pace: Pace) -> Result<Checkpointer, DbError> {
        // One nudge waits at most: commits during a checkpoint or its rest
        // ask for one more checkpoint, not one each.
        let (nudge, nudged) = std::sync::mpsc::sync_channel(1);
        let restart = std::sync::Arc::default();
        let wanted = std::sync::Arc::clone(&restart);
        std::thread::Builder::new()
            .name("countersign-checkpointer".into())
            .spawn(move || {
                while nudged.recv().is_ok() {
                    if let Err(e) = Self::copy(&conn, pace, &wanted) {
                        tracing::warn!(
                            "the write-ahead log was not copied into the database file: {e}"
                        );
                    }
                    std::thread::sleep(pace.rest);
                }
            })
            .map_err(DbError::Thread)?;
        Ok(Checkpointer { nudge, restart })
    }

    /// One round: a passive copy; a log grown long is to start over.
    fn copy(
        conn: &Connection,
        pace: Pace,
        restart: &std::sync::atomic::AtomicBool,
    ) -> rusqlite::Result<()> {
        let frames: i64 = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| row.get(1))?;
        if frames >= pace.restart_at {
            restart.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(())
    }

    /// Whether the log is to start over before the next commit (asked once).
    fn restart_wanted(&self) -> bool {
        self.restart
            .swap(false, std::sync::atomic::Ordering::Relaxed)
    }

    /// Asks for a checkpoint after a commit (one already asked for will do).
    fn nudge(&self) {
        let _ = self.nudge.try_send(());
    }
}

/// Lets the log start over, on the writer's connection between two
/// commits: a passive copy of what was committed since the checkpointer's
/// last one began. With every frame copied, the next commit writes the log
/// from its start, unless a reader is still reading it then (the
/// checkpointer asks again next round). Nothing here waits: a restart
/// checkpoint held the writer back until the readers were done, 20 % fewer
/// decisions a second.
fn restart_log(conn: &Connection) -> rusqlite::Result<()> {
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
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
            record: unreturned_records_sql(marks, 1),
            kept: update_one_sql(true),
            replaced: update_one_sql(false),
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
            if !changes_one(tx, &self.record, values)? {
                return Ok(Err(ChangeError::DuplicateRequest));
            }
        }
        let update = if change.search_kept {
            &self.kept
        } else {
            &self.replaced
        };
        let values = change.update_values().chain([super::Value::Text(now)]);
        if !changes_one(tx, update, values)? {
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

/// Whether statement `sql` with `values` changed a row (an insert that
/// met a taken key, or an update of a stale version, changes none).
fn changes_one(
    tx: &Transaction,
    sql: &str,
    values: impl IntoIterator<Item = impl ToSql>,
) -> rusqlite::Result<bool> {
    let mut statement = tx.prepare_cached(sql)?;
    Ok(statement.execute(params_from_iter(values))? == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SQLite is built without memory statistics (.cargo/config.toml): with
    /// them each of its allocations took a global lock.
    #[test]
    fn sqlite_is_built_without_memory_statistics() {
        let conn = Connection::open_in_memory().unwrap();
        let mut pragma = conn.prepare("PRAGMA compile_options").unwrap();
        let options: Vec<String> = pragma
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(
            options.iter().any(|o| o == "DEFAULT_MEMSTATUS=0"),
            "{options:?}"
        );
    }

    /// Under a steady stream of commits (the writer commits during every
    /// passive copy), the log still starts over: its file stays short.
    #[test]
    fn the_log_starts_over_under_a_steady_load() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("steady.db");
        let writer = Connection::open(&file).unwrap();
        writer.execute_batch(SQLITE_SETTINGS).unwrap();
        writer
            .execute_batch(
                "PRAGMA wal_autocheckpoint = 0; CREATE TABLE rows (id INTEGER PRIMARY KEY, body BLOB)",
            )
            .unwrap();
        let pace = Pace {
            rest: std::time::Duration::from_millis(5),
            restart_at: 64,
        };
        let checkpointer = Checkpointer::start(open(&file).unwrap(), pace).unwrap();
        let wal = dir.path().join("steady.db-wal");
        let commits = 3_000;
        let mut longest = 0;
        for n in 0..commits {
            if checkpointer.restart_wanted() {
                restart_log(&writer).unwrap();
            }
            writer
                .execute(
                    "INSERT INTO rows (id, body) VALUES (?1, zeroblob(3000))",
                    [n],
                )
                .unwrap();
            checkpointer.nudge();
            longest = longest.max(std::fs::metadata(&wal).unwrap().len());
        }
        // Each commit appends a frame or more: 3,000 frames (12 MiB) if the
        // log never started over.
        let frames = longest / 4_120;
        println!("{commits} commits: the log's file grew to {frames} frames at most");
        assert!(frames < 1_000, "the log grew to {frames} frames");
    }
}
