//! Pairing a phone (or any second device) without pasting a key: a reviewer
//! key mints a one-time code; the device trades it for its own reviewer key
//! with the same roles and owner, listed by device name and revocable alone.

use super::keys::{
    hash, insert_key, key_of, mint, random_hex, ApiKey, KeyKind, MintedKey, KEY_COLUMNS,
};
use super::{begin_write, stored_time, Db, DbError};
use sqlx::Row;

/// Why a pairing code was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PairingRefused {
    /// No such code (mistyped, or from another server).
    #[error(
        "this pairing code is not one this server made; make a new one in Settings > Add a device"
    )]
    Unknown,
    /// Already traded for a device key.
    #[error("this pairing code was already used; make a new one in Settings > Add a device")]
    Used,
    /// Past its time.
    #[error("this pairing code expired at {0}; make a new one in Settings > Add a device")]
    Expired(String),
    /// The key that made it was revoked since.
    #[error("the key that made this pairing code was revoked")]
    Revoked,
}

impl Db {
    /// Mints a code that pairs one device with `key`'s roles within `ttl`.
    pub async fn add_pairing_code(
        &self,
        key: &ApiKey,
        ttl: chrono::Duration,
    ) -> Result<(String, chrono::DateTime<chrono::Utc>), DbError> {
        let now = chrono::Utc::now();
        sqlx::query("DELETE FROM pairing_codes WHERE expires_at <= $1")
            .bind(stored_time(now))
            .execute(self.pool())
            .await?;
        let code = format!("cs_pair_{}", random_hex(16)?);
        let expires_at = now + ttl;
        sqlx::query("INSERT INTO pairing_codes (hash, key_id, expires_at) VALUES ($1, $2, $3)")
            .bind(hash(&code))
            .bind(&key.id)
            .bind(stored_time(expires_at))
            .execute(self.pool())
            .await?;
        Ok((code, expires_at))
    }

    /// Trades a code for a new reviewer key for the device named `device`,
    /// once: of two devices presenting the same code at once, one wins.
    pub async fn pair_device(
        &self,
        code: &str,
        device: &str,
    ) -> Result<Result<MintedKey, PairingRefused>, DbError> {
        let now = stored_time(chrono::Utc::now());
        // The code's use, the device's key and its audit entry: all or nothing.
        let mut tx = begin_write(self.pool(), self.backend()).await?;
        let claimed = sqlx::query(
            "UPDATE pairing_codes SET used_at = $1 WHERE hash = $2 AND used_at IS NULL AND expires_at > $1 RETURNING key_id",
        )
        .bind(&now)
        .bind(hash(code))
        .fetch_optional(&mut *tx)
        .await?;
        let Some(row) = claimed else {
            let stored =
                sqlx::query("SELECT used_at, expires_at FROM pairing_codes WHERE hash = $1")
                    .bind(hash(code))
                    .fetch_optional(&mut *tx)
                    .await?;
            return Ok(Err(match stored {
                None => PairingRefused::Unknown,
                Some(row) if row.try_get::<Option<String>, _>("used_at")?.is_some() => {
                    PairingRefused::Used
                }
                Some(row) => PairingRefused::Expired(row.try_get("expires_at")?),
            }));
        };
        let from: String = row.try_get("key_id")?;
        let pairing = sqlx::query(&format!(
            "SELECT {KEY_COLUMNS} FROM api_keys WHERE id = $1 AND revoked_at IS NULL"
        ))
        .bind(&from)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(pairing) = pairing.as_ref().map(key_of).transpose()? else {
            tx.commit().await?;
            return Ok(Err(PairingRefused::Revoked));
        };
        let mut minted = mint(
            KeyKind::Reviewer,
            &pairing.roles,
            &format!("device: {device}"),
            pairing.rate,
            pairing.owner.as_deref(),
        )?;
        minted.key.paired_from = Some(pairing.id);
        minted.key.device = Some(device.to_owned());
        insert_key(&mut tx, &minted, "device.paired").await?;
        tx.commit().await?;
        Ok(Ok(minted))
    }

    /// The devices `key` may see and revoke: those paired from it (or from
    /// the key that paired it), and, when it has an owner, the owner's.
    pub async fn devices_of(&self, key: &ApiKey) -> Result<Vec<ApiKey>, DbError> {
        let root = key.paired_from.as_deref().unwrap_or(&key.id);
        let rows = sqlx::query(&format!(
            "SELECT {KEY_COLUMNS} FROM api_keys WHERE paired_from IS NOT NULL
               AND (paired_from = $1 OR (owner IS NOT NULL AND owner = $2))
             ORDER BY created_at DESC, id"
        ))
        .bind(root)
        .bind(key.owner.as_deref().unwrap_or_default())
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(key_of).collect()
    }

    /// Notes that a device's key was just used (at most once a minute).
    pub async fn touch_device(&self, id: &str) -> Result<(), DbError> {
        let now = chrono::Utc::now();
        sqlx::query(
            "UPDATE api_keys SET last_used_at = $1 WHERE id = $2 AND (last_used_at IS NULL OR last_used_at < $3)",
        )
        .bind(stored_time(now))
        .bind(id)
        .bind(stored_time(now - chrono::Duration::seconds(60)))
        .execute(self.pool())
        .await?;
        Ok(())
    }
}
