//! Test harness: the real `countersign` binary serving on a free port over a
//! real database, or the API's router in this process over a fresh SQLite
//! file (`InProcess`: no process, no socket); a client of either; and a
//! checker that holds every response to the OpenAPI document.

use axum::Router;
use countersign_domain::policy::Policy;
use countersign_server::http::AppState;
use countersign_server::limits::{Defaults, Limits};
use countersign_server::serve::{self, AppOptions};
use countersign_server::signing::Signer;
use countersign_server::store::keys::KeyKind;
use countersign_server::store::Db;
use countersign_server::webhooks::Webhooks;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The binary under test.
pub fn binary() -> &'static str {
    env!("CARGO_BIN_EXE_countersign")
}

/// A running server; killed when dropped.
pub struct Server {
    child: Child,
    /// e.g. `http://127.0.0.1:41234`
    pub url: String,
    /// The demo reviewer key (roles reviewer, security_officer, release_manager).
    pub reviewer: String,
    /// The demo agent key.
    pub agent: String,
    /// The data folder (its SQLite file survives restarts).
    pub data: PathBuf,
    /// The database address given, if not the default SQLite file.
    pub database: Option<String>,
}

impl Server {
    /// Starts `countersign serve --demo` on a fresh SQLite file in `data`.
    pub fn start(data: &Path, extra: &[&str]) -> Server {
        Server::start_on(data, None, extra)
    }

    /// Starts on a given database address.
    pub fn start_on(data: &Path, database: Option<&str>, extra: &[&str]) -> Server {
        Server::start_with(data, database, extra, Stdio::inherit())
    }

    /// Starts with its log (standard error) written to `log`.
    pub fn start_logging(data: &Path, extra: &[&str], log: &Path) -> Server {
        let file = std::fs::File::create(log).expect("create the log file");
        Server::start_with(data, None, extra, Stdio::from(file))
    }

    fn start_with(data: &Path, database: Option<&str>, extra: &[&str], stderr: Stdio) -> Server {
        let mut command = Command::new(binary());
        command
            .args(["serve", "--demo", "--listen", "127.0.0.1:0", "--data"])
            .arg(data)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(stderr);
        // Warnings and errors only, unless RUST_LOG asks: a line per request
        // would bury the tests' own output.
        if std::env::var_os("RUST_LOG").is_none() {
            command.env("RUST_LOG", "warn");
        }
        if let Some(url) = database {
            command.args(["--database", url]);
        }
        let mut child = command.spawn().expect("start countersign serve");
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let mut next = || lines.next().expect("server output").expect("utf-8 output");
        let first = next();
        let url = first
            .strip_prefix("countersign: listening on ")
            .unwrap_or_else(|| panic!("unexpected first line: {first}"))
            .to_owned();
        let (mut reviewer, mut agent) = (String::new(), String::new());
        while reviewer.is_empty() || agent.is_empty() {
            let line = next();
            if let Some(key) = line.strip_prefix("Demo reviewer key") {
                reviewer = key.rsplit(' ').next().unwrap().to_owned();
            } else if let Some(key) = line.strip_prefix("Demo agent key") {
                agent = key.rsplit(' ').next().unwrap().to_owned();
            }
        }
        // Keep draining stdout so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        Server {
            child,
            url,
            reviewer,
            agent,
            data: data.to_owned(),
            database: database.map(str::to_owned),
        }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Asks the server to stop (SIGTERM) and waits until it has: its exit code.
    pub fn stop(mut self) -> Option<i32> {
        Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        self.child.wait().unwrap().code()
    }

    /// Kills the process at once (SIGKILL: no shutdown, no flushing).
    pub fn crash(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// A client with a key.
    pub fn client(&self, key: &str) -> Client {
        Client::http(format!("{}/api/v1", self.url), Some(key))
    }

    /// A client without a key.
    pub fn anonymous(&self) -> Client {
        Client::http(format!("{}/api/v1", self.url), None)
    }

    /// A new key made with `countersign keys add` (kept across restarts and
    /// shared by every instance on the same database, unlike the demo keys):
    /// an agent key, or a reviewer key that signs as `reviewer`.
    pub fn new_key(&self, kind: &str) -> String {
        let mut args = vec!["add", "--kind", kind];
        if kind == "reviewer" {
            args.extend(["--role", "reviewer"]);
        }
        let (code, out, err) = self.keys(&args);
        assert_eq!(code, 0, "{err}");
        out.lines().next().unwrap().to_owned()
    }

    /// Runs `countersign keys ...` on this server's database.
    pub fn keys(&self, args: &[&str]) -> (i32, String, String) {
        let mut command = Command::new(binary());
        command.arg("keys").arg("--data").arg(&self.data);
        if let Some(url) = &self.database {
            command.args(["--database", url]);
        }
        let output = command.args(args).output().unwrap();
        (
            output.status.code().unwrap(),
            String::from_utf8(output.stdout).unwrap(),
            String::from_utf8(output.stderr).unwrap(),
        )
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A response: status, headers we look at, and the body as JSON (Null if none).
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub body: Value,
    pub text: String,
    pub headers: Vec<(String, String)>,
}

impl Reply {
    /// An answer's status, headers and body text (its JSON, when it is).
    fn new(status: ureq::http::StatusCode, headers: &ureq::http::HeaderMap, text: String) -> Reply {
        Reply {
            status: status.as_u16(),
            body: serde_json::from_str(&text).unwrap_or(Value::Null),
            text,
            headers: headers
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_str().unwrap_or("").to_owned()))
                .collect(),
        }
    }

    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The error code of an error reply.
    pub fn code(&self) -> &str {
        self.body["error"]["code"].as_str().unwrap_or("")
    }

    /// The paths of an error's details.
    pub fn paths(&self) -> Vec<String> {
        self.body["error"]["details"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|d| d["path"].as_str().unwrap_or("").to_owned())
            .collect()
    }
}

/// The API's router over `db` as `serve` builds it (a signing key in a
/// fresh folder, the default policy and limits, no webhooks), with a new
/// agent key and a reviewer key that signs as `reviewer`.
pub async fn app(db: Db) -> (Router, String, String, tempfile::TempDir) {
    let keys = tempfile::tempdir().unwrap();
    let signer = Signer::load_or_create(&keys.path().join("signing-key.pem")).unwrap();
    let mint = |kind, roles: &[&str]| {
        let roles: Vec<String> = roles.iter().map(|r| r.to_string()).collect();
        let db = db.clone();
        async move {
            db.add_key(kind, &roles, "test", None, None)
                .await
                .unwrap()
                .secret
        }
    };
    let agent = mint(KeyKind::Agent, &[]).await;
    let reviewer = mint(KeyKind::Reviewer, &["reviewer"]).await;
    let webhooks = Webhooks::open(db.clone(), Vec::new(), "http://desk.test", false)
        .await
        .unwrap();
    let limits = Limits::new(Defaults::default());
    let state = AppState::new(db, limits, signer, Policy::default(), webhooks)
        .await
        .unwrap();
    // The same surface `countersign serve` serves (headers, compression, the
    // request log), without a built app, metrics or CORS.
    let surface = AppOptions {
        max_body: 2 * 1024 * 1024,
        app_dir: None,
        cors_origins: &[],
        desk: "http://desk.test",
    };
    let (app, _) = serve::app(state, &surface, None).unwrap();
    (app, agent, reviewer, keys)
}

/// The API in this process over a fresh SQLite file: for handler tests where
/// a real process adds nothing. Its clients call the router directly.
pub struct InProcess {
    routed: Arc<Routed>,
    /// An agent key.
    pub agent: String,
    /// A reviewer key (signs as `reviewer`).
    pub reviewer: String,
    _folders: [tempfile::TempDir; 2],
}

/// A router and the runtime its handlers (and the tasks they start) run on.
struct Routed {
    router: Router,
    runtime: tokio::runtime::Runtime,
}

impl Routed {
    /// Calls the router with a request as a client would send it.
    fn call(&self, request: ureq::http::request::Builder, body: Option<Vec<u8>>) -> Reply {
        use http_body_util::BodyExt;
        use tower::ServiceExt;
        let request = request
            .body(body.map_or_else(axum::body::Body::empty, axum::body::Body::from))
            .unwrap();
        self.runtime.block_on(async {
            let answer = self.router.clone().oneshot(request).await.unwrap();
            let (parts, body) = answer.into_parts();
            let bytes = body.collect().await.unwrap().to_bytes();
            let text = String::from_utf8_lossy(&bytes).into_owned();
            Reply::new(parts.status, &parts.headers, text)
        })
    }
}

impl InProcess {
    /// The API over a fresh SQLite file.
    pub fn start() -> InProcess {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let data = tempfile::tempdir().unwrap();
        let address = format!("sqlite://{}", data.path().join("store.db").display());
        let (router, agent, reviewer, keys) = runtime.block_on(async {
            let db = Db::open(&address).await.unwrap();
            app(db).await
        });
        InProcess {
            routed: Arc::new(Routed { router, runtime }),
            agent,
            reviewer,
            _folders: [data, keys],
        }
    }

    /// A client with a key.
    pub fn client(&self, key: &str) -> Client {
        Client {
            base: "/api/v1".into(),
            key: Some(key.to_owned()),
            routed: Some(self.routed.clone()),
            contract: None,
        }
    }
}

/// A client of the API: over HTTP, or of an `InProcess` router.
#[derive(Clone)]
pub struct Client {
    pub base: String,
    pub key: Option<String>,
    routed: Option<Arc<Routed>>,
    /// Every answer is checked against it, when set.
    contract: Option<Arc<Contract>>,
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(90)))
        .build()
        .into()
}

impl Client {
    /// A client over HTTP of the API at `base`.
    pub fn http(base: String, key: Option<&str>) -> Client {
        Client {
            base,
            key: key.map(str::to_owned),
            routed: None,
            contract: None,
        }
    }

    /// The same client, checking every answer against `contract`.
    pub fn checked(self, contract: &Arc<Contract>) -> Client {
        Client {
            contract: Some(contract.clone()),
            ..self
        }
    }

    /// Sends a request. `body` is sent as `content_type` (JSON unless told).
    /// Panics when no response comes (see `try_send`).
    pub fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<(&str, &[u8])>,
        headers: &[(&str, &str)],
    ) -> Reply {
        let reply = self
            .try_send(method, path, body, headers)
            .unwrap_or_else(|e| panic!("{method} {}{path}: {e}", self.base));
        if let Some(contract) = &self.contract {
            contract.check(method, path, &reply);
        }
        reply
    }

    /// Sends a request; Err when no response comes (e.g. the server died).
    pub fn try_send(
        &self,
        method: &str,
        path: &str,
        body: Option<(&str, &[u8])>,
        headers: &[(&str, &str)],
    ) -> Result<Reply, String> {
        let url = format!("{}{path}", self.base);
        let mut request = ureq::http::Request::builder().method(method).uri(&url);
        if let Some(key) = &self.key {
            request = request.header("Authorization", format!("Bearer {key}"));
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some((content_type, _)) = body {
            request = request.header("Content-Type", content_type);
        }
        let bytes = body.map(|(_, bytes)| bytes.to_vec());
        if let Some(routed) = &self.routed {
            return Ok(routed.call(request, bytes));
        }
        let response = match bytes {
            Some(bytes) => agent().run(request.body(bytes).unwrap()),
            None => agent().run(request.body(()).unwrap()),
        };
        let mut response = response.map_err(|e| e.to_string())?;
        let text = response.body_mut().read_to_string().unwrap_or_default();
        Ok(Reply::new(response.status(), response.headers(), text))
    }

    pub fn get(&self, path: &str) -> Reply {
        self.send("GET", path, None, &[])
    }

    pub fn post(&self, path: &str, body: &Value) -> Reply {
        self.send(
            "POST",
            path,
            Some(("application/json", body.to_string().as_bytes())),
            &[],
        )
    }

    /// Posts a decision with an idempotency key.
    pub fn decide(&self, id: &str, idem: &str, body: &Value) -> Reply {
        self.send(
            "POST",
            &format!("/reviews/{id}/decisions"),
            Some(("application/json", body.to_string().as_bytes())),
            &[("Idempotency-Key", idem)],
        )
    }
}

/// A fresh database on the PostgreSQL test server, or None when none is
/// configured (`COUNTERSIGN_TEST_POSTGRES`, an admin address such as
/// `scripts/postgres.sh start DIR` prints; the test command sets it together
/// with `COUNTERSIGN_REQUIRE_POSTGRES=1`, so there it is never skipped).
pub fn fresh_database(name: &str) -> Option<String> {
    let Ok(admin) = std::env::var("COUNTERSIGN_TEST_POSTGRES") else {
        assert!(
            std::env::var("COUNTERSIGN_REQUIRE_POSTGRES").is_err(),
            "COUNTERSIGN_REQUIRE_POSTGRES is set but COUNTERSIGN_TEST_POSTGRES is not"
        );
        eprintln!("skipped: set COUNTERSIGN_TEST_POSTGRES to run the PostgreSQL tests");
        return None;
    };
    let psql = |sql: &str| {
        let status = Command::new("psql")
            .args([admin.as_str(), "-q", "-c", sql])
            .status()
            .expect("psql runs");
        assert!(status.success(), "psql failed: {sql}");
    };
    psql(&format!("DROP DATABASE IF EXISTS {name}"));
    psql(&format!("CREATE DATABASE {name}"));
    let base = admin.rsplit_once('/').unwrap().0;
    Some(format!("{base}/{name}"))
}

/// Runs `check` in process on a database opened fresh: a SQLite file and,
/// when configured (`fresh_database`), a PostgreSQL database named `name`.
pub fn on_both(
    name: &str,
    check: impl Fn(Db) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>,
) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sqlite = format!("sqlite://{}", dir.path().join("store.db").display());
    let mut addresses = vec![sqlite];
    addresses.extend(fresh_database(name));
    for address in addresses {
        runtime.block_on(async {
            let db = Db::open(&address).await.unwrap();
            check(db).await;
        });
    }
}

/// A valid plan with `steps` chained steps (and a cycle when asked).
pub fn plan(n: u32, steps: u32, cycle: bool) -> Value {
    let step_id = |i: u32| format!("{n:08x}-5555-4555-8555-{i:012x}");
    json!({
        "meta": {"protocol_version": "1.0.0", "schema_version": "1.0.0"},
        "plan_id": format!("{n:08x}-2222-4222-8222-222222222222"),
        "context_id": "33333333-3333-4333-8333-333333333333",
        "title": format!("Test plan {n}"),
        "objective": "Exercise the API",
        "status": "proposed",
        "steps": (0..steps).map(|i| json!({
            "step_id": step_id(i),
            "description": format!("step {i}"),
            "status": "pending",
            "dependencies": if i == 0 {
                if cycle { vec![step_id(steps - 1)] } else { vec![] }
            } else { vec![step_id(i - 1)] },
        })).collect::<Vec<_>>(),
    })
}

/// A new pending review of `plan(n, steps, cycle)`.
pub fn review(n: u32, steps: u32, cycle: bool) -> Value {
    let plan = plan(n, steps, cycle);
    json!({
        "confirm": {
            "meta": {"protocol_version": "1.0.0", "schema_version": "1.0.0"},
            "confirm_id": confirm_id(n),
            "target_type": "plan",
            "target_id": plan["plan_id"],
            "status": "pending",
            "requested_by_role": "deploy-agent",
            "requested_at": "2026-11-01T10:00:00Z",
            "reason": format!("Test request {n}"),
        },
        "target": {"plan": plan},
    })
}

/// The confirm_id of `review(n, ..)`.
pub fn confirm_id(n: u32) -> String {
    format!("{n:08x}-1111-4111-8111-111111111111")
}

/// A live subscriber: opens `GET /events` with `key`, counts itself in
/// `ready`, and gives the feed position of every event it receives until the
/// event of review `sentinel`.
pub fn subscribe(
    url: &str,
    key: &str,
    sentinel: &str,
    ready: &std::sync::atomic::AtomicU32,
    timeout: Duration,
) -> Result<Vec<i64>, String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .build()
        .into();
    let response = agent
        .get(format!("{url}/api/v1/events"))
        .header("Authorization", format!("Bearer {key}"))
        .call()
        .map_err(|e| e.to_string())?;
    ready.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let mut seen = Vec::new();
    for line in BufReader::new(response.into_body().into_reader()).lines() {
        let line = line.map_err(|e| format!("after {} events: {e}", seen.len()))?;
        if let Some(id) = line.strip_prefix("id:") {
            seen.push(
                id.trim()
                    .parse::<i64>()
                    .map_err(|e| format!("event id {id}: {e}"))?,
            );
        } else if line.starts_with("data:") && line.contains(sentinel) {
            return Ok(seen);
        }
    }
    Err(format!("the stream ended after {} events", seen.len()))
}

/// How an event stream is opened: with a key in the header, with a ticket in
/// the URL, or with neither.
pub enum Opener<'a> {
    Key(&'a str),
    Ticket(&'a str),
    Nobody,
}

/// Opens the event stream (`query` starts with `?` or is empty): its status
/// and, when 200, its body.
pub fn open_events(server: &Server, opener: Opener, query: &str) -> (u16, Option<ureq::Body>) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(std::time::Duration::from_secs(20)))
        .build()
        .into();
    let request = match opener {
        Opener::Key(key) => agent
            .get(format!("{}/api/v1/events{query}", server.url))
            .header("Authorization", format!("Bearer {key}")),
        Opener::Ticket(ticket) => {
            let joined = if query.is_empty() { "?" } else { "&" };
            agent.get(format!(
                "{}/api/v1/events{query}{joined}ticket={ticket}",
                server.url
            ))
        }
        Opener::Nobody => agent.get(format!("{}/api/v1/events{query}", server.url)),
    };
    let response = request.call().unwrap();
    let status = response.status().as_u16();
    if status != 200 {
        return (status, None);
    }
    assert!(response.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
    (status, Some(response.into_body()))
}

/// Reads the first `count` events of an event stream opened with `opener`,
/// each as (id, name, data), after running `during`.
pub fn read_events(
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

/// The ids of the reviews a text search finds among the test reviews
/// (`requester=deploy-agent`), sorted.
pub fn found(reviewer: &Client, text: &str) -> Vec<String> {
    let reply = reviewer.get(&format!(
        "/reviews?requester=deploy-agent&limit=500&q={}",
        form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>()
    ));
    assert_eq!(reply.status, 200, "{}", reply.text);
    let mut ids: Vec<String> = reply.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["confirm"]["confirm_id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids
}

/// Writes `toml` as `policy.toml` in `dir` (made when missing): the file `serve --policy` takes.
pub fn write_policy(dir: &Path, toml: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let file = dir.join("policy.toml");
    std::fs::write(&file, toml).unwrap();
    file
}

/// A tool-call request as an agent sends it to `POST /tool-calls`: a wire
/// transfer with `args`, risk tier R2, in session `sess-1`, its token bound to
/// no device. Tests set the fields they are about (`body["riskTier"] = json!("R4")`).
pub fn tool_call(args: Value) -> Value {
    json!({
        "requestedByRole": "payments-agent",
        "sessionId": "sess-1",
        "runId": "run-1",
        "workspace": "acme",
        "toolCall": {"name": "wire_transfer", "args": args},
        "humanSummary": "Wire money to ACME GmbH",
        "riskTier": "R2",
    })
}

/// The OpenAPI document and which operations and statuses were seen.
pub struct Contract {
    doc: Value,
    seen: Mutex<BTreeSet<(String, String, u16)>>,
}

impl Contract {
    /// Loads `crates/server/openapi.json`.
    pub fn load() -> Contract {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("openapi.json");
        let doc = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        Contract {
            doc,
            seen: Mutex::new(BTreeSet::new()),
        }
    }

    /// The documented path template matching a concrete path (`/reviews/{confirm_id}`).
    fn template(&self, path: &str) -> String {
        let path = path.split('?').next().unwrap();
        let paths = self.doc["paths"].as_object().unwrap();
        paths
            .keys()
            .find(|template| {
                let (a, b): (Vec<&str>, Vec<&str>) =
                    (template.split('/').collect(), path.split('/').collect());
                a.len() == b.len() && a.iter().zip(&b).all(|(t, p)| t.starts_with('{') || t == p)
            })
            .unwrap_or_else(|| panic!("{path} is not in the OpenAPI document"))
            .clone()
    }

    /// Asserts the reply is documented for this operation and matches its schema.
    pub fn check(&self, method: &str, path: &str, reply: &Reply) {
        let template = self.template(path);
        let operation = &self.doc["paths"][&template][method.to_lowercase()];
        assert!(
            operation.is_object(),
            "{method} {template} is not documented"
        );
        let documented = &operation["responses"][reply.status.to_string()];
        assert!(
            documented.is_object(),
            "{method} {template} answered {} which is not documented: {}",
            reply.status,
            reply.text
        );
        if let Some(schema) = documented["content"]["application/json"]["schema"].as_object() {
            let root = json!({"allOf": [Value::Object(schema.clone())], "components": self.doc["components"]});
            let validator = jsonschema::draft202012::new(&root).expect("schema compiles");
            let errors: Vec<String> = validator
                .iter_errors(&reply.body)
                .map(|e| format!("{} at {}", e, e.instance_path()))
                .collect();
            assert!(
                errors.is_empty(),
                "{method} {path} {}: body does not match the OpenAPI schema: {errors:?}\n{}",
                reply.status,
                reply.text
            );
        }
        self.seen
            .lock()
            .unwrap()
            .insert((method.to_lowercase(), template, reply.status));
    }

    /// Checks a JSON value against a named component schema.
    pub fn check_component(&self, name: &str, value: &Value) {
        let root = json!({"$ref": format!("#/components/schemas/{name}"), "components": self.doc["components"]});
        let validator = jsonschema::draft202012::new(&root).expect("schema compiles");
        let errors: Vec<String> = validator
            .iter_errors(value)
            .map(|e| e.to_string())
            .collect();
        assert!(
            errors.is_empty(),
            "{name} does not match: {errors:?}\n{value}"
        );
    }

    /// Every documented operation that was never exercised.
    pub fn unexercised_operations(&self) -> Vec<String> {
        let seen = self.seen.lock().unwrap();
        let mut missing = Vec::new();
        for (template, item) in self.doc["paths"].as_object().unwrap() {
            for method in item
                .as_object()
                .unwrap()
                .keys()
                .filter(|m| *m != "parameters")
            {
                if !seen.iter().any(|(m, t, _)| m == method && t == template) {
                    missing.push(format!("{method} {template}"));
                }
            }
        }
        missing
    }

    /// Every (operation, status) documented but never seen.
    pub fn unseen_statuses(&self) -> Vec<String> {
        let seen = self.seen.lock().unwrap();
        let mut missing = Vec::new();
        for (template, item) in self.doc["paths"].as_object().unwrap() {
            for (method, operation) in item
                .as_object()
                .unwrap()
                .iter()
                .filter(|(m, _)| *m != "parameters")
            {
                for status in operation["responses"].as_object().unwrap().keys() {
                    let status: u16 = status.parse().unwrap();
                    if !seen.contains(&(method.clone(), template.clone(), status)) {
                        missing.push(format!("{method} {template} {status}"));
                    }
                }
            }
        }
        missing
    }
}
