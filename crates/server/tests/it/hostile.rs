//! Hostile content and limits (docs/security.md): markup, script and `javascript:`
//! payloads, bidi and zero-width characters, NUL and a 1 MB string are stored
//! and returned byte for byte on SQLite and PostgreSQL; bodies over the limit,
//! nesting past the parser's depth and broken Unicode are refused with errors
//! that say what is wrong.

use crate::support::{confirm_id, fresh_database, review, Server};
use serde_json::{json, Value};

/// Text an attacker would put in any field a reviewer reads.
const PAYLOADS: [&str; 9] = [
    "<script>alert('reason')</script>",
    "<img src=x onerror=alert(1)>",
    "<svg onload=alert(1)><a xlink:href=\"javascript:alert(2)\">x</a></svg>",
    "javascript:alert(document.cookie)",
    "\u{202e}gnp.exe\u{202c} safe\u{2066}text\u{2069}",
    "zero\u{200b}width\u{200d}joiner\u{feff}bom\u{2060}",
    "nul\u{0}byte and control \u{1b}[31m",
    "\"quotes' & ampersands <b>bold</b> \\ backslash",
    "emoji 👩‍💻, combining e\u{301}, Arabic مرحبا, CJK 你好",
];

/// One string holding every payload, so each field carries all of them.
fn hostile(field: &str) -> String {
    format!("{field}: {}", PAYLOADS.join(" | "))
}

/// A review whose every free-text field is hostile.
fn hostile_review(n: u32, reason: String) -> Value {
    let mut value = review(n, 3, false);
    let confirm = &mut value["confirm"];
    confirm["reason"] = json!(reason);
    confirm["requested_by_role"] = json!(hostile("role"));
    let plan = &mut value["target"]["plan"];
    plan["title"] = json!(hostile("title"));
    plan["objective"] = json!(hostile("objective"));
    for (i, step) in plan["steps"].as_array_mut().unwrap().iter_mut().enumerate() {
        step["description"] = json!(hostile(&format!("step {i}")));
        step["agent_role"] = json!(hostile("agent role"));
    }
    value
}

/// Arguments nested `depth` levels deep, with hostile keys and values.
fn nested_args(depth: usize) -> Value {
    let mut value = json!({"leaf": hostile("leaf"), "\u{202e}key": PAYLOADS[0]});
    for level in 0..depth {
        value = json!({format!("level {level} {}", PAYLOADS[5]): value});
    }
    value
}

/// Everything stored comes back exactly as sent, decisions included.
fn stored_and_returned_intact(server: &Server) {
    let agent = server.client(&server.agent);
    let reviewer = server.client(&server.reviewer);
    let megabyte = format!("{}{}", hostile("reason"), "ä<b>\u{202e}".repeat(1 << 17));
    let sent = hostile_review(7, megabyte.clone());
    let created = agent.post("/reviews", &sent);
    assert_eq!(created.status, 201, "{}", created.text);
    let id = confirm_id(7);
    let decision =
        json!({"status": "rejected", "decided_by_role": "reviewer", "reason": hostile("decision")});
    let decided = reviewer.decide(&id, "hostile-1", &decision);
    assert_eq!(decided.status, 200, "{}", decided.text);

    let back = reviewer.get(&format!("/reviews/{id}")).body["review"].clone();
    assert_eq!(
        back["confirm"]["reason"],
        json!(megabyte),
        "the 1 MB reason"
    );
    assert_eq!(
        back["confirm"]["requested_by_role"],
        sent["confirm"]["requested_by_role"]
    );
    assert_eq!(
        back["target"]["plan"]["title"],
        sent["target"]["plan"]["title"]
    );
    assert_eq!(
        back["target"]["plan"]["objective"],
        sent["target"]["plan"]["objective"]
    );
    assert_eq!(
        back["target"]["plan"]["steps"],
        sent["target"]["plan"]["steps"]
    );
    assert_eq!(
        back["confirm"]["decisions"][0]["reason"], decision["reason"],
        "the decision's reason"
    );

    // Search finds it by a piece of hostile text, and the list row is intact.
    let found = reviewer.get("/reviews?status=all&q=%3Cscript%3E");
    let rows = found.body["items"].as_array().unwrap();
    assert!(
        rows.iter()
            .any(|r| r["confirm"]["requested_by_role"] == sent["confirm"]["requested_by_role"]),
        "search by markup finds the review: {}",
        found.text.chars().take(300).collect::<String>()
    );

    // The requester filter matches the hostile role exactly (NUL included).
    let role = sent["confirm"]["requested_by_role"].as_str().unwrap();
    let by_role = reviewer.get(&format!(
        "/reviews?status=all&requester={}",
        form_urlencoded::byte_serialize(role.as_bytes()).collect::<String>()
    ));
    assert_eq!(
        by_role.body["items"].as_array().map(Vec::len),
        Some(1),
        "{}",
        by_role.text
    );

    // A tool call with hostile name, arguments 100 levels deep and summary.
    let args = nested_args(100);
    let asked = agent.post(
        "/tool-calls",
        &json!({
            "requestedByRole": hostile("tool role"),
            "sessionId": "sess-\u{202e}1",
            "runId": "run-\u{200b}1",
            "toolCall": {"name": "wire\u{0}transfer\u{202e}", "args": args},
            "humanSummary": hostile("summary"),
            "riskTier": "R2",
        }),
    );
    assert_eq!(asked.status, 201, "{}", asked.text);
    let call_id = asked.body["outcome"]["confirm_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let call = reviewer.get(&format!("/reviews/{call_id}")).body["review"].clone();
    let canonical = find_string(&call, "toolCallCanonical").expect("the stored exact call");
    let exact: Value = serde_json::from_str(canonical).unwrap();
    assert_eq!(exact["name"], json!("wire\u{0}transfer\u{202e}"));
    assert_eq!(
        exact["args"], args,
        "the tool call's arguments come back intact"
    );
    println!(
        "hostile content ({}): {} payloads in 9 fields, a {} byte reason and arguments 100 levels deep stored and returned intact",
        server.database.as_deref().map_or("SQLite", |_| "PostgreSQL"),
        PAYLOADS.len(),
        megabyte.len()
    );
}

/// The first string under `key` anywhere in `value`.
fn find_string<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    match value {
        Value::Object(map) => map
            .get(key)
            .and_then(Value::as_str)
            .or_else(|| map.values().find_map(|v| find_string(v, key))),
        Value::Array(items) => items.iter().find_map(|v| find_string(v, key)),
        _ => None,
    }
}

#[test]
fn sqlite_stores_and_returns_hostile_content_intact() {
    let data = tempfile::tempdir().unwrap();
    stored_and_returned_intact(&Server::start(data.path(), &[]));
}

#[test]
fn postgresql_stores_and_returns_hostile_content_intact() {
    let Some(url) = fresh_database("countersign_hostile") else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    stored_and_returned_intact(&Server::start_on(data.path(), Some(&url), &[]));
}

#[test]
fn limits_are_enforced_with_errors_that_say_what_is_wrong() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let agent = server.client(&server.agent);
    let reviewer = server.client(&server.reviewer);
    let raw = |path: &str, body: &str| {
        agent.send(
            "POST",
            path,
            Some(("application/json", body.as_bytes())),
            &[],
        )
    };

    // Over the default body limit (2 MiB): refused before parsing.
    let too_big = hostile_review(8, "x".repeat(3 << 20));
    let reply = agent.post("/reviews", &too_big);
    assert_eq!((reply.status, reply.code()), (413, "body_too_large"));
    assert!(reply.text.contains("--max-body"), "{}", reply.text);

    // Nesting past the parser's depth: a 400 that names the limit and where.
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let reply = raw(
        "/tool-calls",
        &format!(r#"{{"toolCall":{{"name":"x","args":{deep}}}}}"#),
    );
    assert_eq!((reply.status, reply.code()), (400, "malformed_json"));
    assert!(
        reply.text.contains("recursion limit") && reply.text.contains("column"),
        "{}",
        reply.text
    );

    // A lone surrogate is not Unicode: refused, with its place.
    let reply = raw("/reviews", r#"{"confirm": {"reason": "\ud800"}}"#);
    assert_eq!((reply.status, reply.code()), (400, "malformed_json"));
    assert!(
        reply.text.contains("escape") && reply.text.contains("column"),
        "{}",
        reply.text
    );

    // Nothing of the refused requests was stored.
    let listed = reviewer.get("/reviews?status=all&limit=500");
    let ids: Vec<&str> = listed.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["confirm"]["confirm_id"].as_str())
        .collect();
    assert!(!ids.contains(&confirm_id(8).as_str()));
    println!("limits: 3 MiB body -> 413 body_too_large; 10,000 levels of nesting -> 400 naming the recursion limit; a lone surrogate -> 400; nothing stored");
}

/// One HTTP/1.1 exchange on an open connection, the body sent a moment after
/// the head (as most clients do): the status and whether the server said it
/// closes the connection.
fn exchange(stream: &mut std::net::TcpStream, request: &[u8]) -> (u16, bool) {
    use std::io::{BufRead, Read, Write};
    let split = request.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    stream.write_all(&request[..split]).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(50));
    // The server may have answered and closed already: the read below says so.
    let _ = stream.write_all(&request[split..]);
    let mut reader = std::io::BufReader::new(stream);
    let mut head = Vec::new();
    loop {
        let mut line = String::new();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "the server closed the connection"
        );
        if line == "\r\n" {
            break;
        }
        head.push(line.trim_end().to_ascii_lowercase());
    }
    let status = head[0].split(' ').nth(1).unwrap().parse().unwrap();
    let header = |name: &str| {
        head.iter()
            .find_map(|h| h.strip_prefix(&format!("{name}: ")).map(str::to_owned))
    };
    if header("transfer-encoding").as_deref() == Some("chunked") {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).unwrap();
            let size = usize::from_str_radix(size.trim(), 16).unwrap();
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).unwrap();
            if size == 0 {
                break;
            }
        }
    } else {
        let length: usize = header("content-length").map_or(0, |n| n.parse().unwrap());
        reader.read_exact(&mut vec![0; length]).unwrap();
    }
    (status, header("connection").as_deref() == Some("close"))
}

#[test]
fn an_error_answered_before_the_body_is_read_leaves_the_connection_usable() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &["--max-body", "1000"]);
    let address = server.url.strip_prefix("http://").unwrap();
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    let post = |auth: &str, content_type: &str, body: &str| {
        format!(
            "POST /api/v1/reviews HTTP/1.1\r\nHost: {address}\r\n{auth}Content-Type: {content_type}\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
    };
    let key = format!("Authorization: Bearer {}\r\n", server.agent);
    let health = format!("GET /api/v1/health HTTP/1.1\r\nHost: {address}\r\n\r\n");
    let body = review(1, 2, false).to_string();
    let cases = [
        ("no key", post("", "application/json", &body), 401),
        ("wrong content type", post(&key, "text/plain", &body), 415),
        (
            "over --max-body",
            post(&key, "application/json", &"x".repeat(5000)),
            413,
        ),
        (
            "unknown path",
            format!(
                "POST /api/v1/nowhere HTTP/1.1\r\nHost: {address}\r\nContent-Length: 4\r\n\r\nbody"
            ),
            404,
        ),
    ];
    for (what, request, expected) in cases {
        assert_eq!(
            exchange(&mut stream, request.as_bytes()),
            (expected, false),
            "{what}"
        );
        assert_eq!(
            exchange(&mut stream, health.as_bytes()),
            (200, false),
            "the request after {what}"
        );
    }
}

/// p99 of latencies, in milliseconds.
fn p99(mut latencies: Vec<std::time::Duration>) -> f64 {
    latencies.sort();
    latencies[(latencies.len() - 1) * 99 / 100].as_secs_f64() * 1000.0
}

/// A reviewer's list, `count` times in a row: its latencies (each must succeed).
fn lists(reviewer: &crate::support::Client, count: usize) -> Vec<std::time::Duration> {
    (0..count)
        .map(|_| {
            let start = std::time::Instant::now();
            assert_eq!(reviewer.get("/reviews?view=summary&limit=20").status, 200);
            start.elapsed()
        })
        .collect()
}

#[test]
fn a_flooding_agent_key_is_answered_429_and_the_reviewer_is_still_served() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    // A rate low enough that even a slow, busy machine serves the flood faster.
    let (code, out, err) = server.keys(&["add", "--kind", "agent", "--rate", "10/s,20"]);
    assert_eq!(code, 0, "{err}");
    let flooder = server.client(out.lines().next().unwrap());
    // The reviewer here lists as fast as it can, far above a person's rate.
    let (code, out, err) = server.keys(&[
        "add", "--kind", "reviewer", "--role", "reviewer", "--rate", "none",
    ]);
    assert_eq!(code, 0, "{err}");
    let reviewer = server.client(out.lines().next().unwrap());
    let idle = p99(lists(&reviewer, 200));
    let seconds = 2.0;
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (replies, busy) = std::thread::scope(|scope| {
        let floods: Vec<_> = (0..16)
            .map(|t| {
                let (flooder, stop) = (&flooder, &stop);
                scope.spawn(move || {
                    let mut replies = Vec::new();
                    let mut n = 0;
                    while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                        let mut body = crate::support::tool_call(json!({"amount": n}));
                        body["runId"] = json!(format!("flood-{t}-{n}"));
                        let reply = flooder.post("/tool-calls", &body);
                        replies
                            .push((reply.status, reply.header("retry-after").map(str::to_owned)));
                        n += 1;
                    }
                    replies
                })
            })
            .collect();
        let start = std::time::Instant::now();
        let mut busy = Vec::new();
        while start.elapsed().as_secs_f64() < seconds {
            busy.extend(lists(&reviewer, 10));
        }
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let replies: Vec<_> = floods.into_iter().flat_map(|f| f.join().unwrap()).collect();
        (replies, busy)
    });
    let accepted = replies.iter().filter(|(s, _)| *s == 201).count();
    let limited: Vec<_> = replies.iter().filter(|(s, _)| *s == 429).collect();
    let others: Vec<u16> = replies
        .iter()
        .map(|(s, _)| *s)
        .filter(|s| ![201, 429].contains(s))
        .collect();
    assert!(others.is_empty(), "only 201 and 429, not {others:?}");
    assert!(!limited.is_empty(), "{accepted} accepted, none refused");
    assert!(limited.iter().all(|(_, wait)| wait.as_deref() == Some("1")));
    // A burst of 20, then 10 a second (and the time the floods took to stop).
    assert!(
        accepted <= 20 + 10 * 3,
        "{accepted} accepted in {seconds} s"
    );
    println!(
        "flood: {} requests in {seconds} s from 16 threads, {accepted} accepted, {} answered 429; reviewer list p99 {idle:.2} ms idle, {:.2} ms during the flood",
        replies.len(),
        limited.len(),
        p99(busy)
    );
}
