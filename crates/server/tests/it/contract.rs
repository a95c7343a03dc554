//! The HTTP API's contract through the real server process over a real
//! SQLite file: every operation and every documented status, each response
//! held to the OpenAPI document (`crates/server/openapi.json`).

use crate::support::{
    confirm_id, plan, read_events, review, Client, Contract, Opener, Reply, Server,
};
use serde_json::{json, Value};
use std::sync::Arc;

#[test]
fn the_openapi_document_lists_every_error_code_the_server_has() {
    use countersign_domain::wire::ErrorCode;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("openapi.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let listed: Vec<&str> = doc["components"]["schemas"]["ErrorCode"]["enum"]
        .as_array()
        .expect("ErrorCode is an enum")
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    let known: Vec<&str> = ErrorCode::ALL
        .iter()
        .filter(|c| **c != ErrorCode::Unknown)
        .map(|c| c.as_str())
        .collect();
    assert_eq!(listed, known);
    for code in ErrorCode::ALL {
        let written = serde_json::to_value(code).unwrap();
        let read: ErrorCode = serde_json::from_value(written.clone()).unwrap();
        assert_eq!((written.as_str(), read), (Some(code.as_str()), *code));
    }
    let newer: ErrorCode = serde_json::from_value(json!("a_code_from_a_newer_server")).unwrap();
    assert_eq!(newer, ErrorCode::Unknown);
}

#[test]
fn every_operation_and_documented_status_matches_the_openapi_document() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &["--max-body", "20000"]);
    let contract = Arc::new(Contract::load());
    let agent = server.client(&server.agent).checked(&contract);
    let reviewer = server.client(&server.reviewer).checked(&contract);
    let anonymous = server.anonymous().checked(&contract);

    service_operations(&agent, &reviewer, &anonymous);
    create_operations(&agent, &reviewer, &anonymous);
    listing_operations(&agent, &reviewer, &anonymous);
    read_operations(&agent, &reviewer, &anonymous);
    decision_operations(&agent, &reviewer, &anonymous);
    resubmit_operations(&agent, &reviewer, &anonymous);
    event_operations(&agent, &reviewer, &anonymous, &server, &contract);
    tool_call_operations(&agent, &reviewer, &anonymous);
    grant_operations(&agent, &reviewer, &anonymous);
    device_operations(&agent, &reviewer, &anonymous);
    over_the_rate(&server, &contract);
    nothing_pending_draws_nothing(&contract);
    session_operations(&anonymous, &contract);

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

/// What every JSON POST answers before reading what is asked: 400 for a body
/// that is not JSON, 413 over `--max-body`, 415 not sent as JSON, 401 with no
/// key, 403 with the other kind of key.
fn refuses_unreadable_posts(path: &str, caller: &Client, anonymous: &Client, other: &Client) {
    let big = json!({"padding": "x".repeat(30_000)});
    let answers = [
        caller.send("POST", path, Some(("application/json", b"[")), &[]),
        caller.send(
            "POST",
            path,
            Some(("application/json", big.to_string().as_bytes())),
            &[],
        ),
        caller.send("POST", path, Some(("text/plain", b"{}")), &[]),
        anonymous.post(path, &json!({})),
        other.post(path, &json!({})),
    ];
    let statuses = answers.map(|a| a.status);
    assert_eq!(statuses, [400, 413, 415, 401, 403], "{path}");
}

/// The service's own operations: health, the document, the signing key, the policy, who a key is, webhooks.
fn service_operations(agent: &Client, reviewer: &Client, anonymous: &Client) {
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
}

/// Who is signed in: nobody and no sign-in (200); on a server with sign-in,
/// its providers (200), and a session whose provider cannot be asked again
/// about the person's groups (503: nothing is done on its word).
fn session_operations(anonymous: &Client, contract: &Arc<Contract>) {
    let answer = anonymous.get("/session");
    assert_eq!(
        answer.body,
        json!({"signed_in": false, "providers": [], "reviewer_keys": true})
    );
    let data = tempfile::tempdir().unwrap();
    let file = data.path().join("sign-in.toml");
    std::fs::write(
        &file,
        r#"revalidate_after_seconds = 1
[[provider]]
id = "gone"
name = "Gone SSO"
issuer = "http://127.0.0.1:9/realms/gone"
client_id = "countersign"
redirect_url = "http://127.0.0.1:9/auth/callback"
[provider.roles]
"reviewers" = ["reviewer"]
"#,
    )
    .unwrap();
    let server = Server::start(data.path(), &["--sign-in", file.to_str().unwrap()]);
    let anonymous = server.anonymous().checked(contract);
    let state = anonymous.get("/session");
    assert_eq!(
        state.body["providers"],
        json!([{"id": "gone", "name": "Gone SSO", "login_url": "/auth/login?provider=gone"}])
    );
    let secret = tokio::runtime::Runtime::new().unwrap().block_on(async {
        let url = format!("sqlite://{}", data.path().join("countersign.db").display());
        let db = countersign_server::store::Db::open(&url).await.unwrap();
        let person = countersign_domain::Person {
            issuer: "http://127.0.0.1:9/realms/gone".into(),
            subject: "dana".into(),
            name: None,
            email: None,
        };
        let session = countersign_server::store::sessions::NewSession {
            person: &person,
            provider: "gone",
            roles: &["reviewer".to_owned()],
            refresh_token: Some("r"),
            user_agent: None,
            length: chrono::Duration::hours(1),
        };
        db.open_session(session).await.unwrap().secret
    });
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let cookie = format!("__Host-countersign_session={secret}");
    let unsure = anonymous.send("GET", "/session", None, &[("Cookie", &cookie)]);
    assert_eq!(unsure.status, 503, "{}", unsure.text);
    assert_eq!(unsure.code(), "provider_unavailable");
}

/// Creating a review: 201, 200 (a retry), 409, 422, 400, 413, 415, 401, 403.
fn create_operations(agent: &Client, reviewer: &Client, anonymous: &Client) {
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
}

/// The inbox's reads: requesters, changes after a position, the list with its filters and paging.
fn listing_operations(agent: &Client, reviewer: &Client, anonymous: &Client) {
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

    // inbox, drawn: 200 (HTML with its links under the base), 400, 401, 403
    let drawn = reviewer.get("/inbox?server=https%3A%2F%2Freview.example.com");
    assert_eq!(drawn.status, 200, "{}", drawn.text);
    assert!(drawn
        .header("content-type")
        .is_some_and(|t| t.starts_with("text/html")));
    assert!(
        drawn.text.starts_with("<div class=\"first-paint\">"),
        "{}",
        drawn.text
    );
    assert!(drawn.text.contains("title=\"https://review.example.com\""));
    let pending = reviewer.get("/reviews?status=pending&limit=1").body["counts"]["pending"].clone();
    assert_eq!(
        drawn.text.matches("<li class=\"review-row\">").count() as u64,
        pending.as_u64().unwrap().min(50)
    );
    assert!(drawn
        .text
        .contains("<a class=\"review-link\" href=\"/reviews/"));
    let under = reviewer.get("/inbox?base=%2Fcountersign%2Fdesk%2F&server=x");
    assert!(under.text.contains("href=\"/countersign/desk/reviews/"));
    for base in ["", "countersign/", "/countersign", "/a//", "/%22%3E/"] {
        let refused = reviewer.get(&format!("/inbox?base={base}&server=x"));
        assert_eq!(refused.code(), "invalid_parameter", "{base}");
        assert_eq!(
            refused.body["error"]["details"][0]["path"], "base",
            "{base}"
        );
    }
    let unnamed = reviewer.get("/inbox");
    assert_eq!(unnamed.body["error"]["details"][0]["path"], "server");
    assert_eq!(anonymous.get("/inbox?server=x").status, 401);
    assert_eq!(agent.get("/inbox?server=x").status, 403);

    // a review, drawn: 200 (HTML marked with its id, links under the base), 400, 401, 403, 404
    let id = confirm_id(1);
    let drawn = reviewer.get(&format!(
        "/reviews/{id}/page?base=%2Fdesk%2F&server=https%3A%2F%2Freview.example.com"
    ));
    assert_eq!(drawn.status, 200, "{}", drawn.text);
    assert!(drawn
        .header("content-type")
        .is_some_and(|t| t.starts_with("text/html")));
    assert!(
        drawn
            .text
            .starts_with(&format!("<div class=\"first-paint\" data-review=\"{id}\">")),
        "{}",
        drawn.text
    );
    assert!(drawn.text.contains("<h1 id=\"review-title\">Test plan 1<"));
    assert!(drawn
        .text
        .contains("<a href=\"/desk/\" aria-keyshortcuts=\"Escape\">← Inbox</a>"));
    let page = |query: &str| format!("/reviews/{id}/page?{query}");
    assert_eq!(
        reviewer.get(&page("base=desk&server=x")).body["error"]["details"][0]["path"],
        "base"
    );
    assert_eq!(reviewer.get(&page("server=x&colour=red")).status, 400);
    assert_eq!(anonymous.get(&page("server=x")).status, 401);
    assert_eq!(agent.get(&page("server=x")).status, 403);
    let unknown = "00000000-0000-4000-8000-000000000000";
    assert_eq!(
        reviewer
            .get(&format!("/reviews/{unknown}/page?server=x"))
            .status,
        404
    );

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
}

/// Reading a review and its outcome; agents see only their own reviews.
fn read_operations(agent: &Client, reviewer: &Client, anonymous: &Client) {
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
}

/// Deciding: field errors, the role, the idempotency key, body limits, who may decide, a retry, a late decision.
fn decision_operations(agent: &Client, reviewer: &Client, anonymous: &Client) {
    let id = confirm_id(1);
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
}

/// Resubmitting a rejected plan, then approving it; a plan that cannot be approved.
fn resubmit_operations(agent: &Client, reviewer: &Client, anonymous: &Client) {
    let id = confirm_id(1);
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
    refuses_unreadable_posts(
        &format!("/reviews/{id}/resubmit"),
        agent,
        anonymous,
        reviewer,
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
}

/// Event tickets and the event stream.
fn event_operations(
    agent: &Client,
    reviewer: &Client,
    anonymous: &Client,
    server: &Server,
    contract: &Contract,
) {
    // event tickets: 201, 401, 403
    let ticket = reviewer.post("/events/tickets", &json!({}));
    assert_eq!(ticket.status, 201, "{}", ticket.text);
    assert_eq!(anonymous.post("/events/tickets", &json!({})).status, 401);
    assert_eq!(agent.post("/events/tickets", &json!({})).status, 403);

    // events: 200 (stream), 400, 401, 403
    assert_eq!(reviewer.get("/events?after=-1").status, 400);
    assert_eq!(anonymous.get("/events").status, 401);
    assert_eq!(agent.get("/events").status, 403);
    let events = read_events(server, Opener::Key(&server.reviewer), "?after=0", 3, || {});
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
}

/// Every operation that takes a key answers 429 with `Retry-After` once the
/// key has used up its rate (a key minted with `--rate 1/min,1`), whatever
/// the request.
/// The inbox's drawing when every review is decided: 204, nothing to draw.
fn nothing_pending_draws_nothing(contract: &Arc<Contract>) {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let reviewer = server.client(&server.reviewer).checked(contract);
    let pending = reviewer.get("/reviews?status=pending&view=summary");
    for (n, item) in pending.body["items"].as_array().unwrap().iter().enumerate() {
        let id = item["id"].as_str().unwrap();
        let body =
            json!({"status": "rejected", "decided_by_role": "reviewer", "reason": "Not now"});
        let decided = reviewer.decide(id, &format!("empty-{n}"), &body);
        assert_eq!(decided.status, 200, "{}", decided.text);
    }
    let drawn = reviewer.get("/inbox?server=x");
    assert_eq!((drawn.status, drawn.text.as_str()), (204, ""));
}

fn over_the_rate(server: &Server, contract: &Arc<Contract>) {
    let (code, out, err) = server.keys(&[
        "add", "--kind", "reviewer", "--role", "reviewer", "--rate", "1/min,1",
    ]);
    assert_eq!(code, 0, "{err}");
    let limited = server.client(out.lines().next().unwrap()).checked(contract);
    assert_eq!(limited.get("/requesters").status, 200);
    let id = confirm_id(1);
    let requests = [
        ("POST", "/reviews".to_owned()),
        ("GET", "/reviews".to_owned()),
        ("GET", format!("/reviews/{id}")),
        ("GET", "/requesters".to_owned()),
        ("GET", "/inbox?server=x".to_owned()),
        ("GET", format!("/reviews/{id}/page?server=x")),
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
fn grant_operations(agent: &Client, reviewer: &Client, anonymous: &Client) {
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
fn device_operations(agent: &Client, reviewer: &Client, anonymous: &Client) {
    assert_eq!(anonymous.post("/page-key", &json!({})).status, 401);
    assert_eq!(agent.post("/page-key", &json!({})).status, 403);
    assert_eq!(reviewer.post("/page-key", &json!({})).status, 204);
    assert_eq!(anonymous.post("/page-key/forget", &json!({})).status, 204);
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
fn tool_call_operations(agent: &Client, reviewer: &Client, anonymous: &Client) {
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
    refuses_unreadable_posts("/tool-calls", agent, anonymous, reviewer);

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
    refuses_unreadable_posts(&format!("/reviews/{id}/redeem"), agent, anonymous, reviewer);

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
    refuses_unreadable_posts(&path, agent, anonymous, reviewer);
}
