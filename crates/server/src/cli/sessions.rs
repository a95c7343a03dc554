//! `countersign sessions list|revoke`: the signed-in reviewers' sessions, for
//! an operator (a person sees and ends their own in Settings › Your sessions).

use super::CommandError;
use crate::store::Db;
use std::io::Write;

/// `countersign sessions ...`: what to do with sessions.
#[derive(Debug, clap::Subcommand)]
pub enum SessionsCommand {
    /// List every session, newest first: live ones, and ended ones with why.
    List,
    /// End a session at once (its next request is 401).
    Revoke {
        /// The session id (`ses_...`).
        id: String,
    },
}

/// Runs a sessions command against the database.
pub async fn run(
    database: &str,
    command: SessionsCommand,
    out: &mut impl Write,
) -> Result<(), CommandError> {
    let db = Db::open_existing(database).await?;
    match command {
        SessionsCommand::List => {
            let sessions = db.sessions(None).await?;
            if sessions.is_empty() {
                writeln!(
                    out,
                    "no sessions: nobody has signed in (serve --sign-in FILE)"
                )?;
            }
            for s in sessions {
                let state = match (&s.ended_at, &s.ended_why) {
                    (Some(at), why) => format!("ended {at} ({})", why.as_deref().unwrap_or("-")),
                    (None, _) => format!("live until {}", s.expires_at),
                };
                writeln!(
                    out,
                    "{}\t{} <{}>\t{} at {}\troles {}\tsince {}\t{state}",
                    s.id,
                    s.person.label(),
                    s.person.email.as_deref().unwrap_or("-"),
                    s.person.subject,
                    s.person.issuer,
                    if s.roles.is_empty() {
                        "-".to_owned()
                    } else {
                        s.roles.join(",")
                    },
                    s.created_at,
                )?;
            }
        }
        SessionsCommand::Revoke { id } => {
            if db.end_session(&id, "revoked by an operator").await? {
                writeln!(out, "ended {id}")?;
            } else {
                return Err(CommandError::Refused(format!(
                    "no live session {id} (see `countersign sessions list`)"
                )));
            }
        }
    }
    Ok(())
}
