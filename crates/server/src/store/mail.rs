//! The links in Countersign's e-mails: each bound to a request, the address
//! it was sent to and an expiry; only a hash is kept, and one decision
//! spends it.

use super::keys::{hash, random_hex};
use super::{parse_stored_time, stored_time, Db, DbError};
use countersign_domain::MplpId;
use sqlx::Row;

/// A link as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MailLink {
    /// The request it is about.
    pub review_id: String,
    /// The address it was sent to: only the person signed in with it may use it.
    pub email: String,
    /// After this it is refused.
    pub expires_at: chrono::DateTime<chrono::Utc>,
    /// Whether a decision spent it already.
    pub used: bool,
}

impl Db {
    /// A new link to `review` for `email`, valid until `expires_at`: its
    /// secret, to put in that one e-mail.
    pub async fn new_mail_link(
        &self,
        review: MplpId,
        email: &str,
        expires_at: chrono::DateTime<chrono::Utc>,
    ) -> Result<String, DbError> {
        let token = format!("mlk_{}", random_hex(24)?);
        sqlx::query(
            "INSERT INTO mail_links (hash, review_id, email, expires_at) VALUES ($1, $2, $3, $4)",
        )
        .bind(hash(&token))
        .bind(review.to_string())
        .bind(email)
        .bind(stored_time(expires_at))
        .execute(self.pool())
        .await?;
        Ok(token)
    }

    /// The link `token` names, if there is one.
    pub async fn mail_link(&self, token: &str) -> Result<Option<MailLink>, DbError> {
        let row = sqlx::query(
            "SELECT review_id, email, expires_at, used_at FROM mail_links WHERE hash = $1",
        )
        .bind(hash(token))
        .fetch_optional(self.pool())
        .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let expires: String = row.try_get("expires_at")?;
        let used: Option<String> = row.try_get("used_at")?;
        Ok(Some(MailLink {
            review_id: row.try_get("review_id")?,
            email: row.try_get("email")?,
            expires_at: parse_stored_time(&expires, "a mail link's expiry")?,
            used: used.is_some(),
        }))
    }

    /// Spends the link `token` (false: it was spent already).
    pub async fn spend_mail_link(&self, token: &str) -> Result<bool, DbError> {
        let spent =
            sqlx::query("UPDATE mail_links SET used_at = $1 WHERE hash = $2 AND used_at IS NULL")
                .bind(stored_time(chrono::Utc::now()))
                .bind(hash(token))
                .execute(self.pool())
                .await?;
        Ok(spent.rows_affected() == 1)
    }
}
