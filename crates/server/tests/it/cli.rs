//! The CLI as a real process: `countersign validate` on fixture files,
//! `countersign keys` managing the keys a server accepts, and
//! `countersign agent submit` waiting for a reviewer's decision.

use crate::support::{plan, Server};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../domain/tests/fixtures")
}

fn golden(file: &str) -> PathBuf {
    fixtures()
        .join("mplp/golden/flows/flow-05-single-agent-confirm-required")
        .join(file)
}

/// Runs the binary; returns (exit code, stdout, stderr).
fn countersign(args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_countersign"))
        .args(args)
        .output()
        .unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

fn json_lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn valid_files_exit_0_with_one_json_line_each() {
    let files = [
        golden("input/confirm.json"),
        golden("input/plan.json"),
        golden("input/context.json"),
        golden("input/trace.json"),
    ];
    let mut args = vec!["validate", "--format", "json"];
    args.extend(files.iter().map(|p| s(p)));
    let (code, out, _) = countersign(&args);
    assert_eq!(code, 0, "{out}");
    let lines = json_lines(&out);
    let kinds: Vec<&str> = lines.iter().map(|l| l["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["confirm", "plan", "context", "trace"]);
    for (line, file) in lines.iter().zip(&files) {
        assert_eq!(line["file"], s(file));
        assert_eq!(line["valid"], true);
        assert_eq!(line["issues"], Value::Array(vec![]));
    }
}

#[test]
fn invalid_files_exit_1_with_paths_and_codes() {
    let negative = fixtures().join("mplp/negative");
    let (code, out, _) = countersign(&[
        "validate",
        "--format",
        "json",
        s(&negative.join("plan_step_missing_id.json")),
        s(&golden("input/plan.json")),
    ]);
    assert_eq!(code, 1);
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["kind"], "plan");
    assert_eq!(lines[0]["valid"], false);
    let issue = lines[0]["issues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["path"] == "/steps/0/step_id")
        .unwrap();
    assert_eq!(issue["code"], "missing_field");
    assert!(issue["message"].as_str().unwrap().contains("step_id"));
    assert_eq!(lines[1]["valid"], true);
}

#[test]
fn a_cycle_is_named_step_by_step_in_text() {
    let dir = tempfile::tempdir().unwrap();
    let mut plan: Value =
        serde_json::from_str(&std::fs::read_to_string(golden("input/plan.json")).unwrap()).unwrap();
    plan["steps"][0]["dependencies"] = serde_json::json!([plan["steps"][2]["step_id"]]);
    let path = dir.path().join("cyclic.json");
    std::fs::write(&path, plan.to_string()).unwrap();
    let (code, out, _) = countersign(&["validate", s(&path)]);
    assert_eq!(code, 1);
    assert!(out.contains("plan, 1 problem(s)"), "{out}");
    assert!(out.contains("/steps/0/dependencies/0"), "{out}");
    assert!(out.contains("[dependency_cycle]"), "{out}");
    for step in [
        "Export user table from MySQL",
        "Import to PostgreSQL",
        "Verify row counts",
    ] {
        assert!(out.contains(step), "{out}");
    }
}

#[test]
fn arrays_are_checked_together() {
    let dir = tempfile::tempdir().unwrap();
    let read = |f: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(golden(f)).unwrap()).unwrap()
    };
    let mut wrong_plan = read("input/plan.json");
    wrong_plan["plan_id"] = Value::from("550e8400-e29b-41d4-a716-446655449999");
    let path = dir.path().join("bundle.json");
    std::fs::write(
        &path,
        Value::Array(vec![
            read("input/confirm.json"),
            wrong_plan,
            read("input/context.json"),
        ])
        .to_string(),
    )
    .unwrap();
    let (code, out, _) = countersign(&["validate", "--format", "json", s(&path)]);
    assert_eq!(code, 1);
    let line = &json_lines(&out)[0];
    assert_eq!(line["kind"], "array");
    assert_eq!(
        line["items"][0],
        serde_json::json!({"index": 0, "kind": "confirm", "valid": false})
    );
    assert_eq!(line["issues"][0]["path"], "/0/target_id");
    assert_eq!(line["issues"][0]["code"], "target_mismatch");
}

#[test]
fn not_json_exits_2_saying_where_it_breaks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.json");
    std::fs::write(&path, "{\n  \"confirm_id\": \"x\",\n  oops\n}").unwrap();
    let (code, out, _) = countersign(&["validate", s(&path), s(&golden("input/plan.json"))]);
    assert_eq!(code, 2);
    assert!(
        out.starts_with(&format!("{}:3:3: not JSON", s(&path))),
        "{out}"
    );
    assert!(out.contains("plan.json: plan, valid"), "{out}");

    let (code, out, _) = countersign(&["validate", "--format", "json", s(&path)]);
    assert_eq!(code, 2);
    let line = &json_lines(&out)[0];
    assert_eq!(
        (
            line["error"]["line"].as_u64(),
            line["error"]["column"].as_u64()
        ),
        (Some(3), Some(3))
    );
    assert_eq!(line["valid"], false);
}

#[test]
fn unreadable_files_and_usage_errors_exit_2() {
    let (code, out, _) = countersign(&["validate", "/no/such/file.json"]);
    assert_eq!(code, 2);
    assert!(out.contains("cannot read the file"), "{out}");
    let (code, _, err) = countersign(&["validate"]);
    assert_eq!(code, 2);
    assert!(err.contains("FILE"), "{err}");
    let (code, _, err) = countersign(&["validate", "--format", "yaml", "x.json"]);
    assert_eq!(code, 2);
    assert!(err.contains("yaml"), "{err}");
    let (code, out, _) = countersign(&["--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("validate"));
}

#[test]
fn spec_prose_examples_are_invalid_not_crashes() {
    for file in [
        "risk-flow-confirm.json",
        "confirm-module-example.json",
        "plan-module-example.json",
    ] {
        let path = fixtures().join("spec-examples").join(file);
        let (code, out, _) = countersign(&["validate", "--format", "json", s(&path)]);
        assert_eq!(code, 1, "{file}");
        let line = &json_lines(&out)[0];
        assert!(
            line["issues"]
                .as_array()
                .unwrap()
                .iter()
                .any(|i| i["path"] == "/meta/protocolVersion"),
            "{file}"
        );
    }
}

#[test]
fn a_database_written_by_a_newer_version_is_refused_and_left_as_it_is() {
    let data = tempfile::tempdir().unwrap();
    // A first start makes the database; a newer version then adds a migration.
    drop(Server::start(data.path(), &[]));
    let file = data.path().join("countersign.db");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let url = format!("sqlite://{}", file.display());
    let versions = |insert: bool| {
        runtime.block_on(async {
            use sqlx::{Connection, Row};
            let mut db = sqlx::SqliteConnection::connect(&url).await.unwrap();
            if insert {
                sqlx::query("INSERT INTO _sqlx_migrations (version, description, installed_on, success, checksum, execution_time) VALUES (9001, 'from the future', CURRENT_TIMESTAMP, 1, x'00', 0)")
                    .execute(&mut db)
                    .await
                    .unwrap();
            }
            let rows = sqlx::query("SELECT version FROM _sqlx_migrations ORDER BY version")
                .fetch_all(&mut db)
                .await
                .unwrap();
            rows.iter().map(|r| r.get::<i64, _>(0)).collect::<Vec<_>>()
        })
    };
    let before = versions(true);
    assert_eq!(before.last(), Some(&9001));
    let (code, stdout, stderr) =
        countersign(&["serve", "--data", s(data.path()), "--listen", "127.0.0.1:0"]);
    assert_ne!(code, 0, "{stdout}");
    assert!(
        stderr.contains(
            "this database was written by a newer Countersign: it holds schema migration 9001"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("restore a backup"), "{stderr}");
    assert_eq!(versions(false), before, "nothing was changed");
}

/// `deploy/countersign.service` passes `systemd-analyze verify` without a
/// word (it only warns, exit 0, on a misspelt setting: its output must be
/// empty), checked in a root holding the built binary where the unit
/// expects it; and the binary accepts the unit's command line.
#[test]
fn the_systemd_unit_verifies_and_its_command_line_serves() {
    let unit = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/countersign.service");
    let text = std::fs::read_to_string(&unit).unwrap();
    let has_systemd = Command::new("systemd-analyze")
        .arg("--version")
        .output()
        .is_ok();
    if has_systemd {
        let root = tempfile::tempdir().unwrap();
        let place = |dir: &str| {
            let dir = root.path().join(dir);
            std::fs::create_dir_all(&dir).unwrap();
            dir
        };
        std::fs::copy(
            env!("CARGO_BIN_EXE_countersign"),
            place("usr/local/bin").join("countersign"),
        )
        .unwrap();
        std::fs::copy(
            &unit,
            place("etc/systemd/system").join("countersign.service"),
        )
        .unwrap();
        // The units it refers to (network-online.target, multi-user.target).
        let units = place("usr/lib/systemd/system");
        for entry in std::fs::read_dir("/usr/lib/systemd/system")
            .unwrap()
            .flatten()
        {
            if entry.file_type().unwrap().is_file() {
                std::fs::copy(entry.path(), units.join(entry.file_name())).unwrap();
            }
        }
        let verified = Command::new("systemd-analyze")
            .arg("verify")
            .arg(format!("--root={}", root.path().display()))
            .arg("countersign.service")
            .output()
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&verified.stdout),
            String::from_utf8_lossy(&verified.stderr)
        );
        assert!(
            verified.status.success() && said.trim().is_empty(),
            "systemd-analyze verify: {said}"
        );
    } else {
        assert!(
            std::env::var("COUNTERSIGN_REQUIRE_SYSTEMD").is_err(),
            "COUNTERSIGN_REQUIRE_SYSTEMD is set but systemd-analyze is missing"
        );
    }
    let exec = text
        .lines()
        .find_map(|line| line.strip_prefix("ExecStart=/usr/local/bin/countersign "))
        .expect("an ExecStart line");
    let data = tempfile::tempdir().unwrap();
    let mut server = Command::new(env!("CARGO_BIN_EXE_countersign"))
        .args(exec.split_whitespace())
        .env("COUNTERSIGN_DATA", data.path())
        .env("COUNTERSIGN_LISTEN", "127.0.0.1:0")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.stdout.take().unwrap()),
        &mut first,
    )
    .unwrap();
    server.kill().unwrap();
    server.wait().unwrap();
    assert!(
        first.starts_with("countersign: listening on http://127.0.0.1:"),
        "{first}"
    );
}

/// A `systemd-run` command as the unit's header and the operator's guide
/// write it: its `-p` properties, its `-E` variables, and the command.
struct SystemdRun {
    properties: Vec<(String, String)>,
    environment: Vec<(String, String)>,
    command: Vec<String>,
}

impl SystemdRun {
    /// The first `sudo systemd-run` command in `text`, with `prefix` (the
    /// comment marker) taken off each of its lines.
    fn find(text: &str, prefix: &str) -> SystemdRun {
        let lines: Vec<&str> = text
            .lines()
            .map(|l| l.trim_start_matches(prefix).trim())
            .skip_while(|l| !l.starts_with("sudo systemd-run"))
            .collect();
        let end = lines.iter().position(|l| !l.ends_with('\\')).unwrap();
        let joined = lines[..=end].join(" ").replace('\\', " ");
        let mut words = joined.split_whitespace().skip(2);
        let split = |w: &str| {
            let (k, v) = w.split_once('=').unwrap();
            (k.to_owned(), v.to_owned())
        };
        let mut run = SystemdRun {
            properties: vec![],
            environment: vec![],
            command: vec![],
        };
        while let Some(word) = words.next() {
            match word {
                "-p" => run.properties.push(split(words.next().unwrap())),
                "-E" => run.environment.push(split(words.next().unwrap())),
                flag if flag.starts_with("--") => {}
                first => {
                    run.command.push(first.to_owned());
                    run.command.extend(words.by_ref().map(str::to_owned));
                }
            }
        }
        run
    }
}

#[test]
fn the_units_instructions_run_one_shot_commands_as_the_service_on_its_data() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let unit = std::fs::read_to_string(root.join("deploy/countersign.service")).unwrap();
    let guide = std::fs::read_to_string(root.join("docs/operating.md")).unwrap();
    let setting = |key: &str| {
        unit.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
            .unwrap_or_else(|| panic!("the unit sets {key}"))
            .to_owned()
    };
    let data = tempfile::tempdir().unwrap();
    drop(Server::start(data.path(), &[]));
    for (run, said) in [
        (SystemdRun::find(&unit, "#"), "the unit's header"),
        (SystemdRun::find(&guide, ""), "docs/operating.md"),
    ] {
        // The same user, state folder, settings and data as the service.
        for key in ["DynamicUser", "User", "StateDirectory", "EnvironmentFile"] {
            let given = run.properties.iter().find(|(k, _)| k == key);
            assert_eq!(
                given.map(|(_, v)| v.clone()),
                Some(setting(key)),
                "{said}: -p {key}"
            );
        }
        let data_at = setting("Environment").replace("COUNTERSIGN_DATA=", "");
        assert_eq!(
            run.environment,
            vec![("COUNTERSIGN_DATA".to_owned(), data_at)],
            "{said}"
        );
        assert_eq!(run.command[0], "/usr/local/bin/countersign", "{said}");
        // The command itself works on the data the service made.
        let output = Command::new(env!("CARGO_BIN_EXE_countersign"))
            .args(&run.command[1..])
            .env("COUNTERSIGN_DATA", data.path())
            .env_remove("COUNTERSIGN_DATABASE")
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "{said}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
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
        stdout.contains(" approved by reviewer: Looks safe"),
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
        stdout.contains(" rejected by reviewer: Not during the freeze"),
        "{stdout}"
    );

    // An invalid plan is refused with its paths, and nothing waits.
    std::fs::write(&file, plan(11, 3, true).to_string()).unwrap();
    let output = run(&file);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("/target/plan/steps"));
}

#[test]
fn one_shot_commands_create_no_database_or_key_and_say_where_they_looked() {
    let folder = tempfile::tempdir().unwrap();
    let data = folder.path().join("data");
    let at = data.to_str().unwrap();
    for args in [
        vec![
            "keys", "--data", at, "add", "--kind", "reviewer", "--role", "reviewer",
        ],
        vec!["keys", "--data", at, "list"],
        vec!["audit", "--data", at, "verify"],
        vec!["webhooks", "--data", at],
        vec![
            "backup",
            "--data",
            at,
            folder.path().join("copy.db").to_str().unwrap(),
        ],
    ] {
        let output = std::process::Command::new(crate::support::binary())
            .args(&args)
            .env_remove("COUNTERSIGN_DATA")
            .env_remove("COUNTERSIGN_DATABASE")
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&output.stderr);
        assert_ne!(output.status.code(), Some(0), "{args:?}: {said}");
        assert!(
            said.contains("no Countersign database at") && said.contains(at),
            "{args:?}: {said}"
        );
        assert!(!data.exists(), "{args:?} made {}", data.display());
    }
    let output = std::process::Command::new(crate::support::binary())
        .args(["keys", "--data", at, "signing-key"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("only `countersign serve` makes one"),
        "{said}"
    );
    assert!(!data.exists(), "signing-key made {}", data.display());
    // Beside a database that `serve` made, the signing key must be there too.
    let server = Server::start(&data, &[]);
    drop(server);
    std::fs::remove_file(data.join("signing-key.pem")).unwrap();
    let output = std::process::Command::new(crate::support::binary())
        .args(["keys", "--data", at, "signing-key"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stderr);
    assert_ne!(output.status.code(), Some(0), "{said}");
    assert!(
        said.contains("only `countersign serve` makes one"),
        "{said}"
    );
    assert!(!data.join("signing-key.pem").exists());
}
