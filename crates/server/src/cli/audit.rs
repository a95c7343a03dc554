//! `countersign audit verify|export`: walk the database's audit chain and
//! name the first entry that does not follow; write the chain as NDJSON
//! ending with a checkpoint of its head signed with the server's key.

use super::CommandError;
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

async fn walk(database: &str) -> Result<Verdict, CommandError> {
    let db = Db::open_existing(database).await?;
    Ok(db.verify_audit().await?)
}

/// `audit export`: every entry as one JSON line (`seq`, `body`, `hash`),
/// then `{"checkpoint": {seq, hash, at}, "signature", "public_key"}`. A
/// broken chain is not exported (a signed checkpoint would vouch for it).
pub async fn export(
    database: &str,
    signer: &Signer,
    out: &mut impl Write,
) -> Result<(), CommandError> {
    let db = Db::open_existing(database).await?;
    let (entries, head) = match db.verify_audit().await? {
        Verdict::Intact { entries, head } => (entries, head),
        Verdict::Broken { why, .. } => return Err(CommandError::ChainBroken(why)),
    };
    let mut after = 0;
    loop {
        let page = db.audit_entries(after).await?;
        let Some(last) = page.last() else { break };
        after = last.seq;
        for entry in page.iter().filter(|e| e.seq <= entries) {
            let body: serde_json::Value = serde_json::from_str(&entry.body)
                .map_err(|e| CommandError::Unreadable(format!("audit entry {}: {e}", entry.seq)))?;
            writeln!(
                out,
                "{}",
                json!({"seq": entry.seq, "body": body, "hash": entry.hash})
            )?;
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
    let signature = signer.sign_json(&checkpoint)?;
    writeln!(
        out,
        "{}",
        json!({"checkpoint": checkpoint, "signature": signature, "public_key": signer.public_key()})
    )?;
    Ok(out.flush()?)
}
