//! `countersign keys add|list|revoke|signing-key`: manage the API keys in the
//! database, and show the public key receipts are signed with.

use super::CommandError;
use crate::rate::Rate;
use crate::signing::Signer;
use crate::store::keys::KeyKind;
use crate::store::Db;
use std::io::Write;
use std::path::Path;

/// `countersign keys ...`: what to do with keys.
#[derive(Debug, clap::Subcommand)]
pub enum KeysCommand {
    /// Mint a key; its secret is printed once.
    Add {
        /// `agent` or `reviewer`.
        #[arg(long, value_enum)]
        kind: KeyKind,
        /// A `decided_by_role` a reviewer key may sign as (repeatable).
        #[arg(long = "role")]
        roles: Vec<String>,
        /// Who or what the key is for.
        #[arg(long, default_value = "")]
        label: String,
        /// Its own request rate instead of its kind's default: <count>/s or
        /// <count>/min, optionally with a burst size (20/s,200), or none.
        #[arg(long, value_name = "RATE")]
        rate: Option<Rate>,
        /// The person or team the key belongs to: policies keep an agent's
        /// owner from approving its own requests.
        #[arg(long)]
        owner: Option<String>,
    },
    /// List the keys (never their secrets).
    List,
    /// Revoke a key by its id.
    Revoke {
        /// The key id (`key_...`).
        id: String,
    },
    /// Print the public key that receipts are signed with (base64); the
    /// signing key must exist (`serve` makes it at first start).
    SigningKey,
}

/// Runs a keys command against the database (the signing key's at
/// `signing_key`); errors are for the user.
pub async fn run(
    database: &str,
    signing_key: &Path,
    command: KeysCommand,
    out: &mut impl Write,
) -> Result<(), CommandError> {
    let open = || Db::open_existing(database);
    match command {
        KeysCommand::SigningKey => {
            let signer = Signer::load(signing_key)?;
            writeln!(out, "{}", signer.public_key())?;
            eprintln!("(the public half of {})", signing_key.display());
        }
        KeysCommand::Add {
            kind,
            roles,
            label,
            rate,
            owner,
        } => {
            if kind == KeyKind::Reviewer && roles.is_empty() {
                return Err(CommandError::Refused(
                    "a reviewer key needs at least one --role it may sign as".into(),
                ));
            }
            if kind == KeyKind::Agent && !roles.is_empty() {
                return Err(CommandError::Refused(
                    "agent keys do not sign decisions: leave out --role".into(),
                ));
            }
            if owner.as_deref().is_some_and(|o| o.trim().is_empty()) {
                return Err(CommandError::Refused(
                    "--owner is empty: name the person or team the key belongs to".into(),
                ));
            }
            let minted = open()
                .await?
                .add_key(kind, &roles, &label, rate, owner.as_deref().map(str::trim))
                .await?;
            writeln!(out, "{}", minted.secret)?;
            writeln!(
                out,
                "(key {} — the secret above is shown only now; store it safely)",
                minted.key.id
            )?;
        }
        KeysCommand::List => {
            let keys = open().await?.keys().await?;
            if keys.is_empty() {
                writeln!(out, "no keys yet: add one with `countersign keys add`")?;
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
                )?;
            }
        }
        KeysCommand::Revoke { id } => {
            let revoked = open().await?.revoke_key(&id).await;
            if revoked? {
                writeln!(out, "revoked {id}")?;
            } else {
                return Err(CommandError::Refused(format!(
                    "no active key {id} (see `countersign keys list`)"
                )));
            }
        }
    }
    Ok(())
}
