//! What only a real server process shows: a decision acknowledged before a
//! crash survives it, the built app served with its headers, SIGTERM, and
//! the metrics a real Prometheus scrapes.

use crate::support::{confirm_id, review, Client, Server};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

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
fn the_data_is_owner_only_and_a_clean_stop_leaves_every_write_in_the_database_file() {
    use std::os::unix::fs::PermissionsExt;
    let folder = tempfile::tempdir().unwrap();
    let data = folder.path().join("data");
    let server = Server::start(&data, &[]);
    let (_, out, _) = server.keys(&["add", "--kind", "reviewer", "--role", "security_officer"]);
    let key = out.lines().next().unwrap().to_owned();
    let id = "c0ffee00-0000-4000-8000-000000000001";
    let decision = json!({"status": "approved", "decided_by_role": "security_officer", "reason": "Rotation window agreed"});
    let reply = server.client(&key).decide(id, "stop-1", &decision);
    assert_eq!(reply.status, 200, "{}", reply.text);
    let mode =
        |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&data), 0o700);
    for file in ["countersign.db", "countersign.db-wal", "countersign.db-shm"] {
        assert_eq!(mode(&data.join(file)), 0o600, "{file}");
    }
    assert_eq!(server.stop(), Some(0));
    // The database file alone, copied after the stop, has the decision.
    let copy = folder.path().join("copy");
    std::fs::create_dir(&copy).unwrap();
    std::fs::copy(data.join("countersign.db"), copy.join("countersign.db")).unwrap();
    let restarted = Server::start(&copy, &[]);
    let stored = restarted
        .client(&restarted.reviewer)
        .get(&format!("/reviews/{id}"));
    assert_eq!(
        stored.body["review"]["confirm"]["status"], "approved",
        "{}",
        stored.text
    );
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
    let site = Client::http(server.url.clone(), None);
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
    // The API's answers are never cached.
    assert_eq!(
        server
            .client(&server.reviewer)
            .get("/health")
            .header("cache-control"),
        Some("no-store")
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
    // Before anything happened, every series an alert reads is there, at 0.
    let fresh = agent
        .get(format!("{}/metrics", server.url))
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    for series in [
        "countersign_reviews_decided_total{kind=\"tool_call\",status=\"approved\"} 0",
        "countersign_tokens_redeemed_total 0",
        "countersign_tokens_refused_total{reason=\"token_used\"} 0",
        "countersign_rate_limited_total 0",
        "countersign_event_stream_subscribers 0",
    ] {
        assert!(fresh.lines().any(|l| l == series), "{series} in:\n{fresh}");
    }
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
