//! Approval policies through the real server: `serve --policy` refuses a file
//! with any mistake, quorums of distinct people with a required role keep a
//! call pending until met, the owner of the asking agent's key is refused
//! with a 403 naming the rule, a veto rejects, and two approvals at the same
//! instant make exactly one transition to approved (SQLite and PostgreSQL).

use crate::support::{binary, fresh_database, tool_call, write_policy, Client, Server};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

const POLICY: &str = r#"
# Payments need two people, one of them a release manager.
[[rule]]
name = "payments"
tool = "payments.*"
risk = ["R3", "R4"]
approvals = 2
required_roles = ["release_manager"]

[[rule]]
name = "tickets"
tool = "tickets.*"
approvals = 2
veto = false
"#;

fn start(data: &Path, database: Option<&str>) -> Server {
    let file = write_policy(data, POLICY);
    Server::start_on(data, database, &["--policy", file.to_str().unwrap()])
}

/// A key minted with an owner; returns its secret.
fn key(server: &Server, kind: &str, owner: &str, roles: &[&str]) -> String {
    let mut args = vec!["add", "--kind", kind, "--owner", owner];
    for role in roles {
        args.extend(["--role", role]);
    }
    let (code, out, err) = server.keys(&args);
    assert_eq!(code, 0, "{err}");
    out.lines().next().unwrap().to_owned()
}

/// Asks for a call with alice's agent key; returns the review id.
fn ask(agent: &Client, tool: &str, tier: &str) -> String {
    let mut body = tool_call(json!({"amount": 900}));
    body["toolCall"]["name"] = json!(tool);
    body["riskTier"] = json!(tier);
    let asked = agent.post("/tool-calls", &body);
    assert_eq!(asked.status, 201, "{}", asked.text);
    asked.body["outcome"]["confirm_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn approve(reviewer: &Client, id: &str, role: &str, idem: &str) -> crate::support::Reply {
    reviewer.decide(
        id,
        idem,
        &json!({"status": "approved", "decided_by_role": role}),
    )
}

struct Team {
    agent: Client,
    alice: Client,
    bob: Client,
    carol: Client,
}

fn team(server: &Server) -> Team {
    let roles = ["security_officer", "release_manager", "reviewer"];
    Team {
        agent: server.client(&key(server, "agent", "alice", &[])),
        alice: server.client(&key(server, "reviewer", "alice", &roles)),
        bob: server.client(&key(server, "reviewer", "bob", &roles)),
        carol: server.client(&key(server, "reviewer", "carol", &roles)),
    }
}

fn status(reply: &crate::support::Reply) -> &str {
    reply.body["review"]["confirm"]["status"]
        .as_str()
        .unwrap_or("")
}

#[test]
fn a_quorum_with_a_required_role_is_enforced_and_receipted() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), None);
    let t = team(&server);
    let policy = t.bob.get("/policy");
    assert_eq!(
        policy.body["rules"][0]["name"], "payments",
        "{}",
        policy.text
    );
    let me = t.bob.get("/me");
    assert_eq!(me.body["key"]["owner"], "bob", "{}", me.text);

    let id = ask(&t.agent, "payments.refund", "R4");
    let own = approve(&t.alice, &id, "release_manager", "a1");
    assert_eq!(own.status, 403, "{}", own.text);
    assert_eq!(own.code(), "policy_refused");
    assert!(
        own.text
            .contains("rule `payments` forbids approving your own request"),
        "{}",
        own.text
    );

    let first = approve(&t.bob, &id, "security_officer", "b1");
    assert_eq!(first.status, 200, "{}", first.text);
    assert_eq!(
        status(&first),
        "pending",
        "one of two approvals keeps it pending"
    );
    assert_eq!(first.body["outcome"]["status"], "pending");
    assert!(
        first.body["outcome"].get("token").is_none()
            && first.body["outcome"].get("receipt").is_none()
    );

    let retried = approve(&t.bob, &id, "security_officer", "b1");
    assert_eq!(
        (retried.status, retried.text.as_str()),
        (200, first.text.as_str()),
        "a retry answers the first result"
    );
    let twice = approve(&t.bob, &id, "release_manager", "b2");
    assert_eq!(twice.status, 403, "{}", twice.text);
    assert!(
        twice.text.contains("`bob` already approved this request"),
        "{}",
        twice.text
    );
    let crowded = approve(&t.carol, &id, "security_officer", "c1");
    assert_eq!(crowded.status, 403, "{}", crowded.text);
    assert!(
        crowded
            .text
            .contains("still needs an approval from release_manager"),
        "{}",
        crowded.text
    );

    let second = approve(&t.carol, &id, "release_manager", "c2");
    assert_eq!(second.status, 200, "{}", second.text);
    assert_eq!(status(&second), "approved");
    let receipt = &second.body["outcome"]["receipt"]["body"];
    assert_eq!(receipt["rule"], "payments");
    let owners: Vec<&Value> = receipt["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| &d["decided_by_owner"])
        .collect();
    assert_eq!(owners, [&json!("bob"), &json!("carol")]);
    assert!(
        second.body["outcome"]["token"]["tokenId"].is_string(),
        "{}",
        second.text
    );
    // The agent sees the same outcome.
    let outcome = t.agent.get(&format!("/reviews/{id}/outcome"));
    assert_eq!(outcome.body["status"], "approved", "{}", outcome.text);
}

#[test]
fn a_veto_rejects_and_a_rule_without_veto_waits_for_its_quorum() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), None);
    let t = team(&server);
    let reject = json!({"status": "rejected", "decided_by_role": "reviewer", "reason": "not now"});
    let vetoed = ask(&t.agent, "payments.refund", "R3");
    let no = t.bob.decide(&vetoed, "v1", &reject);
    assert_eq!(status(&no), "rejected", "{}", no.text);

    let ticket = ask(&t.agent, "tickets.close", "R1");
    let no = t.bob.decide(&ticket, "t1", &reject);
    assert_eq!(status(&no), "pending", "{}", no.text);
    assert_eq!(
        status(&approve(&t.carol, &ticket, "reviewer", "t2")),
        "pending"
    );
    let yes = approve(&t.alice, &ticket, "reviewer", "t3");
    assert_eq!(
        status(&yes),
        "approved",
        "self-approval is allowed below R3: {}",
        yes.text
    );
}

#[test]
fn simultaneous_approvals_make_one_transition_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    simultaneous_approvals(&start(dir.path(), None));
}

#[test]
fn simultaneous_approvals_make_one_transition_on_postgres() {
    let Some(url) = fresh_database("countersign_policy") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    simultaneous_approvals(&start(dir.path(), Some(&url)));
}

/// Bob and carol approve a two-person ticket at once, ten times over: each
/// time both are stored, exactly one of them sees the approval, once.
fn simultaneous_approvals(server: &Server) {
    let t = team(server);
    for round in 0..10 {
        let id = ask(&t.agent, "tickets.close", "R1");
        let (bob, carol) = std::thread::scope(|s| {
            let b = s.spawn(|| approve(&t.bob, &id, "reviewer", &format!("b{round}")));
            let c = s.spawn(|| approve(&t.carol, &id, "reviewer", &format!("c{round}")));
            (b.join().unwrap(), c.join().unwrap())
        });
        assert_eq!(
            (bob.status, carol.status),
            (200, 200),
            "{} / {}",
            bob.text,
            carol.text
        );
        let mut seen = [status(&bob), status(&carol)];
        seen.sort();
        assert_eq!(seen, ["approved", "pending"], "round {round}");
        let stored = t.bob.get(&format!("/reviews/{id}"));
        let events: Vec<&str> = stored.body["review"]["confirm"]["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| e["event_type"].as_str())
            .collect();
        assert_eq!(
            events.iter().filter(|e| **e == "decision.approved").count(),
            2
        );
        assert_eq!(stored.body["review"]["confirm"]["status"], "approved");
    }
}

#[test]
fn a_policy_with_a_mistake_refuses_to_start_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "[[rule]]\nname = \"a\"\naprovals = 2\n",
            ":3: unknown field `aprovals`",
        ),
        (
            "[[rule]]\nname = \"a\"\non_expiry = \"approved\"\n",
            ":3: unknown variant `approved`",
        ),
        (
            "[[rule]]\nname = \"a\"\nrisk = [\"R7\"]\n",
            ":3: unknown variant `R7`",
        ),
        (
            "[[rule]]\nname = \"all\"\n\n[[rule]]\nname = \"late\"\n",
            ":5: rule 2 `name`: this rule can never match",
        ),
    ];
    for (n, (text, expected)) in cases.iter().enumerate() {
        let file = dir.path().join(format!("bad{n}.toml"));
        std::fs::write(&file, text).unwrap();
        let output = Command::new(binary())
            .args(["serve", "--listen", "127.0.0.1:0", "--data"])
            .arg(dir.path())
            .arg("--policy")
            .arg(&file)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{text}: {stderr}");
        assert!(
            stderr.contains(&format!("{}{expected}", file.display())),
            "{text}: {stderr}"
        );
        assert!(
            output.stdout.is_empty(),
            "never listened: {}",
            String::from_utf8_lossy(&output.stdout)
        );
    }
    let missing = Command::new(binary())
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--policy",
            "/nonexistent/policy.toml",
            "--data",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr)
        .contains("policy /nonexistent/policy.toml: cannot be read"));
}

#[test]
fn a_rules_expiry_caps_the_agents_and_closes_the_call_as_the_rule_says() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("expiry.toml");
    std::fs::write(
        &file,
        "[[rule]]\nname = \"quick\"\ntool = \"deploy\"\nexpires_after = \"2s\"\non_expiry = \"rejected\"\n",
    )
    .unwrap();
    let server = Server::start(dir.path(), &["--policy", file.to_str().unwrap()]);
    let agent = server.client(&server.agent);
    let mut body = tool_call(json!({}));
    body["toolCall"]["name"] = json!("deploy");
    let asked = agent.post("/tool-calls", &body);
    assert_eq!(asked.status, 201, "{}", asked.text);
    let request = &asked.body["review"]["target"]["tool_call"]["request"];
    let at = |field: &str| {
        chrono::DateTime::parse_from_rfc3339(request[field].as_str().unwrap()).unwrap()
    };
    assert_eq!(
        (at("expiresAt") - at("requestedAt")).num_seconds(),
        2,
        "{request}"
    );
    let id = asked.body["outcome"]["confirm_id"].as_str().unwrap();
    let outcome = agent.get(&format!("/reviews/{id}/outcome?wait=10"));
    assert_eq!(outcome.body["status"], "rejected", "{}", outcome.text);
    assert_eq!(outcome.body["kind"], "expired", "{}", outcome.text);
}

#[test]
fn a_review_stored_before_requesters_were_recorded_still_keeps_its_owner_out() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), None);
    let t = team(&server);
    let id = ask(&t.agent, "payments.refund", "R4");
    // As a review stored by an earlier version reads: no `requester` in its document.
    sqlx::any::install_default_drivers();
    let url = format!("sqlite://{}", dir.path().join("countersign.db").display());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let pool = sqlx::AnyPool::connect(&url).await.unwrap();
        sqlx::query("UPDATE reviews SET doc = json_remove(doc, '$.requester') WHERE id = $1")
            .bind(&id)
            .execute(&pool)
            .await
            .unwrap();
    });
    let stored = t.bob.get(&format!("/reviews/{id}"));
    assert!(
        stored.body["review"].get("requester").is_none(),
        "{}",
        stored.text
    );
    let own = approve(&t.alice, &id, "release_manager", "legacy");
    assert_eq!(own.status, 403, "{}", own.text);
    assert!(
        own.text.contains("forbids approving your own request"),
        "{}",
        own.text
    );
}
