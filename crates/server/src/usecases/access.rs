//! What a reviewer does with standing access: revokes a grant (the agent's
//! next such call is asked again), pairs a device by a one-time code, and
//! revokes a paired device. Each write is audited in its own transaction.

use super::Service;
use crate::store::devices::PairingRefused;
use crate::store::grants::{GrantRecord, Revoked};
use crate::store::keys::{ApiKey, MintedKey};
use crate::store::{stored_time, DbError};
use countersign_domain::wire::Pairing;

/// How long a pairing code works.
const PAIRING_MINUTES: i64 = 10;

/// Why a grant or a device was not revoked.
#[derive(Debug, thiserror::Error)]
pub enum NotRevoked {
    /// No such grant, or no device this reviewer sees.
    #[error("{0} was not found")]
    NotFound(String),
    /// Revoked before: the grant as it stands, naming when and by whom.
    #[error("grant {} was already revoked", .0.grant.grant_id)]
    Already(Box<GrantRecord>),
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbError),
}

/// Revokes grant `grant_id` as `reviewer`.
pub async fn revoke_grant(
    service: Service<'_>,
    reviewer: &ApiKey,
    grant_id: &str,
) -> Result<GrantRecord, NotRevoked> {
    match service.db.revoke_grant(grant_id, &reviewer.id).await? {
        Revoked::Now(grant) => Ok(grant),
        Revoked::Already(grant) => Err(NotRevoked::Already(Box::new(grant))),
        Revoked::Unknown => Err(NotRevoked::NotFound(format!("grant {grant_id}"))),
    }
}

/// A one-time code that pairs one device with `reviewer`'s owner and roles,
/// with when it stops working.
pub async fn issue_pairing_code(
    service: Service<'_>,
    reviewer: &ApiKey,
) -> Result<Pairing, DbError> {
    let ttl = chrono::Duration::minutes(PAIRING_MINUTES);
    let (code, expires_at) = service.db.add_pairing_code(reviewer, ttl).await?;
    let expires_at = stored_time(expires_at);
    Ok(Pairing { code, expires_at })
}

/// Trades pairing `code` once for device `device`'s own reviewer key.
pub async fn pair_device(
    service: Service<'_>,
    code: &str,
    device: &str,
) -> Result<Result<MintedKey, PairingRefused>, DbError> {
    service.db.pair_device(code, device).await
}

/// Revokes device key `key_id`, one `reviewer` sees (its own devices and its
/// owner's): the key as it stands after.
pub async fn revoke_device(
    service: Service<'_>,
    reviewer: &ApiKey,
    key_id: &str,
) -> Result<ApiKey, NotRevoked> {
    let seen = service.db.devices_of(reviewer).await?;
    let Some(found) = seen.into_iter().find(|d| d.id == key_id) else {
        return Err(NotRevoked::NotFound(format!("device {key_id}")));
    };
    service.db.revoke_key(&found.id).await?;
    Ok(ApiKey {
        revoked_at: found
            .revoked_at
            .clone()
            .or_else(|| Some(stored_time(chrono::Utc::now()))),
        ..found
    })
}
