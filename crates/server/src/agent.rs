//! `countersign agent`: the simplest real client of the API, as an agent uses
//! it: submit a plan for approval and wait for the outcome, read an outcome,
//! resubmit after a rejection; ask before a tool call and redeem its token.
//! [`ask_tool_call`] is that last round trip for the bridges (`hook`,
//! `mcp_gate`).

use countersign_domain::model::ConfirmStatus;
use countersign_domain::toolcall::{CallHash, OutcomeKind, Token, ToolCall};
use countersign_domain::wire::{ErrorBody, Outcome, Verdict};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Where the server is and which agent key to use.
pub struct Connection {
    /// Base address, e.g. `http://127.0.0.1:8080`.
    pub server: String,
    /// The agent key.
    pub key: String,
    /// The server's public key (base64 or a file holding it), when approvals'
    /// receipts are to be checked offline before a token is redeemed.
    pub public_key: Option<String>,
}

impl Connection {
    /// With a public key configured: checks offline that `outcome` carries a
    /// receipt signed by it for this approval of review `id`, allowing token
    /// `token` to run exactly the call with `hash`. Without one: nothing to check.
    fn check_receipt(
        &self,
        id: &str,
        outcome: &Outcome,
        token: &Token,
        hash: &CallHash,
    ) -> Result<(), String> {
        let Some(key) = &self.public_key else {
            return Ok(());
        };
        let trusted = crate::signing::public_key_from_arg(key)?;
        let refuse = |why: String| format!("the approval's receipt {why}; the call did not run");
        let receipt = outcome
            .receipt
            .as_ref()
            .ok_or_else(|| refuse("is missing".into()))?;
        crate::signing::verify(receipt, &trusted)
            .map_err(|e| refuse(format!("does not verify: {e}")))?;
        let body = &receipt.body;
        let signed_token = body.token.as_ref();
        if body.confirm_id.to_string() != id
            || body.status != ConfirmStatus::Approved
            || signed_token.map(|t| t.token_id) != Some(token.token_id)
        {
            return Err(refuse(format!(
                "is for another decision (review {}, {}, token {})",
                body.confirm_id,
                body.status,
                signed_token.map_or("none".into(), |t| t.token_id.to_string())
            )));
        }
        if signed_token.map(|t| &t.tool_call_hash) != Some(hash) {
            return Err(refuse(format!(
                "allows another call than this one (hash {hash})"
            )));
        }
        Ok(())
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

/// The outcome in a server's answer; anything else is an error (and the
/// action does not run).
fn outcome_of(value: &Value) -> Result<Outcome, String> {
    Outcome::deserialize(value)
        .map_err(|e| format!("the server's answer is not an outcome ({e}): {value}"))
}

fn client() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(90)))
        .build()
        .into()
}

/// Sends a request and returns the status and the JSON body.
pub(crate) fn call(
    connection: &Connection,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> Result<(u16, Value), String> {
    let url = format!("{}/api/v1{path}", connection.server.trim_end_matches('/'));
    let agent = client();
    let auth = format!("Bearer {}", connection.key);
    let response = match (method, body) {
        ("POST", Some(body)) => agent
            .post(&url)
            .header("Authorization", &auth)
            .send_json(body),
        _ => agent.get(&url).header("Authorization", &auth).call(),
    };
    let mut response = response.map_err(|e| format!("cannot reach {url}: {e}"))?;
    let status = response.status().as_u16();
    let body = response
        .body_mut()
        .read_json::<Value>()
        .map_err(|e| format!("{url} answered {status} without JSON: {e}"))?;
    Ok((status, body))
}

/// Prints an API error with every detail.
fn print_error(status: u16, body: &Value) {
    let Ok(ErrorBody { error }) = ErrorBody::<Value>::deserialize(body) else {
        eprintln!("refused ({status}), with an answer that is not an API error: {body}");
        return;
    };
    eprintln!("refused ({status} {}): {}", error.code, error.message);
    for detail in error.details {
        let path = if detail.path.is_empty() {
            "(body)"
        } else {
            &detail.path
        };
        eprintln!("  {path}: {}", detail.message);
    }
}

fn print_outcome(outcome: &Outcome) {
    let mut line = format!(
        "{} {} ({})",
        outcome.confirm_id,
        outcome.outcome.as_str(),
        outcome.status
    );
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
pub fn request(
    connection: &Connection,
    file: &Path,
    role: &str,
    wait: Option<Duration>,
) -> ExitCode {
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
pub fn redeem(
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

/// A reviewer's answer to one tool call.
pub(crate) enum Ruling {
    /// Approved, and the approval's token spent: run exactly `args`.
    Approved {
        /// The approved arguments (the reviewer's, when edited).
        args: Map<String, Value>,
        /// The role that approved.
        by: String,
        /// Whether a standing scope grant approved it without asking.
        by_grant: bool,
    },
    /// Denied (or cancelled) by a reviewer.
    Denied {
        /// The role that decided.
        by: String,
        /// The reason given, if any.
        reason: Option<String>,
    },
}

/// Asks a reviewer about one tool call: `request` as `POST /tool-calls`
/// takes it (its review expires when `timeout` passes, so nobody approves a
/// call nobody waits for), then waits, and on approval redeems the token for
/// exactly the approved call. `asked` learns the review's id as soon as there
/// is one, and may stop there. `Err` says why no decision could be had.
pub(crate) fn ask_tool_call(
    connection: &Connection,
    mut request: Value,
    timeout: Duration,
    asked: impl FnOnce(&str) -> Result<(), String>,
) -> Result<Ruling, String> {
    let tool = request["toolCall"]["name"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    request["expiresAt"] =
        json!((chrono::Utc::now() + timeout).to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
    let (status, created) = call(connection, "POST", "/tool-calls", Some(&request))?;
    if status != 201 {
        return Err(format!(
            "the server refused the review ({status}): {}",
            refusal_message(&created)
        ));
    }
    let review = created["outcome"]["confirm_id"]
        .as_str()
        .ok_or("the server's answer names no review")?
        .to_owned();
    asked(&review)?;
    let outcome = wait_for(connection, &review, timeout)?;
    let by = outcome
        .decided_by_role
        .clone()
        .unwrap_or_else(|| "a reviewer".to_owned());
    match outcome.outcome {
        // Expired: it closed when the wait ended, undecided.
        Verdict::Blocked => return Err(undecided(timeout)),
        Verdict::Denied if outcome.kind == Some(OutcomeKind::Expired) => {
            return Err(undecided(timeout))
        }
        Verdict::Denied => {
            return Ok(Ruling::Denied {
                by,
                reason: outcome.reason,
            })
        }
        Verdict::Approved => {}
    }
    let approved = outcome
        .approved_call
        .as_deref()
        .ok_or("the approval carries no approved call")
        .and_then(|c| {
            ToolCall::from_canonical(c).map_err(|_| "the approved call cannot be read")
        })?;
    if approved.name != tool {
        return Err(format!(
            "the approval is for `{}`, not `{tool}`",
            approved.name
        ));
    }
    let token = outcome
        .token
        .as_ref()
        .ok_or("the approval carries no token")?;
    let hash = approved
        .hash()
        .map_err(|e| format!("the approved call has no canonical form: {e}"))?;
    connection.check_receipt(&review, &outcome, token, &hash)?;
    let body =
        json!({"tokenId": token.token_id, "toolCall": {"name": tool, "args": approved.args}});
    let (status, refused) = call(
        connection,
        "POST",
        &format!("/reviews/{review}/redeem"),
        Some(&body),
    )?;
    if status != 200 {
        return Err(format!(
            "the approval's token was refused ({status}): {}",
            refusal_message(&refused)
        ));
    }
    Ok(Ruling::Approved {
        args: approved.args,
        by,
        by_grant: outcome.approved_by_grant.is_some(),
    })
}

fn undecided(timeout: Duration) -> String {
    format!(
        "no reviewer decided within {} s; the call did not run",
        timeout.as_secs()
    )
}

/// The message of an API error answer.
fn refusal_message(body: &Value) -> &str {
    body["error"]["message"]
        .as_str()
        .unwrap_or("no reason given")
}

/// Polls the outcome with the server's long poll until decided or `timeout` passes.
pub(crate) fn wait_for(
    connection: &Connection,
    id: &str,
    timeout: Duration,
) -> Result<Outcome, String> {
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        // The server waits whole seconds: with less than one left, asking with
        // `wait=0` again and again would flood it (and meet its rate limit), so
        // the rest is waited here and the outcome read once more.
        if left < Duration::from_secs(1) {
            std::thread::sleep(left);
        }
        let wait = left.as_secs().min(60);
        let (status, outcome) = call(
            connection,
            "GET",
            &format!("/reviews/{id}/outcome?wait={wait}"),
            None,
        )?;
        if status != 200 {
            print_error(status, &outcome);
            return Err(format!("reading the outcome failed ({status})"));
        }
        let outcome = outcome_of(&outcome)?;
        if !outcome.is_pending() || Instant::now() >= deadline {
            return Ok(outcome);
        }
    }
}

/// `agent submit FILE [--wait]`.
pub fn submit(
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
pub fn status(connection: &Connection, id: &str, wait: Option<Duration>) -> ExitCode {
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
pub fn resubmit(
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
