//! The HTTP API through the real server process over a real SQLite file, every
//! response held to the OpenAPI document (`crates/server/openapi.json`).

use crate::support::{
    confirm_id, found, open_events, plan, review, Client, Contract, Opener, Reply, Server,
};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

/// Sends and checks against the contract in one step.
struct Checked<'a> {
    client: Client,
    contract: &'a Contract,
}

impl Checked<'_> {
    fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<(&str, &[u8])>,
        headers: &[(&str, &str)],
    ) -> Reply {
        let reply = self.client.send(method, path, body, headers);
        self.contract.check(method, path, &reply);
        reply
    }
    fn get(&self, path: &str) -> Reply {
        self.send("GET", path, None, &[])
    }
    fn post(&self, path: &str, body: &Value) -> Reply {
        self.send(
            "POST",
            path,
            Some(("application/json", body.to_string().as_bytes())),
            &[],
        )
    }
    fn decide(&self, id: &str, idem: &str, body: &Value) -> Reply {
        self.send(
            "POST",
            &format!("/reviews/{id}/decisions"),
            Some(("application/json", body.to_string().as_bytes())),
            &[("Idempotency-Key", idem)],
        )
    }
}

/// Reads the first `count` events of an event stream opened with `opener`.
fn read_events(
    server: &Server,
    opener: Opener,
    query: &str,
    count: usize,
    during: impl FnOnce(),
) -> Vec<(String, String, Value)> {
    let (status, body) = open_events(server, opener, query);
    assert_eq!(status, 200);
    during();
    let mut lines = BufReader::new(body.unwrap().into_reader()).lines();
    let mut events = Vec::new();
    let (mut id, mut name) = (String::new(), String::new());
    while events.len() < count {
        let line = lines.next().expect("the stream ended").unwrap();
        if let Some(v) = line.strip_prefix("id: ") {
            id = v.to_owned();
        } else if let Some(v) = line.strip_prefix("event: ") {
            name = v.to_owned();
        } else if let Some(v) = line.strip_prefix("data: ") {
            events.push((id.clone(), name.clone(), serde_json::from_str(v).unwrap()));
        }
    }
    events
}

#[test]
fn every_operation_and_documented_status_matches_the_openapi_document() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &["--max-body", "20000"]);
    let contract = Contract::load();
    let agent = Checked {
        client: server.client(&server.agent),
        contract: &contract,
    };
    let reviewer = Checked {
        client: server.client(&server.reviewer),
        contract: &contract,
    };
    let anonymous = Checked {
        client: server.anonymous(),
        contract: &contract,
    };

    // service
    assert_eq!(anonymous.get("/health").body["database"], "sqlite");
    assert_eq!(anonymous.get("/openapi.json").body["openapi"], "3.1.0");
    assert_eq!(anonymous.get("/signing-key").body["algorithm"], "Ed25519");
    assert_eq!(
        reviewer.get("/policy").body["rules"],
        json!([]),
        "no policy: no rules"
    );
    assert_eq!(agent.get("/me").body["kind"], "agent");
    assert_eq!(anonymous.get("/me").status, 401);
    assert_eq!(anonymous.get("/policy").status, 401);
    assert_eq!(
        reviewer.get("/webhooks").body,
        json!({"webhooks": [], "deliveries": []}),
        "no webhook configured"
    );
    assert_eq!(agent.get("/webhooks").status, 403);
    assert_eq!(anonymous.get("/webhooks").status, 401);

    // create: 201, 200 (retry), 409, 422, 400, 413, 415, 401, 403
    let created = agent.post("/reviews", &review(1, 3, false));
    assert_eq!(created.status, 201, "{}", created.text);
    assert_eq!(
        created.body["outcome"]["outcome"],
        "TOOL_BLOCKED_PENDING_APPROVAL"
    );
    assert_eq!(agent.post("/reviews", &review(1, 3, false)).status, 200);
    let mut other = review(1, 3, false);
    other["confirm"]["requested_by_role"] = json!("someone-else");
    assert_eq!(agent.post("/reviews", &other).code(), "already_exists");
    let cyclic = agent.post("/reviews", &review(2, 4, true));
    assert_eq!(cyclic.status, 422);
    assert!(
        cyclic
            .paths()
            .iter()
            .any(|p| p.starts_with("/target/plan/steps")),
        "{}",
        cyclic.text
    );
    assert!(cyclic.text.contains("cycle"), "{}", cyclic.text);
    let malformed = agent.send(
        "POST",
        "/reviews",
        Some(("application/json", b"{\"confirm\": ")),
        &[],
    );
    assert_eq!(
        (malformed.status, malformed.code()),
        (400, "malformed_json")
    );
    assert!(malformed.body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("line 1"));
    let big = agent.post("/reviews", &review(3, 300, false));
    assert_eq!((big.status, big.code()), (413, "body_too_large"));
    let form = agent.send("POST", "/reviews", Some(("text/plain", b"{}")), &[]);
    assert_eq!((form.status, form.code()), (415, "unsupported_media_type"));
    assert_eq!(anonymous.post("/reviews", &review(4, 1, false)).status, 401);
    assert_eq!(
        reviewer.post("/reviews", &review(4, 1, false)).code(),
        "wrong_key_kind"
    );

    // requesters: 200 (each role once, in order), 401, 403
    let requesters = reviewer.get("/requesters");
    let names: Vec<&str> = requesters.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert!(names.contains(&"deploy-agent"), "{names:?}");
    assert!(names.windows(2).all(|w| w[0] < w[1]), "{names:?}");
    assert_eq!(anonymous.get("/requesters").status, 401);
    assert_eq!(agent.get("/requesters").status, 403);

    // changes: 200, 400, 401, 403
    let changes = reviewer.get("/changes?after=0&limit=1");
    assert_eq!(changes.body["changes"][0]["kind"], "review.created");
    assert_eq!(changes.body["more"], true);
    assert_eq!(reviewer.get("/changes").code(), "invalid_parameter");
    assert_eq!(reviewer.get("/changes?after=0&limit=501").status, 400);
    assert_eq!(anonymous.get("/changes?after=0").status, 401);
    assert_eq!(agent.get("/changes?after=0").status, 403);

    // list: 200 with filters and paging, 400, 401, 403
    let page = reviewer.get("/reviews?status=pending&limit=2");
    assert_eq!(page.body["items"].as_array().unwrap().len(), 2);
    let cursor = page.body["next_cursor"].as_str().unwrap().to_owned();
    let rest = reviewer.get(&format!("/reviews?status=pending&limit=50&cursor={cursor}"));
    let pending_total = page.body["counts"]["pending"].as_i64().unwrap();
    assert_eq!(
        2 + rest.body["items"].as_array().unwrap().len() as i64,
        pending_total
    );
    assert!(rest.body["next_cursor"].is_null());
    let rows = reviewer.get("/reviews?status=pending&limit=2&view=summary&order=newest");
    assert_eq!(rows.body["items"].as_array().unwrap().len(), 2);
    let found = reviewer.get("/reviews?q=TEST%20PLAN%201&target_type=plan&requester=deploy-agent");
    assert_eq!(
        found.body["items"][0]["confirm"]["confirm_id"],
        confirm_id(1)
    );
    let bad = reviewer.get("/reviews?status=maybe&limit=0&colour=red");
    assert_eq!(bad.status, 400);
    assert_eq!(bad.paths(), vec!["colour"]);
    assert_eq!(
        reviewer.get("/reviews?status=maybe&limit=0").paths(),
        vec!["status", "limit"]
    );
    assert_eq!(anonymous.get("/reviews").status, 401);
    assert_eq!(agent.get("/reviews").status, 403);

    // read: 200, 404, 401; agents see only their own reviews
    let id = confirm_id(1);
    let detail = reviewer.get(&format!("/reviews/{id}"));
    assert_eq!(detail.body["problems"], json!([]));
    assert_eq!(agent.get(&format!("/reviews/{id}")).status, 200);
    assert_eq!(
        agent
            .get("/reviews/c0ffee00-0000-4000-8000-000000000001")
            .status,
        404
    );
    assert_eq!(
        reviewer
            .get("/reviews/00000000-0000-4000-8000-000000000000")
            .status,
        404
    );
    assert_eq!(anonymous.get(&format!("/reviews/{id}")).status, 401);
    // a reviewer key is not an agent key, but may read: only 403 for the wrong kind on agent-only calls
    assert_eq!(
        reviewer
            .post(&format!("/reviews/{id}/resubmit"), &json!({"by_role": "x"}))
            .status,
        403
    );

    // outcome: 200, 400, 404, 401, 403
    assert_eq!(
        agent.get(&format!("/reviews/{id}/outcome")).body["outcome"],
        "TOOL_BLOCKED_PENDING_APPROVAL"
    );
    assert_eq!(
        agent.get(&format!("/reviews/{id}/outcome?wait=61")).status,
        400
    );
    assert_eq!(
        agent
            .get("/reviews/00000000-0000-4000-8000-000000000000/outcome")
            .status,
        404
    );
    assert_eq!(anonymous.get(&format!("/reviews/{id}/outcome")).status, 401);
    assert_eq!(
        reviewer.get(&format!("/reviews/{id}/outcome")).status,
        200,
        "reviewers may read outcomes too"
    );

    // decisions: 422 field errors, 403 role, 400 no key, 415, 413, 401, 404, 200, retry, 409
    let reject_without_reason = json!({"status": "rejected", "decided_by_role": "reviewer"});
    let refused = reviewer.decide(&id, "d-1", &reject_without_reason);
    assert_eq!(
        (refused.status, refused.paths()),
        (422, vec!["/reason".to_owned()])
    );
    // The refusal is also the domain's own error, typed.
    let typed: countersign_domain::wire::Refusal =
        serde_json::from_value(refused.body["error"]["refusal"].clone()).unwrap();
    assert_eq!(
        typed,
        countersign_domain::wire::Refusal::Decide(countersign_domain::DecideError::ReasonRequired)
    );
    let unknown = reviewer.decide(
        &id,
        "d-1",
        &json!({"status": "approved", "decided_by_role": "reviewer", "colour": 1}),
    );
    assert_eq!(unknown.paths(), vec!["/colour"]);
    // Statuses and modes are read into their types where they arrive.
    let no_such_status = reviewer.decide(
        &id,
        "d-1",
        &json!({"status": "maybe", "decided_by_role": "reviewer"}),
    );
    assert_eq!(
        (no_such_status.status, no_such_status.paths()),
        (422, vec!["/status".to_owned()])
    );
    let no_such_mode = reviewer.decide(
        &id,
        "d-1",
        &json!({"status": "approved", "decided_by_role": "reviewer", "tool_call": {"mode": "sometimes"}}),
    );
    assert_eq!(
        (no_such_mode.status, no_such_mode.paths()),
        (422, vec!["/tool_call".to_owned()])
    );
    let role = reviewer.decide(
        &id,
        "d-1",
        &json!({"status": "approved", "decided_by_role": "ceo"}),
    );
    assert_eq!((role.status, role.code()), (403, "role_not_allowed"));
    assert_eq!(role.body["error"]["refusal"]["by"], "role");
    assert_eq!(role.body["error"]["refusal"]["error"]["role"], "ceo");
    let no_key = reviewer.send(
        "POST",
        &format!("/reviews/{id}/decisions"),
        Some(("application/json", b"{}")),
        &[],
    );
    assert_eq!(
        (no_key.status, no_key.code()),
        (400, "idempotency_key_required")
    );
    assert_eq!(
        reviewer
            .send(
                "POST",
                &format!("/reviews/{id}/decisions"),
                Some(("text/plain", b"x")),
                &[("Idempotency-Key", "d-0")]
            )
            .status,
        415
    );
    let huge =
        json!({"status": "approved", "decided_by_role": "reviewer", "reason": "x".repeat(30000)});
    assert_eq!(reviewer.decide(&id, "d-0", &huge).status, 413);
    assert_eq!(
        anonymous.decide(&id, "d-0", &reject_without_reason).status,
        401
    );
    assert_eq!(
        reviewer
            .decide(
                "00000000-0000-4000-8000-000000000000",
                "d-0",
                &json!({"status": "approved", "decided_by_role": "reviewer"})
            )
            .status,
        404
    );
    assert_eq!(agent.decide(&id, "d-0", &reject_without_reason).status, 403);
    let malformed = reviewer.send(
        "POST",
        &format!("/reviews/{id}/decisions"),
        Some(("application/json", b"{")),
        &[("Idempotency-Key", "d-0")],
    );
    assert_eq!(malformed.status, 400);
    let reject = json!({"status": "rejected", "decided_by_role": "security_officer", "reason": "Step 2 deletes data"});
    let first = reviewer.decide(&id, "d-2", &reject);
    assert_eq!(first.status, 200, "{}", first.text);
    assert_eq!(first.body["outcome"]["outcome"], "TOOL_DENIED");
    assert_eq!(first.body["review"]["target"]["plan"]["status"], "draft");
    let retry = reviewer.decide(&id, "d-2", &reject);
    assert_eq!(retry.body, first.body, "a retry returns the first result");
    let reused = reviewer.decide(
        &id,
        "d-2",
        &json!({"status": "cancelled", "decided_by_role": "reviewer"}),
    );
    assert_eq!(
        (reused.status, reused.code()),
        (422, "idempotency_key_reused")
    );
    let late = reviewer.decide(
        &id,
        "d-3",
        &json!({"status": "approved", "decided_by_role": "reviewer"}),
    );
    assert_eq!((late.status, late.code()), (409, "already_decided"));
    assert!(
        late.text.contains("rejected by security_officer"),
        "{}",
        late.text
    );
    let stored = reviewer.get(&format!("/reviews/{id}"));
    assert_eq!(
        stored.body["review"]["confirm"]["decisions"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let denied = agent.get(&format!("/reviews/{id}/outcome"));
    assert_eq!(
        (
            denied.body["outcome"].as_str(),
            denied.body["reason"].as_str()
        ),
        (Some("TOOL_DENIED"), Some("Step 2 deletes data"))
    );

    // resubmit: 422 (bad plan), 409 (not requester), 200, 409 (not rejected), 404, 401, 400, 413, 415
    let mut revised = plan(1, 2, false);
    revised["title"] = json!("Test plan 1, without the deletion");
    let mut bad_plan = revised.clone();
    bad_plan["steps"][0]["status"] = json!("sleeping");
    let invalid = agent.post(
        &format!("/reviews/{id}/resubmit"),
        &json!({"by_role": "deploy-agent", "plan": bad_plan}),
    );
    assert_eq!(invalid.status, 422);
    assert!(
        invalid.paths().contains(&"/plan/steps/0/status".to_owned()),
        "{}",
        invalid.text
    );
    assert_eq!(
        agent
            .post(
                &format!("/reviews/{id}/resubmit"),
                &json!({"by_role": "intruder"})
            )
            .code(),
        "cannot_resubmit"
    );
    let reopened = agent.post(
        &format!("/reviews/{id}/resubmit"),
        &json!({"by_role": "deploy-agent", "plan": revised, "reason": "Dropped step 3"}),
    );
    assert_eq!(reopened.status, 200, "{}", reopened.text);
    assert_eq!(
        reopened.body["review"]["target"]["plan"]["status"],
        "proposed"
    );
    assert_eq!(
        agent
            .post(
                &format!("/reviews/{id}/resubmit"),
                &json!({"by_role": "deploy-agent"})
            )
            .status,
        409
    );
    assert_eq!(
        agent
            .post(
                "/reviews/00000000-0000-4000-8000-000000000000/resubmit",
                &json!({"by_role": "a"})
            )
            .status,
        404
    );
    assert_eq!(
        anonymous
            .post(&format!("/reviews/{id}/resubmit"), &json!({"by_role": "a"}))
            .status,
        401
    );
    assert_eq!(
        agent
            .send(
                "POST",
                &format!("/reviews/{id}/resubmit"),
                Some(("application/json", b"[")),
                &[]
            )
            .status,
        400
    );
    assert_eq!(
        agent
            .send(
                "POST",
                &format!("/reviews/{id}/resubmit"),
                Some(("text/plain", b"x")),
                &[]
            )
            .status,
        415
    );
    assert_eq!(
        agent
            .post(
                &format!("/reviews/{id}/resubmit"),
                &json!({"by_role": "x".repeat(30000)})
            )
            .status,
        413
    );
    let approved = reviewer.decide(
        &id,
        "d-4",
        &json!({"status": "approved", "decided_by_role": "security_officer"}),
    );
    assert_eq!(approved.body["outcome"]["outcome"], "APPROVED");
    assert_eq!(
        approved.body["review"]["confirm"]["decisions"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // a plan that is not awaiting approval (the demo's cyclic plan cannot be approved at all)
    let cyclic_demo = reviewer.decide(
        "c0ffee00-0000-4000-8000-000000000003",
        "d-5",
        &json!({"status": "approved", "decided_by_role": "reviewer"}),
    );
    assert_eq!(
        (cyclic_demo.status, cyclic_demo.code()),
        (422, "invalid_target")
    );
    assert!(cyclic_demo
        .paths()
        .iter()
        .any(|p| p.starts_with("/target/plan/steps")));

    // event tickets: 201, 401, 403
    let ticket = reviewer.post("/events/tickets", &json!({}));
    assert_eq!(ticket.status, 201, "{}", ticket.text);
    assert_eq!(anonymous.post("/events/tickets", &json!({})).status, 401);
    assert_eq!(agent.post("/events/tickets", &json!({})).status, 403);

    // events: 200 (stream), 400, 401, 403
    assert_eq!(reviewer.get("/events?after=-1").status, 400);
    assert_eq!(anonymous.get("/events").status, 401);
    assert_eq!(agent.get("/events").status, 403);
    let events = read_events(&server, Opener::Key(&server.reviewer), "?after=0", 3, || {});
    for (_, _, data) in &events {
        contract.check_component("Change", data);
    }
    contract.check(
        "GET",
        "/events",
        &Reply {
            status: 200,
            body: Value::Null,
            text: String::new(),
            headers: vec![],
        },
    );

    tool_call_operations(&agent, &reviewer, &anonymous);
    grant_operations(&agent, &reviewer, &anonymous);
    device_operations(&agent, &reviewer, &anonymous);
    over_the_rate(&server, &contract);

    let missing = contract.unexercised_operations();
    assert!(
        missing.is_empty(),
        "operations never exercised: {missing:?}"
    );
    let unseen = contract.unseen_statuses();
    assert!(
        unseen.is_empty(),
        "documented statuses never seen: {unseen:?}"
    );
}

/// Every operation that takes a key answers 429 with `Retry-After` once the
/// key has used up its rate (a key minted with `--rate 1/min,1`), whatever
/// the request.
fn over_the_rate(server: &Server, contract: &Contract) {
    let (code, out, err) = server.keys(&[
        "add", "--kind", "reviewer", "--role", "reviewer", "--rate", "1/min,1",
    ]);
    assert_eq!(code, 0, "{err}");
    let limited = Checked {
        client: server.client(out.lines().next().unwrap()),
        contract,
    };
    assert_eq!(limited.get("/requesters").status, 200);
    let id = confirm_id(1);
    let requests = [
        ("POST", "/reviews".to_owned()),
        ("GET", "/reviews".to_owned()),
        ("GET", format!("/reviews/{id}")),
        ("GET", "/requesters".to_owned()),
        ("GET", format!("/reviews/{id}/outcome")),
        ("POST", format!("/reviews/{id}/redeem")),
        ("POST", format!("/reviews/{id}/withdraw")),
        ("POST", "/tool-calls".to_owned()),
        ("POST", format!("/reviews/{id}/decisions")),
        ("POST", format!("/reviews/{id}/resubmit")),
        ("GET", "/events".to_owned()),
        ("POST", "/events/tickets".to_owned()),
        ("GET", "/changes?after=0".to_owned()),
        ("GET", "/grants".to_owned()),
        ("POST", "/grants/x/revoke".to_owned()),
    ];
    for (method, path) in requests {
        let body = (method == "POST").then_some(("application/json", b"{}".as_slice()));
        let reply = limited.send(method, &path, body, &[]);
        assert_eq!(
            (reply.status, reply.code()),
            (429, "rate_limited"),
            "{method} {path}"
        );
        let wait: u64 = reply.header("retry-after").unwrap().parse().unwrap();
        assert!(
            (1..=60).contains(&wait),
            "{method} {path}: Retry-After {wait}"
        );
    }
    let (_, listed, _) = server.keys(&["list"]);
    assert!(listed.contains("rate 1/min,1"), "{listed}");
}

/// `/grants` and `/grants/{id}/revoke`: every documented status.
fn grant_operations(agent: &Checked, reviewer: &Checked, anonymous: &Checked) {
    let mut body = tool_call(json!({"amount": 1, "to": "Grant GmbH"}), "R1");
    body["sessionId"] = json!("grant-session");
    let asked = agent.post("/tool-calls", &body);
    assert_eq!(asked.status, 201, "{}", asked.text);
    let id = asked.body["outcome"]["confirm_id"].as_str().unwrap();
    let scoped = json!({"status": "approved", "decided_by_role": "reviewer",
        "tool_call": {"mode": "scope", "scope": "session"}});
    let approved = reviewer.decide(id, "grant-1", &scoped);
    assert_eq!(approved.status, 200, "{}", approved.text);
    let grant = approved.body["review"]["target"]["tool_call"]["outcome"]["grant"]["grantId"]
        .as_str()
        .unwrap()
        .to_owned();
    let listed = reviewer.get("/grants");
    assert_eq!(listed.status, 200);
    assert!(listed.text.contains(&grant), "{}", listed.text);
    assert_eq!(reviewer.get("/grants?revoked=all").status, 400);
    assert_eq!(anonymous.get("/grants").status, 401);
    assert_eq!(agent.get("/grants").status, 403);
    let revoke = format!("/grants/{grant}/revoke");
    assert_eq!(anonymous.post(&revoke, &json!({})).status, 401);
    assert_eq!(agent.post(&revoke, &json!({})).status, 403);
    assert_eq!(
        reviewer
            .post("/grants/no-such-grant/revoke", &json!({}))
            .status,
        404
    );
    assert_eq!(reviewer.post(&revoke, &json!({})).status, 200);
    let again = reviewer.post(&revoke, &json!({}));
    assert_eq!((again.status, again.code()), (409, "already_revoked"));
    assert!(reviewer
        .get("/grants?revoked=include")
        .text
        .contains(&grant));
}

/// Pairing a device and revoking it: every documented status.
fn device_operations(agent: &Checked, reviewer: &Checked, anonymous: &Checked) {
    assert_eq!(anonymous.post("/pairings", &json!({})).status, 401);
    assert_eq!(agent.post("/pairings", &json!({})).status, 403);
    let pairing = reviewer.post("/pairings", &json!({}));
    assert_eq!(pairing.status, 201, "{}", pairing.text);
    let code = pairing.body["code"].as_str().unwrap().to_owned();
    let redeem = |body: &Value| anonymous.post("/pairings/redeem", body);
    let refused = redeem(&json!({"code": code, "device": "phone", "extra": 1}));
    assert_eq!(
        (refused.status, refused.paths()),
        (422, vec!["/extra".to_owned()])
    );
    let unnamed = redeem(&json!({"code": code, "device": " "}));
    assert_eq!(
        (unnamed.status, unnamed.paths()),
        (422, vec!["/device".to_owned()])
    );
    let malformed = anonymous.send(
        "POST",
        "/pairings/redeem",
        Some(("application/json", b"{\"code\":")),
        &[],
    );
    assert_eq!(malformed.status, 400);
    let unknown = redeem(&json!({"code": "cs_pair_nothing", "device": "phone"}));
    assert_eq!((unknown.status, unknown.code()), (404, "pairing_refused"));
    let paired = redeem(&json!({"code": code, "device": "Sam's phone"}));
    assert_eq!(paired.status, 201, "{}", paired.text);
    assert_eq!(
        paired.body["roles"],
        json!(["reviewer", "security_officer", "release_manager"])
    );
    let again = redeem(&json!({"code": code, "device": "another phone"}));
    assert_eq!((again.status, again.code()), (410, "pairing_refused"));
    assert!(again.text.contains("already used"), "{}", again.text);

    let id = paired.body["key_id"].as_str().unwrap().to_owned();
    let listed = reviewer.get("/devices");
    assert_eq!(listed.status, 200);
    assert_eq!(listed.body["devices"][0]["device"], "Sam's phone");
    assert_eq!(anonymous.get("/devices").status, 401);
    assert_eq!(agent.get("/devices").status, 403);
    let revoke = format!("/devices/{id}/revoke");
    assert_eq!(anonymous.post(&revoke, &json!({})).status, 401);
    assert_eq!(agent.post(&revoke, &json!({})).status, 403);
    assert_eq!(
        reviewer.post("/devices/key_none/revoke", &json!({})).status,
        404
    );
    let revoked = reviewer.post(&revoke, &json!({}));
    assert_eq!(revoked.status, 200, "{}", revoked.text);
    assert!(revoked.body["revoked_at"].is_string());
}

/// A tool-call request with `args` at risk tier `tier`.
fn tool_call(args: Value, tier: &str) -> Value {
    let mut body = crate::support::tool_call(args);
    body["riskTier"] = json!(tier);
    body["riskReasons"] = json!(["moves money out of the company"]);
    body["clientDeviceId"] = json!("laptop-7");
    body
}

/// `/tool-calls`, `/reviews/{id}/redeem` and `/reviews/{id}/withdraw`: every
/// documented status.
fn tool_call_operations(agent: &Checked, reviewer: &Checked, anonymous: &Checked) {
    let body = |v: &Value| v.to_string().into_bytes();
    // request: 201, 409, 422, 400, 413, 415, 401, 403
    let asked = agent.post(
        "/tool-calls",
        &tool_call(json!({"amount": 5000, "to": "ACME GmbH"}), "R3"),
    );
    assert_eq!(asked.status, 201, "{}", asked.text);
    assert_eq!(
        asked.body["outcome"]["outcome"],
        "TOOL_BLOCKED_PENDING_APPROVAL"
    );
    let id = asked.body["outcome"]["confirm_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let request = &asked.body["review"]["target"]["tool_call"]["request"];
    assert_eq!(
        request["toolCallCanonical"],
        r#"{"args":{"amount":5000,"to":"ACME GmbH"},"name":"wire_transfer"}"#
    );
    let mut again = tool_call(json!({}), "R1");
    again["approvalId"] = request["approvalId"].clone();
    assert_eq!(agent.post("/tool-calls", &again).code(), "already_exists");
    let unsafe_number = agent.post(
        "/tool-calls",
        &tool_call(json!({"amount": 9007199254740993u64}), "R2"),
    );
    assert_eq!(unsafe_number.status, 422);
    assert_eq!(unsafe_number.paths(), vec!["/toolCall/args/amount"]);
    let mut unknown = tool_call(json!({}), "R9");
    unknown["colour"] = json!("red");
    let refused = agent.post("/tool-calls", &unknown);
    assert_eq!(refused.status, 422);
    assert_eq!(refused.paths(), vec!["/colour"]);
    let malformed = agent.send("POST", "/tool-calls", Some(("application/json", b"{")), &[]);
    assert_eq!(malformed.status, 400);
    let big = tool_call(json!({"blob": "x".repeat(30_000)}), "R1");
    assert_eq!(
        agent
            .send(
                "POST",
                "/tool-calls",
                Some(("application/json", &body(&big))),
                &[]
            )
            .status,
        413
    );
    let text = agent.send("POST", "/tool-calls", Some(("text/plain", b"{}")), &[]);
    assert_eq!(text.status, 415);
    assert_eq!(anonymous.post("/tool-calls", &json!({})).status, 401);
    assert_eq!(reviewer.post("/tool-calls", &json!({})).status, 403);

    // The reviewer approves with modifications: the token is for the edited call.
    let decided = reviewer.decide(
        &id,
        "tc-1",
        &json!({"status": "approved", "decided_by_role": "reviewer",
                "tool_call": {"mode": "edit", "args": "{\"to\": \"ACME GmbH\", \"amount\": 500}"}}),
    );
    assert_eq!(decided.status, 200, "{}", decided.text);
    let outcome = &decided.body["outcome"];
    assert_eq!(outcome["outcome"], "APPROVED");
    assert_eq!(outcome["kind"], "edited");
    let edited = json!({"name": "wire_transfer", "args": {"amount": 500, "to": "ACME GmbH"}});
    assert_eq!(
        outcome["approved_call"],
        r#"{"args":{"amount":500,"to":"ACME GmbH"},"name":"wire_transfer"}"#
    );
    assert_eq!(
        outcome["approved_tool_call"], edited,
        "the same call, as an object"
    );
    let token = outcome["token"]["tokenId"].as_str().unwrap().to_owned();
    let redeem = |call: &Value, device: &str| {
        agent.post(
            &format!("/reviews/{id}/redeem"),
            &json!({"tokenId": token, "toolCall": call, "clientDeviceId": device}),
        )
    };
    // redeem: 409 (the original call), 200, 409 (replay), 404, 422, 400, 413, 415, 401, 403
    let original = json!({"name": "wire_transfer", "args": {"amount": 5000, "to": "ACME GmbH"}});
    assert_eq!(redeem(&original, "laptop-7").code(), "token_hash_mismatch");
    assert_eq!(redeem(&edited, "phone-2").code(), "token_device_mismatch");
    let spent = redeem(&edited, "laptop-7");
    assert_eq!(spent.status, 200, "{}", spent.text);
    assert!(spent.body["token"]["usedAt"].is_string());
    assert_eq!(redeem(&edited, "laptop-7").code(), "token_used");
    let unknown_token = agent.post(
        &format!("/reviews/{id}/redeem"),
        &json!({"tokenId": "00000000-0000-4000-8000-00000000beef", "toolCall": edited}),
    );
    assert_eq!(
        (unknown_token.status, unknown_token.code()),
        (404, "token_unknown")
    );
    let neither = agent.post(&format!("/reviews/{id}/redeem"), &json!({"tokenId": token}));
    assert_eq!(neither.status, 422);
    let path = format!("/reviews/{id}/redeem");
    assert_eq!(
        agent
            .send("POST", &path, Some(("application/json", b"[")), &[])
            .status,
        400
    );
    let big =
        json!({"tokenId": token, "toolCall": {"name": "x", "args": {"blob": "x".repeat(30_000)}}});
    assert_eq!(
        agent
            .send("POST", &path, Some(("application/json", &body(&big))), &[])
            .status,
        413
    );
    assert_eq!(
        agent
            .send("POST", &path, Some(("text/plain", b"{}")), &[])
            .status,
        415
    );
    assert_eq!(anonymous.post(&path, &json!({})).status, 401);
    assert_eq!(reviewer.post(&path, &json!({})).status, 403);

    // withdraw: 200, 409 (not pending; not a tool call), 422, 404, 400, 413, 415, 401, 403
    let asked = agent.post("/tool-calls", &tool_call(json!({"amount": 7}), "R2"));
    let pending = asked.body["outcome"]["confirm_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let path = format!("/reviews/{pending}/withdraw");
    assert_eq!(
        agent.post(&path, &json!({"reason": 7})).paths(),
        vec!["/reason"]
    );
    assert_eq!(agent.post(&path, &json!({"colour": "red"})).status, 422);
    let withdrawn = agent.post(&path, &json!({"reason": "the user cancelled the call"}));
    assert_eq!(withdrawn.status, 200, "{}", withdrawn.text);
    assert_eq!(withdrawn.body["outcome"]["outcome"], "TOOL_DENIED");
    assert_eq!(withdrawn.body["outcome"]["kind"], "withdrawn");
    assert_eq!(
        withdrawn.body["outcome"]["reason"],
        "withdrawn by the agent: the user cancelled the call"
    );
    assert_eq!(agent.post(&path, &json!({})).code(), "cannot_withdraw");
    let late = reviewer.decide(
        &pending,
        "tc-late",
        &json!({"status": "approved", "decided_by_role": "reviewer", "tool_call": {"mode": "once"}}),
    );
    assert_eq!(late.status, 409, "{}", late.text);
    assert_eq!(
        agent
            .post(
                "/reviews/00000000-0000-4000-8000-000000000000/withdraw",
                &json!({})
            )
            .status,
        404
    );
    let plan_review = agent.post("/reviews", &review(90, 2, false));
    assert_eq!(plan_review.status, 201, "{}", plan_review.text);
    assert_eq!(
        agent
            .post(&format!("/reviews/{}/withdraw", confirm_id(90)), &json!({}))
            .code(),
        "cannot_withdraw"
    );
    assert_eq!(
        agent
            .send("POST", &path, Some(("application/json", b"[")), &[])
            .status,
        400
    );
    let big = json!({"reason": "x".repeat(30_000)});
    assert_eq!(
        agent
            .send("POST", &path, Some(("application/json", &body(&big))), &[])
            .status,
        413
    );
    assert_eq!(
        agent
            .send("POST", &path, Some(("text/plain", b"{}")), &[])
            .status,
        415
    );
    assert_eq!(anonymous.post(&path, &json!({})).status, 401);
    assert_eq!(reviewer.post(&path, &json!({})).status, 403);
}

#[test]
fn unknown_endpoints_and_methods_get_the_error_shape() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let client = server.client(&server.reviewer);
    let missing = client.get("/nothing-here");
    assert_eq!((missing.status, missing.code()), (404, "not_found"));
    let wrong = client.send("DELETE", "/reviews", None, &[]);
    assert_eq!((wrong.status, wrong.code()), (405, "method_not_allowed"));
    assert_eq!(
        client.get("/health").header("cache-control"),
        Some("no-store")
    );
}

#[test]
fn the_changes_after_a_position_are_what_changed_since_each_with_its_row() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let agent = server.client(&server.agent);
    let reviewer = server.client(&server.reviewer);
    let start = reviewer.get("/reviews?view=summary&limit=1").body["position"]
        .as_i64()
        .unwrap();
    assert_eq!(agent.post("/reviews", &review(8, 2, false)).status, 201);
    assert_eq!(agent.post("/reviews", &review(9, 2, false)).status, 201);
    let decided = reviewer.decide(
        &confirm_id(8),
        "c-1",
        &json!({"status": "rejected", "decided_by_role": "reviewer", "reason": "Not now"}),
    );
    assert_eq!(decided.status, 200);
    let page: countersign_domain::wire::ChangePage =
        serde_json::from_value(reviewer.get(&format!("/changes?after={start}")).body).unwrap();
    let seen: Vec<(String, &str)> = page
        .changes
        .iter()
        .map(|c| (c.summary.id.to_string(), c.kind.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            (confirm_id(8), "review.created"),
            (confirm_id(9), "review.created"),
            (confirm_id(8), "review.decided"),
        ]
    );
    // Each row is the review as it is now (the first change of 8 shows it rejected).
    assert!(page
        .changes
        .iter()
        .filter(|c| c.summary.id.to_string() == confirm_id(8))
        .all(|c| c.summary.status == countersign_domain::model::ConfirmStatus::Rejected));
    assert!(!page.more);
    assert_eq!(page.position, page.changes[2].seq);
    // Nothing changed since: an empty page that keeps its position.
    let after = reviewer.get(&format!("/changes?after={}", page.position));
    assert_eq!(after.body["changes"], json!([]));
    assert_eq!(after.body["position"], page.position);
    // Paged: as many as asked, and more is said to follow.
    let first = reviewer
        .get(&format!("/changes?after={start}&limit=2"))
        .body;
    assert_eq!(
        (first["changes"].as_array().unwrap().len(), &first["more"]),
        (2, &json!(true))
    );
}

#[test]
fn live_events_announce_created_decided_and_resumed_changes() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let agent = server.client(&server.agent);
    let reviewer = server.client(&server.reviewer);
    let events = read_events(&server, Opener::Key(&server.reviewer), "", 2, || {
        assert_eq!(agent.post("/reviews", &review(7, 2, false)).status, 201);
        let decided = reviewer.decide(
            &confirm_id(7),
            "e-1",
            &json!({"status": "cancelled", "decided_by_role": "reviewer", "reason": "Superseded"}),
        );
        assert_eq!(decided.status, 200);
    });
    assert_eq!(events[0].1, "review.created");
    assert_eq!(
        events[0].2["review"]["confirm"]["confirm_id"],
        confirm_id(7)
    );
    assert_eq!(events[1].1, "review.decided");
    assert_eq!(events[1].2["status"], "cancelled");
    assert_eq!(events[1].2["summary"]["status"], "cancelled");
    // Resuming after the first event replays the second.
    let resumed = read_events(
        &server,
        Opener::Key(&server.reviewer),
        &format!("?after={}", events[0].0),
        1,
        || {},
    );
    assert_eq!(resumed[0].0, events[1].0);
}

#[test]
fn a_ticket_opens_the_event_stream_once_and_a_key_in_the_url_opens_nothing() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let reviewer = server.client(&server.reviewer);
    let minted = reviewer.post("/events/tickets", &json!({}));
    assert_eq!(minted.status, 201, "{}", minted.text);
    let ticket = minted.body["ticket"].as_str().unwrap().to_owned();
    assert!(
        !ticket.contains(&server.reviewer),
        "the ticket is not the key"
    );
    // It opens a stream (resuming from a position like a key does)...
    let events = read_events(&server, Opener::Ticket(&ticket), "?after=0", 1, || {});
    assert_eq!(events.len(), 1);
    // ...once: spent, it opens nothing, and neither does a made-up one.
    let (again, _) = open_events(&server, Opener::Ticket(&ticket), "");
    assert_eq!(again, 401);
    let (made_up, _) = open_events(&server, Opener::Ticket("cs_ticket_0000"), "");
    assert_eq!(made_up, 401);
    // The key itself is never taken from the URL.
    let in_url = server
        .client("")
        .get(&format!("/events?access_token={}", server.reviewer));
    assert_eq!(in_url.status, 401, "{}", in_url.text);
    // Another endpoint does not take a ticket.
    let second = reviewer.post("/events/tickets", &json!({}));
    let other = server.client("").get(&format!(
        "/reviews?ticket={}",
        second.body["ticket"].as_str().unwrap()
    ));
    assert_eq!(other.status, 401);
    // A ticket of a key revoked since opens nothing.
    let (_, out, _) = server.keys(&[
        "add",
        "--kind",
        "reviewer",
        "--role",
        "reviewer",
        "--label",
        "soon revoked",
    ]);
    let key = out.lines().next().unwrap().to_owned();
    let doomed = server.client(&key).post("/events/tickets", &json!({}));
    assert_eq!(doomed.status, 201);
    let listed = server.keys(&["list"]).1;
    let id = listed
        .lines()
        .find(|l| l.contains("soon revoked"))
        .and_then(|l| l.split_whitespace().next())
        .unwrap()
        .to_owned();
    server.keys(&["revoke", &id]);
    let (revoked, _) = open_events(
        &server,
        Opener::Ticket(doomed.body["ticket"].as_str().unwrap()),
        "",
    );
    assert_eq!(revoked, 401);
}

#[test]
fn a_page_of_summaries_says_what_the_rows_show_in_a_fraction_of_the_bytes() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let agent = server.client(&server.agent);
    let reviewer = server.client(&server.reviewer);
    for n in 1..=20 {
        assert_eq!(agent.post("/reviews", &review(n, 12, false)).status, 201);
    }
    let decided = reviewer.decide(
        &confirm_id(3),
        "v-1",
        &json!({"status": "approved", "decided_by_role": "reviewer", "reason": "ok"}),
    );
    assert_eq!(decided.status, 200, "{}", decided.text);
    let query = "/reviews?requester=deploy-agent&limit=50";
    let full = reviewer.get(query);
    let rows = reviewer.get(&format!("{query}&view=summary"));
    assert_eq!(rows.status, 200, "{}", rows.text);
    let reviews = full.body["items"].as_array().unwrap();
    let summaries = rows.body["items"].as_array().unwrap();
    assert_eq!(summaries.len(), reviews.len());
    // Each row is exactly the domain's summary of its review (the one the app shows).
    for (review, summary) in reviews.iter().zip(summaries) {
        let review: countersign_domain::Review = serde_json::from_value(review.clone()).unwrap();
        let expected = countersign_domain::wire::ReviewSummary::of(&review);
        assert_eq!(summary, &serde_json::to_value(&expected).unwrap());
    }
    let third = summaries.iter().find(|s| s["id"] == confirm_id(3)).unwrap();
    assert_eq!(
        (third["status"].as_str(), third["decisions"].as_u64()),
        (Some("approved"), Some(1))
    );
    assert_eq!(rows.body["counts"], full.body["counts"]);
    println!(
        "a page of {} reviews of 12 steps: whole {} bytes, summaries {} bytes",
        reviews.len(),
        full.text.len(),
        rows.text.len()
    );
    assert!(rows.text.len() * 5 < full.text.len());
    let bad = reviewer.get("/reviews?view=rows");
    assert_eq!((bad.status, bad.paths()), (400, vec!["view".to_owned()]));
}

/// Every id of the test reviews, page by page (3 a page) in `order`.
fn every_page(reviewer: &Client, order: &str) -> Vec<String> {
    let mut ids = Vec::new();
    let mut cursor = String::new();
    loop {
        let page = reviewer.get(&format!(
            "/reviews?requester=deploy-agent&view=summary&limit=3&order={order}{cursor}"
        ));
        assert_eq!(page.status, 200, "{}", page.text);
        ids.extend(
            page.body["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["id"].as_str().unwrap().to_owned()),
        );
        match page.body["next_cursor"].as_str() {
            Some(next) => cursor = format!("&cursor={next}"),
            None => return ids,
        }
    }
}

#[test]
fn the_list_pages_newest_first_as_well_as_oldest_first() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let agent = server.client(&server.agent);
    let reviewer = server.client(&server.reviewer);
    for n in 1..=10 {
        let mut asked = review(n, 2, false);
        // Two share a request time: the id orders them, both ways.
        let minute = if n == 5 { 4 } else { n };
        asked["confirm"]["requested_at"] = json!(format!("2026-11-01T10:{minute:02}:00Z"));
        assert_eq!(agent.post("/reviews", &asked).status, 201);
    }
    let oldest = every_page(&reviewer, "oldest");
    assert_eq!(oldest.len(), 10);
    let mut newest = every_page(&reviewer, "newest");
    assert_eq!(newest.first(), Some(&confirm_id(10)));
    newest.reverse();
    assert_eq!(newest, oldest);
    let bad = reviewer.get("/reviews?order=random");
    assert_eq!((bad.status, bad.paths()), (400, vec!["order".to_owned()]));
}

#[test]
fn text_search_finds_any_substring_through_the_index_also_after_the_text_changed() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let agent = server.client(&server.agent);
    let reviewer = server.client(&server.reviewer);
    for n in 1..=30 {
        assert_eq!(agent.post("/reviews", &review(n, 2, false)).status, 201);
    }
    // Whole words, parts of words, any case: a substring, as before the index.
    assert_eq!(found(&reviewer, "Test Request 17"), vec![confirm_id(17)]);
    let mut teens = found(&reviewer, "equest 1");
    teens.sort();
    let mut expected: Vec<String> = [1].into_iter().chain(10..=19).map(confirm_id).collect();
    expected.sort();
    assert_eq!(teens, expected);
    // Shorter than a trigram: scanned, same meaning (0x17 = 23 holds "17" in its id).
    let short = found(&reviewer, "17");
    assert!(
        short.contains(&confirm_id(17)) && short.contains(&confirm_id(23)),
        "{short:?}"
    );
    // Quotes, wildcards and FTS syntax are text, not query language.
    assert!(found(&reviewer, "a\"b OR c*").is_empty());
    assert!(found(&reviewer, "100%_").is_empty());
    // A resubmission changes the text: the index follows.
    let id = confirm_id(5);
    let rejected = reviewer.decide(
        &id,
        "s-1",
        &json!({"status": "rejected", "decided_by_role": "reviewer", "reason": "Too wide"}),
    );
    assert_eq!(rejected.status, 200, "{}", rejected.text);
    let resubmitted = agent.post(
        &format!("/reviews/{id}/resubmit"),
        &json!({"by_role": "deploy-agent", "reason": "Rollback window moved to Friday"}),
    );
    assert_eq!(resubmitted.status, 200, "{}", resubmitted.text);
    assert_eq!(found(&reviewer, "window moved to fri"), vec![id.clone()]);
    assert!(!found(&reviewer, "test request 5").contains(&id));
}

#[test]
fn an_acknowledged_decision_survives_a_crash() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    // A key of its own: the demo keys are replaced at every start.
    let (_, out, _) = server.keys(&["add", "--kind", "reviewer", "--role", "security_officer"]);
    let key = out.lines().next().unwrap().to_owned();
    let id = "c0ffee00-0000-4000-8000-000000000001";
    let reply = server.client(&key).decide(id, "crash-1", &json!({"status": "approved", "decided_by_role": "security_officer", "reason": "Rotation window agreed"}));
    assert_eq!(reply.status, 200, "{}", reply.text);
    server.crash();
    let restarted = Server::start(data.path(), &[]);
    let stored = restarted
        .client(&restarted.reviewer)
        .get(&format!("/reviews/{id}"));
    assert_eq!(stored.body["review"]["confirm"]["status"], "approved");
    assert_eq!(
        stored.body["review"]["confirm"]["decisions"][0]["reason"],
        "Rotation window agreed"
    );
    // and the retry after the crash still returns the first result
    let retry = restarted.client(&key).decide(id, "crash-1", &json!({"status": "approved", "decided_by_role": "security_officer", "reason": "Rotation window agreed"}));
    assert_eq!(retry.status, 200);
    assert_eq!(
        retry.body["review"]["confirm"]["decisions"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn keys_are_managed_by_the_command_and_revoked_keys_are_refused() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let (code, out, err) = server.keys(&[
        "add", "--kind", "reviewer", "--role", "dba", "--label", "alice",
    ]);
    assert_eq!(code, 0, "{err}");
    let secret = out.lines().next().unwrap().to_owned();
    let id = out
        .lines()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .to_owned();
    assert!(secret.starts_with("cs_reviewer_"));
    let alice = server.client(&secret);
    assert_eq!(alice.get("/reviews").status, 200);
    let (_, listing, _) = server.keys(&["list"]);
    assert!(listing.contains(&id) && listing.contains("dba") && !listing.contains(&secret));
    assert_eq!(
        server.keys(&["add", "--kind", "reviewer"]).0,
        2,
        "a reviewer key needs a role"
    );
    assert_eq!(server.keys(&["revoke", &id]).0, 0);
    assert_eq!(alice.get("/reviews").status, 401);
    assert_eq!(
        server.keys(&["revoke", &id]).0,
        2,
        "revoking twice is an error"
    );
    // The database stores only a hash of the secret.
    let db = std::fs::read(data.path().join("countersign.db")).unwrap();
    let wal = std::fs::read(data.path().join("countersign.db-wal")).unwrap_or_default();
    let needle = secret.as_bytes();
    assert!(
        !db.windows(needle.len()).any(|w| w == needle)
            && !wal.windows(needle.len()).any(|w| w == needle)
    );
}

#[test]
fn agent_submit_waits_for_the_reviewers_decision() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let file = data.path().join("plan.json");
    std::fs::write(&file, plan(9, 3, false).to_string()).unwrap();
    let reviewer = server.client(&server.reviewer);
    let run = |file: &std::path::Path| {
        std::process::Command::new(crate::support::binary())
            .args(["agent", "--server", &server.url, "submit"])
            .arg(file)
            .args(["--role", "deploy-agent", "--wait", "--timeout", "30"])
            .env("COUNTERSIGN_AGENT_KEY", &server.agent)
            .output()
            .unwrap()
    };
    let decide_when_listed = |status: &'static str, reason: &'static str| {
        let reviewer = reviewer.clone();
        std::thread::spawn(move || {
            for _ in 0..100 {
                let page = reviewer.get("/reviews?status=pending&requester=deploy-agent");
                if let Some(item) = page.body["items"].as_array().and_then(|a| a.first()) {
                    let id = item["confirm"]["confirm_id"].as_str().unwrap().to_owned();
                    return reviewer.decide(&id, &format!("agent-{id}"), &json!({"status": status, "decided_by_role": "reviewer", "reason": reason})).status;
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            0
        })
    };
    let decider = decide_when_listed("approved", "Looks safe");
    let output = run(&file);
    assert_eq!(decider.join().unwrap(), 200);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout} {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("APPROVED") && stdout.contains("Looks safe"),
        "{stdout}"
    );

    let mut second = plan(10, 2, false);
    second["plan_id"] = json!("0000000a-2222-4222-8222-22222222222a");
    std::fs::write(&file, second.to_string()).unwrap();
    let decider = decide_when_listed("rejected", "Not during the freeze");
    let output = run(&file);
    assert_eq!(decider.join().unwrap(), 200);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(3), "{stdout}");
    assert!(
        stdout.contains("TOOL_DENIED") && stdout.contains("Not during the freeze"),
        "{stdout}"
    );

    // An invalid plan is refused with its paths, and nothing waits.
    std::fs::write(&file, plan(11, 3, true).to_string()).unwrap();
    let output = run(&file);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("/target/plan/steps"));
}

#[test]
fn serves_the_built_app_with_spa_fallback_caching_compression_cors_and_security_headers() {
    let data = tempfile::tempdir().unwrap();
    let dist = data.path().join("dist");
    std::fs::create_dir_all(&dist).unwrap();
    std::fs::write(
        dist.join("index.html"),
        format!(
            r#"<!doctype html><head><meta http-equiv="Content-Security-Policy" content="default-src 'self'; script-src 'self' 'wasm-unsafe-eval'" /><title>Countersign</title></head>{}"#,
            "<p>Countersign</p>".repeat(20)
        ),
    )
    .unwrap();
    std::fs::write(
        dist.join("countersign-app-0123456789abcdef.js"),
        "export const x = 1;".repeat(200),
    )
    .unwrap();
    std::fs::write(dist.join("manifest.webmanifest"), "{}").unwrap();
    let server = Server::start(
        data.path(),
        &[
            "--app-dir",
            dist.to_str().unwrap(),
            "--cors-origin",
            "https://review.example.com",
        ],
    );
    let site = Client {
        base: server.url.clone(),
        key: None,
    };
    let route = site.get("/reviews/c0ffee00-0000-4000-8000-000000000001");
    assert_eq!(route.status, 200);
    assert!(route.text.contains("<title>Countersign</title>"));
    assert_eq!(route.header("cache-control"), Some("no-cache"));
    // The build's policy as a header, with framing forbidden; the other headers.
    assert_eq!(
        route.header("content-security-policy"),
        Some("default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; frame-ancestors 'none'")
    );
    for reply in [&route, &site.get("/api/v1/health")] {
        assert_eq!(reply.header("x-content-type-options"), Some("nosniff"));
        assert_eq!(reply.header("x-frame-options"), Some("DENY"));
        assert_eq!(reply.header("referrer-policy"), Some("no-referrer"));
        assert_eq!(
            reply.header("cross-origin-opener-policy"),
            Some("same-origin")
        );
        assert!(reply.header("permissions-policy").is_some());
    }
    assert_eq!(
        site.get("/api/v1/health").header("content-security-policy"),
        Some("default-src 'none'; frame-ancestors 'none'")
    );
    let asset = site.send(
        "GET",
        "/countersign-app-0123456789abcdef.js",
        None,
        &[("Accept-Encoding", "br")],
    );
    assert_eq!(asset.status, 200);
    assert_eq!(
        asset.header("cache-control"),
        Some("public, max-age=31536000, immutable")
    );
    assert_eq!(asset.header("content-encoding"), Some("br"));
    assert_eq!(
        site.get("/manifest.webmanifest").header("cache-control"),
        Some("no-cache")
    );
    assert_eq!(site.get("/missing-0123456789abcdef.js").status, 404);
    assert_eq!(
        site.get("/api/v1/nothing").code(),
        "not_found",
        "API paths never fall back to the app"
    );

    let preflight = |origin: &str| {
        site.send(
            "OPTIONS",
            "/api/v1/reviews",
            None,
            &[
                ("Origin", origin),
                ("Access-Control-Request-Method", "POST"),
                (
                    "Access-Control-Request-Headers",
                    "authorization,content-type,idempotency-key",
                ),
            ],
        )
    };
    let allowed = preflight("https://review.example.com");
    assert_eq!(
        allowed.header("access-control-allow-origin"),
        Some("https://review.example.com")
    );
    assert!(allowed
        .header("access-control-allow-headers")
        .unwrap_or("")
        .contains("idempotency-key"));
    assert_eq!(
        preflight("https://evil.example").header("access-control-allow-origin"),
        None
    );
}

/// SIGTERM: an agent waiting for an outcome is answered at once with the
/// outcome as it stands (pending), an open event stream ends cleanly, and
/// the server exits 0 within a second or two, saying so in its log.
#[test]
fn sigterm_answers_waiting_requests_ends_streams_and_exits_cleanly() {
    let data = tempfile::tempdir().unwrap();
    let log = data.path().join("server.log");
    let server = Server::start_logging(data.path(), &["--log-filter", "info"], &log);
    let agent = server.client(&server.agent);
    assert_eq!(agent.post("/reviews", &review(70, 2, false)).status, 201);
    let events = ureq::get(format!("{}/api/v1/events", server.url))
        .header("Authorization", format!("Bearer {}", server.reviewer))
        .call()
        .unwrap();
    let stream = std::thread::spawn(move || {
        let mut body = String::new();
        let read = std::io::Read::read_to_string(&mut events.into_body().into_reader(), &mut body);
        read.map(|_| body).map_err(|e| e.to_string())
    });
    let url = format!("/reviews/{}/outcome?wait=60", confirm_id(70));
    let waiting = std::thread::spawn(move || agent.get(&url));
    std::thread::sleep(Duration::from_millis(300));
    let asked = Instant::now();
    assert_eq!(server.stop(), Some(0), "exit code after SIGTERM");
    let stopped = asked.elapsed();
    let answered = waiting.join().unwrap();
    assert_eq!(answered.status, 200, "{}", answered.text);
    assert_eq!(answered.body["outcome"], "TOOL_BLOCKED_PENDING_APPROVAL");
    assert!(
        stream.join().unwrap().is_ok(),
        "the event stream ended cleanly"
    );
    assert!(
        stopped < Duration::from_secs(5),
        "stopped after {stopped:?}"
    );
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("shutting down") && text.contains("countersign stopped"),
        "{text}"
    );
    println!("SIGTERM to exit, with a waiting agent and an open stream: {stopped:?}");
}

/// Debian's `prometheus`, scraping `url` every second until dropped.
struct Prometheus {
    child: std::process::Child,
    api: String,
    _dir: tempfile::TempDir,
}

impl Prometheus {
    /// None when it is not installed and not required
    /// (`COUNTERSIGN_REQUIRE_PROMETHEUS`, set by the test command).
    fn scraping(target: &str) -> Option<Prometheus> {
        let installed = std::process::Command::new("prometheus")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !installed {
            assert!(
                std::env::var("COUNTERSIGN_REQUIRE_PROMETHEUS").is_err(),
                "COUNTERSIGN_REQUIRE_PROMETHEUS is set but prometheus is not installed"
            );
            eprintln!("skipped: install Debian's prometheus to run this test");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: countersign\n    static_configs:\n      - targets: ['{target}']\n"),
        )
        .unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = std::process::Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        Some(Prometheus {
            child,
            api: format!("http://127.0.0.1:{port}/api/v1"),
            _dir: dir,
        })
    }

    /// The value of an instant query's only series, once it has one.
    fn value(&self, query: &str) -> f64 {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let url = format!("{}/query?query={}", self.api, urlencode(query));
            if let Ok(reply) = ureq::get(&url).call() {
                let body: Value = reply.into_body().read_json().unwrap();
                let result = &body["data"]["result"];
                if let Some(value) = result[0]["value"][1].as_str() {
                    assert_eq!(result.as_array().unwrap().len(), 1, "{query}: {result}");
                    return value.parse().unwrap();
                }
            }
            assert!(Instant::now() < deadline, "Prometheus has no {query}");
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn urlencode(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// A scripted workload, scraped by a real Prometheus: every series the
/// operator's guide names arrives with the values the workload made, and
/// `promtool check metrics` passes the text. Without `--metrics`, `/metrics`
/// is a 404, never the app's page.
#[test]
fn prometheus_scrapes_what_a_workload_did() {
    let data = tempfile::tempdir().unwrap();
    let off = Server::start(data.path(), &[]);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut reply = agent.get(format!("{}/metrics", off.url)).call().unwrap();
    assert_eq!(reply.status(), 404);
    let said = reply.body_mut().read_to_string().unwrap();
    assert!(said.contains("--metrics"), "{said}");
    drop(off);

    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &["--metrics"]);
    let (agent, reviewer) = (
        server.client(&server.agent),
        server.client(&server.reviewer),
    );
    for n in [81, 82] {
        assert_eq!(agent.post("/reviews", &review(n, 2, false)).status, 201);
    }
    let rejected = json!({"status": "rejected", "decided_by_role": "reviewer", "reason": "no"});
    assert_eq!(
        reviewer.decide(&confirm_id(81), "m-1", &rejected).status,
        200
    );
    let mut call = crate::support::tool_call(json!({"amount": 5, "to": "ACME"}));
    call["clientDeviceId"] = Value::Null;
    let asked = agent.post("/tool-calls", &call);
    let id = asked.body["outcome"]["confirm_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let approved = json!({"status": "approved", "decided_by_role": "reviewer"});
    let decided = reviewer.decide(&id, "m-2", &approved);
    let token = decided.body["outcome"]["token"]["tokenId"].clone();
    let redeem = json!({"tokenId": token, "toolCall": call["toolCall"]});
    let path = format!("/reviews/{id}/redeem");
    assert_eq!(agent.post(&path, &redeem).status, 200);
    assert_eq!(agent.post(&path, &redeem).status, 409);
    let (code, minted, err) = server.keys(&["add", "--kind", "agent", "--rate", "1/min"]);
    assert_eq!(code, 0, "{err}");
    let slow = server.client(minted.lines().next().unwrap());
    assert_eq!(slow.get("/me").status, 200);
    assert_eq!(slow.get("/me").status, 429);
    let _events = ureq::get(format!("{}/api/v1/events", server.url))
        .header("Authorization", format!("Bearer {}", server.reviewer))
        .call()
        .unwrap();

    let text = ureq::get(format!("{}/metrics", server.url))
        .call()
        .unwrap()
        .into_body()
        .read_to_string()
        .unwrap();
    let Some(prometheus) = Prometheus::scraping(server.url.trim_start_matches("http://")) else {
        return;
    };
    let mut promtool = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut promtool.stdin.take().unwrap(), text.as_bytes()).unwrap();
    let checked = promtool.wait_with_output().unwrap();
    assert!(
        checked.status.success(),
        "promtool check metrics: {}{}\n{text}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
    let expected = [
        ("countersign_reviews_created_total{kind=\"plan\"}", 2.0),
        ("countersign_reviews_created_total{kind=\"tool_call\"}", 1.0),
        ("countersign_reviews_decided_total{kind=\"plan\",status=\"rejected\"}", 1.0),
        ("countersign_reviews_decided_total{kind=\"tool_call\",status=\"approved\"}", 1.0),
        ("countersign_decision_latency_seconds_count{kind=\"plan\"}", 1.0),
        ("countersign_tokens_redeemed_total", 1.0),
        ("countersign_tokens_refused_total{reason=\"token_used\"}", 1.0),
        ("countersign_rate_limited_total", 1.0),
        ("countersign_event_stream_subscribers", 1.0),
        ("countersign_http_requests_total{method=\"POST\",route=\"/api/v1/reviews\",status=\"201\"}", 2.0),
        ("countersign_http_request_duration_seconds_count{method=\"POST\",route=\"/api/v1/reviews\"}", 2.0),
        ("countersign_webhook_deliveries{state=\"failed\"}", 0.0),
        ("up{job=\"countersign\"}", 1.0),
    ];
    for (query, value) in expected {
        assert_eq!(prometheus.value(query), value, "{query}");
    }
    let pending = reviewer.get("/reviews?status=pending&limit=1").body["counts"]["pending"]
        .as_f64()
        .unwrap();
    assert_eq!(prometheus.value("countersign_reviews_pending"), pending);
    assert!(prometheus.value("countersign_oldest_pending_review_age_seconds") > 0.0);
    assert!(prometheus.value("sum(countersign_db_pool_connections)") >= 1.0);
}
