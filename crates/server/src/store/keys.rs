//! API keys: agent keys create reviews and read their outcome; reviewer keys
//! list and decide, each signing only as the roles it names. Only a SHA-256
//! hash of each secret is stored; the secret is shown once, when minted.

use super::rounds::{rows_in, ReadFuture};
use super::{audit, begin_write, stored_time, Db, DbError};
use crate::rate::Rate;
use countersign_domain::toolcall::CallHash;
use countersign_domain::{KeyRef, Person};
use serde::Serialize;
use sha2::{Digest, Sha256};
use sqlx::Row;

/// What a key may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum KeyKind {
    /// Creates reviews, reads their outcome, resubmits them.
    Agent,
    /// Lists reviews and decides them as its roles.
    Reviewer,
}

impl KeyKind {
    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            KeyKind::Agent => "agent",
            KeyKind::Reviewer => "reviewer",
        }
    }

    fn parse(text: &str) -> Option<KeyKind> {
        match text {
            "agent" => Some(KeyKind::Agent),
            "reviewer" => Some(KeyKind::Reviewer),
            _ => None,
        }
    }
}

/// A key as listed (never with its secret).
#[derive(Debug, Clone, Serialize)]
pub struct ApiKey {
    /// Public id, used to revoke it.
    pub id: String,
    /// What it may do.
    pub kind: KeyKind,
    /// The `decided_by_role` values a reviewer key may sign as.
    pub roles: Vec<String>,
    /// Who or what it is for.
    pub label: String,
    /// When it was minted.
    pub created_at: String,
    /// When it was revoked, if it was.
    pub revoked_at: Option<String>,
    /// Its own request rate, if minted with one (else its kind's default).
    #[serde(serialize_with = "rate_text")]
    pub rate: Option<Rate>,
    /// The person or team it belongs to, if given.
    pub owner: Option<String>,
    /// The key that paired this device's key (Settings > Add a device).
    pub paired_from: Option<String>,
    /// The name the paired device gave.
    pub device: Option<String>,
    /// A paired device's last request (to the minute).
    pub last_used_at: Option<String>,
    /// The signed-in person a session's key acts for (stored keys have none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub person: Option<Person>,
}

impl ApiKey {
    /// The key as decisions and requests record it.
    pub fn key_ref(&self) -> KeyRef {
        KeyRef {
            key_id: self.id.clone(),
            owner: self.owner.clone(),
            person: self.person.clone(),
        }
    }
}

/// A new key and its secret, not stored yet.
pub(super) fn mint(
    kind: KeyKind,
    roles: &[String],
    label: &str,
    rate: Option<Rate>,
    owner: Option<&str>,
) -> Result<MintedKey, DbError> {
    let id = format!("key_{}", random_hex(6)?);
    let secret = format!("cs_{}_{}", kind.as_str(), random_hex(24)?);
    let key = ApiKey {
        id,
        kind,
        roles: roles.to_vec(),
        label: label.to_owned(),
        created_at: stored_time(chrono::Utc::now()),
        revoked_at: None,
        rate,
        owner: owner.map(str::to_owned),
        paired_from: None,
        device: None,
        last_used_at: None,
        person: None,
    };
    Ok(MintedKey { key, secret })
}

/// Stores a minted key and its audit entry (`kind`) inside a write transaction.
pub(super) async fn insert_key(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    minted: &MintedKey,
    kind: &'static str,
) -> Result<(), sqlx::Error> {
    let key = &minted.key;
    sqlx::query(
        "INSERT INTO api_keys (id, kind, roles, label, hash, created_at, rate, owner, paired_from, device) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(&key.id)
    .bind(key.kind.as_str())
    .bind(serde_json::to_string(&key.roles).unwrap_or_else(|_| "[]".into()))
    .bind(&key.label)
    .bind(hash(&minted.secret))
    .bind(&key.created_at)
    .bind(key.rate.map(|r| r.to_string()))
    .bind(&key.owner)
    .bind(&key.paired_from)
    .bind(&key.device)
    .execute(&mut **tx)
    .await?;
    audit::append(tx, &[key_entry(kind, key, &key.created_at)]).await
}

fn rate_text<S: serde::Serializer>(rate: &Option<Rate>, to: S) -> Result<S::Ok, S::Error> {
    match rate {
        Some(rate) => to.collect_str(rate),
        None => to.serialize_none(),
    }
}

/// A freshly minted key with its secret (shown once).
#[derive(Debug, Clone)]
pub struct MintedKey {
    /// The stored description.
    pub key: ApiKey,
    /// The secret the client sends as `Authorization: Bearer <secret>`.
    pub secret: String,
}

pub(crate) fn random_hex(bytes: usize) -> Result<String, DbError> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|e| DbError::Damaged(format!("no randomness: {e}")))?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

/// The stored form of a secret.
pub fn hash(secret: &str) -> String {
    Sha256::digest(secret.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub(super) fn key_of(row: &sqlx::any::AnyRow) -> Result<ApiKey, DbError> {
    let kind: String = row.try_get("kind")?;
    let roles: String = row.try_get("roles")?;
    let id: String = row.try_get("id")?;
    Ok(ApiKey {
        kind: KeyKind::parse(&kind)
            .ok_or_else(|| DbError::Damaged(format!("key {id} has kind `{kind}`")))?,
        roles: serde_json::from_str(&roles)
            .map_err(|e| DbError::Damaged(format!("key {id} roles: {e}")))?,
        label: row.try_get("label")?,
        created_at: row.try_get("created_at")?,
        revoked_at: row.try_get("revoked_at")?,
        rate: row
            .try_get::<Option<String>, _>("rate")?
            .map(|rate| rate.parse())
            .transpose()
            .map_err(|e| DbError::Damaged(format!("key {id}: {e}")))?,
        owner: row.try_get("owner")?,
        paired_from: row.try_get("paired_from")?,
        device: row.try_get("device")?,
        last_used_at: row.try_get("last_used_at")?,
        person: None,
        id,
    })
}

/// A key as the audit chain covers it: everything but its last use.
pub(super) fn audited_key(key: &ApiKey) -> String {
    serde_json::json!({
        "id": key.id,
        "kind": key.kind,
        "roles": key.roles,
        "label": key.label,
        "created_at": key.created_at,
        "revoked_at": key.revoked_at,
        "rate": key.rate.map(|r| r.to_string()),
        "owner": key.owner,
        "paired_from": key.paired_from,
        "device": key.device,
    })
    .to_string()
}

/// The audit entry of `key` after a change of `kind` (`key.minted`…).
pub(super) fn key_entry(kind: &'static str, key: &ApiKey, at: &str) -> audit::Entry {
    audit::Entry {
        kind,
        subject: key.id.clone(),
        subject_type: "key",
        doc_sha256: CallHash::of_canonical(&audited_key(key)),
        at: at.to_owned(),
    }
}

pub(super) const KEY_COLUMNS: &str =
    "id, kind, roles, label, created_at, revoked_at, rate, owner, paired_from, device, last_used_at";

impl Db {
    /// Mints and stores a key (with its own request rate, if given), audited.
    pub async fn add_key(
        &self,
        kind: KeyKind,
        roles: &[String],
        label: &str,
        rate: Option<Rate>,
        owner: Option<&str>,
    ) -> Result<MintedKey, DbError> {
        let minted = mint(kind, roles, label, rate, owner)?;
        let mut tx = begin_write(self.pool(), self.backend()).await?;
        insert_key(&mut tx, &minted, "key.minted").await?;
        tx.commit().await?;
        Ok(minted)
    }

    /// Every key, oldest first.
    pub async fn keys(&self) -> Result<Vec<ApiKey>, DbError> {
        let rows = sqlx::query(&format!(
            "SELECT {KEY_COLUMNS} FROM api_keys ORDER BY created_at, id"
        ))
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(key_of).collect()
    }

    /// Revokes a key by id, with every device it paired (and theirs): a
    /// stolen key must not live on as a phone it paired. False when there is
    /// no such live key. Each revocation is audited.
    pub async fn revoke_key(&self, id: &str) -> Result<bool, DbError> {
        let revoked = self
            .revoke_where(
                "id IN (WITH RECURSIVE paired (id) AS (
                     SELECT id FROM api_keys WHERE id = $1
                     UNION SELECT k.id FROM api_keys k JOIN paired p ON k.paired_from = p.id)
                 SELECT id FROM paired)",
                id,
            )
            .await?;
        Ok(revoked.iter().any(|key| key.id == id))
    }

    /// Revokes every live key with this label (the demo key of an earlier
    /// start), audited.
    pub async fn revoke_keys_labelled(&self, label: &str) -> Result<u64, DbError> {
        Ok(self.revoke_where("label = $1", label).await?.len() as u64)
    }

    /// Revokes the live keys `condition` (over `$1` = `value`) selects, each
    /// with its audit entry, in one transaction: the keys revoked.
    async fn revoke_where(&self, condition: &str, value: &str) -> Result<Vec<ApiKey>, DbError> {
        let now = stored_time(chrono::Utc::now());
        let mut tx = begin_write(self.pool(), self.backend()).await?;
        let live = sqlx::query(&format!(
            "SELECT {KEY_COLUMNS} FROM api_keys WHERE {condition} AND revoked_at IS NULL"
        ))
        .bind(value)
        .fetch_all(&mut *tx)
        .await?;
        let (mut revoked, mut entries) = (Vec::new(), Vec::new());
        for row in &live {
            let mut key = key_of(row)?;
            sqlx::query("UPDATE api_keys SET revoked_at = $1 WHERE id = $2")
                .bind(&now)
                .bind(&key.id)
                .execute(&mut *tx)
                .await?;
            key.revoked_at = Some(now.clone());
            let kind = if key.paired_from.is_some() {
                "device.revoked"
            } else {
                "key.revoked"
            };
            entries.push(key_entry(kind, &key, &now));
            revoked.push(key);
        }
        audit::append(&mut tx, &entries).await?;
        tx.commit().await?;
        Ok(revoked)
    }

    /// Who a key belongs to (revoked or not), as requests record it: its
    /// owner, or none when it has no owner or no such key exists.
    pub async fn key_ref(&self, id: &str) -> Result<KeyRef, DbError> {
        let owner: Option<Option<String>> =
            sqlx::query_scalar("SELECT owner FROM api_keys WHERE id = $1")
                .bind(id)
                .fetch_optional(self.pool())
                .await?;
        Ok(KeyRef {
            owner: owner.flatten(),
            ..KeyRef::key(id)
        })
    }

    /// The live key whose secret has this [`hash`], if any: read by a query
    /// that started after this call (see [`Rounds`](super::rounds::Rounds)).
    pub async fn key_for_hash(&self, hash: &str) -> Result<Option<ApiKey>, DbError> {
        self.key_reader().get(hash).await
    }
}

/// A ticket that opens one event stream (shown once, when minted).
#[derive(Debug, Clone)]
pub struct EventTicket {
    /// The secret the stream is opened with (`?ticket=`).
    pub secret: String,
    /// When it stops working, if not used before.
    pub expires_at: chrono::DateTime<chrono::Utc>,
}

impl Db {
    /// Mints a single-use ticket for `key` that opens one event stream within
    /// `ttl`; tickets past their time are removed meanwhile.
    pub async fn add_event_ticket(
        &self,
        key: &ApiKey,
        ttl: chrono::Duration,
    ) -> Result<EventTicket, DbError> {
        let now = chrono::Utc::now();
        sqlx::query("DELETE FROM event_tickets WHERE expires_at <= $1")
            .bind(stored_time(now))
            .execute(self.pool())
            .await?;
        let ticket = EventTicket {
            secret: format!("cs_ticket_{}", random_hex(24)?),
            expires_at: now + ttl,
        };
        sqlx::query("INSERT INTO event_tickets (hash, key_id, expires_at) VALUES ($1, $2, $3)")
            .bind(hash(&ticket.secret))
            .bind(&key.id)
            .bind(stored_time(ticket.expires_at))
            .execute(self.pool())
            .await?;
        Ok(ticket)
    }

    /// Spends a ticket: the live key it was minted for, if the ticket exists,
    /// is not past its time and the key is not revoked. A ticket works once,
    /// also when two requests present it at the same instant (one delete wins).
    pub async fn spend_event_ticket(&self, secret: &str) -> Result<Option<ApiKey>, DbError> {
        let spent =
            sqlx::query("DELETE FROM event_tickets WHERE hash = $1 RETURNING key_id, expires_at")
                .bind(hash(secret))
                .fetch_optional(self.pool())
                .await?;
        let Some(row) = spent else {
            return Ok(None);
        };
        let key_id: String = row.try_get("key_id")?;
        let expires_at: String = row.try_get("expires_at")?;
        if expires_at <= stored_time(chrono::Utc::now()) {
            return Ok(None);
        }
        let row = sqlx::query(&format!(
            "SELECT {KEY_COLUMNS} FROM api_keys WHERE id = $1 AND revoked_at IS NULL"
        ))
        .bind(&key_id)
        .fetch_optional(self.pool())
        .await?;
        row.as_ref().map(key_of).transpose()
    }
}

/// The live keys among these hashes, by hash (one round of [`Rounds`](super::rounds::Rounds)).
pub(super) fn live_keys(pool: sqlx::AnyPool, hashes: Vec<String>) -> ReadFuture<ApiKey> {
    Box::pin(async move {
        let select = format!(
            "SELECT {KEY_COLUMNS}, hash FROM api_keys WHERE revoked_at IS NULL AND hash IN"
        );
        let rows = rows_in(&pool, &select, &hashes).await?;
        rows.iter()
            .map(|row| {
                let hash: String = row.try_get("hash").map_err(|e| e.to_string())?;
                Ok((hash, key_of(row).map_err(|e| e.to_string())?))
            })
            .collect()
    })
}
