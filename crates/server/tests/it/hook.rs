//! `countersign hook claude-code` against a real server: the hook is run as
//! Claude Code runs it (the event on stdin, the answer on stdout) while a
//! reviewer decides through the API.

use crate::support::{binary, Client, Server};
use serde_json::{json, Value};
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What Claude Code sends before running `tool` with `input`: the event of
/// tests/claude-code/event.json (checked against Anthropic's published hook
/// types by its check-types.mjs), with a field this hook does not know.
fn event(tool: &str, input: Value) -> Value {
    let mut event: Value =
        serde_json::from_str(include_str!("../../../../tests/claude-code/event.json")).unwrap();
    event["tool_name"] = json!(tool);
    event["tool_input"] = input;
    event["some_field_added_later"] = json!(true);
    event
}

/// The answer tests/claude-code/answers.json expects for `case` (checked
/// against Anthropic's published hook types too).
fn expected(case: &str) -> Value {
    let answers: Value =
        serde_json::from_str(include_str!("../../../../tests/claude-code/answers.json")).unwrap();
    answers[case].clone()
}

/// What the hook did: its exit code, its answer (parsed when there is one)
/// and what it said on stderr.
struct Ran {
    code: i32,
    answer: Option<Value>,
    stderr: String,
}

impl Ran {
    fn decision(&self) -> (&str, &str) {
        let out = &self.answer.as_ref().expect("an answer")["hookSpecificOutput"];
        assert_eq!(out["hookEventName"], "PreToolUse");
        (
            out["permissionDecision"].as_str().unwrap(),
            out["permissionDecisionReason"].as_str().unwrap(),
        )
    }
}

/// Starts the hook on `stdin` against `url`; join the handle for what it did.
fn start_hook(url: &str, key: &str, args: &[&str], stdin: String) -> std::thread::JoinHandle<Ran> {
    start_hook_with(url, key, &[], args, stdin)
}

/// [`start_hook`] with flags of `hook` itself (before `claude-code`).
fn start_hook_with(
    url: &str,
    key: &str,
    hook_flags: &[&str],
    args: &[&str],
    stdin: String,
) -> std::thread::JoinHandle<Ran> {
    start_hook_in(url, key, hook_flags, &[], args, stdin)
}

/// [`start_hook_with`] with these environment variables set.
fn start_hook_in(
    url: &str,
    key: &str,
    hook_flags: &[&str],
    env: &[(&str, &str)],
    args: &[&str],
    stdin: String,
) -> std::thread::JoinHandle<Ran> {
    let mut child = Command::new(binary())
        .args(["hook", "--server", url, "--key", key])
        .args(hook_flags)
        .arg("claude-code")
        .args(args)
        .env_remove("COUNTERSIGN_PUBLIC_KEY")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the hook");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    std::thread::spawn(move || {
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8(out.stdout).unwrap();
        Ran {
            code: out.status.code().unwrap_or(-1),
            answer: (!stdout.trim().is_empty()).then(|| serde_json::from_str(&stdout).unwrap()),
            stderr: String::from_utf8(out.stderr).unwrap(),
        }
    })
}

/// The pending review the hook asked for, once it is there.
fn pending_review(reviewer: &Client) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let listed = reviewer.get("/reviews?status=pending&requester=claude-code");
        if let Some(review) = listed.body["items"].as_array().and_then(|i| i.first()) {
            return review.clone();
        }
        assert!(Instant::now() < deadline, "the hook asked for no review");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn decide(reviewer: &Client, review: &Value, body: Value) {
    let id = review["confirm"]["confirm_id"].as_str().unwrap();
    let reply = reviewer.decide(id, &format!("hook-{id}"), &body);
    assert_eq!(reply.status, 200, "{}", reply.text);
}

#[test]
fn an_approved_call_is_allowed_once_its_token_is_redeemed_and_the_review_names_the_session() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let reviewer = server.client(&server.reviewer);
    let input = json!({"command": "npm test", "description": "Run the tests"});
    let hook = start_hook(
        &server.url,
        &server.agent,
        &[],
        event("Bash", input).to_string(),
    );
    let review = pending_review(&reviewer);
    let request = &review["target"]["tool_call"]["request"];
    assert_eq!(request["sessionId"], "cc-session-1");
    assert_eq!(request["runId"], "toolu_01");
    assert_eq!(request["workspace"], "/work/shop");
    assert_eq!(request["riskTier"], "R3");
    assert_eq!(request["humanSummary"], "Run the tests");
    decide(
        &reviewer,
        &review,
        json!({"status": "approved", "decided_by_role": "reviewer", "tool_call": {"mode": "once"}}),
    );
    let ran = hook.join().unwrap();
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(ran.answer, Some(expected("approved")));
    // No receipt key anywhere: said once, naming the variable.
    assert_eq!(
        ran.stderr.matches("COUNTERSIGN_PUBLIC_KEY").count(),
        1,
        "{}",
        ran.stderr
    );
    // The token was spent by the hook: it cannot run the call twice.
    let id = review["confirm"]["confirm_id"].as_str().unwrap();
    let stored = reviewer.get(&format!("/reviews/{id}"));
    assert!(
        stored.body["review"]["target"]["tool_call"]["outcome"]["token"]["usedAt"].is_string(),
        "{}",
        stored.text
    );
}

#[test]
fn an_approval_whose_receipt_another_key_signed_is_denied_and_its_token_not_spent() {
    for given in ["flag", "environment"] {
        another_key_denies(given);
    }
}

/// The hook trusting another server's key, given as a flag or only in
/// `COUNTERSIGN_PUBLIC_KEY`, is approved a call: it denies it, unspent.
fn another_key_denies(given: &str) {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let reviewer = server.client(&server.reviewer);
    // A key nobody signs with here: RFC 8032's first test vector's public key.
    let other_key = "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=".to_owned();
    let input = json!({"command": "npm test", "description": "Run the tests"});
    let (flags, env) = if given == "flag" {
        (vec!["--public-key", other_key.as_str()], vec![])
    } else {
        (vec![], vec![("COUNTERSIGN_PUBLIC_KEY", other_key.as_str())])
    };
    let hook = start_hook_in(
        &server.url,
        &server.agent,
        &flags,
        &env,
        &[],
        event("Bash", input).to_string(),
    );
    let review = pending_review(&reviewer);
    decide(
        &reviewer,
        &review,
        json!({"status": "approved", "decided_by_role": "reviewer", "tool_call": {"mode": "once"}}),
    );
    let ran = hook.join().unwrap();
    let (decision, reason) = ran.decision();
    assert_eq!(decision, "deny", "{given}");
    assert!(
        reason.contains("signed by another key"),
        "{given}: {reason}"
    );
    let id = review["confirm"]["confirm_id"].as_str().unwrap();
    let stored = reviewer.get(&format!("/reviews/{id}"));
    assert!(
        stored.body["review"]["target"]["tool_call"]["outcome"]["token"]["usedAt"].is_null(),
        "{}",
        stored.text
    );
}

#[test]
fn an_edited_call_is_allowed_with_the_reviewers_input() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let reviewer = server.client(&server.reviewer);
    let input = json!({"file_path": "/work/shop/.env", "content": "DEBUG=true\n"});
    let hook = start_hook(
        &server.url,
        &server.agent,
        &[],
        event("Write", input).to_string(),
    );
    let review = pending_review(&reviewer);
    let edited = json!({"file_path": "/work/shop/.env.local", "content": "DEBUG=true\n"});
    decide(
        &reviewer,
        &review,
        json!({"status": "approved", "decided_by_role": "reviewer", "tool_call": {"mode": "edit", "args": edited.to_string()}}),
    );
    let ran = hook.join().unwrap();
    assert_eq!(ran.answer, Some(expected("edited")));
    assert_eq!(
        expected("edited")["hookSpecificOutput"]["updatedInput"],
        edited
    );
}

#[test]
fn a_denied_call_is_denied_with_the_reviewers_reason() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let reviewer = server.client(&server.reviewer);
    let input = json!({"command": "rm -rf node_modules"});
    let hook = start_hook(
        &server.url,
        &server.agent,
        &[],
        event("Bash", input).to_string(),
    );
    let review = pending_review(&reviewer);
    decide(
        &reviewer,
        &review,
        json!({"status": "rejected", "decided_by_role": "reviewer", "reason": "Use npm ci instead"}),
    );
    let ran = hook.join().unwrap();
    assert_eq!(ran.answer, Some(expected("denied")));
}

#[test]
fn a_session_grant_lets_the_same_call_through_later_with_its_own_decision() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let reviewer = server.client(&server.reviewer);
    let input = json!({"url": "https://docs.rs/serde", "prompt": "summarize"});
    let first = start_hook(
        &server.url,
        &server.agent,
        &[],
        event("WebFetch", input.clone()).to_string(),
    );
    let review = pending_review(&reviewer);
    decide(
        &reviewer,
        &review,
        json!({"status": "approved", "decided_by_role": "reviewer", "tool_call": {"mode": "scope", "scope": "session"}}),
    );
    assert_eq!(first.join().unwrap().decision().0, "allow");
    let again = start_hook(
        &server.url,
        &server.agent,
        &[],
        event("WebFetch", input).to_string(),
    )
    .join()
    .unwrap();
    assert_eq!(again.answer, Some(expected("granted")));
    let approved = reviewer.get("/reviews?status=approved&requester=claude-code");
    assert_eq!(approved.body["items"].as_array().unwrap().len(), 2);
}

#[test]
fn without_a_decision_in_time_the_call_is_denied_or_left_to_claude_code() {
    let data = tempfile::tempdir().unwrap();
    // A tight rate: waiting reads the outcome a few times, never in a loop
    // (its last second once polled with `wait=0` until the server said 429).
    let server = Server::start(data.path(), &["--agent-rate", "10/s,10"]);
    let input = event(
        "Edit",
        json!({"file_path": "/work/shop/a.rs", "old_string": "a", "new_string": "b"}),
    );
    let ran = start_hook(
        &server.url,
        &server.agent,
        &["--timeout", "1"],
        input.to_string(),
    )
    .join()
    .unwrap();
    assert_eq!(ran.answer, Some(expected("undecided")));
    let asked = start_hook(
        &server.url,
        &server.agent,
        &["--timeout", "1", "--fallback", "ask"],
        input.to_string(),
    )
    .join()
    .unwrap();
    assert_eq!(
        asked.answer,
        Some(expected("undecided, asking Claude Code"))
    );
}

#[test]
fn an_unreachable_server_denies_the_call_and_says_so() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let ran = start_hook(
        &url,
        "cs_agent_x",
        &[],
        event("Bash", json!({"command": "ls"})).to_string(),
    )
    .join()
    .unwrap();
    let (permission, reason) = ran.decision();
    assert_eq!(permission, "deny");
    assert!(reason.starts_with("Countersign: cannot reach"), "{reason}");
}

#[test]
fn read_only_tools_pass_and_unreadable_input_blocks() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let reviewer = server.client(&server.reviewer);
    let read = start_hook(
        &server.url,
        &server.agent,
        &[],
        event("Read", json!({"file_path": "/etc/hosts"})).to_string(),
    )
    .join()
    .unwrap();
    assert_eq!(
        (read.code, read.answer.is_none()),
        (0, true),
        "{}",
        read.stderr
    );
    // A rule gates it.
    let gated = start_hook(
        &server.url,
        &server.agent,
        &["--risk", "Read=R1", "--timeout", "1"],
        event("Read", json!({"file_path": "/etc/hosts"})).to_string(),
    )
    .join()
    .unwrap();
    assert_eq!(gated.decision().0, "deny");
    assert_eq!(
        reviewer.get("/reviews?requester=claude-code").body["items"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let garbled = start_hook(&server.url, &server.agent, &[], "{\"tool_name\": 3".into())
        .join()
        .unwrap();
    assert_eq!(garbled.code, 2);
    assert!(
        garbled
            .stderr
            .contains("not a Claude Code PreToolUse event"),
        "{}",
        garbled.stderr
    );
    let bad_rule = start_hook(
        &server.url,
        &server.agent,
        &["--risk", "Bash=R9"],
        String::new(),
    )
    .join()
    .unwrap();
    assert_eq!(bad_rule.code, 2);
    assert!(
        bad_rule.stderr.contains("`R9` is not a risk tier"),
        "{}",
        bad_rule.stderr
    );
}
