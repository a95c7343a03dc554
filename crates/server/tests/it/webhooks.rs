//! Webhooks through the real server and a real receiver on 127.0.0.1: every
//! event arrives, signed as the server guide (docs/server.md) says, after refusals and after a
//! SIGKILL of the server; retries carry the same id; forged and replayed
//! requests fail the documented check; escalation and expiry each fire once.

use crate::support::{binary, tool_call, Client, Server};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One request as the receiver got it.
#[derive(Debug, Clone)]
struct Received {
    id: String,
    timestamp: String,
    signature: String,
    body: String,
    accepted: bool,
    at: Instant,
}

/// How the receiver answers a request.
#[derive(Clone, Copy, PartialEq)]
enum Reply {
    /// 204.
    Accept,
    /// 503.
    Refuse,
    /// Never.
    Hang,
}

impl Received {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap()
    }
}

/// A webhook receiver on 127.0.0.1.
struct Receiver {
    url: String,
    got: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    /// One that refuses its first `refuse` requests with 503.
    fn start(refuse: usize) -> Receiver {
        Receiver::answering(move |before, _| {
            if before.len() >= refuse {
                Reply::Accept
            } else {
                Reply::Refuse
            }
        })
    }

    /// One that answers each request as `reply` says, given the requests
    /// received before it.
    fn answering(
        reply: impl Fn(&[Received], &Received) -> Reply + Send + Sync + 'static,
    ) -> Receiver {
        let got = Arc::new(Mutex::new(Vec::<Received>::new()));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let seen = got.clone();
        let reply = Arc::new(reply);
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let hook = move |headers: axum::http::HeaderMap, body: String| {
                    let seen = seen.clone();
                    let reply = reply.clone();
                    async move {
                        let header = |name: &str| {
                            headers
                                .get(name)
                                .and_then(|v| v.to_str().ok())
                                .unwrap_or_default()
                                .to_owned()
                        };
                        let mut received = Received {
                            id: header("webhook-id"),
                            timestamp: header("webhook-timestamp"),
                            signature: header("webhook-signature"),
                            body,
                            accepted: false,
                            at: Instant::now(),
                        };
                        let answer = {
                            let mut seen = seen.lock().unwrap();
                            let answer = reply(&seen, &received);
                            received.accepted = answer == Reply::Accept;
                            seen.push(received);
                            answer
                        };
                        match answer {
                            Reply::Accept => axum::http::StatusCode::NO_CONTENT,
                            Reply::Refuse => axum::http::StatusCode::SERVICE_UNAVAILABLE,
                            Reply::Hang => std::future::pending().await,
                        }
                    }
                };
                let app = axum::Router::new().route("/hook", axum::routing::post(hook));
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                axum::serve(listener, app).await.unwrap();
            });
        });
        Receiver { url, got }
    }

    fn received(&self) -> Vec<Received> {
        self.got.lock().unwrap().clone()
    }

    /// The accepted requests, once `done` holds of them (or the test fails).
    fn wait_for(&self, what: &str, done: impl Fn(&[Received]) -> bool) -> Vec<Received> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let accepted: Vec<Received> =
                self.received().into_iter().filter(|r| r.accepted).collect();
            if done(&accepted) {
                return accepted;
            }
            assert!(Instant::now() < deadline, "waited a minute for {what}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// The server guide's check: HMAC-SHA256 of "{id}.{timestamp}.{body}" with the
/// secret's key, in `webhook-signature`, and a timestamp within 5 minutes.
fn verify(secret: &str, request: &Received, now: i64) -> bool {
    let key = STANDARD
        .decode(secret.strip_prefix("whsec_").unwrap())
        .unwrap();
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{}.{}.{}", request.id, request.timestamp, request.body).as_bytes());
    let expected = format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()));
    let fresh = request
        .timestamp
        .parse::<i64>()
        .is_ok_and(|t| (now - t).abs() <= 300);
    fresh
        && request
            .signature
            .split(' ')
            .any(|candidate| candidate == expected)
}

/// Runs the server guide's Python receiver check (docs/server.md) on a
/// request as received, with its body altered, and 10 minutes later.
fn readme_verdicts(secret: &str, request: &Received) -> String {
    let readme = include_str!("../../../../docs/server.md");
    let start = readme
        .find("```python\nimport base64, hashlib, hmac, time")
        .unwrap()
        + "```python\n".len();
    let end = start + readme[start..].find("```").unwrap();
    let snippet = &readme[start..end];
    let input = json!({
        "secret": secret,
        "headers": {
            "webhook-id": request.id,
            "webhook-timestamp": request.timestamp,
            "webhook-signature": request.signature,
        },
        "body": request.body,
    });
    let harness = r#"
import json, sys
given = json.load(sys.stdin)
body = given["body"].encode()
verdicts = [genuine(given["secret"], given["headers"], body),
            genuine(given["secret"], given["headers"], body.replace(b"review", b"reviex"))]
now = time.time()
time.time = lambda: now + 600
verdicts.append(genuine(given["secret"], given["headers"], body))
print(" ".join(str(v) for v in verdicts))
"#;
    let mut child = Command::new("python3")
        .arg("-c")
        .arg(format!("{snippet}{harness}"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs the server guide's receiver check");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// The secret `countersign webhooks` prints for the server's only webhook.
fn secret(server: &Server) -> String {
    let mut command = Command::new(binary());
    command.arg("webhooks").arg("--data").arg(&server.data);
    if let Some(url) = &server.database {
        command.args(["--database", url]);
    }
    let output = command.output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    text.lines()
        .find_map(|line| line.trim().strip_prefix("secret "))
        .unwrap_or_else(|| panic!("no secret in: {text}"))
        .to_owned()
}

fn start(data: &Path, receiver: &Receiver, extra: &[&str]) -> Server {
    start_on(data, None, receiver, extra)
}

fn start_on(data: &Path, database: Option<&str>, receiver: &Receiver, extra: &[&str]) -> Server {
    let mut args = vec!["--webhook", receiver.url.as_str()];
    args.extend(extra);
    Server::start_on(data, database, &args)
}

/// Asks for a call; returns its review id.
fn ask(agent: &Client, n: usize) -> String {
    let asked = agent.post("/tool-calls", &tool_call(json!({"n": n})));
    assert_eq!(asked.status, 201, "{}", asked.text);
    asked.body["outcome"]["confirm_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn of_type<'a>(received: &'a [Received], kind: &str) -> Vec<&'a Received> {
    received
        .iter()
        .filter(|r| r.json()["type"] == kind)
        .collect()
}

#[test]
fn every_event_arrives_signed_and_a_refused_one_comes_again_with_its_id() {
    every_event_arrives_signed(None);
}

#[test]
fn on_postgresql_every_event_arrives_signed_after_refusals() {
    if let Some(url) = crate::support::fresh_database("countersign_webhooks") {
        every_event_arrives_signed(Some(&url));
    }
}

fn every_event_arrives_signed(database: Option<&str>) {
    let dir = tempfile::tempdir().unwrap();
    let receiver = Receiver::start(3);
    let server = start_on(dir.path(), database, &receiver, &[]);
    let secret = secret(&server);
    let agent = server.client(&server.agent);
    let reviewer = server.client(&server.reviewer);
    let ids: Vec<String> = (0..4).map(|n| ask(&agent, n)).collect();
    let approve = json!({"status": "approved", "decided_by_role": "reviewer"});
    assert_eq!(reviewer.decide(&ids[0], "k0", &approve).status, 200);
    let accepted = receiver.wait_for("4 created and 1 decided", |got| {
        let distinct: HashSet<&str> = got.iter().map(|r| r.id.as_str()).collect();
        distinct.len() >= 5
    });
    let now = chrono::Utc::now().timestamp();
    for request in &accepted {
        assert!(verify(&secret, request, now), "{request:?}");
    }
    let created: HashSet<String> = of_type(&accepted, "review.created")
        .iter()
        .map(|r| r.json()["review"]["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(created, ids.iter().cloned().collect());
    let decided = of_type(&accepted, "review.decided");
    assert_eq!(decided.len(), 1);
    let body = decided[0].json();
    assert_eq!(body["status"], "approved");
    assert_eq!(body["link"], format!("{}/reviews/{}", server.url, ids[0]));
    assert_eq!(body["id"], decided[0].id, "the body names its id too");
    // Who decided, as what: the key here (a signed-in person's name in sign-in.spec.mjs).
    assert_eq!(body["decision"]["status"], "approved");
    assert_eq!(body["decision"]["decided_by_role"], "reviewer");
    assert!(body["decision"]["decided_by_key"].is_string(), "{body}");
    for created in of_type(&accepted, "review.created") {
        assert!(created.json().get("decision").is_none(), "{}", created.body);
    }

    // The three refused requests came again with the same id.
    let all = receiver.received();
    let refused: Vec<&Received> = all.iter().filter(|r| !r.accepted).collect();
    assert_eq!(refused.len(), 3);
    let accepted_ids: HashSet<&str> = accepted.iter().map(|r| r.id.as_str()).collect();
    for request in refused {
        assert!(accepted_ids.contains(request.id.as_str()), "{request:?}");
        assert_eq!(
            accepted.iter().find(|r| r.id == request.id).unwrap().body,
            request.body
        );
    }

    // Forged and replayed requests fail the same check.
    let mut forged = accepted[0].clone();
    forged.body = forged.body.replace("review.", "review.x");
    assert!(!verify(&secret, &forged, now));
    assert!(!verify(&secret, &accepted[0], now + 600), "a replay later");
    assert!(!verify(
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        &accepted[0],
        now
    ));

    // The server guide's own receiver code agrees.
    assert_eq!(
        readme_verdicts(&secret, &accepted[0]),
        "True False False",
        "genuine, forged body, replayed 10 minutes later"
    );

    // The API shows the deliveries, with the receiver's address only.
    let listed = reviewer.get("/webhooks");
    assert_eq!(listed.status, 200, "{}", listed.text);
    let hook = &listed.body["webhooks"][0];
    let host = receiver.url.trim_end_matches("/hook");
    assert_eq!(hook["url"], format!("{host}/…"));
    assert_eq!(hook["format"], "json");
    assert_eq!(hook["sent"], 5);
    let deliveries = listed.body["deliveries"].as_array().unwrap();
    assert_eq!(deliveries.len(), 5);
    assert!(deliveries.iter().any(|d| d["attempts"].as_i64() > Some(1)));
    assert!(deliveries.iter().all(|d| d["state"] == "sent"));
    assert_eq!(agent.get("/webhooks").status, 403, "agents do not see them");
}

#[test]
fn a_sigkill_in_the_middle_of_500_changes_loses_no_delivery() {
    let dir = tempfile::tempdir().unwrap();
    let receiver = Receiver::start(0);
    let server = start(dir.path(), &receiver, &[]);
    let agent_key = server.new_key("agent");
    let agent = server.client(&agent_key);
    let mut asked: Vec<String> = (0..250).map(|n| ask(&agent, n)).collect();
    // Killed halfway through the changes, deliveries queued or in flight.
    let sent_before = receiver.received().len();
    server.crash();
    let server = start(dir.path(), &receiver, &[]);
    let agent = server.client(&agent_key);
    asked.extend((250..500).map(|n| ask(&agent, n)));
    let accepted = receiver.wait_for("500 created", |got| {
        let created: HashSet<String> = got
            .iter()
            .filter(|r| r.json()["type"] == "review.created")
            .map(|r| r.json()["review"]["id"].as_str().unwrap().to_owned())
            .collect();
        asked.iter().all(|id| created.contains(id))
    });
    // Each change has one id, whatever the number of attempts.
    let mut ids_of: HashMap<String, HashSet<String>> = HashMap::new();
    for request in &accepted {
        let seq = request.json()["seq"].to_string();
        ids_of.entry(seq).or_default().insert(request.id.clone());
    }
    assert!(ids_of.values().all(|ids| ids.len() == 1));
    assert_eq!(ids_of.len(), 500);
    eprintln!(
        "{sent_before} delivered before the kill; {} requests for 500 changes",
        accepted.len()
    );
}

#[test]
fn a_receiver_that_hangs_on_some_deliveries_delays_no_other() {
    let dir = tempfile::tempdir().unwrap();
    // Requests about the calls marked "Hang" are never answered; every other
    // delivery is refused once, then accepted: its retry must come on the
    // server guide's schedule (0.5 to 1.5 s after the refused attempt).
    let receiver = Receiver::answering(|before, request| {
        if request.body.contains("Hang here") {
            Reply::Hang
        } else if before.iter().any(|r| r.id == request.id) {
            Reply::Accept
        } else {
            Reply::Refuse
        }
    });
    let server = start(dir.path(), &receiver, &[]);
    let agent = server.client(&server.agent);
    let ask_with = |n: usize, summary: &str| {
        let mut body = tool_call(json!({"n": n}));
        body["humanSummary"] = json!(summary);
        let asked = agent.post("/tool-calls", &body);
        assert_eq!(asked.status, 201, "{}", asked.text);
    };
    for n in 0..4 {
        ask_with(n, "Hang here");
    }
    for n in 4..44 {
        ask_with(n, "Wire money to ACME GmbH");
    }
    let accepted = receiver.wait_for("40 answered deliveries", |got| got.len() >= 40);
    let all = receiver.received();
    let mut late = Vec::new();
    let mut worst = Duration::ZERO;
    for request in &accepted {
        let first = all
            .iter()
            .find(|r| r.id == request.id)
            .expect("its refused attempt");
        assert!(!first.accepted, "{first:?}");
        let waited = request.at - first.at;
        worst = worst.max(waited);
        // The schedule's 1.5 s, and a second for a busy test machine (the
        // other tests of this binary run beside it); a receiver's hang held
        // retries up to its 10 s timeout.
        if waited > Duration::from_millis(2500) {
            late.push(waited);
        }
    }
    let hung = all.iter().filter(|r| r.body.contains("Hang here")).count();
    eprintln!(
        "{} retries while {hung} requests hung; the slowest came {worst:?} after its first attempt",
        accepted.len()
    );
    assert!(hung >= 4, "the hanging receiver was asked: {hung}");
    assert!(late.is_empty(), "retries later than the schedule: {late:?}");
}

#[test]
fn a_waiting_call_escalates_once_then_expires_once_and_slack_hears_both() {
    let dir = tempfile::tempdir().unwrap();
    let policy = crate::support::write_policy(
        dir.path(),
        "[[rule]]\nname = \"payments\"\ntool = \"payments.*\"\nescalate_after = \"1s\"\nexpires_after = \"3s\"\n",
    );
    let receiver = Receiver::start(0);
    let server = start(
        dir.path(),
        &receiver,
        &[
            "--policy",
            policy.to_str().unwrap(),
            "--webhook-format",
            "slack",
            "--public-url",
            "https://desk.example.com/",
        ],
    );
    let agent = server.client(&server.agent);
    let reviewer = server.client(&server.reviewer);
    let mut body = tool_call(json!({"amount": 10}));
    body["toolCall"]["name"] = json!("payments.refund");
    // An agent's text tries Slack markup: a disguised link and a mention.
    body["humanSummary"] =
        json!("Pay now <https://evil.example/phish|Open the desk to approve> <!channel>");
    body["requestedByRole"] = json!("agent <@U024BE7LH> <#C024BE7LR|general> & co");
    let asked = agent.post("/tool-calls", &body);
    assert_eq!(asked.status, 201, "{}", asked.text);
    let id = asked.body["outcome"]["confirm_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let slack = receiver.wait_for("created, escalated, expired", |got| got.len() >= 3);
    let texts: Vec<String> = slack
        .iter()
        .map(|r| r.json()["text"].as_str().unwrap().to_owned())
        .collect();
    // Deliveries are not sent in order (the feed, below, holds the order):
    // one message of each kind.
    let one_of = |start: &str| {
        let found: Vec<usize> = (0..texts.len())
            .filter(|&i| texts[i].starts_with(start))
            .collect();
        assert_eq!(found.len(), 1, "{start}: {texts:?}");
        found[0]
    };
    one_of("New request waiting for approval");
    one_of("Expired");
    let escalated = one_of("Escalated");
    let section = slack[escalated].json()["blocks"][0]["text"]["text"].clone();
    let link = format!("<https://desk.example.com/reviews/{id}|");
    assert!(section.as_str().unwrap().contains(&link), "{section}");
    for request in &slack {
        // The desk's link is the only markup; the agent's text is escaped.
        let markup: Vec<&str> = request
            .body
            .match_indices('<')
            .map(|(i, _)| &request.body[i..])
            .collect();
        assert_eq!(markup.len(), 1, "{}", request.body);
        assert!(markup[0].starts_with(&link), "{}", request.body);
        let text = request.json()["text"].as_str().unwrap().to_owned();
        assert!(text.contains("&lt;!channel&gt;"), "{text}");
        let context = request.json()["blocks"][1]["elements"][0]["text"].clone();
        assert!(
            context
                .as_str()
                .unwrap()
                .contains("asked by agent &lt;@U024BE7LH&gt; &lt;#C024BE7LR|general&gt; &amp; co"),
            "{context}"
        );
    }
    // Once each: nothing more comes.
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(receiver.received().len(), 3);

    // The feed names both, and the history holds one escalation.
    let changes = reviewer.get("/changes?after=0");
    let kinds: Vec<&str> = changes.body["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["summary"]["id"] == id.as_str())
        .map(|c| c["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["review.created", "review.escalated", "review.expired"]
    );
    let review = reviewer.get(&format!("/reviews/{id}"));
    let events = review.body["review"]["confirm"]["events"]
        .as_array()
        .unwrap();
    let escalations = events
        .iter()
        .filter(|e| e["event_type"] == "confirm.escalated")
        .count();
    assert_eq!(escalations, 1);
    assert_eq!(review.body["outcome"]["kind"], "expired");
}

#[test]
fn the_inbox_row_of_an_escalated_review_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let policy = crate::support::write_policy(
        dir.path(),
        "[[rule]]\nname = \"plans\"\ntarget = [\"plan\"]\nescalate_after = \"1s\"\n",
    );
    let server = Server::start(dir.path(), &["--policy", policy.to_str().unwrap()]);
    let agent = server.client(&server.agent);
    let reviewer = server.client(&server.reviewer);
    let created = agent.post("/reviews", &crate::support::review(1, 3, false));
    assert_eq!(created.status, 201, "{}", created.text);
    let id = crate::support::confirm_id(1);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let page = reviewer.get(&format!("/reviews?q={id}&view=summary"));
        let row = page.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id.as_str())
            .cloned()
            .unwrap_or_else(|| panic!("{}", page.text));
        if row["escalated"] == true {
            break;
        }
        assert!(Instant::now() < deadline, "not escalated: {row}");
        std::thread::sleep(Duration::from_millis(200));
    }
}
