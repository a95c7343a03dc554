//! `countersign`: the Countersign server and its command-line tools.

use clap::{Args, Parser, Subcommand};
use countersign_domain::wire::WebhookFormat;
use countersign_server::webhooks::{self, Webhook};
use countersign_server::{
    agent, audit, db, hook, keys, logs, mcp_gate, serve, signing, validate, Format,
};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

// Most of a request's work is small allocations (JSON, SQL rows); mimalloc
// does them with less locking than the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
        /// The built app to serve (trunk's dist/); left out, only the API is served.
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
        #[arg(long, value_name = "RATE", default_value_t = countersign_server::limits::Rate::AGENT)]
        agent_rate: countersign_server::limits::Rate,
        /// The same for reviewer keys.
        #[arg(long, value_name = "RATE", default_value_t = countersign_server::limits::Rate::REVIEWER)]
        reviewer_rate: countersign_server::limits::Rate,
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
        command: KeysCli,
    },
    /// Act as an agent: submit a plan for approval, read or wait for an outcome.
    Agent {
        #[command(flatten)]
        connection: AgentConnection,
        #[command(subcommand)]
        command: AgentCli,
    },
    /// Hooks that make an agent ask through Countersign before it acts.
    Hook {
        #[command(flatten)]
        connection: AgentConnection,
        #[command(subcommand)]
        command: HookCli,
    },
    /// A stdio proxy between an MCP client and an MCP server: calls of the
    /// gated tools wait for a reviewer; everything else passes untouched.
    McpGate {
        #[command(flatten)]
        connection: AgentConnection,
        /// A tool to gate, `NAME[=TIER]` (`*` stands for any text; tier R2
        /// unless given). Repeatable.
        #[arg(long = "gate")]
        gated: Vec<mcp_gate::Gated>,
        /// How long a call waits for a decision, in seconds.
        #[arg(long, default_value_t = 300)]
        timeout: u64,
        /// The MCP server to start, after `--`.
        #[arg(last = true, required = true)]
        command: Vec<String>,
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

#[derive(Subcommand)]
enum HookCli {
    /// Claude Code's PreToolUse command hook: reads the call on stdin, asks
    /// a reviewer, prints allow (with any edit) or deny with the reason.
    ClaudeCode {
        /// How long to wait for a decision, in seconds (keep it under the
        /// hook's `timeout` in Claude Code's settings).
        #[arg(long, default_value_t = 590)]
        timeout: u64,
        /// The answer when no decision can be had (timeout, server unreachable).
        #[arg(long, value_enum, default_value = "deny")]
        fallback: hook::Fallback,
        /// `TOOL=TIER` (`R0`–`R4`, or `none`: not gated); `TOOL` may end in
        /// `*`. Checked before the defaults. Repeatable.
        #[arg(long = "risk")]
        rules: Vec<hook::Rule>,
    },
}

/// Where the server is, and the agent key to use with it.
#[derive(Args)]
struct AgentConnection {
    /// The server's address.
    #[arg(long, env = "COUNTERSIGN_URL", default_value = "http://127.0.0.1:8080")]
    server: String,
    /// An agent key.
    #[arg(long, env = "COUNTERSIGN_AGENT_KEY", hide_env_values = true)]
    key: String,
    /// The server's public key (base64, or a file holding it): each
    /// approval's signed receipt is then checked offline before its token is
    /// redeemed, and a call whose receipt does not verify does not run.
    #[arg(long, env = "COUNTERSIGN_PUBLIC_KEY")]
    public_key: Option<String>,
}

impl From<AgentConnection> for agent::Connection {
    fn from(c: AgentConnection) -> Self {
        agent::Connection {
            server: c.server,
            key: c.key,
            public_key: c.public_key,
        }
    }
}

#[derive(Args)]
struct DatabaseArgs {
    /// Database address: sqlite://FILE or postgres://USER:PASSWORD@HOST/DB?sslmode=verify-full (PG* variables fill in what it leaves out). Default: a SQLite file in --data.
    #[arg(long, env = "COUNTERSIGN_DATABASE")]
    database: Option<String>,
    /// Folder for the default SQLite database and signing key (created when missing).
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

    fn address(&self) -> Result<String, String> {
        match &self.database {
            Some(url) => Ok(url.clone()),
            None => {
                std::fs::create_dir_all(&self.data).map_err(|e| {
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

#[derive(Subcommand)]
enum KeysCli {
    /// Mint a key; its secret is printed once.
    Add {
        /// `agent` or `reviewer`.
        #[arg(long, value_enum)]
        kind: db::keys::KeyKind,
        /// A `decided_by_role` a reviewer key may sign as (repeatable).
        #[arg(long = "role")]
        roles: Vec<String>,
        /// Who or what the key is for.
        #[arg(long, default_value = "")]
        label: String,
        /// Its own request rate instead of its kind's default: <count>/s or
        /// <count>/min, optionally with a burst size (20/s,200), or none.
        #[arg(long, value_name = "RATE")]
        rate: Option<countersign_server::limits::Rate>,
        /// The person or team the key belongs to: policies keep an agent's
        /// owner from approving its own requests.
        #[arg(long)]
        owner: Option<String>,
    },
    /// List the keys (never their secrets).
    List,
    /// Revoke a key by its id.
    Revoke {
        /// The key id (`key_...`).
        id: String,
    },
    /// Print the public key that receipts are signed with (base64), making
    /// the signing key when missing.
    SigningKey,
}

#[derive(Subcommand)]
enum AgentCli {
    /// Submit a plan (or a full review envelope) for approval.
    Submit {
        /// An MPLP Plan, or `{"confirm": ..., "target": {"plan": ...}}`.
        file: PathBuf,
        /// The agent role asking (`requested_by_role`).
        #[arg(long, default_value = "agent")]
        role: String,
        /// Why approval is needed (default: from the plan's title).
        #[arg(long)]
        reason: Option<String>,
        /// Wait for a decision (up to --timeout).
        #[arg(long)]
        wait: bool,
        /// How long to wait, in seconds.
        #[arg(long, default_value_t = 600)]
        timeout: u64,
    },
    /// Ask before running one tool call (a JSON file with the request:
    /// `toolCall`, `sessionId`, `runId`, `humanSummary`, `riskTier`, ...).
    /// Prints the outcome; an approval prints the token and the approved call.
    Request {
        /// The tool-call request, as `POST /api/v1/tool-calls` takes it.
        file: PathBuf,
        /// The agent role asking, when the file does not say (`requestedByRole`).
        #[arg(long, default_value = "agent")]
        role: String,
        /// Wait for a decision (up to --timeout).
        #[arg(long)]
        wait: bool,
        /// How long to wait, in seconds.
        #[arg(long, default_value_t = 600)]
        timeout: u64,
    },
    /// Redeem an approval token right before running the call: exit 0 when
    /// the call may run, 1 (naming the failed check) when it may not.
    Redeem {
        /// The confirm_id of the tool-call review.
        id: String,
        /// The token id from the approval.
        #[arg(long)]
        token: String,
        /// The call about to run, `{"name": ..., "args": {...}}` (a file).
        #[arg(long)]
        call: PathBuf,
        /// This device's id, when the token is bound to one.
        #[arg(long)]
        device: Option<String>,
    },
    /// Print a review's outcome.
    Status {
        /// The confirm_id.
        id: String,
        /// Wait for a decision (up to --timeout).
        #[arg(long)]
        wait: bool,
        /// How long to wait, in seconds.
        #[arg(long, default_value_t = 600)]
        timeout: u64,
    },
    /// Re-open a rejected review, optionally with a revised plan.
    Resubmit {
        /// The confirm_id.
        id: String,
        /// The requester's role.
        #[arg(long, default_value = "agent")]
        role: String,
        /// The revised plan (same plan_id).
        #[arg(long)]
        plan: Option<PathBuf>,
        /// A new reason.
        #[arg(long)]
        reason: Option<String>,
        /// Wait for a decision (up to --timeout).
        #[arg(long)]
        wait: bool,
        /// How long to wait, in seconds.
        #[arg(long, default_value_t = 600)]
        timeout: u64,
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
        .address()
        .and_then(|address| Ok((address, runtime()?)));
    let (address, runtime) = match prepared {
        Ok(ready) => ready,
        Err(e) => return finish(Err(e)),
    };
    match command {
        AuditCli::Verify => runtime.block_on(audit::verify(&address, &mut std::io::stdout())),
        AuditCli::Export { output } => {
            let signer = match signing::Signer::load_or_create(&database.signing_key()) {
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

fn main() -> ExitCode {
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
    let wait = |wait: bool, timeout: u64| wait.then(|| Duration::from_secs(timeout));
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
                rates: countersign_server::limits::Defaults {
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
        Command::Verify { file, public_key } => signing::verify_file(&file, &public_key),
        Command::Audit { database, command } => run_audit(&database, command),
        Command::Backup { database, file } => finish((|| {
            let address = database.address()?;
            let key = database.signing_key();
            runtime()?.block_on(countersign_server::backup::run(
                &address,
                &key,
                &file,
                &mut std::io::stdout(),
            ))
        })()),
        Command::Webhooks { database } => finish((|| {
            let address = database.address()?;
            runtime()?.block_on(webhooks::print(&address, &mut std::io::stdout()))
        })()),
        Command::Keys { database, command } => finish((|| {
            let command = match command {
                KeysCli::Add {
                    kind,
                    roles,
                    label,
                    rate,
                    owner,
                } => keys::KeysCommand::Add {
                    kind,
                    roles,
                    label,
                    rate,
                    owner,
                },
                KeysCli::List => keys::KeysCommand::List,
                KeysCli::Revoke { id } => keys::KeysCommand::Revoke { id },
                KeysCli::SigningKey => {
                    let path = database.signing_key();
                    let signer =
                        signing::Signer::load_or_create(&path).map_err(|e| e.to_string())?;
                    println!("{}", signer.public_key());
                    eprintln!("(the public half of {})", path.display());
                    return Ok(());
                }
            };
            let address = database.address()?;
            runtime()?.block_on(keys::run(&address, command, &mut std::io::stdout()))
        })()),
        Command::McpGate {
            connection,
            gated,
            timeout,
            command,
        } => mcp_gate::run(mcp_gate::Options {
            connection: connection.into(),
            gated,
            timeout: Duration::from_secs(timeout),
            command,
        }),
        Command::Hook {
            connection,
            command:
                HookCli::ClaudeCode {
                    timeout,
                    fallback,
                    rules,
                },
        } => hook::claude_code(&hook::Options {
            connection: connection.into(),
            timeout: Duration::from_secs(timeout),
            fallback,
            rules,
        }),
        Command::Agent {
            connection,
            command,
        } => {
            let connection = connection.into();
            match command {
                AgentCli::Submit {
                    file,
                    role,
                    reason,
                    wait: w,
                    timeout,
                } => agent::submit(
                    &connection,
                    &file,
                    &role,
                    reason.as_deref(),
                    wait(w, timeout),
                ),
                AgentCli::Status {
                    id,
                    wait: w,
                    timeout,
                } => agent::status(&connection, &id, wait(w, timeout)),
                AgentCli::Request {
                    file,
                    role,
                    wait: w,
                    timeout,
                } => agent::request(&connection, &file, &role, wait(w, timeout)),
                AgentCli::Redeem {
                    id,
                    token,
                    call,
                    device,
                } => agent::redeem(&connection, &id, &token, &call, device.as_deref()),
                AgentCli::Resubmit {
                    id,
                    role,
                    plan,
                    reason,
                    wait: w,
                    timeout,
                } => agent::resubmit(
                    &connection,
                    &id,
                    &role,
                    plan.as_deref(),
                    reason.as_deref(),
                    wait(w, timeout),
                ),
            }
        }
    }
}
