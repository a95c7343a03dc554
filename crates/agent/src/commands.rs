//! `countersign agent`: the simplest real client of the API, as an agent uses
//! it: submit a plan for approval and wait for the outcome, read an outcome,
//! resubmit after a rejection; ask before a tool call and redeem its token.

use crate::client::{call, outcome_of, print_error, wait_for, Connection};
use countersign_domain::toolcall::ToolCall;
use countersign_domain::wire::{Outcome, Verdict};
use serde::Deserialize;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// `countersign agent ...`: what an agent does through the API.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
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
        #[command(flatten)]
        wait: Wait,
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
        #[command(flatten)]
        wait: Wait,
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
        #[command(flatten)]
        wait: Wait,
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
        #[command(flatten)]
        wait: Wait,
    },
}

/// `--wait [--timeout SECONDS]`.
#[derive(Debug, clap::Args)]
pub struct Wait {
    /// Wait for a decision (up to --timeout).
    #[arg(long = "wait")]
    enabled: bool,
    /// How long to wait, in seconds.
    #[arg(long, default_value_t = 600)]
    timeout: u64,
}

impl Wait {
    fn limit(&self) -> Option<Duration> {
        self.enabled.then(|| Duration::from_secs(self.timeout))
    }
}

impl Command {
    /// Runs the command; the exit code says what came of it.
    pub fn run(self, connection: &Connection) -> ExitCode {
        match self {
            Command::Submit {
                file,
                role,
                reason,
                wait,
            } => submit(connection, &file, &role, reason.as_deref(), wait.limit()),
            Command::Request { file, role, wait } => {
                request(connection, &file, &role, wait.limit())
            }
            Command::Redeem {
                id,
                token,
                call,
                device,
            } => redeem(connection, &id, &token, &call, device.as_deref()),
            Command::Status { id, wait } => status(connection, &id, wait.limit()),
            Command::Resubmit {
                id,
                role,
                plan,
                reason,
                wait,
            } => resubmit(
                connection,
                &id,
                &role,
                plan.as_deref(),
                reason.as_deref(),
                wait.limit(),
            ),
        }
    }
}

/// Exit codes: approved 0, denied 3, still pending 4, refused 1, other errors 2.
fn exit_for(outcome: &Outcome) -> ExitCode {
    match outcome.outcome {
        Verdict::Approved => ExitCode::SUCCESS,
        Verdict::Denied => ExitCode::from(3),
        Verdict::Blocked => ExitCode::from(4),
    }
}

/// `<id> approved by <role>`, `<id> rejected by <role> [kind]: reason`, or
/// `<id> pending: …`: the review's status in plain words, whatever it asked.
fn print_outcome(outcome: &Outcome) {
    let mut line = format!("{} {}", outcome.confirm_id, outcome.status);
    if outcome.outcome == Verdict::Blocked {
        line.push_str(": waiting for a reviewer's decision");
    }
    if let Some(role) = &outcome.decided_by_role {
        line.push_str(&format!(" by {role}"));
    }
    if let Some(kind) = outcome.kind {
        line.push_str(&format!(" [{}]", kind.as_str()));
    }
    if let Some(reason) = &outcome.reason {
        line.push_str(&format!(": {reason}"));
    }
    println!("{line}");
    if let Some(token) = &outcome.token {
        println!(
            "token {} (single use, expires {})",
            token.token_id, token.expires_at
        );
    }
    if let Some(call) = &outcome.approved_call {
        println!("call {call}");
    }
}

fn read_json(file: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", file.display()))
}

/// `agent request FILE [--wait]`: ask before one tool call.
fn request(connection: &Connection, file: &Path, role: &str, wait: Option<Duration>) -> ExitCode {
    let mut body = match read_json(file) {
        Ok(body) => body,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    if let Some(fields) = body.as_object_mut() {
        fields
            .entry("requestedByRole")
            .or_insert_with(|| json!(role));
    }
    let (status, body) = match call(connection, "POST", "/tool-calls", Some(&body)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    if status != 201 {
        print_error(status, &body);
        return ExitCode::from(1);
    }
    finish(connection, &body["outcome"], wait)
}

/// `agent redeem ID --token T --call FILE [--device D]`.
fn redeem(
    connection: &Connection,
    id: &str,
    token: &str,
    call_file: &Path,
    device: Option<&str>,
) -> ExitCode {
    let tool_call = match read_json(call_file) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    if connection.public_key.is_some() {
        if let Err(e) = check_before_redeem(connection, id, token, &tool_call) {
            eprintln!("{e}");
            return ExitCode::from(1);
        }
    } else {
        crate::client::say_unchecked();
    }
    let mut body = json!({"tokenId": token, "toolCall": tool_call});
    if let Some(device) = device {
        body["clientDeviceId"] = json!(device);
    }
    match call(
        connection,
        "POST",
        &format!("/reviews/{id}/redeem"),
        Some(&body),
    ) {
        Ok((200, _)) => {
            println!("redeemed {token}: the call may run now, once");
            ExitCode::SUCCESS
        }
        Ok((status, body)) => {
            print_error(status, &body);
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}

/// `agent redeem` with a public key: reads the review's outcome and checks
/// its receipt offline against the call about to run, before redeeming.
fn check_before_redeem(
    connection: &Connection,
    id: &str,
    token: &str,
    tool_call: &Value,
) -> Result<(), String> {
    let hash = ToolCall::deserialize(tool_call)
        .map_err(|e| format!("the call is not a tool call ({e})"))
        .and_then(|c| c.hash().map_err(|e| e.to_string()))?;
    let (status, outcome) = call(connection, "GET", &format!("/reviews/{id}/outcome"), None)?;
    if status != 200 {
        print_error(status, &outcome);
        return Err(format!("reading the outcome failed ({status})"));
    }
    let outcome = outcome_of(&outcome)?;
    let minted = outcome
        .token
        .as_ref()
        .filter(|t| t.token_id.to_string() == token)
        .ok_or_else(|| format!("review {id} has no token {token}; the call did not run"))?;
    connection.check_receipt(id, &outcome, minted, &hash)
}

/// Wraps a plan in a new pending Confirm, or takes a full review as it is.
fn review_from_file(file: &Path, role: &str, reason: Option<&str>) -> Result<Value, String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let value: Value =
        serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", file.display()))?;
    if value.get("confirm").is_some() {
        return Ok(value);
    }
    let plan_id = value["plan_id"].clone();
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| e.to_string())?;
    let confirm_id = countersign_domain::MplpId::from_random_bytes(bytes);
    let reason = reason
        .map(str::to_owned)
        .or_else(|| {
            value["title"]
                .as_str()
                .map(|t| format!("Approve the plan: {t}"))
        })
        .unwrap_or_else(|| "Approve this plan".into());
    Ok(json!({
        "confirm": {
            "meta": {"protocol_version": "1.0.0", "schema_version": "1.0.0"},
            "confirm_id": confirm_id,
            "target_type": "plan",
            "target_id": plan_id,
            "status": "pending",
            "requested_by_role": role,
            "requested_at": countersign_domain::Timestamp::from_utc(chrono::Utc::now()).to_string(),
            "reason": reason,
        },
        "target": {"plan": value},
    }))
}

/// `agent submit FILE [--wait]`.
fn submit(
    connection: &Connection,
    file: &Path,
    role: &str,
    reason: Option<&str>,
    wait: Option<Duration>,
) -> ExitCode {
    let review = match review_from_file(file, role, reason) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let (status, body) = match call(connection, "POST", "/reviews", Some(&review)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    if status != 200 && status != 201 {
        print_error(status, &body);
        return ExitCode::from(1);
    }
    finish(connection, &body["outcome"], wait)
}

/// Prints the outcome of a created review, first waiting (up to `wait`) while it
/// is pending; the exit code says what it came to.
fn finish(connection: &Connection, created: &Value, wait: Option<Duration>) -> ExitCode {
    let created = match outcome_of(created) {
        Ok(outcome) => outcome,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let id = created.confirm_id.to_string();
    let outcome = match wait {
        Some(timeout) if created.is_pending() => {
            eprintln!("asked for approval ({id}); a reviewer must decide it");
            match wait_for(connection, &id, timeout) {
                Ok(o) => o,
                Err(e) => {
                    eprintln!("{e}");
                    return ExitCode::from(2);
                }
            }
        }
        _ => created,
    };
    print_outcome(&outcome);
    exit_for(&outcome)
}

/// `agent status ID [--wait]`.
fn status(connection: &Connection, id: &str, wait: Option<Duration>) -> ExitCode {
    match wait_for(connection, id, wait.unwrap_or_default()) {
        Ok(outcome) => {
            print_outcome(&outcome);
            exit_for(&outcome)
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}

/// `agent resubmit ID --role R [--plan FILE] [--reason TEXT] [--wait]`.
fn resubmit(
    connection: &Connection,
    id: &str,
    role: &str,
    plan: Option<&Path>,
    reason: Option<&str>,
    wait: Option<Duration>,
) -> ExitCode {
    let mut body = json!({"by_role": role});
    if let Some(file) = plan {
        let parsed = std::fs::read_to_string(file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))
            .and_then(|t| {
                serde_json::from_str::<Value>(&t)
                    .map_err(|e| format!("{} is not JSON: {e}", file.display()))
            });
        match parsed {
            Ok(plan) => body["plan"] = plan,
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(2);
            }
        }
    }
    if let Some(reason) = reason {
        body["reason"] = json!(reason);
    }
    match call(
        connection,
        "POST",
        &format!("/reviews/{id}/resubmit"),
        Some(&body),
    ) {
        Ok((200, _)) => status(connection, id, wait),
        Ok((status, body)) => {
            print_error(status, &body);
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}
