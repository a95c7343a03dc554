//! Signed-in reviewers: the people an identity provider vouched for, their
//! sessions (only a hash of each cookie's secret is kept), and the sign-ins
//! under way, each taken once by its callback.

use super::keys::{hash, random_hex};
use super::{audit, begin_write, stored_time, Db, DbError};
use countersign_domain::toolcall::CallHash;
use countersign_domain::Person;
use serde::Serialize;
use sqlx::Row;

/// A sign-in sent to a provider, kept until its callback takes it.
pub struct Attempt {
    /// The `state` sent (stored hashed).
    pub state: String,
    /// The cookie value that binds it to the browser that started it (stored hashed).
    pub browser: String,
    /// The provider's configured id.
    pub provider: String,
    /// The nonce the ID token must carry.
    pub nonce: String,
    /// The PKCE verifier.
    pub verifier: String,
    /// When it stops working.
    pub expires_at: chrono::DateTime<chrono::Utc>,
}

/// A sign-in the callback took: what it needs to finish.
pub struct Taken {
    /// The hash of the browser cookie it was bound to.
    pub browser_hash: String,
    /// The provider's configured id.
    pub provider: String,
    /// The nonce the ID token must carry.
    pub nonce: String,
    /// The PKCE verifier.
    pub verifier: String,
    /// Whether it was still within its time.
    pub in_time: bool,
}

/// A session as stored (never with its secret).
#[derive(Debug, Clone, Serialize)]
pub struct Session {
    /// Public id (`ses_…`): decisions record it as their key id.
    pub id: String,
    /// The person signed in.
    pub person: Person,
    /// The provider's configured id.
    pub provider: String,
    /// The roles their groups gave at the last check.
    pub roles: Vec<String>,
    /// The token state-changing requests must carry (`X-Countersign-CSRF`).
    #[serde(skip)]
    pub csrf: String,
    /// To ask the provider again, when it gave one.
    #[serde(skip)]
    pub refresh_token: Option<String>,
    /// The browser that signed in, as it said.
    pub user_agent: Option<String>,
    /// When it started.
    pub created_at: String,
    /// When it ends, unless ended before.
    pub expires_at: String,
    /// When the provider last confirmed the person and their groups.
    pub validated_at: String,
    /// When it ended (signed out, revoked, or the provider ended it).
    pub ended_at: Option<String>,
    /// Why it ended.
    pub ended_why: Option<String>,
}

/// A new session and the secret its cookie carries (shown once).
pub struct Opened {
    /// The session.
    pub session: Session,
    /// The cookie's value.
    pub secret: String,
}

/// A session as the audit chain covers it: who, through which provider, with
/// which roles, from when to when, and how it ended (not when it was last
/// checked: bookkeeping).
pub(super) fn audited_session(s: &Session) -> String {
    serde_json::json!({
        "id": s.id,
        "issuer": s.person.issuer,
        "subject": s.person.subject,
        "provider": s.provider,
        "roles": s.roles,
        "created_at": s.created_at,
        "expires_at": s.expires_at,
        "ended_at": s.ended_at,
        "ended_why": s.ended_why,
    })
    .to_string()
}

fn session_entry(kind: &'static str, session: &Session, at: &str) -> audit::Entry {
    audit::Entry {
        kind,
        subject: session.id.clone(),
        subject_type: "session",
        doc_sha256: CallHash::of_canonical(&audited_session(session)),
        at: at.to_owned(),
    }
}

impl super::keys::ApiKey {
    /// What a session acts as: a reviewer key with the session's id and
    /// roles, for its person.
    pub fn of_session(session: &Session) -> super::keys::ApiKey {
        super::keys::ApiKey {
            id: session.id.clone(),
            kind: super::keys::KeyKind::Reviewer,
            roles: session.roles.clone(),
            label: "signed-in session".into(),
            created_at: session.created_at.clone(),
            revoked_at: None,
            rate: None,
            owner: None,
            paired_from: None,
            device: None,
            last_used_at: None,
            person: Some(session.person.clone()),
        }
    }
}

pub(super) const SELECT_SESSIONS: &str = "SELECT s.id, s.provider, s.roles, s.csrf, s.refresh_token, s.user_agent, s.created_at, s.expires_at, s.validated_at, s.ended_at, s.ended_why, p.issuer, p.subject, p.name, p.email FROM sessions s JOIN people p ON p.id = s.person_id";

/// One session by id, ended or not, read through `db` (the pool or a transaction).
async fn session_by_id<'e, E>(db: E, id: &str) -> Result<Option<Session>, DbError>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query(&format!("{SELECT_SESSIONS} WHERE s.id = $1"))
        .bind(id)
        .fetch_optional(db)
        .await?;
    row.as_ref().map(session_of).transpose()
}

pub(super) fn session_of(row: &sqlx::any::AnyRow) -> Result<Session, DbError> {
    let id: String = row.try_get("id")?;
    let roles: String = row.try_get("roles")?;
    Ok(Session {
        roles: serde_json::from_str(&roles)
            .map_err(|e| DbError::Damaged(format!("session {id} roles: {e}")))?,
        person: Person {
            issuer: row.try_get("issuer")?,
            subject: row.try_get("subject")?,
            name: row.try_get("name")?,
            email: row.try_get("email")?,
        },
        provider: row.try_get("provider")?,
        csrf: row.try_get("csrf")?,
        refresh_token: row.try_get("refresh_token")?,
        user_agent: row.try_get("user_agent")?,
        created_at: row.try_get("created_at")?,
        expires_at: row.try_get("expires_at")?,
        validated_at: row.try_get("validated_at")?,
        ended_at: row.try_get("ended_at")?,
        ended_why: row.try_get("ended_why")?,
        id,
    })
}

/// What a new session is made of.
pub struct NewSession<'a> {
    /// Who signed in.
    pub person: &'a Person,
    /// Through which provider.
    pub provider: &'a str,
    /// The roles their groups give.
    pub roles: &'a [String],
    /// The provider's refresh token, if it gave one.
    pub refresh_token: Option<&'a str>,
    /// The browser's description of itself.
    pub user_agent: Option<&'a str>,
    /// How long it lasts.
    pub length: chrono::Duration,
}

impl Db {
    /// Keeps a sign-in under way; those past their time are removed meanwhile.
    pub async fn add_sign_in(&self, attempt: &Attempt) -> Result<(), DbError> {
        let now = stored_time(chrono::Utc::now());
        sqlx::query("DELETE FROM sign_in_attempts WHERE expires_at <= $1")
            .bind(&now)
            .execute(self.pool())
            .await?;
        sqlx::query("INSERT INTO sign_in_attempts (state_hash, browser, provider, nonce, verifier, expires_at) VALUES ($1, $2, $3, $4, $5, $6)")
            .bind(hash(&attempt.state))
            .bind(hash(&attempt.browser))
            .bind(&attempt.provider)
            .bind(&attempt.nonce)
            .bind(&attempt.verifier)
            .bind(stored_time(attempt.expires_at))
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Takes the sign-in with this `state`, once: a replayed state finds nothing.
    pub async fn take_sign_in(&self, state: &str) -> Result<Option<Taken>, DbError> {
        let row = sqlx::query("DELETE FROM sign_in_attempts WHERE state_hash = $1 RETURNING browser, provider, nonce, verifier, expires_at")
            .bind(hash(state))
            .fetch_optional(self.pool())
            .await?;
        let Some(row) = row else { return Ok(None) };
        let expires_at: String = row.try_get("expires_at")?;
        Ok(Some(Taken {
            browser_hash: row.try_get("browser")?,
            provider: row.try_get("provider")?,
            nonce: row.try_get("nonce")?,
            verifier: row.try_get("verifier")?,
            in_time: expires_at > stored_time(chrono::Utc::now()),
        }))
    }

    /// Records the person (as the provider names them now) and opens a session.
    pub async fn open_session(&self, new: NewSession<'_>) -> Result<Opened, DbError> {
        let now = chrono::Utc::now();
        let at = stored_time(now);
        let mut tx = begin_write(self.pool(), self.backend()).await?;
        let existing: Option<String> =
            sqlx::query_scalar("SELECT id FROM people WHERE issuer = $1 AND subject = $2")
                .bind(&new.person.issuer)
                .bind(&new.person.subject)
                .fetch_optional(&mut *tx)
                .await?;
        let person_id = match existing {
            Some(id) => {
                sqlx::query("UPDATE people SET name = $1, email = $2 WHERE id = $3")
                    .bind(&new.person.name)
                    .bind(&new.person.email)
                    .bind(&id)
                    .execute(&mut *tx)
                    .await?;
                id
            }
            None => {
                let id = format!("per_{}", random_hex(8)?);
                sqlx::query("INSERT INTO people (id, issuer, subject, name, email, created_at) VALUES ($1, $2, $3, $4, $5, $6)")
                    .bind(&id)
                    .bind(&new.person.issuer)
                    .bind(&new.person.subject)
                    .bind(&new.person.name)
                    .bind(&new.person.email)
                    .bind(&at)
                    .execute(&mut *tx)
                    .await?;
                id
            }
        };
        let session = Session {
            id: format!("ses_{}", random_hex(8)?),
            person: new.person.clone(),
            provider: new.provider.to_owned(),
            roles: new.roles.to_vec(),
            csrf: random_hex(24)?,
            refresh_token: new.refresh_token.map(str::to_owned),
            user_agent: new.user_agent.map(|a| a.chars().take(200).collect()),
            created_at: at.clone(),
            expires_at: stored_time(now + new.length),
            validated_at: at.clone(),
            ended_at: None,
            ended_why: None,
        };
        let secret = format!("cs_session_{}", random_hex(32)?);
        sqlx::query("INSERT INTO sessions (id, hash, person_id, provider, roles, csrf, refresh_token, user_agent, created_at, expires_at, validated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)")
            .bind(&session.id)
            .bind(hash(&secret))
            .bind(&person_id)
            .bind(&session.provider)
            .bind(serde_json::to_string(&session.roles).unwrap_or_else(|_| "[]".into()))
            .bind(&session.csrf)
            .bind(&session.refresh_token)
            .bind(&session.user_agent)
            .bind(&session.created_at)
            .bind(&session.expires_at)
            .bind(&session.validated_at)
            .execute(&mut *tx)
            .await?;
        audit::append(&mut tx, &[session_entry("session.started", &session, &at)]).await?;
        tx.commit().await?;
        Ok(Opened { session, secret })
    }

    /// The live session whose cookie secret is `secret`: not ended, not past its time.
    pub async fn session_for_secret(&self, secret: &str) -> Result<Option<Session>, DbError> {
        let row = sqlx::query(&format!(
            "{SELECT_SESSIONS} WHERE s.hash = $1 AND s.ended_at IS NULL AND s.expires_at > $2"
        ))
        .bind(hash(secret))
        .bind(stored_time(chrono::Utc::now()))
        .fetch_optional(self.pool())
        .await?;
        row.as_ref().map(session_of).transpose()
    }

    /// One session by id, ended or not.
    pub async fn session(&self, id: &str) -> Result<Option<Session>, DbError> {
        session_by_id(self.pool(), id).await
    }

    /// Records that the provider confirmed the session's person again, with
    /// these roles (and, when it rotated it, a new refresh token); a change
    /// of roles is audited.
    pub async fn revalidate_session(
        &self,
        id: &str,
        person: &Person,
        roles: &[String],
        refresh_token: Option<&str>,
    ) -> Result<String, DbError> {
        let at = stored_time(chrono::Utc::now());
        let mut tx = begin_write(self.pool(), self.backend()).await?;
        if let Some(mut session) = session_by_id(&mut *tx, id).await? {
            if session.roles != roles {
                session.roles = roles.to_vec();
                let entry = session_entry("session.roles_changed", &session, &at);
                audit::append(&mut tx, &[entry]).await?;
            }
        }
        sqlx::query(
            "UPDATE sessions SET roles = $1, refresh_token = $2, validated_at = $3 WHERE id = $4",
        )
        .bind(serde_json::to_string(roles).unwrap_or_else(|_| "[]".into()))
        .bind(refresh_token)
        .bind(&at)
        .bind(id)
        .execute(&mut *tx)
        .await?;
        sqlx::query("UPDATE people SET name = $1, email = $2 WHERE issuer = $3 AND subject = $4")
            .bind(&person.name)
            .bind(&person.email)
            .bind(&person.issuer)
            .bind(&person.subject)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(at)
    }

    /// Ends a live session, saying why, audited. False when it had ended already.
    pub async fn end_session(&self, id: &str, why: &str) -> Result<bool, DbError> {
        let at = stored_time(chrono::Utc::now());
        let mut tx = begin_write(self.pool(), self.backend()).await?;
        let ended = sqlx::query(
            "UPDATE sessions SET ended_at = $1, ended_why = $2, refresh_token = NULL WHERE id = $3 AND ended_at IS NULL",
        )
        .bind(&at)
        .bind(why)
        .bind(id)
        .execute(&mut *tx)
        .await?;
        if ended.rows_affected() == 0 {
            return Ok(false);
        }
        let session = session_by_id(&mut *tx, id)
            .await?
            .ok_or_else(|| DbError::Damaged(format!("session {id} vanished while it ended")))?;
        let entry = session_entry("session.ended", &session, &at);
        audit::append(&mut tx, &[entry]).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// The sessions of the person `issuer` + `subject` (all people's when
    /// `None`), newest first.
    pub async fn sessions(&self, of: Option<&Person>) -> Result<Vec<Session>, DbError> {
        let select = SELECT_SESSIONS;
        let rows = match of {
            Some(person) => {
                sqlx::query(&format!(
                "{select} WHERE p.issuer = $1 AND p.subject = $2 ORDER BY s.created_at DESC, s.id"
            ))
                .bind(&person.issuer)
                .bind(&person.subject)
                .fetch_all(self.pool())
                .await?
            }
            None => {
                sqlx::query(&format!("{select} ORDER BY s.created_at DESC, s.id"))
                    .fetch_all(self.pool())
                    .await?
            }
        };
        rows.iter().map(session_of).collect()
    }
}
