//! `countersign keys add|list|revoke`: manage the API keys in the database.

use crate::db::keys::KeyKind;
use crate::db::Db;
use crate::limits::Rate;
use std::io::Write;

/// What to do with keys.
pub enum KeysCommand {
    /// Mint a key and print its secret once.
    Add {
        /// Agent or reviewer.
        kind: KeyKind,
        /// Roles a reviewer key may sign as.
        roles: Vec<String>,
        /// Who it is for.
        label: String,
        /// Its own request rate (else its kind's default).
        rate: Option<Rate>,
        /// The person or team it belongs to.
        owner: Option<String>,
    },
    /// Print every key (never a secret).
    List,
    /// Revoke a key by id.
    Revoke {
        /// The key's id.
        id: String,
    },
}

/// Runs a keys command against the database; errors are for the user.
pub async fn run(database: &str, command: KeysCommand, out: &mut impl Write) -> Result<(), String> {
    let db = Db::open(database).await.map_err(|e| e.to_string())?;
    let io = |e: std::io::Error| e.to_string();
    match command {
        KeysCommand::Add {
            kind,
            roles,
            label,
            rate,
            owner,
        } => {
            if kind == KeyKind::Reviewer && roles.is_empty() {
                return Err("a reviewer key needs at least one --role it may sign as".into());
            }
            if kind == KeyKind::Agent && !roles.is_empty() {
                return Err("agent keys do not sign decisions: leave out --role".into());
            }
            if owner.as_deref().is_some_and(|o| o.trim().is_empty()) {
                return Err("--owner is empty: name the person or team the key belongs to".into());
            }
            let minted = db
                .add_key(kind, &roles, &label, rate, owner.as_deref().map(str::trim))
                .await
                .map_err(|e| e.to_string())?;
            writeln!(out, "{}", minted.secret).map_err(io)?;
            writeln!(
                out,
                "(key {} — the secret above is shown only now; store it safely)",
                minted.key.id
            )
            .map_err(io)?;
        }
        KeysCommand::List => {
            let keys = db.keys().await.map_err(|e| e.to_string())?;
            if keys.is_empty() {
                writeln!(out, "no keys yet: add one with `countersign keys add`").map_err(io)?;
            }
            for key in keys {
                writeln!(
                    out,
                    "{}\t{}\t{}\t{}\trate {}\tcreated {}\t{}\towner {}",
                    key.id,
                    key.kind.as_str(),
                    if key.roles.is_empty() {
                        "-".to_owned()
                    } else {
                        key.roles.join(",")
                    },
                    key.label,
                    key.rate
                        .map_or_else(|| "default".to_owned(), |rate| rate.to_string()),
                    key.created_at,
                    key.revoked_at
                        .map(|at| format!("revoked {at}"))
                        .unwrap_or_else(|| "active".into()),
                    key.owner.as_deref().unwrap_or("-")
                )
                .map_err(io)?;
            }
        }
        KeysCommand::Revoke { id } => {
            if db.revoke_key(&id).await.map_err(|e| e.to_string())? {
                writeln!(out, "revoked {id}").map_err(io)?;
            } else {
                return Err(format!("no active key {id} (see `countersign keys list`)"));
            }
        }
    }
    Ok(())
}
