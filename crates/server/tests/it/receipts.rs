//! Signed receipts through the real server and the real `countersign`
//! commands: every decision carries one, `countersign verify` checks it
//! offline, a changed byte or another key fails, and `countersign agent
//! redeem --public-key` refuses a token whose receipt does not verify before
//! it is spent.

use crate::support::{binary, Server};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::path::Path;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(binary()).args(args).output().unwrap()
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A key nobody signs with here: RFC 8032's first test vector's public key.
const OTHER_KEY: &str = "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=";

/// The public key `countersign keys signing-key` prints for a data folder.
fn public_key(data: &Path) -> String {
    let output = run(&["keys", "--data", data.to_str().unwrap(), "signing-key"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

fn verify(file: &Path, key: &str) -> Output {
    run(&["verify", file.to_str().unwrap(), "--public-key", key])
}

/// Asks for a transfer and approves it; returns the review id and the decision's answer.
fn approved_transfer(server: &Server, amount: u32) -> (String, Value) {
    let agent = server.client(&server.agent);
    let asked = agent.post(
        "/tool-calls",
        &crate::support::tool_call(json!({"amount": amount})),
    );
    assert_eq!(asked.status, 201, "{}", asked.text);
    let id = asked.body["outcome"]["confirm_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        asked.body["outcome"].get("receipt").is_none(),
        "pending: no receipt yet"
    );
    let reviewer = server.client(&server.reviewer);
    let decided = reviewer.decide(
        &id,
        &format!("approve-{id}"),
        &json!({"status": "approved", "decided_by_role": "security_officer"}),
    );
    assert_eq!(decided.status, 200, "{}", decided.text);
    (id, decided.body)
}

#[test]
fn a_decision_carries_a_receipt_that_verifies_offline_and_not_once_changed() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let key = public_key(data.path());
    let served = server.anonymous().get("/signing-key");
    assert_eq!(served.status, 200);
    assert_eq!(
        served.body,
        json!({"algorithm": "Ed25519", "public_key": key})
    );

    let (id, answer) = approved_transfer(&server, 100);
    let receipt = &answer["outcome"]["receipt"];
    let body = &receipt["body"];
    assert_eq!(body["confirm_id"], json!(id));
    assert_eq!(body["status"], json!("approved"));
    assert_eq!(body["rule"], json!("default"));
    assert_eq!(body["target"]["kind"], json!("tool_call"));
    assert_eq!(
        body["target"]["sha256"],
        answer["review"]["target"]["tool_call"]["request"]["toolCallHash"]
    );
    assert_eq!(
        body["decisions"][0]["decided_by_role"],
        json!("security_officer")
    );
    assert!(body["decisions"][0]["decided_by_key"]
        .as_str()
        .unwrap()
        .starts_with("key_"));
    // A reviewer key's decision was made through the API, and says so
    // wherever it is recorded.
    assert_eq!(body["decisions"][0]["channel"], json!("api"));
    assert_eq!(answer["review"]["deciders"][0]["channel"], json!("api"));
    assert_eq!(
        body["token"]["token_id"],
        answer["outcome"]["token"]["tokenId"]
    );
    // Read again later, the outcome carries the same receipt.
    let outcome = server
        .client(&server.agent)
        .get(&format!("/reviews/{id}/outcome"));
    assert_eq!(&outcome.body["receipt"], receipt);

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("answer.json");
    std::fs::write(&file, answer.to_string()).unwrap();
    let valid = verify(&file, &key);
    assert_eq!(valid.status.code(), Some(0), "{}", text(&valid));
    assert!(
        text(&valid).contains(&format!("Review {id} is approved"))
            && text(&valid).contains("approved as security_officer by key_")
            && text(&valid).contains(" through the API at "),
        "{}",
        text(&valid)
    );

    // One byte changed anywhere in what was signed: not valid.
    for (path, value) in [
        (
            "/body/decisions/0/decided_by_role",
            json!("security_officeR"),
        ),
        ("/body/token/expires_at", json!("2099-01-01T00:00:00Z")),
        ("/body/status", json!("rejected")),
    ] {
        let mut changed = receipt.clone();
        *changed.pointer_mut(path).unwrap() = value;
        std::fs::write(&file, changed.to_string()).unwrap();
        let refused = verify(&file, &key);
        assert_eq!(refused.status.code(), Some(1), "{path}: {}", text(&refused));
        assert!(
            text(&refused).contains("does not match"),
            "{}",
            text(&refused)
        );
    }

    // Checked against another server's key: not valid, and it says so.
    std::fs::write(&file, receipt.to_string()).unwrap();
    let refused = verify(&file, OTHER_KEY);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        text(&refused).contains("signed by another key"),
        "{}",
        text(&refused)
    );

    // A key that is not one, a file that is not JSON: usage errors, exit 2.
    assert_eq!(verify(&file, "not-a-key").status.code(), Some(2));
    std::fs::write(&file, "{").unwrap();
    assert_eq!(verify(&file, &key).status.code(), Some(2));
}

/// SHA-256 (hex) of a JSON value's RFC 8785 canonical form.
fn canonical_sha256(value: &Value) -> String {
    let canonical = serde_json_canonicalizer::to_string(value).unwrap();
    Sha256::digest(canonical.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn a_plan_receipt_names_the_plan_as_asked_and_after_a_resubmission_the_revised_one() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let (agent, reviewer) = (
        server.client(&server.agent),
        server.client(&server.reviewer),
    );
    let created = agent.post("/reviews", &crate::support::review(1, 3, false));
    assert_eq!(created.status, 201, "{}", created.text);
    let asked = canonical_sha256(&created.body["review"]["target"]["plan"]);
    assert_eq!(created.body["review"]["target_sha256"], json!(asked));
    let id = crate::support::confirm_id(1);
    let reject =
        json!({"status": "rejected", "decided_by_role": "reviewer", "reason": "too broad"});
    let decided = reviewer.decide(&id, "reject-1", &reject);
    assert_eq!(decided.status, 200, "{}", decided.text);
    let body = &decided.body["outcome"]["receipt"]["body"];
    assert_eq!(body["status"], json!("rejected"));
    assert_eq!(body["target"]["kind"], json!("plan"));
    // The decision moved the plan to `draft`; the receipt names what was asked.
    assert_eq!(decided.body["review"]["target"]["plan"]["status"], "draft");
    assert_eq!(body["target"]["sha256"], json!(asked));

    let mut revised = crate::support::plan(1, 2, false);
    revised["title"] = json!("Test plan 1, smaller");
    let reopened = agent.post(
        &format!("/reviews/{id}/resubmit"),
        &json!({"by_role": "deploy-agent", "plan": revised}),
    );
    assert_eq!(reopened.status, 200, "{}", reopened.text);
    let asked_again = canonical_sha256(&reopened.body["review"]["target"]["plan"]);
    assert_ne!(asked_again, asked);
    let approve = json!({"status": "approved", "decided_by_role": "reviewer"});
    let approved = reviewer.decide(&id, "approve-1", &approve);
    assert_eq!(approved.status, 200, "{}", approved.text);
    let body = &approved.body["outcome"]["receipt"]["body"];
    assert_eq!(body["status"], json!("approved"));
    assert_eq!(body["target"]["sha256"], json!(asked_again));
    // Read again later, it names the same.
    let outcome = reviewer.get(&format!("/reviews/{id}/outcome"));
    assert_eq!(outcome.body["receipt"]["body"], *body);
}

#[test]
fn a_plan_without_a_canonical_form_is_refused_when_asked_not_when_decided() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let mut review = crate::support::review(2, 2, false);
    // An integer no IEEE 754 double holds exactly: it has no RFC 8785 form.
    review["target"]["plan"]["steps"][0]["order_index"] = json!(9_007_199_254_740_993_u64);
    let refused = server.client(&server.agent).post("/reviews", &review);
    assert_eq!(refused.status, 422, "{}", refused.text);
    assert!(
        refused
            .paths()
            .contains(&"/target/plan/steps/0/order_index".to_owned()),
        "{}",
        refused.text
    );
}

#[test]
fn a_token_whose_receipt_does_not_verify_is_refused_before_it_is_spent() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let key = public_key(data.path());
    let other_key = OTHER_KEY;
    let (id, answer) = approved_transfer(&server, 250);
    let token = answer["outcome"]["token"]["tokenId"].as_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let redeem = |call: Value, key: &str| {
        let file = dir.path().join("call.json");
        std::fs::write(&file, call.to_string()).unwrap();
        run(&[
            "agent",
            "--server",
            &server.url,
            "--key",
            &server.agent,
            "--public-key",
            key,
            "redeem",
            &id,
            "--token",
            token,
            "--call",
            file.to_str().unwrap(),
        ])
    };
    let call = json!({"name": "wire_transfer", "args": {"amount": 250}});

    let forged = redeem(call.clone(), other_key);
    assert_eq!(forged.status.code(), Some(1), "{}", text(&forged));
    assert!(
        text(&forged).contains("signed by another key"),
        "{}",
        text(&forged)
    );
    let another_call = redeem(
        json!({"name": "wire_transfer", "args": {"amount": 9999}}),
        &key,
    );
    assert_eq!(another_call.status.code(), Some(1));
    assert!(
        text(&another_call).contains("allows another call"),
        "{}",
        text(&another_call)
    );

    // Neither spent the token: with the right key and the approved call it runs, once.
    let redeemed = redeem(call.clone(), &key);
    assert_eq!(redeemed.status.code(), Some(0), "{}", text(&redeemed));
    let again = redeem(call, &key);
    assert_eq!(again.status.code(), Some(1));
    assert!(text(&again).contains("token_used"), "{}", text(&again));
}

#[test]
fn a_call_let_through_by_a_grant_has_a_receipt_naming_the_grant_and_who_granted_it() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let key = public_key(data.path());
    let (code, out, err) = server.keys(&[
        "add", "--kind", "reviewer", "--owner", "alice", "--role", "reviewer",
    ]);
    assert_eq!(code, 0, "{err}");
    let alice = server.client(out.lines().next().unwrap());
    let agent = server.client(&server.agent);
    let ask = || {
        let asked = agent.post(
            "/tool-calls",
            &crate::support::tool_call(json!({"amount": 40})),
        );
        assert_eq!(asked.status, 201, "{}", asked.text);
        asked.body
    };
    let first = ask();
    let id = first["outcome"]["confirm_id"].as_str().unwrap();
    let granted = alice.decide(
        id,
        "grant",
        &json!({"status": "approved", "decided_by_role": "reviewer",
                "tool_call": {"mode": "scope", "scope": "session"}}),
    );
    assert_eq!(granted.status, 200, "{}", granted.text);
    let alice_key = granted.body["outcome"]["receipt"]["body"]["decisions"][0]["decided_by_key"]
        .as_str()
        .unwrap()
        .to_owned();

    // The same call again: let through by alice's grant, and its receipt says so.
    let second = ask();
    let outcome = &second["outcome"];
    assert_eq!(outcome["outcome"], "APPROVED", "{outcome}");
    let grant = outcome["approved_by_grant"].as_str().unwrap();
    let body = &outcome["receipt"]["body"];
    assert_eq!(body["approved_by_grant"], json!(grant));
    assert_eq!(body["decisions"][0]["decided_by_owner"], json!("alice"));
    assert_eq!(body["decisions"][0]["decided_by_key"], json!(alice_key));

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("receipt.json");
    std::fs::write(&file, outcome["receipt"].to_string()).unwrap();
    let valid = verify(&file, &key);
    assert_eq!(valid.status.code(), Some(0), "{}", text(&valid));
    let said = text(&valid);
    assert!(
        said.contains(&format!("approved as reviewer by alice ({alice_key})"))
            && said.contains(&format!("let through by grant {grant}, granted by alice")),
        "{said}"
    );

    // The ledger names the person too.
    let ledger = alice.get("/grants");
    let entry = &ledger.body["items"][0]["grant"];
    assert_eq!(entry["grantedByOwner"], json!("alice"), "{}", ledger.text);
    assert_eq!(entry["grantedByKey"], json!(alice_key));
}
