//! Tool-call approvals through the API (in process where a real process adds
//! nothing) and the real `countersign agent` command: scope grants, expiry, denial and feedback, the R3/R4 scope rules,
//! simultaneous redemptions, and an agent that asks, waits and redeems.

use crate::support::{binary, Client, InProcess, Server};
use serde_json::{json, Value};
use std::process::Command;
use std::time::Duration;

/// A transfer with `args` at risk tier `tier` in session `session`.
fn request(args: Value, tier: &str, session: &str) -> Value {
    let mut body = crate::support::tool_call(args);
    body["riskTier"] = json!(tier);
    body["sessionId"] = json!(session);
    body
}

fn ask(agent: &Client, body: &Value) -> (String, Value) {
    let reply = agent.post("/tool-calls", body);
    assert_eq!(reply.status, 201, "{}", reply.text);
    let id = reply.body["outcome"]["confirm_id"]
        .as_str()
        .unwrap()
        .to_owned();
    (id, reply.body["outcome"].clone())
}

fn approve(reviewer: &Client, id: &str, tool_call: Value) -> crate::support::Reply {
    reviewer.decide(
        id,
        &format!("approve-{id}"),
        &json!({"status": "approved", "decided_by_role": "reviewer", "tool_call": tool_call}),
    )
}

#[test]
fn a_session_grant_approves_the_same_call_again_without_asking() {
    let server = InProcess::start();
    let (agent, reviewer) = (
        server.client(&server.agent),
        server.client(&server.reviewer),
    );
    let args = json!({"amount": 120, "to": "Printer Co"});
    let (first, _) = ask(&agent, &request(args.clone(), "R2", "sess-a"));
    let granted = approve(
        &reviewer,
        &first,
        json!({"mode": "scope", "scope": "session"}),
    );
    assert_eq!(granted.status, 200, "{}", granted.text);
    let first_token = granted.body["outcome"]["token"]["tokenId"].clone();

    // The same call in the same session: approved at once, with its own token.
    let (second, outcome) = ask(&agent, &request(args.clone(), "R2", "sess-a"));
    assert_eq!(outcome["outcome"], "APPROVED", "{outcome}");
    assert!(outcome["approved_by_grant"].is_string());
    assert_ne!(outcome["token"]["tokenId"], first_token);
    let stored = reviewer.get(&format!("/reviews/{second}"));
    let decision = &stored.body["review"]["confirm"]["decisions"][0];
    assert!(decision["reason"]
        .as_str()
        .unwrap()
        .contains(outcome["approved_by_grant"].as_str().unwrap()));
    // Stored approved in one step: no change of the feed ever showed it pending.
    let feed = reviewer.get("/changes?after=0&limit=500");
    let seen: Vec<(&str, &str)> = feed.body["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["summary"]["id"] == second.as_str())
        .map(|c| {
            let status = c["summary"]["status"].as_str().unwrap();
            (c["kind"].as_str().unwrap(), status)
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("review.created", "approved"),
            ("review.decided", "approved")
        ],
        "{}",
        feed.text
    );

    // Other arguments, or another session, still ask a reviewer.
    let (_, other_args) = ask(
        &agent,
        &request(json!({"amount": 121, "to": "Printer Co"}), "R2", "sess-a"),
    );
    assert_eq!(other_args["outcome"], "TOOL_BLOCKED_PENDING_APPROVAL");
    let (_, other_session) = ask(&agent, &request(args, "R2", "sess-b"));
    assert_eq!(other_session["outcome"], "TOOL_BLOCKED_PENDING_APPROVAL");
}

#[test]
fn a_revoked_grant_approves_nothing_and_the_next_call_is_asked_again() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let (agent, reviewer) = (
        server.client(&server.agent),
        server.client(&server.reviewer),
    );
    let args = json!({"amount": 40, "to": "Cloud Co"});
    let (first, _) = ask(&agent, &request(args.clone(), "R2", "sess-g"));
    let granted = approve(&reviewer, &first, json!({"mode": "scope", "scope": "15m"}));
    assert_eq!(granted.status, 200, "{}", granted.text);
    for _ in 0..2 {
        let (_, outcome) = ask(&agent, &request(args.clone(), "R2", "sess-g"));
        assert_eq!(outcome["outcome"], "APPROVED", "{outcome}");
    }

    // The ledger: what it covers, who granted it, until when, how often it was used.
    let ledger = reviewer.get("/grants");
    assert_eq!(ledger.status, 200, "{}", ledger.text);
    let entry = &ledger.body["items"][0];
    assert_eq!(entry["review_id"], json!(first));
    assert_eq!(entry["uses"], json!(2));
    assert_eq!(entry["grant"]["toolName"], json!("wire_transfer"));
    assert_eq!(entry["grant"]["grantedByRole"], json!("reviewer"));
    assert!(entry["grant"]["callHash"].is_string() && entry["grant"]["expiresAt"].is_string());
    let grant = entry["grant"]["grantId"].as_str().unwrap();

    let revoked = reviewer.post(&format!("/grants/{grant}/revoke"), &json!({}));
    assert_eq!(revoked.status, 200, "{}", revoked.text);
    assert!(revoked.body["revoked_by"]
        .as_str()
        .unwrap()
        .starts_with("key_"));
    assert_eq!(reviewer.get("/grants").body["items"], json!([]));
    let (_, asked_again) = ask(&agent, &request(args, "R2", "sess-g"));
    assert_eq!(asked_again["outcome"], "TOOL_BLOCKED_PENDING_APPROVAL");
    let listed = reviewer.get("/grants?revoked=include");
    assert_eq!(listed.body["items"][0]["uses"], json!(2), "{}", listed.text);

    // The revocation is in the audit chain, which still verifies.
    let verified = Command::new(binary())
        .args(["audit", "--data", data.path().to_str().unwrap(), "export"])
        .output()
        .unwrap();
    let exported = String::from_utf8_lossy(&verified.stdout);
    assert_eq!(verified.status.code(), Some(0), "{exported}");
    assert!(exported.contains(r#""kind":"grant.revoked""#), "{exported}");
}

#[test]
fn an_expired_request_is_closed_by_the_server_and_cannot_be_approved() {
    let server = InProcess::start();
    let (agent, reviewer) = (
        server.client(&server.agent),
        server.client(&server.reviewer),
    );
    let mut body = request(json!({"path": "/var/data"}), "R3", "sess-x");
    let expires = chrono::Utc::now() + chrono::Duration::seconds(2);
    body["expiresAt"] = json!(expires.to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
    let (id, _) = ask(&agent, &body);
    let waited = agent.get(&format!("/reviews/{id}/outcome?wait=10"));
    assert_eq!(waited.body["outcome"], "TOOL_DENIED", "{}", waited.text);
    assert_eq!(waited.body["kind"], "expired");
    assert!(waited.body["reason"].as_str().unwrap().contains("expired"));
    assert_eq!(waited.body["decided_by_role"], "countersign");
    let late = approve(&reviewer, &id, json!({"mode": "once"}));
    assert_eq!(late.status, 409, "{}", late.text);
}

#[test]
fn denial_feedback_and_scope_rules_reach_the_agent() {
    let server = InProcess::start();
    let (agent, reviewer) = (
        server.client(&server.agent),
        server.client(&server.reviewer),
    );

    let (denied, _) = ask(&agent, &request(json!({"amount": 1}), "R2", "s"));
    let reply = reviewer.decide(&denied, "deny-1", &json!({"status": "rejected", "decided_by_role": "reviewer", "reason": "Not from this account"}));
    assert_eq!(reply.status, 200);
    let outcome = agent.get(&format!("/reviews/{denied}/outcome")).body;
    assert_eq!(
        (outcome["outcome"].as_str(), outcome["kind"].as_str()),
        (Some("TOOL_DENIED"), Some("denied"))
    );
    assert_eq!(outcome["reason"], "Not from this account");
    assert!(outcome["token"].is_null());

    let (answered, _) = ask(&agent, &request(json!({"amount": 2}), "R2", "s"));
    let reply = reviewer.decide(&answered, "fb-1", &json!({"status": "rejected", "decided_by_role": "reviewer", "reason": "Split it in two", "tool_call": {"mode": "feedback"}}));
    assert_eq!(reply.status, 200);
    let outcome = agent.get(&format!("/reviews/{answered}/outcome")).body;
    assert_eq!(outcome["kind"], "feedback");
    assert_eq!(outcome["reason"], "Split it in two");

    let (r4, _) = ask(&agent, &request(json!({"amount": 3}), "R4", "s"));
    let refused = approve(
        &reviewer,
        &r4,
        json!({"mode": "scope", "scope": "workspace", "confirm_high_risk": true}),
    );
    assert_eq!(refused.status, 422);
    assert_eq!(refused.paths(), vec!["/tool_call/scope"]);
    let (r3, _) = ask(&agent, &request(json!({"amount": 4}), "R3", "s"));
    let unconfirmed = approve(
        &reviewer,
        &r3,
        json!({"mode": "scope", "scope": "workspace"}),
    );
    assert!(
        unconfirmed.text.contains("second confirmation"),
        "{}",
        unconfirmed.text
    );
    let confirmed = reviewer.decide(&r3, "r3-2", &json!({"status": "approved", "decided_by_role": "reviewer", "tool_call": {"mode": "scope", "scope": "workspace", "confirm_high_risk": true}}));
    assert_eq!(confirmed.status, 200, "{}", confirmed.text);
}

#[test]
fn a_token_redeemed_twice_at_the_same_instant_is_accepted_once() {
    let server = InProcess::start();
    let (agent, reviewer) = (
        server.client(&server.agent),
        server.client(&server.reviewer),
    );
    let call = json!({"name": "wire_transfer", "args": {"amount": 10}});
    let (id, _) = ask(&agent, &request(call["args"].clone(), "R3", "s"));
    let token = approve(&reviewer, &id, json!({"mode": "once"})).body["outcome"]["token"]
        ["tokenId"]
        .clone();
    let body = json!({"tokenId": token, "toolCall": call});
    let barrier = std::sync::Barrier::new(8);
    let replies: Vec<(u16, String)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let (agent, body, barrier) = (agent.clone(), body.clone(), &barrier);
                let path = format!("/reviews/{id}/redeem");
                scope.spawn(move || {
                    barrier.wait();
                    let reply = agent.post(&path, &body);
                    (reply.status, reply.code().to_owned())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let accepted = replies.iter().filter(|(s, _)| *s == 200).count();
    let used = replies
        .iter()
        .filter(|(s, c)| *s == 409 && c == "token_used")
        .count();
    assert_eq!((accepted, used), (1, 7), "{replies:?}");
    println!("8 simultaneous redemptions: {accepted} accepted, {used} refused as token_used");
}

#[test]
fn the_agent_command_asks_waits_and_redeems() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let reviewer = server.client(&server.reviewer);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("call.json");
    let mut body = request(json!({"table": "users"}), "R4", "cli");
    body.as_object_mut().unwrap().remove("requestedByRole");
    body["toolCall"]["name"] = json!("drop_table");
    std::fs::write(&file, body.to_string()).unwrap();
    let agent_cmd = |args: &[&str]| {
        Command::new(binary())
            .args(["agent", "--server", &server.url, "--key", &server.agent])
            .args(args)
            .output()
            .unwrap()
    };
    let decider = std::thread::spawn({
        let reviewer = reviewer.clone();
        move || {
            for _ in 0..100 {
                let page =
                    reviewer.get("/reviews?status=pending&target_type=other&requester=db-agent");
                if let Some(item) = page.body["items"].as_array().and_then(|a| a.first()) {
                    let id = item["confirm"]["confirm_id"].as_str().unwrap().to_owned();
                    let edit = json!({"mode": "edit", "args": "{\"table\": \"users_archive\"}"});
                    return approve(&reviewer, &id, edit).status;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            0
        }
    });
    let output = agent_cmd(&[
        "request",
        file.to_str().unwrap(),
        "--role",
        "db-agent",
        "--wait",
        "--timeout",
        "30",
    ]);
    assert_eq!(decider.join().unwrap(), 200);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout} {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains(" approved by reviewer") && stdout.contains("[edited]"),
        "{stdout}"
    );
    let approved_call = stdout
        .lines()
        .find_map(|l| l.strip_prefix("call "))
        .unwrap();
    assert_eq!(
        approved_call,
        r#"{"args":{"table":"users_archive"},"name":"drop_table"}"#
    );
    let token = stdout
        .lines()
        .find_map(|l| l.strip_prefix("token "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap()
        .to_owned();
    let id = stdout.split_whitespace().next().unwrap().to_owned();
    let call_file = dir.path().join("approved.json");
    std::fs::write(&call_file, approved_call).unwrap();
    let redeem = |path: &std::path::Path| {
        agent_cmd(&[
            "redeem",
            &id,
            "--token",
            &token,
            "--call",
            path.to_str().unwrap(),
        ])
    };
    let first = redeem(&call_file);
    assert_eq!(
        first.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let again = redeem(&call_file);
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("token_used"));
}
