//! The `countersign` command: its flags and subcommands (clap derives on the
//! library's own types wherever one exists), and the one-shot commands that
//! run against a database or files. `main.rs` only calls [`main`].
//!
//! - [`audit`]: `audit verify|export`, the tamper-evident chain.
//! - [`backup`]: `backup FILE`, a consistent copy of a SQLite database and its key.
//! - [`keys`]: `keys add|list|revoke|signing-key`.
//! - [`sessions`]: `sessions list|revoke`, signed-in reviewers' sessions.
//! - [`validate`]: `validate FILE...`, every problem of each MPLP file.
//! - [`webhooks`]: `webhooks`, each webhook's secret and deliveries.

pub mod audit;
pub mod backup;
pub mod keys;
pub mod sessions;
pub mod validate;
pub mod webhooks;

use crate::options::{DatabaseArgs, NoDatabase, ServeOptions};
use crate::serve::ServeError;
use crate::store::DbError;
use crate::{logs, serve, signing};
use clap::{Parser, Subcommand};
use countersign_agent::{commands, hook, mcp_gate, receipt, Connection};
use countersign_domain::toolcall::CanonicalError;
use std::path::PathBuf;
use std::process::ExitCode;
use validate::Format;

/// Countersign: a human approval desk for what AI agents are about to do.
#[derive(Parser)]
#[command(name = "countersign", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check MPLP v1.0 JSON files (Confirm, Plan, Context, Trace, or an array of
    /// them) and print every problem. Exit code: 0 all valid, 1 some invalid,
    /// 2 usage or I/O error (unreadable file, not JSON).
    Validate {
        /// How to print: `text` for people, `json` for one JSON object per file per line.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// The files to check.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
    },
    /// Check a signed receipt offline (a receipt, or an outcome or answer
    /// that carries one). Exit code: 0 valid, 1 not valid, 2 usage or I/O error.
    Verify {
        /// The receipt's JSON file.
        #[arg(value_name = "RECEIPT")]
        file: PathBuf,
        /// The server's public key: the base64 text `countersign keys
        /// signing-key` prints, or a file holding it (or a PEM public key).
        #[arg(long, env = "COUNTERSIGN_PUBLIC_KEY")]
        public_key: String,
    },
    /// The tamper-evident audit chain of every change.
    Audit {
        #[command(flatten)]
        database: DatabaseArgs,
        #[command(subcommand)]
        command: AuditCli,
    },
    /// Serve the HTTP API (and the built app) on SQLite or PostgreSQL.
    Serve(Box<ServeOptions>),
    /// Copy the SQLite database, consistently and while the server runs, and
    /// its signing key beside it (FILE.signing-key.pem). PostgreSQL: pg_dump.
    Backup {
        #[command(flatten)]
        database: DatabaseArgs,
        /// The new file to write (never overwritten).
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
    /// List or end signed-in reviewers' sessions (serve --sign-in).
    Sessions {
        #[command(flatten)]
        database: DatabaseArgs,
        #[command(subcommand)]
        command: sessions::SessionsCommand,
    },
    /// Show each webhook's signing secret and how its deliveries stand.
    Webhooks {
        #[command(flatten)]
        database: DatabaseArgs,
    },
    /// Manage API keys (agent keys submit reviews; reviewer keys decide them).
    Keys {
        #[command(flatten)]
        database: DatabaseArgs,
        #[command(subcommand)]
        command: keys::KeysCommand,
    },
    /// Act as an agent: submit a plan for approval, read or wait for an outcome.
    Agent {
        #[command(flatten)]
        connection: Connection,
        #[command(subcommand)]
        command: commands::Command,
    },
    /// Hooks that make an agent ask through Countersign before it acts.
    Hook {
        #[command(flatten)]
        connection: Connection,
        #[command(subcommand)]
        command: hook::Command,
    },
    /// A stdio proxy between an MCP client and an MCP server: calls of the
    /// gated tools wait for a reviewer; everything else passes untouched.
    McpGate {
        #[command(flatten)]
        connection: Connection,
        #[command(flatten)]
        options: mcp_gate::Options,
    },
}

#[derive(Subcommand)]
enum AuditCli {
    /// Walk the chain and name the first entry that does not follow, then
    /// check every stored review and grant against its last entry. Exit
    /// code: 0 intact, 1 broken, 2 the database cannot be read.
    Verify,
    /// Write the chain as NDJSON, ending with a checkpoint of its head
    /// signed with the server's key (refused while the chain is broken).
    Export {
        /// Where to write (default: standard output).
        #[arg(long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

/// Why a command stopped; said as `countersign: …` on stderr.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// What was asked cannot be done; the message says why and what to do.
    #[error("{0}")]
    Refused(String),
    /// The command did part of its work; the message says what is left to
    /// do by hand.
    #[error("{0}")]
    Incomplete(String),
    /// Only `serve` creates a database, and there is none where the command looked.
    #[error(transparent)]
    NoDatabase(#[from] NoDatabase),
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbError),
    /// The signing key could not be read.
    #[error(transparent)]
    SigningKey(#[from] signing::KeyFileError),
    /// Something to sign has no canonical form.
    #[error("cannot sign: {0}")]
    Sign(#[from] CanonicalError),
    /// A stored value does not read (where, and why).
    #[error("cannot read {0}")]
    Unreadable(String),
    /// The audit chain is broken, so it is not exported.
    #[error("not exported: the audit chain is broken: {0}")]
    ChainBroken(String),
    /// The output could not be written.
    #[error("cannot write the output: {0}")]
    Output(#[from] std::io::Error),
    /// The output file could not be created.
    #[error("cannot write {path}: {source}")]
    Create {
        /// The file.
        path: PathBuf,
        /// Why not.
        source: std::io::Error,
    },
    /// The async runtime could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    /// The log could not be set up.
    #[error(transparent)]
    Log(#[from] logs::LogError),
    /// The server did not start, or stopped on an error.
    #[error(transparent)]
    Serve(#[from] ServeError),
}

impl CommandError {
    /// The exit code: 1 for a broken audit chain (what was checked failed),
    /// 2 for everything that stopped the command itself.
    fn exit_code(&self) -> u8 {
        match self {
            CommandError::ChainBroken(_) => 1,
            _ => 2,
        }
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, CommandError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(CommandError::Runtime)
}

/// The runtime of `countersign serve`. On SQLite the requests run on one
/// core fewer than the machine has (at least one): the writer, the one
/// serial stage of every change, is a thread of its own, and behind as many
/// busy workers as cores it waited for a core before every batch.
fn serve_runtime(sqlite: bool) -> Result<tokio::runtime::Runtime, CommandError> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let (true, Ok(cores)) = (sqlite, std::thread::available_parallelism()) {
        builder.worker_threads(cores.get().saturating_sub(1).max(1));
    }
    builder.enable_all().build().map_err(CommandError::Runtime)
}

fn run_audit(database: &DatabaseArgs, command: AuditCli) -> ExitCode {
    let prepared = (|| Ok::<_, CommandError>((database.existing()?, runtime()?)))();
    let (address, runtime) = match prepared {
        Ok(ready) => ready,
        Err(e) => return finish(Err(e)),
    };
    match command {
        AuditCli::Verify => runtime.block_on(audit::verify(&address, &mut std::io::stdout())),
        AuditCli::Export { output } => finish((|| {
            let signer = signing::Signer::load(&database.signing_key())?;
            match output {
                None => runtime.block_on(audit::export(&address, &signer, &mut std::io::stdout())),
                Some(path) => {
                    let file = std::fs::File::create(&path)
                        .map_err(|source| CommandError::Create { path, source })?;
                    let mut out = std::io::BufWriter::new(file);
                    runtime.block_on(audit::export(&address, &signer, &mut out))
                }
            }
        })()),
    }
}

fn finish(result: Result<(), CommandError>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("countersign: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// Parses the command line and runs the command; the exit code is the command's.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // Help and version are successes; every other parse failure is a usage error.
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    if !matches!(cli.command, Command::Serve { .. }) {
        // The other commands talk to people on stderr themselves; the log
        // only adds what goes wrong underneath (RUST_LOG asks for more).
        let filter = std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".to_owned());
        if let Err(e) = logs::init(logs::LogFormat::Text, &filter) {
            return finish(Err(e.into()));
        }
    }
    match cli.command {
        Command::Validate { format, files } => {
            let stdout = std::io::stdout();
            validate::run(&files, format, &mut stdout.lock())
        }
        Command::Serve(options) => finish((|| {
            logs::init(options.log_format, &options.log_filter)?;
            let sqlite = options.database.is_sqlite();
            Ok(serve_runtime(sqlite)?.block_on(serve::run(*options))?)
        })()),
        Command::Verify { file, public_key } => receipt::verify_file(&file, &public_key),
        Command::Audit { database, command } => run_audit(&database, command),
        Command::Backup { database, file } => finish((|| {
            let address = database.existing()?;
            let key = database.signing_key();
            runtime()?.block_on(backup::run(&address, &key, &file, &mut std::io::stdout()))
        })()),
        Command::Sessions { database, command } => finish((|| {
            let address = database.existing()?;
            runtime()?.block_on(sessions::run(&address, command, &mut std::io::stdout()))
        })()),
        Command::Webhooks { database } => finish((|| {
            let address = database.existing()?;
            runtime()?.block_on(webhooks::print(&address, &mut std::io::stdout()))
        })()),
        Command::Keys { database, command } => finish((|| {
            // The signing key is a file of its own: printing it needs no database.
            let address = match command {
                keys::KeysCommand::SigningKey => String::new(),
                _ => database.existing()?,
            };
            let signing_key = database.signing_key();
            runtime()?.block_on(keys::run(
                &address,
                &signing_key,
                command,
                &mut std::io::stdout(),
            ))
        })()),
        Command::McpGate {
            connection,
            options,
        } => mcp_gate::run(connection, options),
        Command::Hook {
            connection,
            command,
        } => command.run(&connection),
        Command::Agent {
            connection,
            command,
        } => command.run(&connection),
    }
}
