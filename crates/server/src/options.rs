//! The command line's option groups that more than one place reads: where
//! the database and signing key are (every command), and how to serve (the
//! `serve` flags, which [`crate::serve::run`] takes as they are parsed).

use crate::webhooks::Webhook;
use crate::{limits, logs, rate};
use clap::Args;
use countersign_domain::wire::WebhookFormat;
use std::net::SocketAddr;
use std::path::PathBuf;

/// `countersign serve`'s flags.
#[derive(Args)]
pub struct ServeOptions {
    #[command(flatten)]
    pub database: DatabaseArgs,
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:8080", env = "COUNTERSIGN_LISTEN")]
    pub listen: SocketAddr,
    /// Another build of the app to serve (trunk's dist/), for development; left out, the app built into this binary (or, in a binary built without it, the API only).
    #[arg(long, value_name = "DIR")]
    pub app_dir: Option<PathBuf>,
    /// A browser origin allowed to call the API (repeatable), e.g. https://review.example.com.
    #[arg(long = "cors-origin", value_name = "ORIGIN")]
    pub cors_origins: Vec<String>,
    /// Largest accepted request body in bytes (larger ones get 413).
    #[arg(long, default_value_t = 2 * 1024 * 1024)]
    pub max_body: usize,
    /// Seed the demo reviews and print a fresh demo reviewer key and agent key.
    #[arg(long)]
    pub demo: bool,
    /// Requests each agent key may send, unless minted with its own
    /// --rate: <count>/s or <count>/min, optionally with a burst size, or none.
    #[arg(long, value_name = "RATE", default_value_t = rate::Rate::AGENT)]
    pub agent_rate: rate::Rate,
    /// The same for reviewer keys.
    #[arg(long, value_name = "RATE", default_value_t = rate::Rate::REVIEWER)]
    pub reviewer_rate: rate::Rate,
    /// An approval policy (TOML): quorums, required roles, vetoes and
    /// separation of duties by tool, risk tier and requester. Checked
    /// strictly: any mistake refuses to start.
    #[arg(long, value_name = "FILE", env = "COUNTERSIGN_POLICY")]
    pub policy: Option<PathBuf>,
    /// Reviewers sign in with their organisation's identity provider
    /// (OpenID Connect): the providers, their groups' roles and the session
    /// settings (TOML, see docs/sign-in.md). Checked strictly: any mistake
    /// refuses to start.
    #[arg(long, value_name = "FILE", env = "COUNTERSIGN_SIGN_IN")]
    pub sign_in: Option<PathBuf>,
    /// Reviewers decide from Slack's buttons: the file holding the Slack
    /// app's Signing Secret, which every click Slack posts to /slack/actions
    /// is checked with (needs --sign-in: a click decides as a signed-in person).
    #[arg(
        long,
        value_name = "FILE",
        env = "COUNTERSIGN_SLACK_SIGNING_SECRET_FILE"
    )]
    pub slack_signing_secret_file: Option<PathBuf>,
    /// Countersign posts each new request in Slack and updates the message
    /// after every decision, expiry and escalation: the file holding the
    /// Slack app's Bot User OAuth Token (xoxb-…).
    #[arg(long, value_name = "FILE", env = "COUNTERSIGN_SLACK_BOT_TOKEN_FILE")]
    pub slack_bot_token_file: Option<PathBuf>,
    /// The Slack channel (its ID, C…) the bot posts requests in, unless
    /// their policy rule names its own (`slack_channel`).
    #[arg(
        long,
        value_name = "ID",
        env = "COUNTERSIGN_SLACK_CHANNEL",
        requires = "slack_bot_token_file"
    )]
    pub slack_channel: Option<String>,
    /// Slack's Web API, which the bot calls (a proxy's address, or a test's).
    #[arg(
        long,
        value_name = "URL",
        default_value = "https://slack.com/api",
        env = "COUNTERSIGN_SLACK_API_URL"
    )]
    pub slack_api_url: String,
    /// Reviewers are told of requests by e-mail, through this SMTP server:
    /// smtp://host:25, smtp://user:password@host:587?tls=required (STARTTLS)
    /// or smtps://host:465 (needs --sign-in: a reviewer decides signed in).
    #[arg(long, value_name = "URL", env = "COUNTERSIGN_SMTP_URL")]
    pub smtp_url: Option<String>,
    /// The sender of Countersign's e-mails, e.g. "Countersign <countersign@example.com>".
    #[arg(
        long,
        value_name = "ADDRESS",
        env = "COUNTERSIGN_MAIL_FROM",
        requires = "smtp_url"
    )]
    pub mail_from: Option<String>,
    /// Who is told by e-mail of requests whose policy rule names nobody (repeatable).
    #[arg(
        long = "mail-to",
        value_name = "ADDRESS",
        env = "COUNTERSIGN_MAIL_TO",
        value_delimiter = ',',
        requires = "smtp_url"
    )]
    pub mail_to: Vec<String>,
    /// An address told of every review created, decided, expired or
    /// escalated, by a signed POST (repeatable).
    #[arg(
        long = "webhook",
        value_name = "URL",
        env = "COUNTERSIGN_WEBHOOK",
        value_delimiter = ','
    )]
    pub webhooks: Vec<String>,
    /// The body every --webhook receives: json, or a Slack incoming-webhook message.
    #[arg(
        long,
        value_enum,
        default_value = "json",
        env = "COUNTERSIGN_WEBHOOK_FORMAT"
    )]
    pub webhook_format: WebhookFormatArg,
    /// The address reviewers open the desk at, for the links webhooks
    /// send (default: the listening address).
    #[arg(long, value_name = "URL", env = "COUNTERSIGN_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// How log lines on standard error are written: text, or one JSON object per line.
    #[arg(
        long,
        value_enum,
        default_value = "text",
        env = "COUNTERSIGN_LOG_FORMAT"
    )]
    pub log_format: logs::LogFormat,
    /// Which log lines to write, as RUST_LOG filters them: a level
    /// (error, warn, info, debug, trace), optionally per module
    /// (`warn,countersign::request=info`).
    #[arg(long, value_name = "FILTER", default_value = "info", env = "RUST_LOG")]
    pub log_filter: String,
    /// Serve Prometheus metrics at /metrics on the listening address.
    #[arg(long, conflicts_with = "metrics_listen")]
    pub metrics: bool,
    /// Serve Prometheus metrics at /metrics on an address of their own instead.
    #[arg(long, value_name = "ADDR", env = "COUNTERSIGN_METRICS_LISTEN")]
    pub metrics_listen: Option<SocketAddr>,
}

impl ServeOptions {
    /// Each kind of key's default request rate.
    pub fn rates(&self) -> limits::Defaults {
        limits::Defaults {
            agent: self.agent_rate,
            reviewer: self.reviewer_rate,
        }
    }

    /// The endpoints told of every change, each in the format asked.
    pub fn webhooks(&self) -> Vec<Webhook> {
        let format = match self.webhook_format {
            WebhookFormatArg::Json => WebhookFormat::Json,
            WebhookFormatArg::Slack => WebhookFormat::Slack,
        };
        let urls = self.webhooks.iter().cloned();
        urls.map(|url| Webhook { url, format }).collect()
    }

    /// Where `/metrics` is served, if anywhere.
    pub fn metrics_at(&self) -> MetricsAt {
        match (self.metrics, self.metrics_listen) {
            (_, Some(at)) => MetricsAt::Own(at),
            (true, None) => MetricsAt::Listen,
            (false, None) => MetricsAt::Off,
        }
    }
}

/// Where `GET /metrics` is served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricsAt {
    /// Nowhere: nothing is recorded and `/metrics` answers 404.
    Off,
    /// On the server's own address, beside the API.
    Listen,
    /// On an address of its own (e.g. one only the monitoring network reaches).
    Own(SocketAddr),
}

/// `--webhook-format`.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum WebhookFormatArg {
    /// The event as JSON.
    Json,
    /// A Slack incoming-webhook message.
    Slack,
}

/// A one-shot command found no database where it looked: only `serve`
/// creates one.
#[derive(Debug, thiserror::Error)]
#[error(
    "no Countersign database at {} (from {from}); only `countersign serve` creates one. \
     Run this command against the service's data: --data (or COUNTERSIGN_DATA) as the service has it \
     (the systemd unit: /var/lib/countersign), or --database for PostgreSQL",
    file.display()
)]
pub struct NoDatabase {
    /// The database file looked for.
    file: PathBuf,
    /// The setting that named it.
    from: String,
}

/// Where the database and the signing key are: every command's.
#[derive(Args)]
pub struct DatabaseArgs {
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
    pub fn signing_key(&self) -> PathBuf {
        self.signing_key
            .clone()
            .unwrap_or_else(|| self.data.join("signing-key.pem"))
    }

    /// The database of a one-shot command: one that exists already. Only
    /// `serve` creates a database; finding none, this says where it looked.
    pub fn existing(&self) -> Result<String, NoDatabase> {
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
        Err(NoDatabase { file, from })
    }

    /// Whether the database is a SQLite file (the default), whose writer
    /// is a thread of the server's own.
    pub fn is_sqlite(&self) -> bool {
        self.database
            .as_deref()
            .is_none_or(|url| url.starts_with("sqlite:"))
    }

    pub fn address(&self) -> Result<String, String> {
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
