//! `countersign audit verify|export`: walk the database's audit chain and
//! name the first entry that does not follow; write the chain as NDJSON
//! ending with a checkpoint of its head signed with the server's key.

use crate::signing::Signer;
use crate::store::audit::Verdict;
use crate::store::Db;
use serde_json::json;
use std::io::Write;
use std::process::ExitCode;

/// `audit verify`: 0 intact, 1 broken (naming the first entry), 2 the
/// database cannot be read.
pub async fn verify(database: &str, out: &mut impl Write) -> ExitCode {
    match walk(database).await {
        Ok(Verdict::Intact { entries, head }) => {
            let _ = writeln!(out, "audit chain intact: {entries} entries, head {head}");
            ExitCode::SUCCESS
        }
        Ok(Verdict::Broken { why, .. }) => {
            let _ = writeln!(out, "audit chain BROKEN: {why}");
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("countersign: {e}");
            ExitCode::from(2)
        }
    }
}

async fn walk(database: &str) -> Result<Verdict, String> {
    let db = Db::open_existing(database)
        .await
        .map_err(|e| e.to_string())?;
    db.verify_audit().await.map_err(|e| e.to_string())
}

/// `audit export`: every entry as one JSON line (`seq`, `body`, `hash`),
/// then `{"checkpoint": {seq, hash, at}, "signature", "public_key"}`. A
/// broken chain is not exported (a signed checkpoint would vouch for it).
pub async fn export(database: &str, signer: &Signer, out: &mut impl Write) -> ExitCode {
    match write_export(database, signer, out).await {
        Ok(()) => ExitCode::SUCCESS,
        Err((code, e)) => {
            eprintln!("countersign: {e}");
            ExitCode::from(code)
        }
    }
}

async fn write_export(
    database: &str,
    signer: &Signer,
    out: &mut impl Write,
) -> Result<(), (u8, String)> {
    let failed = |e: String| (2, e);
    let db = Db::open_existing(database)
        .await
        .map_err(|e| failed(e.to_string()))?;
    let (entries, head) = match db.verify_audit().await.map_err(|e| failed(e.to_string()))? {
        Verdict::Intact { entries, head } => (entries, head),
        Verdict::Broken { why, .. } => {
            return Err((1, format!("not exported: the audit chain is broken: {why}")))
        }
    };
    let mut after = 0;
    loop {
        let page = db
            .audit_entries(after)
            .await
            .map_err(|e| failed(e.to_string()))?;
        let Some(last) = page.last() else { break };
        after = last.seq;
        for entry in page.iter().filter(|e| e.seq <= entries) {
            let body: serde_json::Value =
                serde_json::from_str(&entry.body).map_err(|e| failed(e.to_string()))?;
            writeln!(
                out,
                "{}",
                json!({"seq": entry.seq, "body": body, "hash": entry.hash})
            )
            .map_err(|e| failed(e.to_string()))?;
        }
        if after >= entries {
            break;
        }
    }
    let checkpoint = json!({
        "seq": entries,
        "hash": head,
        "at": crate::store::stored_time(chrono::Utc::now()),
    });
    let signature = signer.sign_json(&checkpoint).map_err(failed)?;
    writeln!(
        out,
        "{}",
        json!({"checkpoint": checkpoint, "signature": signature, "public_key": signer.public_key()})
    )
    .and_then(|()| out.flush())
    .map_err(|e| failed(e.to_string()))
}
