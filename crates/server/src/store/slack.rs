//! Reviewers' Slack accounts: the codes sent to a Slack user to link their
//! account (only a hash is kept, each taken once), the links, and the live
//! session a linked person's click decides with.

use super::keys::{hash, random_hex};
use super::sessions::{session_of, Session, SELECT_SESSIONS};
use super::{audit, begin_write, stored_time, Db, DbError};
use countersign_domain::toolcall::CallHash;
use countersign_domain::wire::{SlackLink, SlackUser};
use countersign_domain::Person;
use sqlx::Row;

/// Why a link code was not taken.
#[derive(Debug, thiserror::Error)]
pub enum NotLinked {
    /// No code like it: never sent, used already, or mistyped.
    #[error("this link code is unknown or was used already: click a button in Slack again for a new one")]
    Unknown,
    /// The code is older than it may be.
    #[error(
        "this link code is more than 10 minutes old: click a button in Slack again for a new one"
    )]
    Expired,
    /// The person has never signed in here.
    #[error("nobody by this name has signed in here")]
    NoPerson,
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbError),
}

impl From<sqlx::Error> for NotLinked {
    fn from(e: sqlx::Error) -> NotLinked {
        NotLinked::Db(e.into())
    }
}

impl Db {
    /// A new code for `user` to link their account, valid until `expires_at`:
    /// its secret, to send to that user alone.
    pub async fn new_slack_link_code(
        &self,
        user: &SlackUser,
        expires_at: chrono::DateTime<chrono::Utc>,
    ) -> Result<String, DbError> {
        let code = format!("slk_{}", random_hex(24)?);
        let now = stored_time(chrono::Utc::now());
        let mut tx = begin_write(self.pool(), self.backend()).await?;
        sqlx::query("DELETE FROM slack_link_codes WHERE expires_at <= $1")
            .bind(&now)
            .execute(&mut *tx)
            .await?;
        sqlx::query("INSERT INTO slack_link_codes (hash, team_id, user_id, user_name, expires_at) VALUES ($1, $2, $3, $4, $5)")
            .bind(hash(&code))
            .bind(&user.team_id)
            .bind(&user.user_id)
            .bind(&user.user_name)
            .bind(stored_time(expires_at))
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(code)
    }

    /// The Slack user a live code was sent to, without taking it (for the
    /// desk to ask "link this account?").
    pub async fn slack_link_code(&self, code: &str) -> Result<Option<SlackUser>, DbError> {
        let row = sqlx::query("SELECT team_id, user_id, user_name FROM slack_link_codes WHERE hash = $1 AND expires_at > $2")
            .bind(hash(code))
            .bind(stored_time(chrono::Utc::now()))
            .fetch_optional(self.pool())
            .await?;
        row.as_ref().map(slack_user_of).transpose()
    }

    /// Takes `code` (once) and links its Slack user to `person`, replacing
    /// any link that user had; audited.
    pub async fn link_slack(&self, code: &str, person: &Person) -> Result<SlackLink, NotLinked> {
        let now = stored_time(chrono::Utc::now());
        let mut tx = begin_write(self.pool(), self.backend()).await?;
        let row = sqlx::query("DELETE FROM slack_link_codes WHERE hash = $1 RETURNING team_id, user_id, user_name, expires_at")
            .bind(hash(code))
            .fetch_optional(&mut *tx)
            .await?
            .ok_or(NotLinked::Unknown)?;
        let expires_at: String = row.try_get("expires_at")?;
        let user = slack_user_of(&row)?;
        if expires_at <= now {
            tx.commit().await?;
            return Err(NotLinked::Expired);
        }
        let person_id: String =
            sqlx::query_scalar("SELECT id FROM people WHERE issuer = $1 AND subject = $2")
                .bind(&person.issuer)
                .bind(&person.subject)
                .fetch_optional(&mut *tx)
                .await?
                .ok_or(NotLinked::NoPerson)?;
        sqlx::query("DELETE FROM slack_links WHERE team_id = $1 AND user_id = $2")
            .bind(&user.team_id)
            .bind(&user.user_id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("INSERT INTO slack_links (team_id, user_id, user_name, person_id, linked_at) VALUES ($1, $2, $3, $4, $5)")
            .bind(&user.team_id)
            .bind(&user.user_id)
            .bind(&user.user_name)
            .bind(&person_id)
            .bind(&now)
            .execute(&mut *tx)
            .await?;
        let link = SlackLink {
            user,
            linked_at: now.clone(),
        };
        audit::append(&mut tx, &[link_entry("slack.linked", &link, person, &now)]).await?;
        tx.commit().await?;
        Ok(link)
    }

    /// The Slack accounts linked to `person`, newest first.
    pub async fn slack_links(&self, person: &Person) -> Result<Vec<SlackLink>, DbError> {
        let rows = sqlx::query(
            "SELECT l.team_id, l.user_id, l.user_name, l.linked_at FROM slack_links l JOIN people p ON p.id = l.person_id
             WHERE p.issuer = $1 AND p.subject = $2 ORDER BY l.linked_at DESC, l.user_id",
        )
        .bind(&person.issuer)
        .bind(&person.subject)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|row| {
                Ok(SlackLink {
                    user: slack_user_of(row)?,
                    linked_at: row.try_get("linked_at")?,
                })
            })
            .collect()
    }

    /// Unlinks `team_id`/`user_id` from `person`; audited. False when it was not theirs.
    pub async fn unlink_slack(
        &self,
        person: &Person,
        team_id: &str,
        user_id: &str,
    ) -> Result<bool, DbError> {
        let now = stored_time(chrono::Utc::now());
        let mut tx = begin_write(self.pool(), self.backend()).await?;
        let row = sqlx::query(
            "DELETE FROM slack_links WHERE team_id = $1 AND user_id = $2
             AND person_id = (SELECT id FROM people WHERE issuer = $3 AND subject = $4)
             RETURNING team_id, user_id, user_name, linked_at",
        )
        .bind(team_id)
        .bind(user_id)
        .bind(&person.issuer)
        .bind(&person.subject)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(row) = row else {
            return Ok(false);
        };
        let link = SlackLink {
            user: slack_user_of(&row)?,
            linked_at: row.try_get("linked_at")?,
        };
        audit::append(
            &mut tx,
            &[link_entry("slack.unlinked", &link, person, &now)],
        )
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// The newest live session of the person `team_id`/`user_id` is linked
    /// to: `None` when they are not linked, `Some(None)` when they have no
    /// session that has not ended.
    pub async fn slack_session(
        &self,
        team_id: &str,
        user_id: &str,
    ) -> Result<Option<Option<Session>>, DbError> {
        let person_id: Option<String> = sqlx::query_scalar(
            "SELECT person_id FROM slack_links WHERE team_id = $1 AND user_id = $2",
        )
        .bind(team_id)
        .bind(user_id)
        .fetch_optional(self.pool())
        .await?;
        let Some(person_id) = person_id else {
            return Ok(None);
        };
        let row = sqlx::query(&format!(
            "{SELECT_SESSIONS} WHERE s.person_id = $1 AND s.ended_at IS NULL AND s.expires_at > $2
             ORDER BY s.validated_at DESC, s.id LIMIT 1"
        ))
        .bind(&person_id)
        .bind(stored_time(chrono::Utc::now()))
        .fetch_optional(self.pool())
        .await?;
        Ok(Some(row.as_ref().map(session_of).transpose()?))
    }
}

fn slack_user_of(row: &sqlx::any::AnyRow) -> Result<SlackUser, DbError> {
    Ok(SlackUser {
        team_id: row.try_get("team_id")?,
        user_id: row.try_get("user_id")?,
        user_name: row.try_get("user_name")?,
    })
}

/// The audit entry of a link made or removed: who, which Slack user, when.
fn link_entry(kind: &'static str, link: &SlackLink, person: &Person, at: &str) -> audit::Entry {
    audit::Entry {
        kind,
        subject: format!("{}/{}", link.user.team_id, link.user.user_id),
        subject_type: "slack_link",
        doc_sha256: CallHash::of_canonical(
            &serde_json::json!({"slack": link, "person": person}).to_string(),
        ),
        at: at.to_owned(),
    }
}
