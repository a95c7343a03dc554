//! The server's storage: one SQLite file by default (WAL, synchronous writes), or
//! PostgreSQL so several server instances can share one database. Both run the
//! same SQL through sqlx's `Any` driver; only the migrations differ.
//! (`migrations/shared` holds the ones both run as they are; each
//! database's folder links to them beside its own.)

pub mod audit;
mod commit;
pub mod devices;
mod feed;
pub mod grants;
pub mod keys;
mod listing;
pub mod mail;
pub mod readers;
pub mod reviews;
mod rounds;
mod row;
pub mod sessions;
pub mod slack;
pub mod slack_posts;
mod sqlite_writer;
#[cfg(test)]
mod testing;
pub mod webhooks;

pub use commit::{ChangeError, IdempotencyRecord, IdempotentResult};
pub use feed::Change;
pub use listing::{Cursor, Page};
pub use reviews::Stored;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, Connection, Executor};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

/// Which database the server runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// A local SQLite file.
    Sqlite,
    /// A PostgreSQL server.
    Postgres,
}

/// A pool of connections to the server's database, migrated to the current
/// schema. Cloned for every request's state: one reference count.
#[derive(Clone)]
pub struct Db(Arc<Inner>);

struct Inner {
    pool: AnyPool,
    backend: Backend,
    url: String,
    writer: commit::Writer,
    key_reader: rounds::Rounds<keys::ApiKey>,
    review_reader: rounds::Rounds<reviews::StoredRow>,
}

/// Why the database could not be opened or used.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// The address names no database this server supports.
    #[error("unsupported database address `{0}`: use sqlite://path/to/file.db or postgres://user@host/db")]
    Unsupported(String),
    /// No connection could be made: the database is unreachable, refused the
    /// credentials, or its TLS did not pass the checks the address asks for.
    #[error(
        "cannot connect to the database at {address}: {reason}{}",
        connect_hint(reason)
    )]
    Connect {
        /// The address, without its password.
        address: String,
        /// What the driver said.
        reason: String,
    },
    /// A thread of the database's own could not be started.
    #[error("cannot start the database's thread: {0}")]
    Thread(std::io::Error),
    /// The database refused or failed.
    #[error("database error: {0}")]
    Sql(#[from] sqlx::Error),
    /// SQLite refused or failed a write of the writer's thread.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The schema could not be brought up to date.
    #[error("database migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// A newer Countersign wrote this database: its schema has a migration
    /// this version does not know, and nothing is changed.
    #[error("this database was written by a newer Countersign: it holds schema migration {found}, and this countersign {} knows migrations up to {known}; run the newer countersign, or restore a backup taken before the upgrade (nothing was changed)", env!("CARGO_PKG_VERSION"))]
    Newer {
        /// The unknown migration the database holds.
        found: i64,
        /// The newest migration this version has.
        known: i64,
    },
    /// A one-shot command found a database with no Countersign schema:
    /// only `countersign serve` creates one.
    #[error("no Countersign database at {0}: it holds no Countersign tables, and only `countersign serve` creates them (nothing was changed)")]
    Missing(String),
    /// A query answering several requests at once failed (its message).
    #[error("database error: {0}")]
    Failed(String),
    /// Other connections kept the write-ahead log from being copied whole
    /// into the database file at a clean stop.
    #[error("the write-ahead log was still in use after {0:?}, so it was not copied whole into the database file; the next start reads it")]
    Busy(std::time::Duration),
    /// A stored value is damaged (edited by hand, or written by another program).
    #[error("stored data is damaged: {0}")]
    Damaged(String),
}

/// How long a clean stop waits for other connections to let the whole
/// write-ahead log be copied into the database file.
const CHECKPOINT_PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

/// Whether Countersign's migrations ever ran here.
async fn has_schema(conn: &mut sqlx::AnyConnection, backend: Backend) -> Result<bool, DbError> {
    let query = match backend {
        Backend::Sqlite => {
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations'"
        }
        Backend::Postgres => "SELECT COUNT(*) FROM pg_catalog.pg_tables WHERE tablename = '_sqlx_migrations' AND schemaname = ANY (current_schemas(false))",
    };
    let found: i64 = sqlx::query_scalar(query).fetch_one(conn).await?;
    Ok(found > 0)
}

impl Backend {
    /// `sqlite` or `postgres`, as health answers and logs say it.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}

impl Db {
    /// Ends a clean stop: SQLite's write-ahead log is copied into the
    /// database file (so a copy of that file alone has every write), then
    /// the connections close.
    pub async fn close(&self) -> Result<(), DbError> {
        let copied = match self.0.backend {
            Backend::Sqlite => self.checkpoint_all().await,
            Backend::Postgres => Ok(()),
        };
        self.0.pool.close().await;
        copied
    }

    /// Copies the whole write-ahead log into the database file and empties
    /// it. SQLite runs one checkpoint at a time and answers "busy" (a row,
    /// not an error) while the checkpointer thread copies, so a busy answer
    /// is asked again until the copy is whole or [`CHECKPOINT_PATIENCE`]
    /// has passed.
    async fn checkpoint_all(&self) -> Result<(), DbError> {
        let started = std::time::Instant::now();
        loop {
            let busy: i64 = sqlx::query_scalar("PRAGMA wal_checkpoint(TRUNCATE)")
                .fetch_one(&self.0.pool)
                .await?;
            if busy == 0 {
                return Ok(());
            }
            if started.elapsed() >= CHECKPOINT_PATIENCE {
                return Err(DbError::Busy(CHECKPOINT_PATIENCE));
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }

    /// Connects (creating a SQLite file if needed) and applies the migrations.
    pub async fn open(url: &str) -> Result<Db, DbError> {
        Self::connect(url, true).await
    }

    /// Connects to a database `countersign serve` made, bringing its schema
    /// up to date; an empty one is left as it is and refused.
    pub async fn open_existing(url: &str) -> Result<Db, DbError> {
        Self::connect(url, false).await
    }

    async fn connect(url: &str, create: bool) -> Result<Db, DbError> {
        sqlx::any::install_default_drivers();
        let backend = if url.starts_with("sqlite:") {
            Backend::Sqlite
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Backend::Postgres
        } else {
            return Err(DbError::Unsupported(url.to_owned()));
        };
        if backend == Backend::Sqlite {
            owner_only(url).map_err(|e| DbError::Connect {
                address: url.to_owned(),
                reason: e.to_string(),
            })?;
        }
        let options = AnyConnectOptions::from_str(&sqlite_create_mode(url, backend))?;
        // One connection first: its error names the cause (refused, password,
        // certificate), where the pool would only say that it timed out.
        let mut probe =
            sqlx::ConnectOptions::connect(&options)
                .await
                .map_err(|e| DbError::Connect {
                    address: without_password(url),
                    reason: e.to_string(),
                })?;
        if !create && !has_schema(&mut probe, backend).await? {
            probe.close().await?;
            return Err(DbError::Missing(without_password(url)));
        }
        probe.close().await?;
        let pool = AnyPoolOptions::new()
            .max_connections(if backend == Backend::Sqlite { 4 } else { 10 })
            .acquire_timeout(Duration::from_secs(10))
            // A SQLite connection is a local file that cannot drop, and each
            // ping is a round trip to its worker thread before every query
            // (a fifth of the server's time under a decision load).
            .test_before_acquire(backend == Backend::Postgres)
            .after_connect(move |conn, _| {
                Box::pin(async move {
                    if backend == Backend::Sqlite {
                        conn.execute(SQLITE_SETTINGS).await?;
                    }
                    Ok(())
                })
            })
            .connect_with(options)
            .await?;
        let migrator = match backend {
            Backend::Sqlite => sqlx::migrate!("migrations/sqlite"),
            Backend::Postgres => sqlx::migrate!("migrations/postgres"),
        };
        migrator.run(&pool).await.map_err(|e| match e {
            sqlx::migrate::MigrateError::VersionMissing(found) => DbError::Newer {
                found,
                known: migrator.iter().map(|m| m.version).max().unwrap_or(0),
            },
            other => DbError::Migrate(other),
        })?;
        let writer = match backend {
            Backend::Sqlite => commit::Writer::sqlite(sqlite_file(url)?, &pool),
            Backend::Postgres => commit::Writer::postgres(pool.clone()),
        }
        .map_err(DbError::Thread)?;
        let key_reader = rounds::Rounds::start(pool.clone(), keys::live_keys);
        let review_reader = rounds::Rounds::start(pool.clone(), reviews::stored_rows);
        let db = Db(Arc::new(Inner {
            pool,
            backend,
            url: url.to_owned(),
            writer,
            key_reader,
            review_reader,
        }));
        db.adopt_unaudited().await?;
        Ok(db)
    }

    /// Which database this is.
    pub fn backend(&self) -> Backend {
        self.0.backend
    }

    /// The address it was opened with.
    pub(crate) fn url(&self) -> &str {
        &self.0.url
    }

    /// Writes a consistent copy of this SQLite database to a new file at
    /// `path` (`VACUUM INTO`: one read transaction, writers go on meanwhile).
    pub async fn copy_into(&self, path: &str) -> Result<(), DbError> {
        sqlx::query("VACUUM INTO $1")
            .bind(path)
            .execute(&self.0.pool)
            .await?;
        Ok(())
    }

    /// This instance's pool: its connections, and how many of them are idle.
    pub fn pool_use(&self) -> (u32, usize) {
        (self.0.pool.size(), self.0.pool.num_idle())
    }

    pub(crate) fn pool(&self) -> &AnyPool {
        &self.0.pool
    }

    pub(crate) fn writer(&self) -> &commit::Writer {
        &self.0.writer
    }

    pub(crate) fn key_reader(&self) -> &rounds::Rounds<keys::ApiKey> {
        &self.0.key_reader
    }

    pub(crate) fn review_reader(&self) -> &rounds::Rounds<reviews::StoredRow> {
        &self.0.review_reader
    }
}

/// The PostgreSQL advisory lock every transaction that writes reviews takes
/// first ("cntrsign" in ASCII; any number no other program uses would do).
const WRITE_LOCK: i64 = 0x636e_7472_7369_676e;

/// Begins a transaction that writes reviews: one at a time per database, as
/// SQLite does anyway. On SQLite it takes the write lock at once (`BEGIN
/// IMMEDIATE`, waiting up to the busy timeout): a deferred transaction whose
/// first statement only reads fails at once with "database is locked" when it
/// then writes after another connection committed.
///
/// On PostgreSQL, shared by several instances, it first takes [`WRITE_LOCK`],
/// held until commit. So feed positions are handed out in commit order (the
/// sequence is advanced under the lock): a reader that has seen position N
/// has seen every change before N that will ever commit, and live subscribers
/// never skip a change that commits late. And the rows every write touches
/// (the per-status counts, a review two instances change at once) are only
/// ever locked by the one holder, so two writes cannot deadlock. The cost is
/// that writes from all instances queue for one lock; each instance batches
/// its waiting changes into one transaction (see [`commit`]), so a queue of
/// writers becomes larger batches, not more waits.
pub(crate) async fn begin_write(
    pool: &AnyPool,
    backend: Backend,
) -> Result<sqlx::Transaction<'static, sqlx::Any>, sqlx::Error> {
    match backend {
        Backend::Sqlite => pool.begin_with("BEGIN IMMEDIATE").await,
        Backend::Postgres => {
            let mut tx = pool.begin().await?;
            take_write_lock(&mut tx).await?;
            Ok(tx)
        }
    }
}

/// [`begin_write`] on a connection the caller holds.
pub(crate) async fn begin_write_on(
    conn: &mut sqlx::AnyConnection,
    backend: Backend,
) -> Result<sqlx::Transaction<'_, sqlx::Any>, sqlx::Error> {
    use sqlx::Connection;
    match backend {
        Backend::Sqlite => conn.begin_with("BEGIN IMMEDIATE").await,
        Backend::Postgres => {
            let mut tx = conn.begin().await?;
            take_write_lock(&mut tx).await?;
            Ok(tx)
        }
    }
}

async fn take_write_lock(tx: &mut sqlx::Transaction<'_, sqlx::Any>) -> Result<(), sqlx::Error> {
    sqlx::query("SELECT pg_advisory_xact_lock($1)")
        .bind(WRITE_LOCK)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// What every SQLite connection sets. WAL lets readers run beside the one
/// writer; FULL makes an acknowledged commit survive a crash or power loss;
/// reads go through a 32 MB page cache, and no memory map: SQLite unmaps a
/// reader's map whenever another connection changed the file, and under
/// decisions that was nearly every read (each unmap stops both cores to
/// flush their address translations). The review writer's log is copied
/// back into the file by its checkpointer thread (`sqlite_writer`); other
/// writes copy it inside their commit once it holds 8,000 pages (32 MB)
/// rather than SQLite's 1,000: a page that many changes touch (an index's
/// upper levels, the counts) is copied once for all of them.
/// Temporary files stay in memory: a statement that may fail halfway keeps
/// a statement journal, which otherwise spills to a file on every batch.
/// Foreign keys are checked (sqlx's connections turn them on by default).
pub(crate) const SQLITE_SETTINGS: &str = "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 10000; PRAGMA cache_size = -32000; PRAGMA wal_autocheckpoint = 8000; PRAGMA temp_store = MEMORY; PRAGMA foreign_keys = ON;";

/// The file a `sqlite:` address names.
fn sqlite_file(url: &str) -> Result<std::path::PathBuf, DbError> {
    let options = sqlx::sqlite::SqliteConnectOptions::from_str(url)?;
    Ok(options.get_filename().to_owned())
}

/// Whether a failed transaction may succeed when run again: a serialization
/// failure or deadlock on PostgreSQL, a busy database on SQLite.
pub(crate) fn is_transient(e: &sqlx::Error) -> bool {
    let sqlx::Error::Database(e) = e else {
        return false;
    };
    matches!(
        e.code().as_deref(),
        Some("40001" | "40P01" | "5" | "517" | "6")
    )
}

impl DbError {
    /// Whether what failed may succeed when run again ([`is_transient`]).
    pub(crate) fn is_transient(&self) -> bool {
        match self {
            DbError::Sql(e) => is_transient(e),
            DbError::Sqlite(rusqlite::Error::SqliteFailure(e, _)) => matches!(
                e.code,
                rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
            ),
            _ => false,
        }
    }
}

/// How many times a write that failed for a transient reason is run again.
pub(crate) const RETRIES: usize = 3;

/// SQLite files are created when missing (`mode=rwc`) unless the address says otherwise.
/// What an operator can do about a connection error the driver reports in
/// its own words (empty when there is nothing to add).
fn connect_hint(reason: &str) -> &'static str {
    if reason.contains("server does not support TLS") {
        " (this PostgreSQL offers no TLS and the address asks for it with sslmode=require or stricter: turn on `ssl` in postgresql.conf)"
    } else if reason.contains("UnknownIssuer") {
        " (the server's certificate is not signed by the authority in sslrootcert, or, without sslrootcert, by a public one)"
    } else if reason.contains("not valid for name") {
        " (the server's certificate does not name the host in the address: connect by a name it holds; sslmode=verify-ca checks the name too, as verify-full does)"
    } else if reason.contains("password authentication failed") {
        " (a password with @ : / % or spaces must be percent-encoded in the address, or given as PGPASSWORD)"
    } else if reason.contains("no encryption") {
        " (this PostgreSQL accepts only TLS connections: use sslmode=require, verify-ca or verify-full)"
    } else {
        ""
    }
}

/// A database address fit to print: any password replaced by `***`.
fn without_password(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        _ => url.to_owned(),
    }
}

/// A SQLite database readable by its owner only, whatever the umask: the
/// file made owner-only before SQLite opens it (its WAL and shared-memory
/// files take the database's mode), and an older one's files narrowed.
fn owner_only(url: &str) -> std::io::Result<()> {
    let path = url.trim_start_matches("sqlite:").trim_start_matches("//");
    let path = path.split('?').next().unwrap_or(path);
    if path.is_empty() || path == ":memory:" {
        return Ok(());
    }
    let file = std::path::Path::new(path);
    let mut create = std::fs::OpenOptions::new();
    create.write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut create, 0o600);
    create.open(file)?;
    #[cfg(unix)]
    for suffix in ["", "-wal", "-shm"] {
        use std::os::unix::fs::PermissionsExt;
        let each = std::path::PathBuf::from(format!("{path}{suffix}"));
        if each.exists() {
            std::fs::set_permissions(&each, std::fs::Permissions::from_mode(0o600))?;
        }
    }
    Ok(())
}

fn sqlite_create_mode(url: &str, backend: Backend) -> String {
    if backend == Backend::Sqlite && !url.contains("mode=") {
        let joiner = if url.contains('?') { '&' } else { '?' };
        format!("{url}{joiner}mode=rwc")
    } else {
        url.to_owned()
    }
}

/// A stored time read back; `what` names it in the error when it is damaged.
pub(crate) fn parse_stored_time(
    text: &str,
    what: &str,
) -> Result<chrono::DateTime<chrono::Utc>, DbError> {
    chrono::DateTime::parse_from_rfc3339(text)
        .map(|at| at.to_utc())
        .map_err(|_| DbError::Damaged(format!("{what} `{text}`")))
}

/// Now, as stored: UTC with a fixed width, so text order is time order.
pub fn stored_time(at: chrono::DateTime<chrono::Utc>) -> String {
    at.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

/// Runs `task` on a thread of its own, with a runtime of its own: the
/// writer is the one serial stage of every change, and on the server's
/// runtime each of its waits (PostgreSQL's round trips, the next batch)
/// would end in the queue of tasks woken from other threads, behind the
/// HTTP work (a millisecond a statement under load).
fn spawn_apart(
    name: &str,
    task: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || runtime.block_on(task))?;
    Ok(())
}

/// A statement's values are bound in order, marked either way.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Marks {
    /// `$1`, `$2`…: both databases read them.
    Numbered,
    /// `?`: SQLite only. SQLite finds a numbered value's name by walking a
    /// list, when it parses the statement and again as each value is bound,
    /// so a batch's hundreds of numbered values cost it time quadratic in
    /// their count; an anonymous one it numbers as it goes. In a text of
    /// several statements they go on counting from one statement to the next.
    Anonymous,
}

/// A value a statement binds. A statement's values are listed once, in
/// the order of its placeholders, for both ways of running it: a query of
/// sqlx's ([`Value::bind`]) or SQLite's writer thread (as [`rusqlite::ToSql`]).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Value<'a> {
    /// Text.
    Text(&'a str),
    /// Text or `NULL`.
    MaybeText(Option<&'a str>),
    /// An integer.
    Int(i64),
    /// Bytes.
    Blob(&'a [u8]),
}

impl<'a> Value<'a> {
    /// `query` with this value bound next.
    pub(crate) fn bind(self, query: AnyQuery<'a>) -> AnyQuery<'a> {
        match self {
            Value::Text(text) => query.bind(text),
            Value::MaybeText(text) => query.bind(text),
            Value::Int(n) => query.bind(n),
            Value::Blob(bytes) => query.bind(bytes),
        }
    }
}

impl rusqlite::ToSql for Value<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        match self {
            Value::Text(text) => text.to_sql(),
            Value::MaybeText(text) => text.to_sql(),
            Value::Int(n) => n.to_sql(),
            Value::Blob(bytes) => bytes.to_sql(),
        }
    }
}

/// A query on either database.
pub(crate) type AnyQuery<'q> = sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>;

/// `($1, $2), ($3, $4)` for `rows` rows of `columns` values each, in bind order.
pub(crate) fn placeholders(marks: Marks, rows: usize, columns: usize) -> String {
    (0..rows)
        .map(|r| {
            let row: Vec<String> = (1..=columns)
                .map(|c| placeholder(marks, r * columns + c))
                .collect();
            format!("({})", row.join(", "))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `n`th value bound to a statement whose values are all bound in order.
pub(crate) fn placeholder(marks: Marks, n: usize) -> String {
    match marks {
        Marks::Anonymous => "?".to_owned(),
        Marks::Numbered => format!("${n}"),
    }
}
