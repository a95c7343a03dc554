//! Who may do what, and what holds under races and crashes (docs/security.md):
//! the whole authorization table of the API, 64 decisions racing on one
//! review, a token redeemed by many at the same instant, and the server killed
//! with SIGKILL in the middle of a decision load, on SQLite and PostgreSQL.

use crate::support::{
    confirm_id, fresh_database, open_events, review, Client, Opener, Reply, Server,
};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Barrier;

/// Who calls, in the order of the table's columns.
const CALLERS: [&str; 6] = [
    "no key",
    "revoked key",
    "agent (owner)",
    "other agent",
    "reviewer, other role",
    "reviewer, role",
];

/// Every endpoint and the status each caller gets; the owner is the agent that
/// created the review, the role is the one the decision signs as.
const TABLE: [(&str, [u16; 6]); 28] = [
    ("GET /health", [200, 200, 200, 200, 200, 200]),
    ("GET /signing-key", [200, 200, 200, 200, 200, 200]),
    ("GET /policy", [401, 401, 200, 200, 200, 200]),
    ("GET /me", [401, 401, 200, 200, 200, 200]),
    ("GET /webhooks", [401, 401, 403, 403, 200, 200]),
    ("POST /pairings", [401, 401, 403, 403, 201, 201]),
    // The one-time code is the credential: any caller, even without a key.
    ("POST /pairings/redeem", [201, 201, 201, 201, 201, 201]),
    ("GET /devices", [401, 401, 403, 403, 200, 200]),
    // Only the devices paired from one's own key (or owner) can be revoked.
    ("POST /devices/{id}/revoke", [401, 401, 403, 403, 404, 200]),
    ("GET /openapi.json", [200, 200, 200, 200, 200, 200]),
    // Only a reviewer key draws its device's page; forgetting needs none.
    ("POST /page-key", [401, 401, 403, 403, 204, 204]),
    ("POST /page-key/forget", [204, 204, 204, 204, 204, 204]),
    ("POST /reviews", [401, 401, 201, 201, 403, 403]),
    ("GET /reviews", [401, 401, 403, 403, 200, 200]),
    ("GET /reviews/{id}", [401, 401, 200, 404, 200, 200]),
    ("GET /requesters", [401, 401, 403, 403, 200, 200]),
    ("GET /inbox", [401, 401, 403, 403, 200, 200]),
    ("GET /reviews/{id}/outcome", [401, 401, 200, 404, 200, 200]),
    (
        "POST /reviews/{id}/decisions",
        [401, 401, 403, 403, 403, 200],
    ),
    (
        "POST /reviews/{id}/resubmit",
        [401, 401, 200, 404, 403, 403],
    ),
    ("POST /tool-calls", [401, 401, 201, 201, 403, 403]),
    ("POST /reviews/{id}/redeem", [401, 401, 200, 404, 403, 403]),
    (
        "POST /reviews/{id}/withdraw",
        [401, 401, 200, 404, 403, 403],
    ),
    ("GET /events", [401, 401, 403, 403, 200, 200]),
    ("POST /events/tickets", [401, 401, 403, 403, 201, 201]),
    ("GET /changes", [401, 401, 403, 403, 200, 200]),
    ("GET /grants", [401, 401, 403, 403, 200, 200]),
    // Revoking only ever takes an approval back: any reviewer key may.
    ("POST /grants/{id}/revoke", [401, 401, 403, 403, 200, 200]),
];

const ROLE: &str = "security_officer";

/// Adds a key with `countersign keys add`; returns (secret, key id).
fn add_key(server: &Server, args: &[&str]) -> (String, String) {
    let (code, out, err) = server.keys(&[&["add"], args].concat());
    assert_eq!(code, 0, "{err}");
    let mut lines = out.lines();
    let secret = lines.next().unwrap().to_owned();
    let id = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap()
        .to_owned();
    (secret, id)
}

/// Tool call `n`: a transfer of `n` EUR in its own run.
fn tool_call(n: usize) -> Value {
    let mut body = crate::support::tool_call(json!({"amount": n, "to": "ACME GmbH"}));
    body["runId"] = json!(format!("run-{n}"));
    body["clientDeviceId"] = json!("laptop-7");
    body
}

fn decision(status: &str, reason: &str) -> Value {
    json!({"status": status, "decided_by_role": ROLE, "reason": reason})
}

/// Sends one cell of the table: fresh state made by the owner (and a reviewer
/// where the endpoint needs a decided review), then the call as `caller`.
fn call(
    endpoint: &str,
    caller: &Client,
    owner: &Client,
    reviewer: &Client,
    server: &Server,
    n: usize,
) -> u16 {
    let n32 = n as u32;
    let fresh_review = || {
        let created = owner.post("/reviews", &review(n32, 2, false));
        assert_eq!(created.status, 201, "{}", created.text);
        confirm_id(n32)
    };
    let approved_call = || {
        let asked = owner.post("/tool-calls", &tool_call(n));
        assert_eq!(asked.status, 201, "{}", asked.text);
        let id = asked.body["outcome"]["confirm_id"]
            .as_str()
            .unwrap()
            .to_owned();
        let decided = reviewer.decide(&id, &format!("ok-{n}"), &decision("approved", "fine"));
        assert_eq!(decided.status, 200, "{}", decided.text);
        let token = decided.body["outcome"]["token"]["tokenId"].clone();
        (id, token)
    };
    match endpoint {
        "GET /health" => caller.get("/health").status,
        "GET /policy" => caller.get("/policy").status,
        "GET /me" => caller.get("/me").status,
        "GET /webhooks" => caller.get("/webhooks").status,
        "POST /pairings" => caller.post("/pairings", &json!({})).status,
        "POST /pairings/redeem" => {
            let code = reviewer.post("/pairings", &json!({})).body["code"].clone();
            let paired = caller.post(
                "/pairings/redeem",
                &json!({"code": code, "device": format!("phone {n}")}),
            );
            paired.status
        }
        "GET /devices" => caller.get("/devices").status,
        "POST /devices/{id}/revoke" => {
            let code = reviewer.post("/pairings", &json!({})).body["code"].clone();
            let paired = server.anonymous().post(
                "/pairings/redeem",
                &json!({"code": code, "device": format!("phone {n}")}),
            );
            assert_eq!(paired.status, 201, "{}", paired.text);
            let id = paired.body["key_id"].as_str().unwrap().to_owned();
            caller
                .post(&format!("/devices/{id}/revoke"), &json!({}))
                .status
        }
        "GET /openapi.json" => caller.get("/openapi.json").status,
        "POST /page-key" => caller.post("/page-key", &json!({})).status,
        "POST /page-key/forget" => caller.post("/page-key/forget", &json!({})).status,
        "POST /reviews" => caller.post("/reviews", &review(n32, 2, false)).status,
        "GET /reviews" => caller.get("/reviews").status,
        "GET /reviews/{id}" => caller.get(&format!("/reviews/{}", fresh_review())).status,
        "GET /reviews/{id}/outcome" => {
            caller
                .get(&format!("/reviews/{}/outcome", fresh_review()))
                .status
        }
        "POST /reviews/{id}/decisions" => {
            caller
                .decide(
                    &fresh_review(),
                    &format!("cell-{n}"),
                    &decision("approved", "ok"),
                )
                .status
        }
        "POST /reviews/{id}/resubmit" => {
            let id = fresh_review();
            let rejected = reviewer.decide(&id, &format!("no-{n}"), &decision("rejected", "no"));
            assert_eq!(rejected.status, 200, "{}", rejected.text);
            caller
                .post(
                    &format!("/reviews/{id}/resubmit"),
                    &json!({"by_role": "deploy-agent"}),
                )
                .status
        }
        "POST /tool-calls" => caller.post("/tool-calls", &tool_call(n)).status,
        "POST /reviews/{id}/redeem" => {
            let (id, token) = approved_call();
            caller
                .post(
                    &format!("/reviews/{id}/redeem"),
                    &json!({"tokenId": token, "toolCall": {"name": "wire_transfer", "args": {"amount": n, "to": "ACME GmbH"}}, "clientDeviceId": "laptop-7"}),
                )
                .status
        }
        "POST /reviews/{id}/withdraw" => {
            let asked = owner.post("/tool-calls", &tool_call(n));
            assert_eq!(asked.status, 201, "{}", asked.text);
            let id = asked.body["outcome"]["confirm_id"].as_str().unwrap();
            caller
                .post(&format!("/reviews/{id}/withdraw"), &json!({}))
                .status
        }
        "GET /events" => {
            let opener = caller.key.as_deref().map_or(Opener::Nobody, Opener::Key);
            open_events(server, opener, "").0
        }
        "POST /events/tickets" => caller.post("/events/tickets", &json!({})).status,
        "GET /requesters" => caller.get("/requesters").status,
        "GET /inbox" => caller.get("/inbox?server=x").status,
        "GET /changes" => caller.get("/changes?after=0").status,
        "GET /signing-key" => caller.get("/signing-key").status,
        "GET /grants" => caller.get("/grants").status,
        "POST /grants/{id}/revoke" => {
            let asked = owner.post("/tool-calls", &tool_call(n));
            assert_eq!(asked.status, 201, "{}", asked.text);
            let id = asked.body["outcome"]["confirm_id"].as_str().unwrap();
            let mut scoped = decision("approved", "for this session");
            scoped["tool_call"] = json!({"mode": "scope", "scope": "session"});
            let decided = reviewer.decide(id, &format!("grant-{n}"), &scoped);
            assert_eq!(decided.status, 200, "{}", decided.text);
            let grant =
                &decided.body["review"]["target"]["tool_call"]["outcome"]["grant"]["grantId"];
            caller
                .post(
                    &format!("/grants/{}/revoke", grant.as_str().unwrap()),
                    &json!({}),
                )
                .status
        }
        other => panic!("no cell for {other}"),
    }
}

#[test]
fn the_authorization_table_holds_for_every_endpoint_and_caller() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let (owner, _) = add_key(&server, &["--kind", "agent", "--label", "owner"]);
    let (other_agent, _) = add_key(&server, &["--kind", "agent", "--label", "other"]);
    let (other_role, _) = add_key(&server, &["--kind", "reviewer", "--role", "dba"]);
    let (with_role, _) = add_key(&server, &["--kind", "reviewer", "--role", ROLE]);
    let (revoked, revoked_id) = add_key(&server, &["--kind", "reviewer", "--role", ROLE]);
    assert_eq!(server.keys(&["revoke", &revoked_id]).0, 0);
    let callers = [
        server.anonymous(),
        server.client(&revoked),
        server.client(&owner),
        server.client(&other_agent),
        server.client(&other_role),
        server.client(&with_role),
    ];
    let owner = server.client(&owner);
    let reviewer = server.client(&with_role);
    let mut n = 100;
    let mut wrong = Vec::new();
    println!("| endpoint | {} |", CALLERS.join(" | "));
    for (endpoint, expected) in TABLE {
        let mut row = Vec::new();
        for (column, caller) in callers.iter().enumerate() {
            n += 1;
            let got = call(endpoint, caller, &owner, &reviewer, &server, n);
            row.push(got.to_string());
            if got != expected[column] {
                wrong.push(format!(
                    "{endpoint} as {}: {got}, expected {}",
                    CALLERS[column], expected[column]
                ));
            }
        }
        println!("| {endpoint} | {} |", row.join(" | "));
    }
    assert!(wrong.is_empty(), "cells that differ:\n{}", wrong.join("\n"));
    println!(
        "authorization: {} cells checked, 0 differ",
        TABLE.len() * CALLERS.len()
    );
}

/// `n` requests sent by `n` threads released at the same instant; their replies.
fn at_once(n: usize, send: impl Fn(usize) -> Reply + Sync) -> Vec<Reply> {
    let start = Barrier::new(n);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let (start, send) = (&start, &send);
                scope.spawn(move || {
                    start.wait();
                    send(i)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// How many decisions review `id` holds.
fn decisions_stored(server: &Server, id: &str) -> usize {
    let stored = server
        .client(&server.reviewer)
        .get(&format!("/reviews/{id}"));
    stored.body["review"]["confirm"]["decisions"]
        .as_array()
        .map_or(0, Vec::len)
}

/// 64 reviewers' decisions released at once on one review: exactly one is
/// recorded, every other is refused with 409 naming it.
fn sixty_four_decisions_on_one_review(server: &Server) {
    let agent = server.client(&server.agent);
    assert_eq!(agent.post("/reviews", &review(64, 2, false)).status, 201);
    let id = confirm_id(64);
    let replies = at_once(64, |i| {
        let status = ["approved", "rejected", "cancelled"][i % 3];
        let body = json!({"status": status, "decided_by_role": "reviewer", "reason": format!("racer {i}")});
        server
            .client(&server.reviewer)
            .decide(&id, &format!("race-{i}"), &body)
    });
    let winners = replies.iter().filter(|r| r.status == 200).count();
    let refused = replies
        .iter()
        .filter(|r| r.status == 409 && r.code() == "already_decided")
        .count();
    let decisions = decisions_stored(server, &id);
    println!("64 concurrent decisions: {winners} recorded, {refused} refused with 409, {decisions} stored");
    assert_eq!((winners, refused, decisions), (1, 63, 1));
}

/// One decision sent 32 times at the same instant under one idempotency key
/// (a client retrying eagerly): stored once, and every answer is the first
/// result, byte for byte.
fn one_decision_retried_at_once(server: &Server) {
    let agent = server.client(&server.agent);
    assert_eq!(agent.post("/reviews", &review(65, 2, false)).status, 201);
    let id = confirm_id(65);
    let body = json!({"status": "approved", "decided_by_role": "reviewer", "reason": "once"});
    let replies = at_once(32, |_| {
        server
            .client(&server.reviewer)
            .decide(&id, "the-one-key", &body)
    });
    assert!(
        replies.iter().all(|r| r.status == 200),
        "{:?}",
        replies.iter().map(|r| r.status).collect::<Vec<_>>()
    );
    assert!(replies.iter().all(|r| r.text == replies[0].text));
    let decisions = decisions_stored(server, &id);
    println!("32 retries of one decision at once: 32 answered 200 with the same body, {decisions} stored");
    assert_eq!(decisions, 1);
}

/// One approved tool call's token redeemed by 32 requests released at once:
/// accepted once, every other refused as used.
fn one_token_redeemed_at_once(server: &Server) {
    let agent = server.client(&server.agent);
    let asked = agent.post("/tool-calls", &tool_call(7));
    assert_eq!(asked.status, 201, "{}", asked.text);
    let id = asked.body["outcome"]["confirm_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let decided = server.client(&server.reviewer).decide(
        &id,
        "approve-7",
        &json!({"status": "approved", "decided_by_role": "reviewer"}),
    );
    assert_eq!(decided.status, 200, "{}", decided.text);
    let body = json!({
        "tokenId": decided.body["outcome"]["token"]["tokenId"],
        "toolCall": {"name": "wire_transfer", "args": {"amount": 7, "to": "ACME GmbH"}},
        "clientDeviceId": "laptop-7",
    });
    let replies = at_once(32, |_| agent.post(&format!("/reviews/{id}/redeem"), &body));
    let accepted = replies.iter().filter(|r| r.status == 200).count();
    let used = replies.iter().filter(|r| r.code() == "token_used").count();
    println!("one token redeemed by 32 at once: {accepted} accepted, {used} refused as used");
    assert_eq!((accepted, used), (1, 31));
}

/// The server is killed (SIGKILL) while 16 reviewers decide 300 reviews; after
/// the restart every acknowledged decision is there, no review holds a
/// half-written or second decision, and a retry with the same idempotency key
/// either returns the stored decision or records it now.
fn killed_in_the_middle_of_a_decision_load(data: &std::path::Path, database: Option<&str>) {
    const REVIEWS: usize = 300;
    let server = Server::start_on(data, database, &[]);
    let (key, _) = add_key(&server, &["--kind", "reviewer", "--role", ROLE]);
    let agent = server.client(&server.agent);
    for n in 0..REVIEWS as u32 {
        assert_eq!(
            agent.post("/reviews", &review(1000 + n, 2, false)).status,
            201
        );
    }
    let body = |n: usize| {
        decision(
            ["approved", "rejected"][n % 2],
            &format!("decision {n} under load"),
        )
    };
    let next = AtomicUsize::new(0);
    let acknowledged = std::sync::Mutex::new(Vec::new());
    let client = server.client(&key);
    std::thread::scope(|scope| {
        for _ in 0..16 {
            scope.spawn(|| loop {
                let n = next.fetch_add(1, Ordering::SeqCst);
                if n >= REVIEWS {
                    return;
                }
                let id = confirm_id(1000 + n as u32);
                let sent = client.try_send(
                    "POST",
                    &format!("/reviews/{id}/decisions"),
                    Some(("application/json", body(n).to_string().as_bytes())),
                    &[("Idempotency-Key", &format!("load-{n}"))],
                );
                match sent {
                    Ok(reply) if reply.status == 200 => acknowledged.lock().unwrap().push(n),
                    Ok(reply) => panic!("decision {n}: {} {}", reply.status, reply.text),
                    Err(_) => return, // the server is gone
                }
            });
        }
        // Kill it once a third of the decisions are acknowledged.
        while acknowledged.lock().unwrap().len() < REVIEWS / 3 {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        server.crash();
    });
    let acknowledged = acknowledged.into_inner().unwrap();
    // Its 600 checks below are not a load the rate limit is for.
    let restarted = Server::start_on(data, database, &["--reviewer-rate", "none"]);
    let client = restarted.client(&key);
    let (mut stored, mut half_written, mut lost) = (0, 0, 0);
    for n in 0..REVIEWS {
        let id = confirm_id(1000 + n as u32);
        let confirm = client.get(&format!("/reviews/{id}")).body["review"]["confirm"].clone();
        let decisions = confirm["decisions"].as_array().cloned().unwrap_or_default();
        let consistent = match decisions.as_slice() {
            [] => confirm["status"] == "pending",
            [only] => {
                only["status"] == confirm["status"]
                    && only["reason"] == body(n)["reason"]
                    && only["decided_by_role"] == ROLE
            }
            _ => false,
        };
        if !consistent {
            half_written += 1;
        } else if decisions.len() == 1 {
            stored += 1;
        } else if acknowledged.contains(&n) {
            lost += 1;
        }
        // The agent's retry of the same request: the stored result, or recorded now.
        let retry = client.decide(&id, &format!("load-{n}"), &body(n));
        assert_eq!(retry.status, 200, "retry of decision {n}: {}", retry.text);
        assert_eq!(
            retry.body["review"]["confirm"]["decisions"]
                .as_array()
                .map(Vec::len),
            Some(1),
            "retry of decision {n}"
        );
    }
    println!(
        "SIGKILL during {REVIEWS} decisions ({}): {} acknowledged before the kill, {stored} stored after the restart, {lost} acknowledged but lost, {half_written} half-written; every retry answered with exactly one decision",
        database.map_or("SQLite", |_| "PostgreSQL"),
        acknowledged.len()
    );
    assert_eq!((lost, half_written), (0, 0));
    assert!(stored >= acknowledged.len());
}

#[test]
fn sqlite_holds_races_and_a_crash() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    sixty_four_decisions_on_one_review(&server);
    one_decision_retried_at_once(&server);
    one_token_redeemed_at_once(&server);
    drop(server);
    let data = tempfile::tempdir().unwrap();
    killed_in_the_middle_of_a_decision_load(data.path(), None);
}

#[test]
fn postgresql_holds_races_and_a_crash() {
    let Some(url) = fresh_database("countersign_races") else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let server = Server::start_on(data.path(), Some(&url), &[]);
    sixty_four_decisions_on_one_review(&server);
    one_decision_retried_at_once(&server);
    one_token_redeemed_at_once(&server);
    drop(server);
    let Some(url) = fresh_database("countersign_crash") else {
        return;
    };
    killed_in_the_middle_of_a_decision_load(data.path(), Some(&url));
}

/// Every secret a workload handles: keys minted and used (a wrong one too),
/// an event ticket in a URL, a pairing code and the device key it gives, a
/// webhook's signing secret, an approval token and a receipt's signature. The
/// log (JSON, every level down to debug) names none of them, and has one line
/// per request with its route, status and the id echoed as `X-Request-Id`.
#[test]
fn the_log_holds_no_secret_and_a_line_per_request() {
    let data = tempfile::tempdir().unwrap();
    let log = data.path().join("server.log");
    let server = Server::start_logging(
        data.path(),
        &[
            "--log-format",
            "json",
            "--log-filter",
            "debug,hyper=info,h2=info",
            "--webhook",
            "http://127.0.0.1:9/hook/T0SECRETPATH",
        ],
        &log,
    );
    let mut secrets = vec![server.reviewer.clone(), server.agent.clone()];
    let (agent_key, _) = add_key(&server, &["--kind", "agent", "--owner", "ana"]);
    let (reviewer_key, _) = add_key(&server, &["--kind", "reviewer", "--role", ROLE]);
    secrets.extend([agent_key.clone(), reviewer_key.clone()]);
    let (agent, reviewer) = (server.client(&agent_key), server.client(&reviewer_key));
    let wrong = "cs_reviewer_0000000000000000000000000000000000000000000000";
    assert_eq!(server.client(wrong).get("/reviews").status, 401);
    secrets.push(wrong.to_owned());

    let ticket = reviewer.post("/events/tickets", &json!({}));
    let ticket = ticket.body["ticket"].as_str().unwrap().to_owned();
    let stream = ureq::get(format!("{}/api/v1/events?ticket={ticket}", server.url))
        .call()
        .unwrap();
    assert_eq!(stream.status(), 200);
    drop(stream);
    secrets.push(ticket);

    let code = reviewer.post("/pairings", &json!({})).body["code"]
        .as_str()
        .unwrap()
        .to_owned();
    let paired = server.anonymous().post(
        "/pairings/redeem",
        &json!({"code": code, "device": "phone"}),
    );
    secrets.extend([code, paired.body["key"].as_str().unwrap().to_owned()]);

    let asked = agent.post("/tool-calls", &tool_call(1));
    let id = asked.body["outcome"]["confirm_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let decided = reviewer.decide(&id, "ok-1", &decision("approved", "fine"));
    assert_eq!(decided.status, 200, "{}", decided.text);
    let outcome = &decided.body["outcome"];
    let token = outcome["token"]["tokenId"].as_str().unwrap().to_owned();
    let signature = outcome["receipt"]["signature"].as_str().unwrap().to_owned();
    let redeemed = agent.post(
        &format!("/reviews/{id}/redeem"),
        &json!({"tokenId": token, "toolCall": tool_call(1)["toolCall"], "clientDeviceId": "laptop-7"}),
    );
    assert_eq!(redeemed.status, 200, "{}", redeemed.text);
    secrets.extend([token, signature]);

    let traced = reviewer.send("GET", "/health", None, &[("X-Request-Id", "trace-42")]);
    assert_eq!(traced.header("x-request-id"), Some("trace-42"));
    let hostile = reviewer.send("GET", "/health", None, &[("X-Request-Id", "a b\"c")]);
    let replaced = hostile.header("x-request-id").unwrap().to_owned();
    assert_eq!(replaced.len(), 32, "a hostile id is replaced: {replaced}");

    let output = std::process::Command::new(crate::support::binary())
        .args(["webhooks", "--data"])
        .arg(data.path())
        .output()
        .unwrap();
    let listed = String::from_utf8(output.stdout).unwrap();
    let webhook_secret = listed
        .lines()
        .find_map(|line| line.trim().strip_prefix("secret "))
        .unwrap()
        .to_owned();
    secrets.extend([webhook_secret, "T0SECRETPATH".to_owned()]);

    assert_eq!(server.stop(), Some(0));
    let text = std::fs::read_to_string(&log).unwrap();
    for secret in &secrets {
        assert!(
            !text.contains(secret.as_str()),
            "the log holds a secret ({secret}):\n{text}"
        );
    }
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    let requests: Vec<&Value> = lines.iter().filter(|l| l["message"] == "request").collect();
    let line_of = |id: &str| requests.iter().find(|l| l["request_id"] == id).copied();
    let traced = line_of("trace-42").expect("the traced request's line");
    assert_eq!(traced["route"], "/api/v1/health");
    assert_eq!(traced["status"], 200);
    assert!(traced["latency_ms"].as_f64().unwrap() >= 0.0);
    assert!(line_of(&replaced).is_some());
    let redeem = requests
        .iter()
        .find(|l| l["route"] == "/api/v1/reviews/{id}/redeem")
        .expect("the redemption's line names its route, not the review");
    assert_eq!(redeem["method"], "POST");
    assert!(requests.iter().any(|l| l["status"] == 401));
    assert!(requests.len() >= 10, "{} request lines", requests.len());
    let said = |message: &str| lines.iter().any(|l| l["message"] == message);
    assert!(
        said("countersign started") && said("countersign stopped"),
        "{text}"
    );
}
