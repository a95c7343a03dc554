//! The agent's side of the API: where the server is, one request, and the
//! round trip the bridges make before a tool call runs ([`ask_tool_call`]:
//! ask, wait, check the receipt, redeem the token).

use countersign_domain::model::ConfirmStatus;
use countersign_domain::toolcall::{CallHash, OutcomeKind, Token, ToolCall};
use countersign_domain::wire::{ErrorBody, Outcome, Verdict};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::time::{Duration, Instant};

/// Where the server is, and the agent key to use with it (the flags of every
/// agent-side command).
#[derive(Clone, Debug, clap::Args)]
pub struct Connection {
    /// The server's address.
    #[arg(long, env = "COUNTERSIGN_URL", default_value = "http://127.0.0.1:8080")]
    pub server: String,
    /// An agent key.
    #[arg(long, env = "COUNTERSIGN_AGENT_KEY", hide_env_values = true)]
    pub key: String,
    /// The server's public key (base64, or a file holding it): each
    /// approval's signed receipt is then checked offline before its token is
    /// redeemed, and a call whose receipt does not verify does not run.
    #[arg(long, env = "COUNTERSIGN_PUBLIC_KEY")]
    pub public_key: Option<String>,
}

impl Connection {
    /// With a public key configured: checks offline that `outcome` carries a
    /// receipt signed by it for this approval of review `id`, allowing token
    /// `token` to run exactly the call with `hash`. Without one: nothing to check.
    pub(crate) fn check_receipt(
        &self,
        id: &str,
        outcome: &Outcome,
        token: &Token,
        hash: &CallHash,
    ) -> Result<(), String> {
        let Some(key) = &self.public_key else {
            say_unchecked();
            return Ok(());
        };
        let trusted = crate::receipt::public_key_from_arg(key)?;
        let refuse = |why: String| format!("the approval's receipt {why}; the call did not run");
        let receipt = outcome
            .receipt
            .as_ref()
            .ok_or_else(|| refuse("is missing".into()))?;
        crate::receipt::verify(receipt, &trusted)
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

/// Says once per process that receipts are not checked, naming the setting
/// that would check them.
pub(crate) fn say_unchecked() {
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        eprintln!(
            "countersign: no receipt key (--public-key or COUNTERSIGN_PUBLIC_KEY): approvals are not \
             checked against the server's signature; set it to what `countersign keys signing-key` \
             prints (or GET /api/v1/signing-key)"
        );
    });
}

/// The outcome in a server's answer; anything else is an error (and the
/// action does not run).
pub(crate) fn outcome_of(value: &Value) -> Result<Outcome, String> {
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
pub(crate) fn print_error(status: u16, body: &Value) {
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

/// When a review asked at `now` for a wait of `timeout` expires, as MPLP
/// writes it (milliseconds): in whole seconds a one-second wait could end
/// before the server received the request, which it then refused.
fn expiry(now: chrono::DateTime<chrono::Utc>, timeout: Duration) -> String {
    (now + timeout).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
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
    request["expiresAt"] = json!(expiry(chrono::Utc::now(), timeout));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-second wait asked late in a second still leaves the server a
    /// whole second (truncated to seconds it left 0.1 s, and a slow machine
    /// had the request refused as expired before it was asked).
    #[test]
    fn a_review_expires_a_whole_timeout_after_it_is_asked() {
        let now = chrono::DateTime::parse_from_rfc3339("2026-12-08T00:18:33.900Z")
            .unwrap()
            .to_utc();
        assert_eq!(
            expiry(now, Duration::from_secs(1)),
            "2026-12-08T00:18:34.900Z"
        );
    }
}
