//! Load soak (docs/security.md): the real server on SQLite and on PostgreSQL under a steady
//! mixed load for a bounded time — agents submitting plans and tool calls and
//! polling outcomes, reviewers listing, searching, opening and deciding, and
//! event-stream subscribers — with its resident memory sampled throughout.
//! Asserts that no request failed, that every subscriber saw every change, and
//! that memory levelled off; prints counts, p50/p99 per operation and memory.
//!
//! 20 s by default; `COUNTERSIGN_SOAK_SECONDS=600 cargo test --release -p
//! countersign-server --test soak -- --nocapture` is the longer run.

use crate::support::{confirm_id, fresh_database, review, subscribe, Client, Reply, Server};
use serde_json::json;
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const AGENTS: u32 = 4;
const REVIEWERS: u32 = 4;
const LISTERS: u32 = 2;
const SUBSCRIBERS: usize = 8;
/// Each agent's pace: one request every this long (plans and tool calls alternate).
const AGENT_EVERY: Duration = Duration::from_millis(50);
const LISTER_EVERY: Duration = Duration::from_millis(100);

/// The soak's agents and reviewers share one key of each kind and send far
/// more than one agent or person would: it measures the server, not the rates.
const UNLIMITED: &[&str] = &["--agent-rate", "none", "--reviewer-rate", "none"];

fn soak_seconds() -> u64 {
    std::env::var("COUNTERSIGN_SOAK_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20)
}

/// The server's resident memory in MiB, from /proc.
fn resident_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|kib| kib.parse::<f64>().ok())
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

/// Latencies and failures per operation, shared by every load thread.
#[derive(Default)]
struct Tally {
    latencies: BTreeMap<&'static str, Vec<Duration>>,
    failures: Vec<String>,
}

impl Tally {
    /// Times one request; a status other than `expected` (or no answer) is a failure.
    fn time(
        tally: &Mutex<Tally>,
        op: &'static str,
        expected: u16,
        send: impl FnOnce() -> Result<Reply, String>,
    ) -> Option<Reply> {
        let start = Instant::now();
        let reply = send();
        let took = start.elapsed();
        let mut tally = tally.lock().unwrap();
        tally.latencies.entry(op).or_default().push(took);
        match reply {
            Ok(reply) if reply.status == expected => Some(reply),
            Ok(reply) => {
                let text: String = reply.text.chars().take(200).collect();
                tally
                    .failures
                    .push(format!("{op}: {} {text}", reply.status));
                None
            }
            Err(e) => {
                tally.failures.push(format!("{op}: {e}"));
                None
            }
        }
    }
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index].as_secs_f64() * 1000.0
}

fn post(client: &Client, path: &str, body: &serde_json::Value) -> Result<Reply, String> {
    client.try_send(
        "POST",
        path,
        Some(("application/json", body.to_string().as_bytes())),
        &[],
    )
}

/// Tool call `n`, in one of five sessions.
fn tool_call(n: u32) -> serde_json::Value {
    let mut body = crate::support::tool_call(json!({"service": format!("svc-{n}"), "drain": true}));
    body["sessionId"] = json!(format!("soak-{}", n % 5));
    body["runId"] = json!(format!("run-{n}"));
    body
}

#[test]
fn sqlite_answers_every_request_of_a_steady_mixed_load_and_memory_levels_off() {
    let data = tempfile::tempdir().unwrap();
    soak(&Server::start(data.path(), UNLIMITED), "SQLite");
}

#[test]
fn postgresql_answers_every_request_of_a_steady_mixed_load_and_memory_levels_off() {
    let Some(url) = fresh_database("countersign_soak") else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    soak(
        &Server::start_on(data.path(), Some(&url), UNLIMITED),
        "PostgreSQL",
    );
}

/// One soak at a time: both at once would share this machine's cores and
/// measure each other.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Runs the mixed load against `server` for the soak's time, then checks and prints.
fn soak(server: &Server, backend: &str) {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let seconds = soak_seconds();
    let pid = server.pid();
    let sentinel = confirm_id(u32::MAX);
    let tally = Mutex::new(Tally::default());
    let to_decide: Mutex<VecDeque<String>> = Mutex::default();
    let (created, decided) = (AtomicU32::new(0), AtomicU32::new(0));
    let stop = AtomicBool::new(false);
    let subscribed = AtomicU32::new(0);
    let mut memory: Vec<(f64, f64)> = Vec::new();

    let events_seen: Vec<Result<usize, String>> = std::thread::scope(|scope| {
        let subscribers: Vec<_> = (0..SUBSCRIBERS)
            .map(|_| {
                scope.spawn(|| {
                    let timeout = Duration::from_secs(soak_seconds() + 120);
                    subscribe(
                        &server.url,
                        &server.reviewer,
                        &sentinel,
                        &subscribed,
                        timeout,
                    )
                    .map(|seen| seen.len())
                })
            })
            .collect();
        while subscribed.load(Ordering::SeqCst) < SUBSCRIBERS as u32 {
            std::thread::sleep(Duration::from_millis(10));
        }
        let start = Instant::now();
        let mut load = Vec::new();
        for agent_no in 0..AGENTS {
            let (server, tally, to_decide, created, stop) =
                (server, &tally, &to_decide, &created, &stop);
            load.push(scope.spawn(move || {
                let client = server.client(&server.agent);
                let mut next = Instant::now();
                let mut i = 0u32;
                while !stop.load(Ordering::SeqCst) {
                    let n = agent_no * 10_000_000 + i;
                    let id = if i.is_multiple_of(2) {
                        Tally::time(tally, "agent: submit plan", 201, || {
                            post(&client, "/reviews", &review(n, 4, false))
                        })
                        .map(|_| confirm_id(n))
                    } else {
                        Tally::time(tally, "agent: ask tool call", 201, || {
                            post(&client, "/tool-calls", &tool_call(n))
                        })
                        .and_then(|r| r.body["outcome"]["confirm_id"].as_str().map(str::to_owned))
                    };
                    if let Some(id) = id {
                        created.fetch_add(1, Ordering::SeqCst);
                        if i % 4 == 1 {
                            Tally::time(tally, "agent: poll outcome", 200, || {
                                client.try_send("GET", &format!("/reviews/{id}/outcome"), None, &[])
                            });
                        }
                        to_decide.lock().unwrap().push_back(id);
                    }
                    i += 1;
                    next += AGENT_EVERY;
                    std::thread::sleep(next.saturating_duration_since(Instant::now()));
                }
            }));
        }
        for reviewer_no in 0..REVIEWERS {
            let (server, tally, to_decide, decided, stop) =
                (server, &tally, &to_decide, &decided, &stop);
            load.push(scope.spawn(move || {
                let client = server.client(&server.reviewer);
                let mut k = 0u32;
                while !stop.load(Ordering::SeqCst) {
                    let Some(id) = to_decide.lock().unwrap().pop_front() else {
                        std::thread::sleep(Duration::from_millis(5));
                        continue;
                    };
                    Tally::time(tally, "reviewer: open review", 200, || {
                        client.try_send("GET", &format!("/reviews/{id}"), None, &[])
                    });
                    let status = ["approved", "rejected"][(k % 2) as usize];
                    let body = json!({"status": status, "decided_by_role": "reviewer", "reason": format!("soak {reviewer_no}-{k}")});
                    let idem = format!("soak-{reviewer_no}-{k}");
                    let ok = Tally::time(tally, "reviewer: decide", 200, || {
                        client.try_send(
                            "POST",
                            &format!("/reviews/{id}/decisions"),
                            Some(("application/json", body.to_string().as_bytes())),
                            &[("Idempotency-Key", &idem)],
                        )
                    });
                    if ok.is_some() {
                        decided.fetch_add(1, Ordering::SeqCst);
                    }
                    k += 1;
                }
            }));
        }
        for lister_no in 0..LISTERS {
            let (server, tally, stop) = (server, &tally, &stop);
            load.push(scope.spawn(move || {
                let client = server.client(&server.reviewer);
                let queries = [
                    "/reviews?status=pending&limit=50",
                    "/reviews?status=all&limit=100",
                    "/reviews?status=approved&q=plan%201",
                    "/reviews?target_type=plan&requester=deploy-agent&limit=20",
                ];
                let mut next = Instant::now();
                let mut k = lister_no as usize;
                while !stop.load(Ordering::SeqCst) {
                    let query = queries[k % queries.len()];
                    Tally::time(tally, "reviewer: list or search", 200, || {
                        client.try_send("GET", query, None, &[])
                    });
                    k += 1;
                    next += LISTER_EVERY;
                    std::thread::sleep(next.saturating_duration_since(Instant::now()));
                }
            }));
        }
        while start.elapsed() < Duration::from_secs(seconds) {
            memory.push((start.elapsed().as_secs_f64(), resident_mib(pid)));
            std::thread::sleep(Duration::from_millis(250));
        }
        stop.store(true, Ordering::SeqCst);
        // Every request of the load is answered before the last change, so
        // each change counted comes before it in the feed.
        for thread in load {
            thread.join().unwrap();
        }
        // The last change: every subscriber reads up to it.
        let agent = server.client(&server.agent);
        let last = post(&agent, "/reviews", &review(u32::MAX, 1, false)).unwrap();
        assert_eq!(last.status, 201, "{}", last.text);
        subscribers.into_iter().map(|s| s.join().unwrap()).collect()
    });

    let tally = tally.into_inner().unwrap();
    let total: usize = tally.latencies.values().map(Vec::len).sum();
    println!("soak: {seconds} s on {backend}, {AGENTS} agents, {REVIEWERS} deciding reviewers, {LISTERS} listing reviewers, {SUBSCRIBERS} event subscribers");
    for (op, latencies) in &tally.latencies {
        let mut sorted = latencies.clone();
        sorted.sort();
        println!(
            "  {op}: {} requests, p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            sorted.len(),
            percentile(&sorted, 0.5),
            percentile(&sorted, 0.99),
            percentile(&sorted, 1.0)
        );
    }
    let (created, decided) = (created.into_inner(), decided.into_inner());
    // Every creation and every decision is a change, and the sentinel is one more.
    let changes = (created + decided + 1) as usize;
    println!(
        "  {total} requests, {} failed; {created} reviews created, {decided} decided, {changes} changes",
        tally.failures.len()
    );
    let quarter = |q: usize| {
        let from = memory.len() * q / 4;
        let to = (memory.len() * (q + 1) / 4).max(from + 1);
        memory[from..to]
            .iter()
            .map(|(_, m)| *m)
            .fold(f64::NAN, f64::max)
    };
    let quarters = [quarter(0), quarter(1), quarter(2), quarter(3)];
    println!(
        "  server memory (resident, highest per quarter): {:.1} / {:.1} / {:.1} / {:.1} MiB",
        quarters[0], quarters[1], quarters[2], quarters[3]
    );
    for (i, seen) in events_seen.iter().enumerate() {
        match seen {
            Ok(n) => println!("  subscriber {i}: {n} events"),
            Err(e) => println!("  subscriber {i}: {e}"),
        }
    }

    assert!(
        tally.failures.is_empty(),
        "failed requests:\n{}",
        tally.failures.join("\n")
    );
    assert!(created > 0 && decided > 0, "the load ran");
    for seen in &events_seen {
        assert_eq!(
            seen.as_ref().ok(),
            Some(&changes),
            "every subscriber sees every change"
        );
    }
    // Levelled off: the last quarter holds no more than the second plus a
    // quarter of it and 16 MiB (page cache and pools settle in the first).
    assert!(
        quarters[3] <= quarters[1] * 1.25 + 16.0,
        "memory kept growing: {quarters:?} MiB"
    );
}
