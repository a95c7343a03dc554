//! Benchmark of several instances on one PostgreSQL database (the scale-out
//! issue's figures): three `countersign serve` processes, 1,000 live event-stream
//! subscribers spread over them, then a mixed load through all three (plan
//! lifecycles, tool-call lifecycles, lists and searches). Prints the database's
//! transactions per second with no subscriber and with 1,000 idle ones, what
//! each subscriber missed, p50/p99 per operation, and each instance's memory.
//!
//! ```sh
//! cargo build --release -p countersign-server --bin countersign --example instances
//! target/release/examples/instances --database postgres://USER@HOST/EMPTY_DB [--seconds 20]
//! ```

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

const INSTANCES: usize = 3;
const SUBSCRIBERS: usize = 1000;
const WORKERS_PER_INSTANCE: usize = 3;
const LISTERS_PER_INSTANCE: usize = 1;
const IDLE_WINDOW: Duration = Duration::from_secs(20);
const SETTLE: Duration = Duration::from_secs(15);
/// Makes every decision's idempotency key unique.
static NEXT_KEY: AtomicU64 = AtomicU64::new(0);
/// How many subscribers have their stream open.
static OPEN: AtomicUsize = AtomicUsize::new(0);

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let value = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let url =
        value("--database").ok_or("usage: instances --database postgres://... [--seconds N]")?;
    let seconds: u64 = value("--seconds")
        .map_or(Ok(20), |s| s.parse())
        .map_err(|e| format!("--seconds: {e}"))?;
    let binary = std::env::current_exe()
        .map_err(|e| e.to_string())?
        .parent()
        .and_then(|examples| examples.parent())
        .map(|dir| dir.join("countersign"))
        .ok_or("cannot find the countersign binary next to this example")?;
    let data = tempfile::tempdir().map_err(|e| e.to_string())?;
    let key = |kind: &str| -> Result<String, String> {
        let mut command = Command::new(&binary);
        command.args(["keys", "--database", &url, "add", "--kind", kind]);
        if kind == "reviewer" {
            command.args(["--role", "reviewer"]);
        }
        let out = command.output().map_err(|e| e.to_string())?;
        String::from_utf8(out.stdout)
            .ok()
            .and_then(|s| s.lines().next().map(str::to_owned))
            .filter(|_| out.status.success())
            .ok_or_else(|| format!("keys add: {}", String::from_utf8_lossy(&out.stderr)))
    };
    // Only `serve` creates the tables: the keys are minted once the first instance has.
    let mut servers: Vec<Instance> = (0..INSTANCES)
        .map(|i| Instance::start(&binary, &url, &data.path().join(i.to_string())))
        .collect::<Result<_, _>>()?;
    let (agent, reviewer) = (key("agent")?, key("reviewer")?);
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let stats = runtime
        .block_on(sqlx::PgPool::connect(&url))
        .map_err(|e| e.to_string())?;
    let transactions = || -> Result<i64, String> {
        runtime
            .block_on(
                sqlx::query_scalar::<_, i64>(
                    "SELECT (xact_commit + xact_rollback)::bigint FROM pg_stat_database WHERE datname = current_database()",
                )
                .fetch_one(&stats),
            )
            .map_err(|e| e.to_string())
    };
    let per_second = |window: Duration| -> Result<f64, String> {
        let before = transactions()?;
        std::thread::sleep(window);
        Ok((transactions()? - before - 1) as f64 / window.as_secs_f64())
    };

    // PostgreSQL flushes a connection's statistics up to 10 s after it went idle.
    std::thread::sleep(SETTLE);
    let idle = per_second(IDLE_WINDOW)?;
    println!("database transactions/s, 3 idle instances, no subscriber: {idle:.2}");

    let sentinel = format!("{:08x}-1111-4111-8111-111111111111", u32::MAX);
    let subscribers: Vec<_> = (0..SUBSCRIBERS)
        .map(|i| {
            let url = servers[i % INSTANCES].url.clone();
            let (key, sentinel) = (reviewer.clone(), sentinel.clone());
            runtime.spawn(async move { subscribe(&url, &key, &sentinel).await })
        })
        .collect();
    while OPEN.load(Ordering::SeqCst) < SUBSCRIBERS {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(SETTLE);
    let watched = per_second(IDLE_WINDOW)?;
    println!(
        "database transactions/s, 3 idle instances, {SUBSCRIBERS} idle subscribers: {watched:.2}"
    );
    for (i, server) in servers.iter().enumerate() {
        println!(
            "instance {i}: {:.1} MiB resident with {} idle subscribers",
            server.resident_mib(),
            SUBSCRIBERS / INSTANCES
        );
    }

    let start = feed_position(&servers[0].url, &reviewer)?;
    let tally = Mutex::new(BTreeMap::<&'static str, Vec<Duration>>::new());
    let failures = Mutex::new(Vec::<String>::new());
    let stop = AtomicBool::new(false);
    let began = Instant::now();
    let busy = std::thread::scope(|scope| -> Result<f64, String> {
        for w in 0..INSTANCES * WORKERS_PER_INSTANCE {
            let (servers, tally, failures, stop) = (&servers, &tally, &failures, &stop);
            let (agent, reviewer) = (agent.as_str(), reviewer.as_str());
            scope.spawn(move || {
                let mut round = 0;
                while !stop.load(Ordering::SeqCst) {
                    if let Err(e) = lifecycle(
                        servers,
                        (agent, reviewer),
                        (w * 100_000 + round) as u32,
                        tally,
                    ) {
                        failures.lock().unwrap().push(e);
                    }
                    round += 1;
                }
            });
        }
        for l in 0..INSTANCES * LISTERS_PER_INSTANCE {
            let (servers, tally, failures, stop) = (&servers, &tally, &failures, &stop);
            let reviewer = reviewer.as_str();
            scope.spawn(move || {
                let url = &servers[l % INSTANCES].url;
                let mut n = 0;
                while !stop.load(Ordering::SeqCst) {
                    let path = if n % 2 == 0 {
                        "/reviews?view=summary&limit=20".to_owned()
                    } else {
                        format!("/reviews?view=summary&q=plan%20{}", n % 97)
                    };
                    if let Err(e) = timed(tally, "reviewer: list or search", 200, || {
                        call(url, reviewer, "GET", &path, None)
                    }) {
                        failures.lock().unwrap().push(e);
                    }
                    n += 1;
                    std::thread::sleep(Duration::from_millis(100));
                }
            });
        }
        std::thread::sleep(Duration::from_secs(seconds / 2));
        let busy = per_second(Duration::from_secs(seconds / 2));
        stop.store(true, Ordering::SeqCst);
        busy
    })?;
    let elapsed = began.elapsed();
    let last = call(
        &servers[2].url,
        &agent,
        "POST",
        "/reviews",
        Some(plan_review(u32::MAX)),
    )?;
    if last.0 != 201 {
        return Err(format!("the sentinel review: {} {}", last.0, last.1));
    }
    let stored = feed(&servers[0].url, &reviewer, start, &sentinel)?;
    let received: Vec<Result<Vec<i64>, String>> = runtime.block_on(async {
        let mut all = Vec::new();
        for s in subscribers {
            all.push(s.await.unwrap_or_else(|e| Err(e.to_string())));
        }
        all
    });
    let (mut missed, mut extra, mut out_of_order, mut broken) = (0usize, 0usize, 0usize, 0usize);
    for seen in &received {
        match seen {
            Ok(seen) => {
                let set: std::collections::BTreeSet<_> = seen.iter().collect();
                missed += stored.iter().filter(|p| !set.contains(p)).count();
                extra += seen.len() - set.len();
                out_of_order += seen.windows(2).filter(|w| w[0] >= w[1]).count();
            }
            Err(_) => broken += 1,
        }
    }
    let failures = failures.into_inner().unwrap();
    println!(
        "mixed load {:.1} s through {INSTANCES} instances: {} changes stored; {SUBSCRIBERS} subscribers: {missed} changes missed in all, {extra} received twice, {out_of_order} out of order, {broken} streams broken; {} requests failed{}",
        elapsed.as_secs_f64(),
        stored.len(),
        failures.len(),
        failures.first().map(|f| format!(" (first: {f})")).unwrap_or_default()
    );
    println!("database transactions/s during the load: {busy:.1}");
    for (op, mut latencies) in tally.into_inner().unwrap() {
        latencies.sort();
        let at =
            |p: f64| latencies[((latencies.len() - 1) as f64 * p) as usize].as_secs_f64() * 1000.0;
        println!(
            "  {op}: {} ok, p50 {:.2} ms, p99 {:.2} ms",
            latencies.len(),
            at(0.5),
            at(0.99)
        );
    }
    for (i, server) in servers.iter_mut().enumerate() {
        println!(
            "instance {i}: {:.1} MiB resident after the load",
            server.resident_mib()
        );
    }
    Ok(())
}

/// A `countersign serve` process; killed when dropped.
struct Instance {
    child: Child,
    url: String,
}

impl Instance {
    fn start(
        binary: &std::path::Path,
        database: &str,
        data: &std::path::Path,
    ) -> Result<Instance, String> {
        let mut child = Command::new(binary)
            .args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--database",
                database,
                "--agent-rate",
                "none",
                "--reviewer-rate",
                "none",
                "--log-filter",
                "warn",
                "--data",
            ])
            .arg(data)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("{}: {e}", binary.display()))?;
        let mut lines = BufReader::new(child.stdout.take().ok_or("no stdout")?).lines();
        let first = lines.next().and_then(Result::ok).unwrap_or_default();
        let url = first
            .strip_prefix("countersign: listening on ")
            .ok_or_else(|| format!("unexpected first line: {first}"))?
            .to_owned();
        std::thread::spawn(move || for _ in lines {});
        Ok(Instance { child, url })
    }

    fn resident_mib(&self) -> f64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
            .map_or(f64::NAN, |kib| kib / 1024.0)
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One request; the status and body.
fn call(
    base: &str,
    key: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> Result<(u16, Value), String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into();
    let url = format!("{base}/api/v1{path}");
    let bearer = format!("Bearer {key}");
    let mut response = match (method, body) {
        ("GET", _) => agent.get(&url).header("Authorization", &bearer).call(),
        (_, body) => agent
            .post(&url)
            .header("Authorization", &bearer)
            .header(
                "Idempotency-Key",
                &format!(
                    "bench-{}-{}",
                    std::process::id(),
                    NEXT_KEY.fetch_add(1, Ordering::Relaxed)
                ),
            )
            .send_json(body.unwrap_or(json!({}))),
    }
    .map_err(|e| format!("{method} {path}: {e}"))?;
    let status = response.status().as_u16();
    let body = response
        .body_mut()
        .read_json::<Value>()
        .unwrap_or(Value::Null);
    Ok((status, body))
}

/// Times one request that must answer `expected`.
fn timed(
    tally: &Mutex<BTreeMap<&'static str, Vec<Duration>>>,
    op: &'static str,
    expected: u16,
    send: impl FnOnce() -> Result<(u16, Value), String>,
) -> Result<Value, String> {
    let start = Instant::now();
    let (status, body) = send()?;
    if status != expected {
        return Err(format!("{op}: {status} {body}"));
    }
    tally
        .lock()
        .unwrap()
        .entry(op)
        .or_default()
        .push(start.elapsed());
    Ok(body)
}

fn plan_review(n: u32) -> Value {
    let step = |i: u32| format!("{n:08x}-5555-4555-8555-{i:012x}");
    let plan_id = format!("{n:08x}-2222-4222-8222-222222222222");
    json!({
        "confirm": {
            "meta": {"protocol_version": "1.0.0", "schema_version": "1.0.0"},
            "confirm_id": format!("{n:08x}-1111-4111-8111-111111111111"),
            "target_type": "plan", "target_id": plan_id, "status": "pending",
            "requested_by_role": "deploy-agent", "requested_at": "2026-11-01T10:00:00Z",
            "reason": format!("Bench plan {n}"),
        },
        "target": {"plan": {
            "meta": {"protocol_version": "1.0.0", "schema_version": "1.0.0"},
            "plan_id": plan_id, "context_id": "33333333-3333-4333-8333-333333333333",
            "title": format!("Bench plan {n}"), "objective": "Measure", "status": "proposed",
            "steps": (0..3).map(|i| json!({"step_id": step(i), "description": format!("step {i}"), "status": "pending",
                "dependencies": if i == 0 { vec![] } else { vec![step(i - 1)] }})).collect::<Vec<_>>(),
        }},
    })
}

/// A plan rejected, resubmitted and approved, and a tool call approved and
/// redeemed, each step through another instance.
fn lifecycle(
    servers: &[Instance],
    (agent, reviewer): (&str, &str),
    n: u32,
    tally: &Mutex<BTreeMap<&'static str, Vec<Duration>>>,
) -> Result<(), String> {
    let on = |i: u32| servers[i as usize % servers.len()].url.as_str();
    let id = format!("{n:08x}-1111-4111-8111-111111111111");
    timed(tally, "agent: submit plan", 201, || {
        call(on(n), agent, "POST", "/reviews", Some(plan_review(n)))
    })?;
    let decisions = format!("/reviews/{id}/decisions");
    timed(tally, "reviewer: reject", 200, || {
        call(
            on(n + 1),
            reviewer,
            "POST",
            &decisions,
            Some(
                json!({"status": "rejected", "decided_by_role": "reviewer", "reason": "Narrower"}),
            ),
        )
    })?;
    timed(tally, "agent: resubmit", 200, || {
        call(
            on(n + 2),
            agent,
            "POST",
            &format!("/reviews/{id}/resubmit"),
            Some(json!({"by_role": "deploy-agent"})),
        )
    })?;
    let approve = json!({"status": "approved", "decided_by_role": "reviewer"});
    timed(tally, "reviewer: approve plan", 200, || {
        call(on(n), reviewer, "POST", &decisions, Some(approve.clone()))
    })?;
    let args = json!({"service": format!("svc-{n}")});
    let asked = timed(tally, "agent: ask tool call", 201, || {
        call(
            on(n + 1),
            agent,
            "POST",
            "/tool-calls",
            Some(json!({
        "requestedByRole": "ops-agent", "sessionId": "bench", "runId": format!("run-{n}"),
        "toolCall": {"name": "restart_service", "args": args}, "humanSummary": "Restart", "riskTier": "R2"})),
        )
    })?;
    let call_id = asked["outcome"]["confirm_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let decided = timed(tally, "reviewer: approve call", 200, || {
        call(
            on(n + 2),
            reviewer,
            "POST",
            &format!("/reviews/{call_id}/decisions"),
            Some(approve.clone()),
        )
    })?;
    let redeem = json!({"tokenId": decided["outcome"]["token"]["tokenId"], "toolCall": {"name": "restart_service", "args": args}});
    timed(tally, "agent: redeem", 200, || {
        call(
            on(n),
            agent,
            "POST",
            &format!("/reviews/{call_id}/redeem"),
            Some(redeem),
        )
    })?;
    Ok(())
}

/// Pages through `GET /changes` after `after`, handing each change to `visit`
/// until it says stop or the feed ends: the last position read, and whether
/// `visit` stopped it.
fn walk_feed(
    base: &str,
    key: &str,
    mut after: i64,
    mut visit: impl FnMut(&Value) -> bool,
) -> Result<(i64, bool), String> {
    loop {
        let (_, page) = call(
            base,
            key,
            "GET",
            &format!("/changes?after={after}&limit=500"),
            None,
        )?;
        for change in page["changes"].as_array().ok_or("no changes")? {
            if visit(change) {
                return Ok((change["seq"].as_i64().ok_or("no seq")?, true));
            }
        }
        after = page["position"].as_i64().ok_or("no position")?;
        if page["more"] != true {
            return Ok((after, false));
        }
    }
}

/// The newest feed position.
fn feed_position(base: &str, key: &str) -> Result<i64, String> {
    Ok(walk_feed(base, key, 0, |_| false)?.0)
}

/// Every change after `after`, up to the sentinel review's creation.
fn feed(base: &str, key: &str, after: i64, sentinel: &str) -> Result<Vec<i64>, String> {
    let mut positions = Vec::new();
    let (_, found) = walk_feed(base, key, after, |change| {
        positions.extend(change["seq"].as_i64());
        change["summary"]["id"] == sentinel
    })?;
    if found {
        Ok(positions)
    } else {
        Err("the sentinel is not in the feed".into())
    }
}

/// A live subscriber: the positions it receives until the sentinel's event.
async fn subscribe(url: &str, key: &str, sentinel: &str) -> Result<Vec<i64>, String> {
    let address = url.strip_prefix("http://").ok_or("not http")?;
    let mut stream = tokio::net::TcpStream::connect(address)
        .await
        .map_err(|e| e.to_string())?;
    let request = format!("GET /api/v1/events HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {key}\r\nAccept: text/event-stream\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let mut lines = tokio::io::BufReader::new(stream).lines();
    let status = lines
        .next_line()
        .await
        .map_err(|e| e.to_string())?
        .unwrap_or_default();
    if !status.contains(" 200 ") {
        return Err(format!("the stream did not open: {status}"));
    }
    OPEN.fetch_add(1, Ordering::SeqCst);
    let mut seen = Vec::new();
    while let Some(line) = lines.next_line().await.map_err(|e| e.to_string())? {
        if let Some(id) = line.strip_prefix("id:") {
            seen.push(id.trim().parse().map_err(|e| format!("id {id}: {e}"))?);
        } else if line.starts_with("data:") && line.contains(sentinel) {
            return Ok(seen);
        }
    }
    Err(format!("the stream ended after {} events", seen.len()))
}
