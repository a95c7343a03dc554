//! `countersign mcp-gate` between a real MCP client and a real MCP server,
//! both written with the official Python SDK (PyPI `mcp`, in `.venv-mcp`:
//! `scripts/setup.sh --mcp`): the client calls an ungated and a gated tool
//! through the gate while a reviewer decides through the API, and the
//! server's own log says what ran, with which arguments. Skipped when the
//! virtual environment is missing, unless `COUNTERSIGN_REQUIRE_MCP=1` (the
//! test command sets it).

use crate::support::{binary, Client, Server};
use serde_json::{json, Value};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The virtual environment's Python, if it is there.
fn python() -> Option<PathBuf> {
    let python = std::env::var_os("COUNTERSIGN_MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.venv-mcp/bin/python")
        });
    if python.exists() {
        return Some(python);
    }
    assert!(
        std::env::var("COUNTERSIGN_REQUIRE_MCP").is_err(),
        "{} is missing: scripts/setup.sh --mcp installs it",
        python.display()
    );
    eprintln!("skipped: no {} (scripts/setup.sh --mcp)", python.display());
    None
}

fn script(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/mcp")
        .join(name)
        .display()
        .to_string()
}

/// The client making `calls` (tool, JSON arguments, ...) through a gate in
/// front of the notes server, which logs what ran to `log`; `write_*` is
/// gated, and Countersign is at `url`.
fn client(
    python: &PathBuf,
    url: &str,
    key: &str,
    calls: &[&str],
    log: &std::path::Path,
) -> Command {
    let mut command = Command::new(python);
    command
        .arg(script("client.py"))
        .args(calls)
        .arg("--")
        .arg(binary())
        .args(["mcp-gate", "--server", url, "--key", key])
        .args(["--gate", "write_*", "--timeout", "60", "--"])
        .arg(python)
        .arg(script("server.py"))
        .env("NOTES_LOG", log);
    command
}

/// Runs the client: it lists the notes, then writes `note`, through the
/// gate in front of the notes server. Returns what the client was answered
/// for each call (`{tool, is_error, text}`) and what the server ran.
fn run_client(
    python: &PathBuf,
    server: &Server,
    note: Value,
    reviewer: impl FnOnce(),
) -> (Vec<Value>, Vec<Value>) {
    run_client_in(python, server, note, "auto", reviewer)
}

/// `run_client`, the client speaking MCP 2026 (`auto`) or 2025 (`legacy`).
fn run_client_in(
    python: &PathBuf,
    server: &Server,
    note: Value,
    mode: &str,
    reviewer: impl FnOnce(),
) -> (Vec<Value>, Vec<Value>) {
    let log = tempfile::NamedTempFile::new().unwrap();
    let child = client(
        python,
        &server.url,
        &server.agent,
        &["list_notes", "{}", "write_note", &note.to_string()],
        log.path(),
    )
    .env("MCP_MODE", mode)
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("start the MCP client");
    reviewer();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the client failed: {stderr}");
    let answers = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ran = std::fs::read_to_string(log.path())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (answers, ran)
}

/// Decides the gate's pending review with `body`, once it is there.
fn decide_when_asked(reviewer: &Client, body: Value) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let review = loop {
        let listed = reviewer.get("/reviews?status=pending&requester=mcp:notes");
        if let Some(review) = listed.body["items"].as_array().and_then(|i| i.first()) {
            break review.clone();
        }
        assert!(Instant::now() < deadline, "the gate asked for no review");
        std::thread::sleep(Duration::from_millis(50));
    };
    let request = &review["target"]["tool_call"]["request"];
    assert_eq!(request["humanSummary"], "MCP server notes");
    assert_eq!(request["riskTier"], "R2");
    let id = review["confirm"]["confirm_id"].as_str().unwrap();
    let reply = reviewer.decide(id, &format!("gate-{id}"), &body);
    assert_eq!(reply.status, 200, "{}", reply.text);
}

#[test]
fn gated_calls_reach_the_server_only_as_the_reviewer_approved_them() {
    let Some(python) = python() else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let reviewer = server.client(&server.reviewer);
    let listed = json!({"tool": "list_notes", "arguments": {}});

    // Approved as asked: it runs with the arguments asked.
    let note = json!({"title": "standup", "text": "moved to 10:00"});
    let (answers, ran) = run_client(&python, &server, note.clone(), || {
        decide_when_asked(
            &reviewer,
            json!({"status": "approved", "decided_by_role": "reviewer", "tool_call": {"mode": "once"}}),
        )
    });
    assert_eq!(answers[0]["text"], "no notes yet");
    assert_eq!(
        (answers[1]["is_error"].clone(), answers[1]["text"].clone()),
        (json!(false), json!("wrote standup"))
    );
    assert_eq!(
        ran,
        vec![
            listed.clone(),
            json!({"tool": "write_note", "arguments": note})
        ]
    );

    // Edited: it runs with the reviewer's arguments, never the agent's.
    let edited = json!({"title": "standup", "text": "moved to 10:30"});
    let (answers, ran) = run_client(
        &python,
        &server,
        json!({"title": "standup", "text": "cancelled"}),
        || {
            decide_when_asked(
                &reviewer,
                json!({"status": "approved", "decided_by_role": "reviewer", "tool_call": {"mode": "edit", "args": edited.to_string()}}),
            )
        },
    );
    assert_eq!(answers[1]["is_error"], false);
    assert_eq!(
        ran,
        vec![
            listed.clone(),
            json!({"tool": "write_note", "arguments": edited})
        ]
    );

    // Denied: the model reads the reviewer's reason; the server never sees it.
    let (answers, ran) = run_client(
        &python,
        &server,
        json!({"title": "all", "text": "delete everything"}),
        || {
            decide_when_asked(
                &reviewer,
                json!({"status": "rejected", "decided_by_role": "reviewer", "reason": "Notes are kept for a year"}),
            )
        },
    );
    assert_eq!(
        (answers[1]["is_error"].clone(), answers[1]["text"].clone()),
        (
            json!(true),
            json!("Countersign: denied by reviewer: Notes are kept for a year")
        )
    );
    assert_eq!(ran, vec![listed]);
}

#[test]
fn with_countersign_unreachable_a_gated_call_is_an_error_result_and_never_runs() {
    let Some(python) = python() else {
        return;
    };
    let log = tempfile::NamedTempFile::new().unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let out = client(
        &python,
        &url,
        "cs_agent_x",
        &["write_note", r#"{"title": "a", "text": "b"}"#],
        log.path(),
    )
    .output()
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["is_error"], true);
    assert!(
        answer["text"]
            .as_str()
            .unwrap()
            .starts_with("Countersign: cannot reach"),
        "{answer}"
    );
    assert_eq!(std::fs::read_to_string(log.path()).unwrap(), "");
}

#[test]
fn a_call_the_client_cancels_is_withdrawn_and_never_runs() {
    let Some(python) = python() else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let reviewer = server.client(&server.reviewer);
    let log = tempfile::NamedTempFile::new().unwrap();
    let out = client(
        &python,
        &server.url,
        &server.agent,
        &[
            "cancel:write_note",
            r#"{"title": "a", "text": "b"}"#,
            "list_notes",
            "{}",
        ],
        log.path(),
    )
    .output()
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answers: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers[0], json!({"tool": "write_note", "cancelled": true}));
    assert_eq!(answers[1]["text"], "no notes yet");
    let listed = reviewer.get("/reviews?requester=mcp:notes");
    let review = &listed.body["items"][0];
    assert_eq!(review["confirm"]["status"], "cancelled");
    assert_eq!(
        review["target"]["tool_call"]["outcome"]["kind"],
        "withdrawn"
    );
    assert_eq!(
        review["confirm"]["decisions"][0]["reason"],
        "withdrawn by the agent: the MCP client cancelled the call"
    );
    let ran = std::fs::read_to_string(log.path()).unwrap();
    assert_eq!(ran, "{\"tool\": \"list_notes\", \"arguments\": {}}\n");
}

#[test]
fn an_mcp_2025_session_is_gated_the_same_way() {
    let Some(python) = python() else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let reviewer = server.client(&server.reviewer);
    let note = json!({"title": "standup", "text": "moved to 10:00"});
    // The server's name comes from its `initialize` answer here.
    let (answers, ran) = run_client_in(&python, &server, note.clone(), "legacy", || {
        decide_when_asked(
            &reviewer,
            json!({"status": "approved", "decided_by_role": "reviewer", "tool_call": {"mode": "once"}}),
        )
    });
    assert_eq!(answers[1]["text"], "wrote standup");
    assert_eq!(
        ran.last(),
        Some(&json!({"tool": "write_note", "arguments": note}))
    );
    let (answers, ran) = run_client_in(
        &python,
        &server,
        json!({"title": "x", "text": "y"}),
        "legacy",
        || {
            decide_when_asked(
                &reviewer,
                json!({"status": "rejected", "decided_by_role": "reviewer", "reason": "No"}),
            )
        },
    );
    assert_eq!(
        (answers[1]["is_error"].clone(), answers[1]["text"].clone()),
        (json!(true), json!("Countersign: denied by reviewer: No"))
    );
    assert_eq!(ran.len(), 1, "only list_notes ran: {ran:?}");
}

#[test]
fn a_gated_call_in_a_batch_or_without_an_id_never_reaches_the_server() {
    // The gate alone: the "server" records every line it is sent.
    let received = tempfile::NamedTempFile::new().unwrap();
    let record = format!("cat > {}", received.path().display());
    let mut gate = Command::new(binary())
        .args(["mcp-gate", "--server", "http://127.0.0.1:1", "--key", "k"])
        .args(["--gate", "write_*", "--", "sh", "-c", &record])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = [
        r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_note","arguments":{}}},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]"#,
        r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"write_note","arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
    ];
    let mut stdin = gate.stdin.take().unwrap();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let out = gate.wait_with_output().unwrap();
    let forwarded = std::fs::read_to_string(received.path()).unwrap();
    assert_eq!(forwarded, format!("{}\n", lines[2]));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer[0]["id"], 1);
    assert_eq!(answer[1]["id"], 2);
    assert!(answer[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("nothing was run"));
}
