//! The same server on PostgreSQL, and two instances sharing one database.
//! Needs `COUNTERSIGN_TEST_POSTGRES` (an admin address, e.g. from
//! `scripts/postgres.sh start DIR`); the test command sets it and
//! `COUNTERSIGN_REQUIRE_POSTGRES=1`, so there it can never be skipped.

use crate::support::{confirm_id, found, fresh_database, review, Client, Server};
use serde_json::json;

#[test]
fn decisions_and_paging_work_on_postgresql() {
    let Some(url) = fresh_database("countersign_single") else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let server = Server::start_on(data.path(), Some(&url), &[]);
    let agent = server.client(&server.agent);
    let reviewer = server.client(&server.reviewer);
    assert_eq!(reviewer.get("/health").body["database"], "postgres");
    for n in 1..=5 {
        assert_eq!(agent.post("/reviews", &review(n, 3, false)).status, 201);
    }
    let cyclic = agent.post("/reviews", &review(6, 3, true));
    assert_eq!(cyclic.status, 422);
    let first = reviewer.get("/reviews?requester=deploy-agent&limit=3");
    let next = first.body["next_cursor"].as_str().unwrap().to_owned();
    let second = reviewer.get(&format!(
        "/reviews?requester=deploy-agent&limit=3&cursor={next}"
    ));
    assert_eq!(
        first.body["items"].as_array().unwrap().len()
            + second.body["items"].as_array().unwrap().len(),
        5
    );
    let reject = json!({"status": "rejected", "decided_by_role": "reviewer", "reason": "Too wide"});
    let once = reviewer.decide(&confirm_id(1), "pg-1", &reject);
    assert_eq!(once.status, 200, "{}", once.text);
    assert_eq!(
        reviewer.decide(&confirm_id(1), "pg-1", &reject).body,
        once.body
    );
    assert_eq!(reviewer.decide(&confirm_id(1), "pg-2", &reject).status, 409);
    assert_eq!(
        agent
            .get(&format!("/reviews/{}/outcome", confirm_id(1)))
            .body["outcome"],
        "TOOL_DENIED"
    );
    assert_eq!(
        reviewer.get("/reviews?q=test%20plan%204").body["items"][0]["confirm"]["confirm_id"],
        confirm_id(4)
    );
}

#[test]
fn decisions_go_on_after_the_database_drops_every_connection_of_the_server() {
    let Some(url) = fresh_database("countersign_dropped") else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let server = Server::start_on(data.path(), Some(&url), &[]);
    let agent = server.client(&server.agent);
    let reviewer = server.client(&server.reviewer);
    for n in 1..=2 {
        assert_eq!(agent.post("/reviews", &review(n, 2, false)).status, 201);
    }
    let approve = json!({"status": "approved", "decided_by_role": "reviewer", "reason": "Fine"});
    let first = reviewer.decide(&confirm_id(1), "drop-1", &approve);
    assert_eq!(first.status, 200, "{}", first.text);
    // As a restart of the database would: every connection of the server
    // ends, the group commit's own among them.
    let admin = std::env::var("COUNTERSIGN_TEST_POSTGRES").unwrap();
    let ended = std::process::Command::new("psql")
        .args([admin.as_str(), "-qAt", "-c"])
        .arg("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = 'countersign_dropped'")
        .output()
        .unwrap();
    let ended: u32 = String::from_utf8_lossy(&ended.stdout)
        .trim()
        .parse()
        .unwrap();
    assert!(ended > 0, "no connection of the server was ended");
    let second = reviewer.decide(&confirm_id(2), "drop-2", &approve);
    assert_eq!(second.status, 200, "{}", second.text);
    let stored = reviewer.get(&format!("/reviews/{}", confirm_id(2)));
    assert_eq!(stored.body["review"]["confirm"]["status"], "approved");
}

#[test]
fn one_shot_commands_leave_an_empty_postgresql_database_empty() {
    let Some(url) = fresh_database("countersign_one_shot") else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    for args in [
        vec!["keys", "--database", &url, "list"],
        vec![
            "keys",
            "--database",
            &url,
            "add",
            "--kind",
            "reviewer",
            "--role",
            "reviewer",
        ],
        vec!["audit", "--database", &url, "verify"],
        vec!["webhooks", "--database", &url],
    ] {
        let output = std::process::Command::new(crate::support::binary())
            .args(&args)
            .env("COUNTERSIGN_DATA", data.path())
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&output.stderr);
        assert_ne!(output.status.code(), Some(0), "{args:?}: {said}");
        assert!(
            said.contains("no Countersign database at postgres://"),
            "{args:?}: {said}"
        );
    }
    let tables = std::process::Command::new("psql")
        .args([
            url.as_str(),
            "-At",
            "-c",
            "SELECT COUNT(*) FROM pg_tables WHERE schemaname = 'public'",
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&tables.stdout).trim(), "0");
    // Once `serve` has made it, the same command works.
    drop(Server::start_on(data.path(), Some(&url), &[]));
    let output = std::process::Command::new(crate::support::binary())
        .args(["keys", "--database", &url, "list"])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn two_instances_share_one_database_without_double_decisions() {
    let Some(url) = fresh_database("countersign_shared") else {
        return;
    };
    let (data_a, data_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = Server::start_on(data_a.path(), Some(&url), &[]);
    let b = Server::start_on(data_b.path(), Some(&url), &[]);
    let key = a.new_key("reviewer");
    let agent_key = b.agent.clone();
    assert_eq!(
        b.client(&agent_key)
            .post("/reviews", &review(20, 2, false))
            .status,
        201
    );
    let id = confirm_id(20);
    // 8 reviewers, half on each instance, decide at once: exactly one wins.
    let replies: Vec<u16> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let client = if i % 2 == 0 {
                    a.client(&key)
                } else {
                    b.client(&key)
                };
                let id = id.clone();
                scope.spawn(move || {
                    client
                        .decide(
                            &id,
                            &format!("race-{i}"),
                            &json!({"status": "approved", "decided_by_role": "reviewer"}),
                        )
                        .status
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(
        replies.iter().filter(|s| **s == 200).count(),
        1,
        "{replies:?}"
    );
    assert_eq!(
        replies.iter().filter(|s| **s == 409).count(),
        7,
        "{replies:?}"
    );
    // Either instance reads the one decision, and an agent waiting on A sees B's decision.
    let on_a: Client = a.client(&key);
    assert_eq!(
        on_a.get(&format!("/reviews/{id}")).body["review"]["confirm"]["decisions"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        b.client(&agent_key)
            .post("/reviews", &review(21, 2, false))
            .status,
        201
    );
    let waiter = {
        let agent = a.client(&agent_key);
        std::thread::spawn(move || {
            agent.get(&format!("/reviews/{}/outcome?wait=20", confirm_id(21)))
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(
        b.client(&key)
            .decide(
                &confirm_id(21),
                "b-1",
                &json!({"status": "approved", "decided_by_role": "reviewer"})
            )
            .status,
        200
    );
    let outcome = waiter.join().unwrap();
    assert_eq!(outcome.body["outcome"], "APPROVED", "{}", outcome.text);
}

#[test]
fn tool_calls_grants_expiry_and_tokens_work_on_postgresql() {
    let Some(url) = fresh_database("countersign_tools") else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let server = Server::start_on(data.path(), Some(&url), &[]);
    let agent = server.client(&server.agent);
    let reviewer = server.client(&server.reviewer);
    let ask = |args: serde_json::Value, expires: Option<String>| {
        let mut body = crate::support::tool_call(args);
        body["toolCall"]["name"] = json!("rotate_key");
        if let Some(at) = expires {
            body["expiresAt"] = json!(at);
        }
        let reply = agent.post("/tool-calls", &body);
        assert_eq!(reply.status, 201, "{}", reply.text);
        reply.body["outcome"].clone()
    };
    // A session grant approves the same call again, with its own token, once.
    let first = ask(json!({"key": "k1"}), None);
    let id = first["confirm_id"].as_str().unwrap();
    let granted = reviewer.decide(id, "pg-grant", &json!({"status": "approved", "decided_by_role": "reviewer", "tool_call": {"mode": "scope", "scope": "session"}}));
    assert_eq!(granted.status, 200, "{}", granted.text);
    let again = ask(json!({"key": "k1"}), None);
    assert_eq!(again["outcome"], "APPROVED");
    let token = again["token"]["tokenId"].clone();
    let path = format!("/reviews/{}/redeem", again["confirm_id"].as_str().unwrap());
    let call = json!({"tokenId": token, "toolCall": {"name": "rotate_key", "args": {"key": "k1"}}});
    assert_eq!(agent.post(&path, &call).status, 200);
    assert_eq!(agent.post(&path, &call).code(), "token_used");
    // The server closes an expired request by itself.
    let soon = chrono::Utc::now() + chrono::Duration::seconds(1);
    let expiring = ask(
        json!({"key": "k2"}),
        Some(soon.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
    );
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let closed = reviewer.get(&format!(
        "/reviews/{}",
        expiring["confirm_id"].as_str().unwrap()
    ));
    assert_eq!(closed.body["review"]["confirm"]["status"], "cancelled");
    assert_eq!(closed.body["outcome"]["kind"], "expired");
}

#[test]
fn a_search_of_several_words_probes_with_one_and_finds_the_whole_text_only() {
    let Some(url) = fresh_database("countersign_search") else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let server = Server::start_on(data.path(), Some(&url), &[]);
    let agent = server.client(&server.agent);
    let reviewer = server.client(&server.reviewer);
    let titles = [
        "Rotate the zebra keys",
        "Zebra keys: rotate later",
        "Rotate keys",
        "rotate THE ZEBRA KEYS now",
    ];
    for (n, title) in (1..).zip(titles) {
        let mut body = review(n, 2, false);
        body["target"]["plan"]["title"] = json!(title);
        assert_eq!(agent.post("/reviews", &body).status, 201);
    }
    // Whichever word probes the index, the whole text decides, in any case.
    assert_eq!(
        found(&reviewer, "the zebra keys"),
        vec![confirm_id(1), confirm_id(4)]
    );
    assert_eq!(found(&reviewer, "zebra keys: rot"), vec![confirm_id(2)]);
    assert_eq!(found(&reviewer, "keys now"), vec![confirm_id(4)]);
    assert_eq!(found(&reviewer, "zebra").len(), 3);
    assert!(found(&reviewer, "zebra 100%_").is_empty());
}

/// The TLS PostgreSQL `scripts/postgres.sh start-tls DIR` made (its folder in
/// `COUNTERSIGN_TEST_POSTGRES_TLS`): TLS only, password authentication, a
/// certificate for `localhost` signed by DIR/ca.pem.
struct TlsPostgres {
    dir: std::path::PathBuf,
    port: String,
    password: String,
}

impl TlsPostgres {
    fn get() -> Option<TlsPostgres> {
        let Ok(dir) = std::env::var("COUNTERSIGN_TEST_POSTGRES_TLS") else {
            assert!(
                std::env::var("COUNTERSIGN_REQUIRE_POSTGRES").is_err(),
                "COUNTERSIGN_REQUIRE_POSTGRES is set but COUNTERSIGN_TEST_POSTGRES_TLS is not"
            );
            return None;
        };
        let dir = std::path::PathBuf::from(dir);
        Some(TlsPostgres {
            port: std::fs::read_to_string(dir.join("port"))
                .unwrap()
                .trim()
                .to_owned(),
            password: std::fs::read_to_string(dir.join("password")).unwrap(),
            dir,
        })
    }

    /// An address with the password percent-encoded, as the operator's guide says.
    fn url(&self, host: &str, query: &str) -> String {
        let password: String = form_urlencoded::byte_serialize(self.password.as_bytes()).collect();
        let query = query.replace("CA", &self.dir.join("ca.pem").display().to_string());
        let query = query.replace(
            "OTHER",
            &self.dir.join("other-ca.pem").display().to_string(),
        );
        format!(
            "postgres://postgres:{password}@{host}:{}/postgres?{query}",
            self.port
        )
    }
}

/// `countersign keys list` on a database address, with extra environment:
/// its exit code and what it printed on stderr.
fn open_database(url: &str, env: &[(&str, &str)]) -> (i32, String) {
    let data = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(crate::support::binary())
        .args(["keys", "--data"])
        .arg(data.path())
        .args(["--database", url, "list"])
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    // These databases are empty: connecting ends at "holds no Countersign
    // tables", which is as far as a one-shot command goes on one.
    let connected = stderr.contains("holds no Countersign tables");
    (
        if connected {
            0
        } else {
            output.status.code().unwrap()
        },
        stderr,
    )
}

#[test]
fn postgresql_over_tls_connects_only_to_the_certified_host() {
    let Some(pg) = TlsPostgres::get() else { return };
    let data = tempfile::tempdir().unwrap();
    let server = Server::start_on(
        data.path(),
        Some(&pg.url("localhost", "sslmode=verify-full&sslrootcert=CA")),
        &[],
    );
    assert_eq!(
        server.anonymous().get("/health").body["database"],
        "postgres"
    );
    drop(server);

    let refused = [
        // The certificate names localhost, not 127.0.0.1.
        (
            "127.0.0.1",
            "sslmode=verify-full&sslrootcert=CA",
            "not valid for name \"127.0.0.1\"",
        ),
        // An authority that signed nothing of this server's.
        (
            "localhost",
            "sslmode=verify-ca&sslrootcert=OTHER",
            "UnknownIssuer",
        ),
        ("localhost", "sslmode=verify-full", "UnknownIssuer"),
        // The server takes TLS connections only.
        ("localhost", "sslmode=disable", "no encryption"),
    ];
    for (host, query, why) in refused {
        let url = pg.url(host, query);
        let (code, stderr) = open_database(&url, &[]);
        assert_eq!(code, 2, "{url} connected");
        assert!(stderr.contains(why), "{url}: {stderr}");
        assert!(
            !stderr.contains(&pg.password),
            "the password was printed: {stderr}"
        );
        assert!(stderr.contains("postgres:***@"), "{stderr}");
    }
    let (code, stderr) = open_database(
        &pg.url("localhost", "sslmode=verify-ca&sslrootcert=CA"),
        &[],
    );
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn postgresql_passwords_come_percent_encoded_or_from_the_pg_variables() {
    let Some(pg) = TlsPostgres::get() else { return };
    let (code, stderr) = open_database(&pg.url("localhost", "sslmode=require"), &[]);
    assert_eq!(code, 0, "{stderr}");
    let ca = pg.dir.join("ca.pem").display().to_string();
    let variables = [
        ("PGHOST", "localhost"),
        ("PGPORT", pg.port.as_str()),
        ("PGUSER", "postgres"),
        ("PGPASSWORD", pg.password.as_str()),
        ("PGSSLMODE", "verify-full"),
        ("PGSSLROOTCERT", ca.as_str()),
    ];
    let (code, stderr) = open_database("postgres://", &variables);
    assert_eq!(code, 0, "{stderr}");
    let wrong = pg.url("localhost", "sslmode=require").replace(
        &form_urlencoded::byte_serialize(pg.password.as_bytes()).collect::<String>(),
        "wrong",
    );
    let (code, stderr) = open_database(&wrong, &[]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("password authentication failed"),
        "{stderr}"
    );
}

#[test]
fn sslmode_require_refuses_a_postgresql_without_tls() {
    let Some(url) = fresh_database("countersign_no_tls") else {
        return;
    };
    let (code, stderr) = open_database(&format!("{url}?sslmode=require"), &[]);
    assert_eq!(code, 2, "connected without TLS");
    assert!(stderr.contains("server does not support TLS"), "{stderr}");
    assert!(stderr.contains("turn on `ssl`"), "{stderr}");
    // Without sslmode the driver prefers TLS and falls back to plain text,
    // as libpq does.
    assert_eq!(open_database(&url, &[]).0, 0);
}
