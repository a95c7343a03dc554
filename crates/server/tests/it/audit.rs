//! The audit chain through the real server and `countersign audit`: every
//! change appends an entry; rows edited, deleted or reordered directly in
//! the database (SQLite, and PostgreSQL when configured) are named by
//! `audit verify`; `audit export` ends with a checkpoint signed by the
//! server's key.

use crate::support::{binary, confirm_id, fresh_database, review, Server};
use base64::Engine;
use ed25519_dalek::{Signature, VerifyingKey};
use serde_json::{json, Value};
use sqlx::Row;
use std::path::PathBuf;
use std::process::{Command, Output};

/// Where a (stopped) server kept its data.
struct Place {
    data: PathBuf,
    database: Option<String>,
}

impl Place {
    fn of(server: &Server) -> Place {
        Place {
            data: server.data.clone(),
            database: server.database.clone(),
        }
    }

    /// Runs `countersign audit ...` on its database.
    fn audit(&self, args: &[&str]) -> Output {
        let mut command = Command::new(binary());
        command.arg("audit").arg("--data").arg(&self.data);
        if let Some(url) = &self.database {
            command.args(["--database", url]);
        }
        command.args(args).output().unwrap()
    }
}

fn said(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Runs SQL statements straight on the database, as someone with its
/// password would, around the server.
struct Tamper {
    runtime: tokio::runtime::Runtime,
    pool: sqlx::AnyPool,
}

impl Tamper {
    fn open(place: &Place) -> Tamper {
        sqlx::any::install_default_drivers();
        let url = place
            .database
            .clone()
            .unwrap_or_else(|| format!("sqlite://{}", place.data.join("countersign.db").display()));
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let pool = runtime
            .block_on(sqlx::AnyPool::connect(&url))
            .expect("open the database");
        Tamper { runtime, pool }
    }

    fn run(&self, sql: &str) {
        self.runtime
            .block_on(sqlx::query(sql).execute(&self.pool))
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    fn entry(&self, seq: i64) -> (String, String) {
        let row = self
            .runtime
            .block_on(
                sqlx::query("SELECT body, hash FROM audit_log WHERE seq = $1")
                    .bind(seq)
                    .fetch_one(&self.pool),
            )
            .unwrap();
        (row.get(0), row.get(1))
    }

    fn set_entry(&self, seq: i64, (body, hash): &(String, String)) {
        self.runtime
            .block_on(
                sqlx::query("UPDATE audit_log SET body = $1, hash = $2 WHERE seq = $3")
                    .bind(body)
                    .bind(hash)
                    .bind(seq)
                    .execute(&self.pool),
            )
            .unwrap();
    }
}

/// Changes of every kind: created (demo seed and three more), decided,
/// resubmitted, a tool call approved with a session grant, redeemed.
fn make_history(server: &Server) {
    let agent = server.client(&server.agent);
    let reviewer = server.client(&server.reviewer);
    for n in 1..=3 {
        assert_eq!(agent.post("/reviews", &review(n, 3, false)).status, 201);
    }
    let rejected = reviewer.decide(
        &confirm_id(1),
        "r1",
        &json!({"status": "rejected", "decided_by_role": "reviewer", "reason": "smaller steps"}),
    );
    assert_eq!(rejected.status, 200, "{}", rejected.text);
    let resubmitted = agent.post(
        &format!("/reviews/{}/resubmit", confirm_id(1)),
        &json!({"by_role": "deploy-agent", "plan": review(1, 2, false)["target"]["plan"]}),
    );
    assert_eq!(resubmitted.status, 200, "{}", resubmitted.text);
    assert_eq!(
        reviewer
            .decide(
                &confirm_id(2),
                "a2",
                &json!({"status": "approved", "decided_by_role": "reviewer"})
            )
            .status,
        200
    );
    let asked = agent.post(
        "/tool-calls",
        &crate::support::tool_call(json!({"amount": 5})),
    );
    let id = asked.body["outcome"]["confirm_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let approved = reviewer.decide(
        &id,
        "t1",
        &json!({"status": "approved", "decided_by_role": "reviewer", "tool_call": {"mode": "scope", "scope": "session"}}),
    );
    assert_eq!(approved.status, 200, "{}", approved.text);
    let token = &approved.body["outcome"]["token"]["tokenId"];
    let redeemed = agent.post(
        &format!("/reviews/{id}/redeem"),
        &json!({"tokenId": token, "toolCall": {"name": "wire_transfer", "args": {"amount": 5}}}),
    );
    assert_eq!(redeemed.status, 200, "{}", redeemed.text);

    // Who may decide: a key minted and revoked by the CLI, a device paired
    // and unpaired through the API.
    let (code, out, err) = server.keys(&["add", "--kind", "reviewer", "--role", "auditor"]);
    assert_eq!(code, 0, "{err}");
    let minted = out
        .split("(key ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap();
    let (code, _, err) = server.keys(&["revoke", minted]);
    assert_eq!(code, 0, "{err}");
    let pairing = reviewer.post("/pairings", &json!({}));
    assert_eq!(pairing.status, 201, "{}", pairing.text);
    let paired = server.anonymous().post(
        "/pairings/redeem",
        &json!({"code": pairing.body["code"], "device": "phone"}),
    );
    assert_eq!(paired.status, 201, "{}", paired.text);
    let device = paired.body["key_id"].as_str().unwrap();
    let unpaired = reviewer.post(&format!("/devices/{device}/revoke"), &json!({}));
    assert_eq!(unpaired.status, 200, "{}", unpaired.text);
}

/// Verifies, exports, then breaks the chain in each way and restores it.
fn check_chain(server: Server) {
    make_history(&server);
    let place = Place::of(&server);
    server.crash(); // nothing may write while the rows are edited
    let intact = place.audit(&["verify"]);
    assert_eq!(intact.status.code(), Some(0), "{}", said(&intact));
    let entries: i64 = said(&intact)
        .split("intact: ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{}", said(&intact)));
    assert!(entries > 10, "{}", said(&intact));
    check_export(&place, entries);

    let db = Tamper::open(&place);
    let broken = |expected: &str| {
        let verdict = place.audit(&["verify"]);
        assert_eq!(verdict.status.code(), Some(1), "{}", said(&verdict));
        assert!(
            said(&verdict).contains(expected),
            "expected `{expected}`: {}",
            said(&verdict)
        );
        let export = place.audit(&["export"]);
        assert_eq!(
            export.status.code(),
            Some(1),
            "a broken chain is not exported"
        );
    };
    let k = entries / 2;
    let (entry_k, next) = (db.entry(k), db.entry(k + 1));

    // An entry's body edited (its hash left as it was).
    db.set_entry(
        k,
        &(entry_k.0.replace("review.", "review.x"), entry_k.1.clone()),
    );
    broken(&format!("entry {k} does not follow from entry {}", k - 1));
    // Its hash recomputed too: the next entry no longer follows.
    db.set_entry(k, &(entry_k.0.clone(), "0".repeat(64)));
    broken(&format!("entry {k} does not follow"));
    db.set_entry(k, &entry_k);
    // An entry deleted.
    db.run(&format!("DELETE FROM audit_log WHERE seq = {k}"));
    broken(&format!("entry {k} is missing"));
    db.run(&format!(
        "INSERT INTO audit_log (seq, body, hash) VALUES ({k}, '{}', '{}')",
        entry_k.0.replace('\'', "''"),
        entry_k.1
    ));
    // Two entries swapped.
    db.set_entry(k, &next);
    db.set_entry(k + 1, &entry_k);
    broken(&format!("entry {k} does not follow"));
    db.set_entry(k, &entry_k);
    db.set_entry(k + 1, &next);
    // A decision flipped in the review itself, the chain left alone.
    let id = confirm_id(1);
    db.run(&format!(
        "UPDATE reviews SET doc = replace(doc, 'smaller steps', 'looks fine') WHERE id = '{id}'"
    ));
    broken(&format!("review {id} as stored is not the document"));
    db.run(&format!(
        "UPDATE reviews SET doc = replace(doc, 'looks fine', 'smaller steps') WHERE id = '{id}'"
    ));

    // A revoked key brought back, or given a role, behind the chain's back.
    db.run("CREATE TABLE kept_key AS SELECT * FROM api_keys WHERE roles = '[\"auditor\"]'");
    db.run("UPDATE api_keys SET revoked_at = NULL WHERE roles = '[\"auditor\"]'");
    broken("as stored is not the document its last audit entry");
    db.run("UPDATE api_keys SET revoked_at = '2026-01-01T00:00:00.000000Z' WHERE roles = '[\"auditor\"]'");
    broken("as stored is not the document its last audit entry");
    // A key or a review deleted behind the chain's back.
    db.run("DELETE FROM api_keys WHERE roles = '[\"auditor\"]'");
    broken("is no longer stored: it was deleted outside Countersign");
    db.run("INSERT INTO api_keys (id, kind, roles, label, hash, created_at) VALUES ('key_forged', 'reviewer', '[\"reviewer\"]', 'x', 'x', '2026-01-01T00:00:00.000000Z')");
    broken("key key_forged is stored but no audit entry records it");
    db.run("DELETE FROM api_keys WHERE id = 'key_forged'");
    db.run("INSERT INTO api_keys SELECT * FROM kept_key");
    db.run(&format!(
        "CREATE TABLE kept_review AS SELECT * FROM reviews WHERE id = '{id}'"
    ));
    db.run(&format!("DELETE FROM reviews WHERE id = '{id}'"));
    broken(&format!("review {id}, recorded by audit entry"));
    db.run("INSERT INTO reviews SELECT * FROM kept_review");

    let restored = place.audit(&["verify"]);
    assert_eq!(restored.status.code(), Some(0), "{}", said(&restored));
}

/// `audit export`: every entry, then the head signed with the server's key.
fn check_export(place: &Place, entries: i64) {
    let exported = place.audit(&["export"]);
    assert_eq!(exported.status.code(), Some(0), "{}", said(&exported));
    let lines: Vec<Value> = String::from_utf8(exported.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len() as i64, entries + 1);
    let kinds: Vec<&str> = lines[..lines.len() - 1]
        .iter()
        .map(|l| l["body"]["kind"].as_str().unwrap())
        .collect();
    for kind in [
        "review.created",
        "review.decided",
        "review.resubmitted",
        "review.redeemed",
        "grant.made",
        "key.minted",
        "key.revoked",
        "device.paired",
        "device.revoked",
    ] {
        assert!(kinds.contains(&kind), "no {kind} in {kinds:?}");
    }
    // A grant is written by the decision that made it, in its transaction:
    // its entry follows the decision's, at the same instant.
    let grants = (0..kinds.len()).filter(|&i| kinds[i] == "grant.made");
    for i in grants {
        assert_eq!(kinds[i - 1], "review.decided", "{kinds:?}");
        assert!(lines[i]["body"]["at"].is_string(), "{}", lines[i]);
        assert_eq!(lines[i]["body"]["at"], lines[i - 1]["body"]["at"]);
    }
    let last = &lines[lines.len() - 1];
    assert_eq!(last["checkpoint"]["seq"], json!(entries));
    assert_eq!(last["checkpoint"]["hash"], lines[lines.len() - 2]["hash"]);
    let b64 = base64::engine::general_purpose::STANDARD;
    let decode = |field: &str| b64.decode(last[field].as_str().unwrap()).unwrap();
    let key: [u8; 32] = decode("public_key").try_into().unwrap();
    let signature: [u8; 64] = decode("signature").try_into().unwrap();
    let signed = serde_json_canonicalizer::to_string(&last["checkpoint"]).unwrap();
    VerifyingKey::from_bytes(&key)
        .unwrap()
        .verify_strict(signed.as_bytes(), &Signature::from_bytes(&signature))
        .expect("the checkpoint's signature verifies");
}

#[test]
fn edited_deleted_and_reordered_entries_are_named_on_sqlite() {
    let data = tempfile::tempdir().unwrap();
    check_chain(Server::start(data.path(), &[]));
}

#[test]
fn edited_deleted_and_reordered_entries_are_named_on_postgres() {
    let Some(url) = fresh_database("countersign_audit") else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    check_chain(Server::start_on(data.path(), Some(&url), &[]));
}

/// `countersign backup` while the server takes decisions; the copy, put in a
/// fresh data folder as the operator's guide says, starts a server that
/// holds every review and decision of the moment of the backup, whose audit
/// chain verifies, and whose receipts verify with the old public key.
#[test]
fn a_backup_taken_while_serving_restores_to_a_server_with_everything() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let (agent, reviewer) = (
        server.client(&server.agent),
        server.client(&server.reviewer),
    );
    let approve = json!({"status": "approved", "decided_by_role": "reviewer"});
    for n in 1..=20 {
        assert_eq!(agent.post("/reviews", &review(n, 2, false)).status, 201);
    }
    let counts =
        |reviewer: &crate::support::Client| reviewer.get("/reviews?limit=1").body["counts"].clone();
    let before = counts(&reviewer);
    // Decisions go on while the copy is taken.
    let deciding = std::thread::spawn({
        let reviewer = server.client(&server.reviewer);
        let approve = approve.clone();
        move || {
            for n in 1..=10 {
                let reply = reviewer.decide(&confirm_id(n), &format!("b-{n}"), &approve);
                assert_eq!(reply.status, 200, "{}", reply.text);
            }
        }
    });
    let backups = tempfile::tempdir().unwrap();
    let file = backups.path().join("countersign-backup.db");
    let backup = || {
        Command::new(binary())
            .args(["backup", "--data"])
            .arg(data.path())
            .arg(&file)
            .output()
            .unwrap()
    };
    let made = backup();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let said = String::from_utf8(made.stdout).unwrap();
    assert!(said.contains("signing-key.pem"), "{said}");
    deciding.join().unwrap();
    let again = backup();
    assert_eq!(again.status.code(), Some(2), "a backup never overwrites");
    let public_key = reviewer.get("/signing-key").body["public_key"].clone();
    drop(server);

    // Restore: the copy and its key in a new data folder, then start.
    let restored = tempfile::tempdir().unwrap();
    std::fs::copy(&file, restored.path().join("countersign.db")).unwrap();
    std::fs::copy(
        backups.path().join("countersign-backup.db.signing-key.pem"),
        restored.path().join("signing-key.pem"),
    )
    .unwrap();
    let verified = Command::new(binary())
        .args(["audit", "--data"])
        .arg(restored.path())
        .arg("verify")
        .output()
        .unwrap();
    assert!(
        verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stdout)
    );
    let server = Server::start(restored.path(), &[]);
    let reviewer = server.client(&server.reviewer);
    assert_eq!(reviewer.get("/signing-key").body["public_key"], public_key);
    // Everything committed before the copy is in it, whole: every review,
    // and of the ten decisions racing it, those that came first.
    let after = counts(&reviewer);
    let n = |counts: &Value, status: &str| counts[status].as_u64().unwrap();
    let total = |counts: &Value| {
        ["pending", "approved", "rejected", "cancelled"]
            .map(|s| n(counts, s))
            .iter()
            .sum::<u64>()
    };
    assert_eq!(total(&after), total(&before), "{after}");
    let decided = n(&after, "approved") - n(&before, "approved");
    assert!(
        decided <= 10 && n(&before, "pending") - n(&after, "pending") == decided,
        "{after}"
    );
    for n in 1..=20 {
        let got = reviewer.get(&format!("/reviews/{}", confirm_id(n)));
        assert_eq!(got.status, 200, "review {n} is in the backup");
    }
    println!("restored from a backup taken during 10 decisions: {decided} of them in it");
}
