//! The `countersign` command: its flags and subcommands (clap derives on the
//! library's own types wherever one exists), and the one-shot commands that
//! run against a database or files. `main.rs` only calls [`main`].
//!
//! - [`audit`]: `audit verify|export`, the tamper-evident chain.
//! - [`backup`]: `backup FILE`, a consistent copy of a SQLite database and its key.
//! - [`keys`]: `keys add|list|revoke|signing-key`.
//! - [`validate`]: `validate FILE...`, every problem of each MPLP file.
//! - [`webhooks`]: `webhooks`, each webhook's secret and deliveries.

pub mod audit;
pub mod backup;
pub mod keys;
pub mod validate;
pub mod webhooks;

use crate::options::{DatabaseArgs, ServeOptions};
use crate::{logs, serve, signing};
use clap::{Parser, Subcommand};
use countersign_agent::{commands, hook, mcp_gate, receipt, Connection};
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
    Serve(ServeOptions),
    /// Copy the SQLite database, consistently and while the server runs, and
    /// its signing key beside it (FILE.signing-key.pem). PostgreSQL: pg_dump.
    Backup {
        #[command(flatten)]
        database: DatabaseArgs,
        /// The new file to write (never overwritten).
        #[arg(value_name = "FILE")]
        file: PathBuf,
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

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))
}

fn run_audit(database: &DatabaseArgs, command: AuditCli) -> ExitCode {
    let prepared = database
        .existing()
        .and_then(|address| Ok((address, runtime()?)));
    let (address, runtime) = match prepared {
        Ok(ready) => ready,
        Err(e) => return finish(Err(e)),
    };
    match command {
        AuditCli::Verify => runtime.block_on(audit::verify(&address, &mut std::io::stdout())),
        AuditCli::Export { output } => {
            let signer = match signing::Signer::load(&database.signing_key()) {
                Ok(signer) => signer,
                Err(e) => return finish(Err(e.to_string())),
            };
            match output {
                None => runtime.block_on(audit::export(&address, &signer, &mut std::io::stdout())),
                Some(path) => match std::fs::File::create(&path) {
                    Ok(file) => {
                        let mut out = std::io::BufWriter::new(file);
                        runtime.block_on(audit::export(&address, &signer, &mut out))
                    }
                    Err(e) => finish(Err(format!("cannot write {}: {e}", path.display()))),
                },
            }
        }
    }
}

fn finish(result: Result<(), String>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("countersign: {e}");
            ExitCode::from(2)
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
            return finish(Err(e));
        }
    }
    match cli.command {
        Command::Validate { format, files } => {
            let stdout = std::io::stdout();
            validate::run(&files, format, &mut stdout.lock())
        }
        Command::Serve(options) => finish((|| {
            logs::init(options.log_format, &options.log_filter)?;
            runtime()?
                .block_on(serve::run(options))
                .map_err(|e| e.to_string())
        })()),
        Command::Verify { file, public_key } => receipt::verify_file(&file, &public_key),
        Command::Audit { database, command } => run_audit(&database, command),
        Command::Backup { database, file } => finish((|| {
            let address = database.existing()?;
            let key = database.signing_key();
            runtime()?.block_on(backup::run(&address, &key, &file, &mut std::io::stdout()))
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
