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

use crate::webhooks::Webhook;
use crate::{limits, logs, rate, serve, signing};
use clap::{Args, Parser, Subcommand};
use countersign_agent::{commands, hook, mcp_gate, receipt, Connection};
use countersign_domain::wire::WebhookFormat;
use std::net::SocketAddr;
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
    Serve {
        #[command(flatten)]
        database: DatabaseArgs,
        /// Address to listen on (port 0 picks a free port).
        #[arg(long, default_value = "127.0.0.1:8080", env = "COUNTERSIGN_LISTEN")]
        listen: SocketAddr,
        /// Another build of the app to serve (trunk's dist/), for development; left out, the app built into this binary (or, in a binary built without it, the API only).
        #[arg(long, value_name = "DIR")]
        app_dir: Option<PathBuf>,
        /// A browser origin allowed to call the API (repeatable), e.g. https://review.example.com.
        #[arg(long = "cors-origin", value_name = "ORIGIN")]
        cors_origins: Vec<String>,
        /// Largest accepted request body in bytes (larger ones get 413).
        #[arg(long, default_value_t = 2 * 1024 * 1024)]
        max_body: usize,
        /// Seed the demo reviews and print a fresh demo reviewer key and agent key.
        #[arg(long)]
        demo: bool,
        /// Requests each agent key may send, unless minted with its own
        /// --rate: <count>/s or <count>/min, optionally with a burst size, or none.
        #[arg(long, value_name = "RATE", default_value_t = rate::Rate::AGENT)]
        agent_rate: rate::Rate,
        /// The same for reviewer keys.
        #[arg(long, value_name = "RATE", default_value_t = rate::Rate::REVIEWER)]
        reviewer_rate: rate::Rate,
        /// An approval policy (TOML): quorums, required roles, vetoes and
        /// separation of duties by tool, risk tier and requester. Checked
        /// strictly: any mistake refuses to start.
        #[arg(long, value_name = "FILE", env = "COUNTERSIGN_POLICY")]
        policy: Option<PathBuf>,
        /// An address told of every review created, decided, expired or
        /// escalated, by a signed POST (repeatable).
        #[arg(
            long = "webhook",
            value_name = "URL",
            env = "COUNTERSIGN_WEBHOOK",
            value_delimiter = ','
        )]
        webhooks: Vec<String>,
        /// The body every --webhook receives: json, or a Slack incoming-webhook message.
        #[arg(
            long,
            value_enum,
            default_value = "json",
            env = "COUNTERSIGN_WEBHOOK_FORMAT"
        )]
        webhook_format: WebhookFormatArg,
        /// The address reviewers open the desk at, for the links webhooks
        /// send (default: the listening address).
        #[arg(long, value_name = "URL", env = "COUNTERSIGN_PUBLIC_URL")]
        public_url: Option<String>,
        /// How log lines on standard error are written: text, or one JSON object per line.
        #[arg(
            long,
            value_enum,
            default_value = "text",
            env = "COUNTERSIGN_LOG_FORMAT"
        )]
        log_format: logs::LogFormat,
        /// Which log lines to write, as RUST_LOG filters them: a level
        /// (error, warn, info, debug, trace), optionally per module
        /// (`warn,countersign::request=info`).
        #[arg(long, value_name = "FILTER", default_value = "info", env = "RUST_LOG")]
        log_filter: String,
        /// Serve Prometheus metrics at /metrics on the listening address.
        #[arg(long, conflicts_with = "metrics_listen")]
        metrics: bool,
        /// Serve Prometheus metrics at /metrics on an address of their own instead.
        #[arg(long, value_name = "ADDR", env = "COUNTERSIGN_METRICS_LISTEN")]
        metrics_listen: Option<SocketAddr>,
    },
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

/// `--webhook-format`.
#[derive(Clone, Copy, clap::ValueEnum)]
enum WebhookFormatArg {
    /// The event as JSON.
    Json,
    /// A Slack incoming-webhook message.
    Slack,
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

#[derive(Args)]
struct DatabaseArgs {
    /// Database address: sqlite://FILE or postgres://USER:PASSWORD@HOST/DB?sslmode=verify-full (PG* variables fill in what it leaves out). Default: a SQLite file in --data.
    #[arg(long, env = "COUNTERSIGN_DATABASE")]
    database: Option<String>,
    /// Folder for the default SQLite database and signing key (`serve` creates it when missing; other commands need it there).
    #[arg(long, default_value = "data", env = "COUNTERSIGN_DATA")]
    data: PathBuf,
    /// The Ed25519 key receipts are signed with, PKCS#8 PEM, made at first
    /// start when missing. Default: signing-key.pem in --data. Instances
    /// sharing one database should share this file.
    #[arg(long, value_name = "FILE", env = "COUNTERSIGN_SIGNING_KEY")]
    signing_key: Option<PathBuf>,
}

impl DatabaseArgs {
    fn signing_key(&self) -> PathBuf {
        self.signing_key
            .clone()
            .unwrap_or_else(|| self.data.join("signing-key.pem"))
    }

    /// The database of a one-shot command: one that exists already. Only
    /// `serve` creates a database; finding none, this says where it looked.
    fn existing(&self) -> Result<String, String> {
        let file = match &self.database {
            Some(url) => match url.strip_prefix("sqlite://") {
                Some(file) => PathBuf::from(file.split('?').next().unwrap_or(file)),
                // A server database: connecting says whether it is there.
                None => return Ok(url.clone()),
            },
            None => self.data.join("countersign.db"),
        };
        if file.is_file() {
            return Ok(format!("sqlite://{}", file.display()));
        }
        let from = if self.database.is_some() {
            "--database (COUNTERSIGN_DATABASE)".to_owned()
        } else if std::env::var_os("COUNTERSIGN_DATA").is_some() {
            format!("COUNTERSIGN_DATA={}", self.data.display())
        } else {
            format!("--data {}", self.data.display())
        };
        Err(format!(
            "no Countersign database at {} (from {from}); only `countersign serve` creates one. \
             Run this command against the service's data: --data (or COUNTERSIGN_DATA) as the service has it \
             (the systemd unit: /var/lib/countersign), or --database for PostgreSQL",
            file.display()
        ))
    }

    fn address(&self) -> Result<String, String> {
        match &self.database {
            Some(url) => Ok(url.clone()),
            None => {
                // Owner-only, whatever the umask: it holds every review.
                let mut folder = std::fs::DirBuilder::new();
                folder.recursive(true);
                #[cfg(unix)]
                std::os::unix::fs::DirBuilderExt::mode(&mut folder, 0o700);
                folder.create(&self.data).map_err(|e| {
                    format!("cannot create the data folder {}: {e}", self.data.display())
                })?;
                Ok(format!(
                    "sqlite://{}",
                    self.data.join("countersign.db").display()
                ))
            }
        }
    }
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
        Command::Serve {
            database,
            listen,
            app_dir,
            cors_origins,
            max_body,
            demo,
            agent_rate,
            reviewer_rate,
            policy,
            webhooks,
            webhook_format,
            public_url,
            log_format,
            log_filter,
            metrics,
            metrics_listen,
        } => finish((|| {
            logs::init(log_format, &log_filter)?;
            let format = match webhook_format {
                WebhookFormatArg::Json => WebhookFormat::Json,
                WebhookFormatArg::Slack => WebhookFormat::Slack,
            };
            let options = serve::ServeOptions {
                listen,
                database: database.address()?,
                app_dir,
                cors_origins,
                max_body,
                demo,
                rates: limits::Defaults {
                    agent: agent_rate,
                    reviewer: reviewer_rate,
                },
                signing_key: database.signing_key(),
                policy,
                webhooks: webhooks
                    .into_iter()
                    .map(|url| Webhook { url, format })
                    .collect(),
                public_url,
                metrics: match (metrics, metrics_listen) {
                    (_, Some(at)) => serve::MetricsAt::Own(at),
                    (true, None) => serve::MetricsAt::Listen,
                    (false, None) => serve::MetricsAt::Off,
                },
            };
            runtime()?.block_on(serve::run(options))
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
