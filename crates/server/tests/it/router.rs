//! Handlers in process: the API's router (`http::router`) over a fresh
//! database, called with `tower::ServiceExt::oneshot`, no server process and
//! no socket. What needs a real process (start-up, flags, signals, several
//! instances, the contract over HTTP) stays in the other modules.

use crate::support::{app, on_both, review, InProcess};
use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::Router;
use countersign_server::store::Db;
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::ServiceExt;

/// The API of a fresh database, with an agent key and a reviewer key.
struct Api {
    router: Router,
    agent: String,
    reviewer: String,
    _keys: tempfile::TempDir,
}

impl Api {
    async fn over(db: Db) -> Api {
        let (router, agent, reviewer, keys) = app(db).await;
        Api {
            router,
            agent,
            reviewer,
            _keys: keys,
        }
    }

    /// Sends one request (`key` as the bearer, JSON `body`, extra `headers`)
    /// and reads the answer's status and JSON body.
    async fn call(
        &self,
        method: &str,
        path: &str,
        key: Option<&str>,
        body: Option<&Value>,
        headers: &[(&str, &str)],
    ) -> (StatusCode, Value) {
        let mut request = Request::builder()
            .method(method)
            .uri(format!("/api/v1{path}"));
        if let Some(key) = key {
            request = request.header("authorization", format!("Bearer {key}"));
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = match body {
            Some(body) => request
                .header("content-type", "application/json")
                .body(Body::from(body.to_string())),
            None => request.body(Body::empty()),
        };
        let answer = self.router.clone().oneshot(request.unwrap()).await.unwrap();
        let status = answer.status();
        let bytes = answer.into_body().collect().await.unwrap().to_bytes();
        let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        (status, body)
    }

    /// Creates `review(n, steps, false)` (a plan without a cycle) as the agent; its id.
    async fn create(&self, n: u32, steps: u32) -> String {
        let plan = review(n, steps, false);
        let (status, created) = self
            .call("POST", "/reviews", Some(&self.agent), Some(&plan), &[])
            .await;
        assert_eq!(status, StatusCode::CREATED, "{created}");
        created["outcome"]["confirm_id"]
            .as_str()
            .unwrap()
            .to_owned()
    }
}

#[test]
fn without_a_key_or_with_an_unknown_one_every_call_is_401_and_says_why() {
    on_both("router_auth", |db| {
        Box::pin(async move {
            let api = Api::over(db).await;
            for key in [None, Some("cs_agent_not-a-key")] {
                for (method, path) in [("GET", "/reviews"), ("POST", "/reviews"), ("GET", "/me")] {
                    let (status, body) = api.call(method, path, key, None, &[]).await;
                    assert_eq!(status, StatusCode::UNAUTHORIZED, "{method} {path}: {body}");
                    assert_eq!(body["error"]["code"], "unauthorized", "{body}");
                }
            }
        })
    });
}

#[test]
fn a_review_is_created_listed_decided_and_its_outcome_read_in_process() {
    on_both("router_flow", |db| {
        Box::pin(async move {
            let api = Api::over(db).await;
            let agent = Some(api.agent.as_str());
            let reviewer = Some(api.reviewer.as_str());
            let id = api.create(1, 3).await;
            let (status, page) = api.call("GET", "/reviews", reviewer, None, &[]).await;
            assert_eq!(status, StatusCode::OK, "{page}");
            assert_eq!(page["items"][0]["confirm"]["confirm_id"], id.as_str());
            // The agent may not decide its own request.
            let approve = json!({"status": "approved", "decided_by_role": "reviewer"});
            let path = format!("/reviews/{id}/decisions");
            let idem = [("idempotency-key", "first")];
            let (status, _) = api.call("POST", &path, agent, Some(&approve), &idem).await;
            assert_eq!(status, StatusCode::FORBIDDEN);
            let (status, decided) = api
                .call("POST", &path, reviewer, Some(&approve), &idem)
                .await;
            assert_eq!(status, StatusCode::OK, "{decided}");
            let (status, outcome) = api
                .call("GET", &format!("/reviews/{id}/outcome"), agent, None, &[])
                .await;
            assert_eq!(status, StatusCode::OK, "{outcome}");
            assert_eq!(outcome["outcome"], "APPROVED", "{outcome}");
            assert!(outcome["receipt"]["signature"].is_string(), "{outcome}");
        })
    });
}

#[test]
fn a_decision_sent_again_with_its_key_is_answered_the_same_and_stored_once() {
    on_both("router_idem", |db| {
        Box::pin(async move {
            let api = Api::over(db).await;
            let reviewer = Some(api.reviewer.as_str());
            let id = api.create(2, 2).await;
            let path = format!("/reviews/{id}/decisions");
            let reject =
                json!({"status": "rejected", "decided_by_role": "reviewer", "reason": "not now"});
            let idem = [("idempotency-key", "retry-1")];
            let first = api
                .call("POST", &path, reviewer, Some(&reject), &idem)
                .await;
            let again = api
                .call("POST", &path, reviewer, Some(&reject), &idem)
                .await;
            assert_eq!(first.0, StatusCode::OK, "{}", first.1);
            assert_eq!(again, first);
            // The same key with another decision is refused, and changes nothing.
            let approve = json!({"status": "approved", "decided_by_role": "reviewer"});
            let (status, refused) = api
                .call("POST", &path, reviewer, Some(&approve), &idem)
                .await;
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
            let (_, stored) = api
                .call("GET", &format!("/reviews/{id}"), reviewer, None, &[])
                .await;
            let decisions = stored["review"]["confirm"]["decisions"].as_array().unwrap();
            assert_eq!(decisions.len(), 1, "{stored}");
        })
    });
}

#[test]
fn unknown_endpoints_and_methods_get_the_error_shape() {
    let server = InProcess::start();
    let client = server.client(&server.reviewer);
    let missing = client.get("/nothing-here");
    assert_eq!((missing.status, missing.code()), (404, "not_found"));
    let wrong = client.send("DELETE", "/reviews", None, &[]);
    assert_eq!((wrong.status, wrong.code()), (405, "method_not_allowed"));
}
