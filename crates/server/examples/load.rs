//! Load benchmark of `countersign serve` on SQLite (the backend issue's budgets):
//! durable decisions per second (closed loop), latency at a fixed 500 requests
//! per second (open loop, measured from each request's scheduled time so a
//! slow server cannot hide its queueing), and the first page of a list over
//! 300,000 reviews. The server runs in its own process (the `countersign`
//! binary built beside this example) on 127.0.0.1 over a fresh SQLite file,
//! with no key's rate limited; the clients are blocking HTTP clients on their own threads,
//! then 64 keep-alive connections driven by one thread (wrk when installed,
//! else hyper's client), which leave more of the cores to the server.
//!
//! With `--database postgres://...` it runs on that (empty) PostgreSQL database
//! instead. On SQLite it ends with the durable-write floor: a bare insert loop
//! on its own SQLite file with the same settings, one transaction per insert.
//! Last, the server process's resident memory.
//!
//! With `--observed` it measures only what the operator's figures cost:
//! durable decisions/s (64 connections on one thread) of servers started with
//! `--metrics` and request logs at `info` (written to a file), and of the same
//! binary with metrics off and the log at `warn`, in interleaved runs.
//!
//! With `--against PATH` it compares two builds: durable decisions/s (64
//! connections on one thread) and the server's CPU time a decision, of this
//! build's server and of the `countersign` binary at PATH (another build,
//! copied aside), in 20 interleaved runs of 3 s on one database: this
//! machine's speed drifts too much from one run to the next to compare two
//! single runs, and a saving of a few percent of CPU shows in the second
//! figure before the first.
//!
//! ```sh
//! cargo build --release -p countersign-server --bin countersign --example load
//! target/release/examples/load [--quick] [--database URL] [--observed | --against PATH]
//! ```

use countersign_domain::demo::numbered_id;
use countersign_domain::Review;
use countersign_server::store::keys::KeyKind;
use countersign_server::store::Db;
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn review(n: usize) -> Review {
    countersign_domain::demo::numbered(n).expect("a numbered review")
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index].as_secs_f64() * 1000.0
}

fn summary(label: &str, mut latencies: Vec<Duration>, elapsed: Duration, failures: usize) {
    latencies.sort();
    println!(
        "{label}: {} ok, {failures} failed in {:.1} s = {:.0}/s; latency p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        latencies.len(),
        elapsed.as_secs_f64(),
        latencies.len() as f64 / elapsed.as_secs_f64(),
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99),
        percentile(&latencies, 1.0),
    );
}

fn client() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into()
}

fn decide(agent: &ureq::Agent, base: &str, key: &str, n: usize) -> bool {
    let id = numbered_id(n);
    let answer = agent
        .post(&format!("{base}/api/v1/reviews/{id}/decisions"))
        .header("Authorization", &format!("Bearer {key}"))
        .header("Idempotency-Key", &format!("bench-{n}"))
        .send_json(
            json!({"status": "approved", "decided_by_role": "reviewer", "reason": "benchmark"}),
        );
    // A failed decision says why on standard error (the figures stay on
    // standard output).
    match answer {
        Ok(r) if r.status() == 200 => true,
        Ok(mut r) => {
            let body = r.body_mut().read_to_string().unwrap_or_default();
            eprintln!("decision {n} answered {}: {body}", r.status());
            false
        }
        Err(e) => {
            eprintln!("decision {n} failed: {e}");
            false
        }
    }
}

/// Decides as fast as the server answers from `connections` keep-alive
/// connections multiplexed on one thread (hyper's HTTP/1 client on a
/// current-thread runtime): one generator thread instead of one per client.
/// Gives every latency, the failures, the time taken and the last number
/// asked for.
fn one_thread_decisions(
    port: u16,
    key: &str,
    numbers: Numbers,
    connections: usize,
    seconds: u64,
) -> (Vec<Duration>, usize, Duration, usize) {
    let (numbers, taken) = (Arc::new(numbers), Arc::new(AtomicUsize::new(0)));
    const BODY: &[u8] =
        br#"{"status":"approved","decided_by_role":"reviewer","reason":"benchmark"}"#;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let started = Instant::now();
    let until = started + Duration::from_secs(seconds);
    let (latencies, failures) = runtime.block_on(async {
        let clients: Vec<_> = (0..connections)
            .map(|_| {
                let (numbers, taken, bearer) =
                    (numbers.clone(), taken.clone(), format!("Bearer {key}"));
                tokio::spawn(async move {
                    let (mut mine, mut failed) = (Vec::new(), 0usize);
                    let Ok(stream) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await
                    else {
                        return (mine, 1);
                    };
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let Ok((mut sender, connection)) =
                        hyper::client::conn::http1::handshake(io).await
                    else {
                        return (mine, 1);
                    };
                    tokio::spawn(connection);
                    while Instant::now() < until {
                        let Some(n) = numbers.nth(taken.fetch_add(1, Ordering::Relaxed)) else {
                            break;
                        };
                        let request = hyper::Request::post(format!(
                            "/api/v1/reviews/{}/decisions",
                            numbered_id(n)
                        ))
                        .header("host", format!("127.0.0.1:{port}"))
                        .header("authorization", &bearer)
                        .header("idempotency-key", format!("bench-{n}"))
                        .header("content-type", "application/json")
                        .body(http_body_util::Full::new(BODY))
                        .unwrap();
                        let sent = Instant::now();
                        let Ok(response) = sender.send_request(request).await else {
                            failed += 1;
                            break; // the connection is gone
                        };
                        let ok = response.status() == 200;
                        // The whole answer is read, as a real client would.
                        let read = http_body_util::BodyExt::collect(response.into_body()).await;
                        if ok && read.is_ok() {
                            mine.push(sent.elapsed());
                        } else {
                            failed += 1;
                        }
                    }
                    (mine, failed)
                })
            })
            .collect();
        let (mut all, mut failures) = (Vec::new(), 0);
        for client in clients {
            let (mine, failed) = client.await.unwrap_or_default();
            all.extend(mine);
            failures += failed;
        }
        (all, failures)
    });
    let asked = taken.load(Ordering::Relaxed);
    // With nothing asked, the run ends just before where it would have started.
    let last = match asked.checked_sub(1) {
        Some(i) => numbers.nth(i),
        None => numbers.nth(0).map(|n| n.saturating_sub(1)),
    };
    (latencies, failures, started.elapsed(), last.unwrap_or(0))
}

/// What a wrk run did.
struct WrkRun {
    /// Its summary line.
    line: String,
    /// How many requests it had answered.
    requests: u64,
    /// The number of the last review it asked to decide (it also asks for
    /// some it never counts: those in flight when it stops, and more).
    last: usize,
}

/// Runs wrk (one thread, 64 connections) deciding the pending reviews
/// `numbers`; None when wrk is not installed.
fn wrk_decisions(
    base: &str,
    key: &str,
    numbers: &Numbers,
    how: &str,
    seconds: u64,
) -> Option<WrkRun> {
    let script = std::env::temp_dir().join(format!("countersign-wrk-{}.lua", std::process::id()));
    let listed = script.with_extension("txt");
    let next = match numbers {
        Numbers::Counter(first) => {
            format!("function init(args) n = {first} end\nfunction advance() n = n + 1 end")
        }
        Numbers::Listed(order) => {
            let lines: Vec<String> = order.iter().map(usize::to_string).collect();
            std::fs::write(&listed, lines.join("\n")).ok()?;
            format!(
                "function init(args) order = {{}} for l in io.lines({:?}) do order[#order + 1] = tonumber(l) end i = 0 n = order[1] end\nfunction advance() i = i + 1 n = order[i] end",
                listed.display()
            )
        }
    };
    std::fs::write(
        &script,
        format!(
            r#"local threads = {{}}
function setup(thread) table.insert(threads, thread) end
{next}
function request()
  advance()
  local id = string.format("aaaa0000-0000-4000-8000-%012x", n)
  return wrk.format("POST", "/api/v1/reviews/" .. id .. "/decisions",
    {{["Authorization"] = "Bearer {key}", ["Content-Type"] = "application/json", ["Idempotency-Key"] = "wrk-" .. n}},
    '{{"status":"approved","decided_by_role":"reviewer","reason":"benchmark"}}')
end
function done(summary, latency, requests)
  for _, thread in ipairs(threads) do io.write(string.format("last review number: %d\n", thread:get("n"))) end
end
"#
        ),
    )
    .ok()?;
    let output = std::process::Command::new("wrk")
        .args(["-t1", "-c64", &format!("-d{seconds}s"), "--latency", "-s"])
        .arg(&script)
        .arg(base)
        .output();
    // Removed whether or not wrk ran (it is absent where it is not installed).
    let _ = std::fs::remove_file(&script);
    let _ = std::fs::remove_file(&listed);
    let output = output.ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    let field = |prefix: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(prefix))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    };
    let requests = text
        .lines()
        .find(|l| l.contains("requests in"))
        .and_then(|l| l.split_whitespace().next()?.parse().ok())
        .unwrap_or(0);
    let line = format!(
        "decisions{how}, wrk 64 connections, closed loop: {}; latency {}, {}; {}",
        field("Requests/sec"),
        field("50%"),
        field("99%"),
        if text.contains("Non-2xx") {
            field("Non-2xx")
        } else {
            "all 200".into()
        }
    );
    // Not a reason to fall back to the other generator: wrk has decided
    // reviews by now, and which ones only this line says.
    let last = text
        .lines()
        .filter_map(|l| l.strip_prefix("last review number: ")?.trim().parse().ok())
        .max()
        .expect("wrk reports the last review number its script asked for");
    Some(WrkRun {
        line,
        requests,
        last,
    })
}

/// CPU time (user and system) a process has used so far, in seconds (Linux).
fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command name (which may hold spaces), from the 3rd:
    // utime and stime are the 14th and 15th, in clock ticks.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    let per_second = std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .trim()
                .parse::<f64>()
                .ok()
        })
        .unwrap_or(100.0);
    Some(ticks / per_second)
}

/// What a process has written to storage so far, in bytes (`write_bytes` of
/// `/proc/PID/io`: the database's log and its checkpoints, not its sockets).
fn written_bytes(pid: u32) -> Option<u64> {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
    io.lines()
        .find_map(|l| l.strip_prefix("write_bytes:"))?
        .trim()
        .parse()
        .ok()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let (seconds, list_size) = if quick { (1, 2_000) } else { (5, 300_000) };
    // `--list N`: list over N reviews; `--list-only`: skip the decision runs.
    let list_size = args
        .iter()
        .position(|a| a == "--list")
        .and_then(|i| args.get(i + 1)?.parse().ok())
        .unwrap_or(list_size);
    let list_only = args.iter().any(|a| a == "--list-only");
    let observed = args.iter().any(|a| a == "--observed");
    let against = args
        .iter()
        .position(|a| a == "--against")
        .and_then(|i| args.get(i + 1))
        .map(std::path::PathBuf::from);
    // Interleaved rounds of a comparison, and each run's seconds.
    let (rounds, run_seconds) = match (quick, &against) {
        (true, _) => (1, 1),
        (false, None) => (6, 3),
        (false, Some(_)) => (10, 3),
    };
    let data = std::env::temp_dir().join(format!("countersign-load-{}", std::process::id()));
    std::fs::create_dir_all(&data).unwrap();
    let url = args
        .iter()
        .position(|a| a == "--database")
        .and_then(|i| args.get(i + 1).cloned())
        .unwrap_or_else(|| format!("sqlite://{}", data.join("countersign.db").display()));
    let sqlite = url.starts_with("sqlite:");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    // Enough pending reviews for every decision the runs below can make (the
    // quick runs, of one second each, up to ~12,000 each where the disk is
    // fast, beside the range kept for the run in the inbox's order, twice
    // that; the full runs as many a second each, for five seconds).
    let pending = match (list_only, quick, observed || against.is_some()) {
        (true, _, _) => 0,
        (false, true, _) => 60_000,
        (false, false, false) => 300_000,
        // Up to ~13,000 decisions/s in each of 2 × `rounds` runs of 3 s.
        (false, false, true) => 80_000 * rounds,
    };
    let key = runtime.block_on(async {
        let db = Db::open(&url).await.unwrap();
        // Stored as `POST /reviews` stores them: with the agent key that asked.
        let agent = db
            .add_key(KeyKind::Agent, &[], "bench agent", None, None)
            .await
            .unwrap()
            .key;
        for chunk in (0..pending).collect::<Vec<_>>().chunks(10_000) {
            let reviews: Vec<Review> = chunk
                .iter()
                .map(|&n| Review {
                    requester: Some(agent.key_ref()),
                    ..review(n)
                })
                .collect();
            db.insert_reviews(&reviews, &agent.id).await.unwrap();
        }
        let reviewer = db
            .add_key(KeyKind::Reviewer, &["reviewer".into()], "bench", None, None)
            .await
            .unwrap()
            .secret;
        let flooder = db
            .add_key(
                KeyKind::Agent,
                &[],
                "flood",
                Some("50/s,100".parse().unwrap()),
                None,
            )
            .await
            .unwrap()
            .secret;
        (reviewer, flooder)
    });
    let (key, flooder) = key;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let binary = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.join("countersign")))
        .filter(|path| path.exists())
        .expect(
            "build the server first: cargo build --release -p countersign-server --bin countersign",
        );
    let base = format!("http://127.0.0.1:{port}");
    let start = |observed: bool| start_server(&binary, port, &url, &data, observed);
    if let Some(other) = against {
        let start = |second: bool| {
            let binary = if second { &other } else { &binary };
            start_server(binary, port, &url, &data, false)
        };
        let [this, that] = interleaved(start, port, &key, rounds, run_seconds);
        let cpu = |runs: &[Run]| median(runs.iter().map(|run| run.cpu_us).collect());
        let (cpu_this, cpu_that) = (cpu(&this), cpu(&that));
        let rates = |runs: &[Run]| runs.iter().map(|run| run.rate).collect::<Vec<_>>();
        let (this, that) = (rates(&this), rates(&that));
        let spread = |rates: &[f64]| {
            let (low, high) = rates
                .iter()
                .fold((f64::MAX, 0f64), |(l, h), &r| (l.min(r), h.max(r)));
            format!("{low:.0}–{high:.0}")
        };
        let (low_this, low_that) = (spread(&this), spread(&that));
        let (this, that) = (median(this), median(that));
        println!(
            "decisions/s, 64 connections on one thread, {} interleaved runs of {run_seconds} s: this build {this:.0}/s ({low_this}), {} {that:.0}/s ({low_that}) (median; this build {:+.1}%)",
            rounds * 2,
            other.display(),
            (this - that) / that * 100.0
        );
        println!(
            "server CPU per decision (median): this build {cpu_this:.1} µs, {} {cpu_that:.1} µs ({:+.1}%)",
            other.display(),
            (cpu_this - cpu_that) / cpu_that * 100.0
        );
        let _ = std::fs::remove_dir_all(&data);
        return;
    }
    if observed {
        observed_compare(start, port, &key, rounds, run_seconds);
        let _ = std::fs::remove_dir_all(&data);
        return;
    }
    let mut server = start(false);
    println!(
        "countersign load benchmark: {}, {} cores",
        if sqlite {
            format!("SQLite file in {}", data.display())
        } else {
            "PostgreSQL".to_owned()
        },
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    if !list_only {
        // The floor is measured just before and just after the one-thread
        // decisions: this disk's sync speed drifts by a third within minutes.
        let floor = || sqlite.then(|| runtime.block_on(bare_insert_floor(&data, seconds)));
        decision_runs(server.id(), &base, &key, port, seconds, quick, floor);
        flood(&base, &key, &flooder, port, seconds);
    }
    list_runs(&url, &runtime, &base, &key, pending, list_size);
    let (resident, own) = resident_mb(server.id());
    println!(
        "memory: resident {resident} MB (the server process; {own} MB of it its own memory, the rest files it maps: its code and libraries)"
    );
    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&data);
}

/// Starts `countersign serve` on the database and waits until it answers:
/// with metrics on and request logs at `info` (into a file in `data`), or
/// with metrics off and the log at `warn`. No key's rate may cap it: it
/// measures the server's own speed.
fn start_server(
    binary: &std::path::Path,
    port: u16,
    url: &str,
    data: &std::path::Path,
    observed: bool,
) -> std::process::Child {
    let mut command = std::process::Command::new(binary);
    command
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--database", url])
        .args(["--agent-rate", "none", "--reviewer-rate", "none", "--data"])
        .arg(data)
        .stdout(std::process::Stdio::null());
    if observed {
        let log = std::fs::File::create(data.join("server.log")).unwrap();
        command
            .args(["--metrics", "--log-filter", "info"])
            .stderr(log);
    } else {
        command.args(["--log-filter", "warn"]);
    }
    let server = command.spawn().expect("start countersign serve");
    for _ in 0..100 {
        let health = client()
            .get(&format!("http://127.0.0.1:{port}/api/v1/health"))
            .call();
        if health.is_ok() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    server
}

/// One run of [`interleaved`]: decisions a second, and the server's CPU
/// time (user and system) a decision.
struct Run {
    rate: f64,
    cpu_us: f64,
}

/// Decisions/s (64 connections on one thread) of two servers, run after run
/// in alternating order: `start(false)` starts the first, `start(true)` the
/// second. Returns each one's runs.
fn interleaved(
    start: impl Fn(bool) -> std::process::Child,
    port: u16,
    key: &str,
    rounds: usize,
    seconds: u64,
) -> [Vec<Run>; 2] {
    let mut next = 0;
    let mut runs = [Vec::new(), Vec::new()];
    for round in 0..rounds {
        let order = if round % 2 == 0 {
            [false, true]
        } else {
            [true, false]
        };
        for second in order {
            let mut server = start(second);
            let cpu_before = cpu_seconds(server.id()).unwrap_or(0.0);
            let (latencies, failures, elapsed, last) =
                one_thread_decisions(port, key, Numbers::Counter(next), 64, seconds);
            let cpu = cpu_seconds(server.id()).unwrap_or(0.0) - cpu_before;
            next = last + 1;
            let _ = server.kill();
            let _ = server.wait();
            assert_eq!(failures, 0, "decisions failed");
            let decisions = latencies.len() as f64;
            runs[usize::from(second)].push(Run {
                rate: decisions / elapsed.as_secs_f64(),
                cpu_us: cpu / decisions * 1e6,
            });
        }
    }
    runs
}

/// The median of `rates`.
fn median(mut rates: Vec<f64>) -> f64 {
    rates.sort_by(f64::total_cmp);
    rates[rates.len() / 2]
}

/// Prints what metrics and request logs cost: [`interleaved`] runs of
/// servers with them off and on.
fn observed_compare(
    start: impl Fn(bool) -> std::process::Child,
    port: u16,
    key: &str,
    rounds: usize,
    seconds: u64,
) {
    let [off, on] = interleaved(start, port, key, rounds, seconds);
    let rate = |runs: Vec<Run>| median(runs.into_iter().map(|run| run.rate).collect());
    let (off, on) = (rate(off), rate(on));
    println!(
        "decisions/s, 64 connections on one thread, {} interleaved runs of {seconds} s: metrics and request logs off {off:.0}/s, on {on:.0}/s (median; {:+.1}%)",
        rounds * 2,
        (on - off) / off * 100.0
    );
}

/// Which pending reviews a one-thread run decides.
enum Numbers {
    /// The numbers after this one, in turn.
    Counter(usize),
    /// These numbers, in this order.
    Listed(Vec<usize>),
}

impl Numbers {
    /// The number of the `i`-th decision (from 0), if there is one.
    fn nth(&self, i: usize) -> Option<usize> {
        match self {
            Numbers::Counter(first) => Some(first + 1 + i),
            Numbers::Listed(order) => order.get(i).copied(),
        }
    }
}

/// The reviews numbered `first..first + count` in the order of their request
/// times, oldest first: the order of a reviewer working through the inbox.
fn inbox_order(first: usize, count: usize) -> Vec<usize> {
    let mut numbers: Vec<usize> = (first..first + count).collect();
    numbers.sort_by_cached_key(|&n| (review(n).confirm.requested_at.to_string(), n));
    numbers
}

/// A closed loop of decisions from one thread against the server process,
/// with what each decision cost the server.
struct OneThreadRun<'a> {
    server: u32,
    port: u16,
    base: &'a str,
    key: &'a str,
    seconds: u64,
    sqlite: bool,
}

impl OneThreadRun<'_> {
    /// Decides the `numbers` from wrk, else hyper's client, and prints the
    /// run's line and the server's CPU and storage writes per decision, each
    /// label followed by `how`. Returns the last number asked for.
    fn decide(&self, numbers: Numbers, how: &str) -> usize {
        let (cpu_before, written_before) = (cpu_seconds(self.server), written_bytes(self.server));
        let (decided, last) =
            if let Some(run) = wrk_decisions(self.base, self.key, &numbers, how, self.seconds) {
                println!("{}", run.line);
                (run.requests, run.last)
            } else {
                let (latencies, failures, elapsed, last) =
                    one_thread_decisions(self.port, self.key, numbers, 64, self.seconds);
                let decided = latencies.len() as u64;
                summary(
                    &format!("decisions{how}, 64 connections on one thread (hyper), closed loop"),
                    latencies,
                    elapsed,
                    failures,
                );
                (decided, last)
            };
        // What a decision costs the server, steadier than decisions/s on a
        // machine whose other work and disk speed vary.
        if let (Some(start), Some(end)) = (cpu_before, cpu_seconds(self.server)) {
            println!(
                "server CPU per decision{how}, one-thread run: {:.0} µs (user and system, {decided} decisions)",
                (end - start) * 1e6 / decided.max(1) as f64
            );
        }
        // On SQLite the server itself writes the database (on PostgreSQL,
        // the database's own processes do).
        if let (true, Some(start), Some(end)) =
            (self.sqlite, written_before, written_bytes(self.server))
        {
            println!(
                "server bytes written to storage per decision{how}, one-thread run: {:.1} KB",
                end.saturating_sub(start) as f64 / 1024.0 / decided.max(1) as f64
            );
        }
        last
    }
}

/// Decisions against the `server` process: closed loops from threads and
/// from one thread (with the bare insert `floor` measured around it, where
/// there is one, and the server's CPU per decision), then open loops at fixed
/// rates.
fn decision_runs(
    server: u32,
    base: &str,
    key: &str,
    port: u16,
    seconds: u64,
    quick: bool,
    floor: impl Fn() -> Option<f64>,
) {
    let (base, key) = (base.to_owned(), key.to_owned());
    let next = Arc::new(AtomicUsize::new(0));

    // 1. Closed loop: N clients decide as fast as the server acknowledges
    //    (group commit: more concurrent decisions share each sync).
    for clients in [16, 64] {
        let until = Instant::now() + Duration::from_secs(seconds);
        let started = Instant::now();
        let results = Arc::new(Mutex::new((Vec::new(), 0usize)));
        let workers: Vec<_> = (0..clients)
            .map(|_| {
                let (next, results, base, key) =
                    (next.clone(), results.clone(), base.clone(), key.clone());
                std::thread::spawn(move || {
                    let agent = client();
                    let (mut mine, mut failed) = (Vec::new(), 0);
                    while Instant::now() < until {
                        let n = next.fetch_add(1, Ordering::Relaxed);
                        let sent = Instant::now();
                        if decide(&agent, &base, &key, n) {
                            mine.push(sent.elapsed());
                        } else {
                            failed += 1;
                        }
                    }
                    let mut all = results.lock().unwrap();
                    all.0.extend(mine);
                    all.1 += failed;
                })
            })
            .collect();
        workers.into_iter().for_each(|w| w.join().unwrap());
        let (latencies, failures) = std::mem::take(&mut *results.lock().unwrap());
        summary(
            &format!("decisions, {clients} clients, closed loop"),
            latencies,
            started.elapsed(),
            failures,
        );
    }

    // 1b. The same closed loop from wrk (an epoll load generator in C, Debian's
    //     package) on one thread, which leaves more of the 2 cores to the server;
    //     without wrk, from 64 connections of hyper's client on one thread.
    //     First as the other runs decide (numbered reviews are requested on 28
    //     days in turn, so each decision lands far from the last in the list
    //     indexes), then in the order of their request times, as a reviewer
    //     works through the inbox; the floor before, between and after.
    let before = floor();
    let run = OneThreadRun {
        server,
        port,
        base: &base,
        key: &key,
        seconds,
        sqlite: before.is_some(),
    };
    let first = next.load(Ordering::Relaxed);
    let last = run.decide(Numbers::Counter(first), "");
    next.fetch_max(last + 1, Ordering::Relaxed);
    let between = floor();
    // Twice the run in number order's pace, and at least 12,000 a second: wrk
    // stops with an error when its list runs out.
    let reserved = (2 * (last + 1 - first)).max(12_000 * seconds as usize);
    let range = next.fetch_add(reserved, Ordering::Relaxed);
    run.decide(
        Numbers::Listed(inbox_order(range, reserved)),
        " in the inbox's order",
    );
    if let (Some(before), Some(between), Some(after)) = (before, between, floor()) {
        println!(
            "bare SQLite insert loop (WAL, synchronous=FULL, one transaction per insert): {:.0}/s, the mean of {before:.0}/s just before and {between:.0}/s just after the one-thread decisions",
            (before + between) / 2.0
        );
        println!(
            "bare SQLite insert loop, around the decisions in the inbox's order: {:.0}/s, the mean of {between:.0}/s and {after:.0}/s",
            (between + after) / 2.0
        );
    }

    // 2. Open loop at fixed rates, latency from each request's scheduled time.
    for rate in if quick {
        vec![500.0]
    } else {
        vec![500.0, 1000.0]
    } {
        open_loop(&next, &base, &key, rate, seconds);
    }
}

/// Stores reviews up to `list_size` (after the `pending` ones), then lists
/// pages over them.
/// An agent key minted with a rate of 50/s (bursts of 100) floods `POST
/// /tool-calls` from 16 connections on one thread while a reviewer lists the
/// inbox's first page one request after another; the reviewer's p99 is
/// printed beside the same list's p99 with no flood.
fn flood(base: &str, reviewer: &str, flooder: &str, port: u16, seconds: u64) {
    let lists = |until: Instant| {
        let agent = client();
        let mut latencies = Vec::new();
        while Instant::now() < until {
            let sent = Instant::now();
            let ok = agent
                .get(&format!("{base}/api/v1/reviews?view=summary&limit=20"))
                .header("Authorization", &format!("Bearer {reviewer}"))
                .call()
                .is_ok_and(|r| r.status() == 200);
            if ok {
                latencies.push(sent.elapsed());
            }
        }
        latencies.sort();
        latencies
    };
    let idle = lists(Instant::now() + Duration::from_secs(seconds));
    let flooder = flooder.to_owned();
    let flood = std::thread::spawn(move || one_thread_flood(port, &flooder, 16, seconds));
    std::thread::sleep(Duration::from_millis(200));
    let busy = lists(Instant::now() + Duration::from_secs(seconds.saturating_sub(1).max(1)));
    let (accepted, limited, other) = flood.join().unwrap();
    println!(
        "flood from one agent key (rate 50/s,100), 16 connections on one thread: {accepted} accepted, {limited} answered 429, {other} other; reviewer list p99 {:.2} ms idle, {:.2} ms during the flood ({} and {} lists)",
        percentile(&idle, 0.99),
        percentile(&busy, 0.99),
        idle.len(),
        busy.len()
    );
}

/// Asks for tool calls as fast as the server answers from `connections`
/// keep-alive connections on one thread; counts 201, 429 and the rest.
fn one_thread_flood(
    port: u16,
    key: &str,
    connections: usize,
    seconds: u64,
) -> (usize, usize, usize) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(seconds);
    runtime.block_on(async {
        let tasks: Vec<_> = (0..connections)
            .map(|c| {
                let bearer = format!("Bearer {key}");
                tokio::spawn(async move {
                    let mut counts = (0, 0, 0);
                    let Ok(stream) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await else {
                        return counts;
                    };
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let Ok((mut sender, connection)) = hyper::client::conn::http1::handshake(io).await
                    else {
                        return counts;
                    };
                    tokio::spawn(connection);
                    let mut n = 0;
                    while Instant::now() < until {
                        let body = json!({
                            "requestedByRole": "flood-agent", "sessionId": "flood", "runId": format!("flood-{c}-{n}"),
                            "toolCall": {"name": "restart_service", "args": {"n": n}},
                            "humanSummary": "Restart", "riskTier": "R2",
                        });
                        n += 1;
                        let request = hyper::Request::post("/api/v1/tool-calls")
                            .header("host", format!("127.0.0.1:{port}"))
                            .header("authorization", &bearer)
                            .header("content-type", "application/json")
                            .body(http_body_util::Full::new(hyper::body::Bytes::from(body.to_string())))
                            .unwrap();
                        let Ok(response) = sender.send_request(request).await else {
                            break;
                        };
                        let status = response.status().as_u16();
                        let _ = http_body_util::BodyExt::collect(response.into_body()).await;
                        match status {
                            201 => counts.0 += 1,
                            429 => counts.1 += 1,
                            _ => counts.2 += 1,
                        }
                    }
                    counts
                })
            })
            .collect();
        let mut total = (0, 0, 0);
        for task in tasks {
            if let Ok((a, b, c)) = task.await {
                total = (total.0 + a, total.1 + b, total.2 + c);
            }
        }
        total
    })
}

fn list_runs(
    url: &str,
    runtime: &tokio::runtime::Runtime,
    base: &str,
    key: &str,
    pending: usize,
    list_size: usize,
) {
    runtime.block_on(async {
        let db = Db::open(url).await.unwrap();
        let mut n = pending;
        // One in 150 of them approved: at 1,000,000 reviews about the most a
        // status can hold and still be sorted (listing.rs), the slowest page.
        let now = chrono::Utc::now();
        let stored = |i| match i % 150 {
            0 => countersign_domain::demo::approved(&review(i), now).expect("an approved review"),
            _ => review(i),
        };
        while n < list_size {
            let reviews: Vec<Review> = (n..(n + 10_000).min(list_size)).map(stored).collect();
            db.insert_reviews(&reviews, "bench").await.unwrap();
            n += 10_000;
        }
    });
    list(base, key, list_size.max(pending));
}

/// Decides at `rate` requests per second for `seconds` (32 client threads).
fn open_loop(next: &Arc<AtomicUsize>, base: &str, key: &str, rate: f64, seconds: u64) {
    let results = Arc::new(Mutex::new((Vec::<Duration>::new(), 0usize)));
    let total = (rate * seconds as f64) as usize;
    let scheduled = Arc::new(AtomicUsize::new(0));
    let start = Instant::now() + Duration::from_millis(100);
    let workers: Vec<_> = (0..32)
        .map(|_| {
            let (next, scheduled, results, base, key) = (
                next.clone(),
                scheduled.clone(),
                results.clone(),
                base.to_owned(),
                key.to_owned(),
            );
            std::thread::spawn(move || {
                let agent = client();
                let (mut mine, mut failed) = (Vec::new(), 0);
                loop {
                    let i = scheduled.fetch_add(1, Ordering::Relaxed);
                    if i >= total {
                        break;
                    }
                    let at = start + Duration::from_secs_f64(i as f64 / rate);
                    if let Some(wait) = at.checked_duration_since(Instant::now()) {
                        std::thread::sleep(wait);
                    }
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    if decide(&agent, &base, &key, n) {
                        mine.push(at.elapsed());
                    } else {
                        failed += 1;
                    }
                }
                let mut all = results.lock().unwrap();
                all.0.extend(mine);
                all.1 += failed;
            })
        })
        .collect();
    workers.into_iter().for_each(|w| w.join().unwrap());
    let (latencies, failures) = std::mem::take(&mut *results.lock().unwrap());
    summary(
        &format!("decisions at {rate:.0}/s, open loop"),
        latencies,
        start.elapsed(),
        failures,
    );
}

/// Lists pages over `list_size` reviews, 200 times each. The approved ones
/// are most of those the decision runs decided, or one in 150 of those added
/// for `--list`.
fn list(base: &str, key: &str, list_size: usize) {
    let agent = client();
    for (label, query) in [
        (
            "first page",
            "/reviews?view=summary&status=pending&limit=50",
        ),
        (
            "pending, requester filter",
            "/reviews?view=summary&status=pending&requester=agent-3&limit=50",
        ),
        (
            "approved, soonest deadline first",
            "/reviews?view=summary&status=approved&order=expiring&limit=50",
        ),
        (
            "approved, newest first",
            "/reviews?view=summary&status=approved&order=newest&limit=50",
        ),
        (
            "text search, a phrase 0.1 % hold",
            "/reviews?view=summary&q=request%20777&limit=50",
        ),
        (
            "text search, a phrase 1 holds",
            "/reviews?view=summary&q=request%2099999%3A&limit=50",
        ),
        (
            "text search, a phrase every review holds",
            "/reviews?view=summary&q=production&limit=50",
        ),
    ] {
        let mut latencies = Vec::new();
        let started = Instant::now();
        for _ in 0..200 {
            let sent = Instant::now();
            let ok = agent
                .get(&format!("{base}/api/v1{query}"))
                .header("Authorization", &format!("Bearer {key}"))
                .call()
                .map(|r| r.status().as_u16() == 200)
                .unwrap_or(false);
            assert!(ok, "{query} failed");
            latencies.push(sent.elapsed());
        }
        summary(
            &format!("list over {list_size} reviews, {label}"),
            latencies,
            started.elapsed(),
            0,
        );
    }
}

/// Inserts rows the size of a decided review, one durable transaction each,
/// for `seconds` on a fresh SQLite file with the server's settings: the most
/// durable single writes per second this disk allows.
async fn bare_insert_floor(dir: &std::path::Path, seconds: u64) -> f64 {
    use sqlx::{ConnectOptions, Connection, Executor};
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let path = dir.join(format!("floor-{}.db", RUNS.fetch_add(1, Ordering::Relaxed)));
    let mut conn = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(&path)
        .create_if_missing(true)
        .journal_mode(sqlx::sqlite::SqliteJournalMode::Wal)
        .synchronous(sqlx::sqlite::SqliteSynchronous::Full)
        .connect()
        .await
        .unwrap();
    conn.execute("CREATE TABLE rows (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
        .await
        .unwrap();
    let body = serde_json::to_string(&review(0)).unwrap();
    let (started, mut count) = (Instant::now(), 0u64);
    while started.elapsed() < Duration::from_secs(seconds) {
        sqlx::query("INSERT INTO rows (body) VALUES (?)")
            .bind(&body)
            .execute(&mut conn)
            .await
            .unwrap();
        count += 1;
    }
    let rate = count as f64 / started.elapsed().as_secs_f64();
    conn.close().await.unwrap();
    rate
}

/// A process's resident memory in MB: all of it, and its own (heap and
/// stacks, without the database file's pages it maps).
fn resident_mb(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .map_or(0, |kb| kb / 1024)
    };
    (field("VmRSS:"), field("RssAnon:"))
}
