//! Who is calling: the API key from `Authorization: Bearer <key>`, or, for the
//! event stream only, a single-use ticket minted with that key (`?ticket=`,
//! since browsers' EventSource cannot set headers; a key never travels in a
//! URL, where logs and histories keep it). No key or an unknown one: 401. The
//! wrong kind of key: 403.

use super::error::{ApiError, ErrorCode};
use super::AppState;
use crate::store::keys::{ApiKey, KeyKind};
use crate::store::Stored;
use axum::extract::{FromRequestParts, Path};
use axum::http::request::Parts;
use axum::http::{header, StatusCode};
use countersign_domain::wire::Refusal;
use countersign_domain::MplpId;

/// The authenticated key of a request.
pub struct Caller(pub ApiKey);

impl Caller {
    /// 403 unless the key is of this kind.
    pub fn require(&self, kind: KeyKind) -> Result<(), ApiError> {
        if self.0.kind == kind {
            return Ok(());
        }
        let needed = match kind {
            KeyKind::Agent => "an agent key",
            KeyKind::Reviewer => "a reviewer key",
        };
        Err(ApiError::forbidden(
            ErrorCode::WrongKeyKind,
            format!("this needs {needed}; key {} is not one", self.0.id),
        ))
    }

    /// 403 unless this reviewer key may sign as `role`.
    pub fn may_sign_as(&self, role: &str) -> Result<(), ApiError> {
        if self.0.roles.iter().any(|r| r == role.trim()) {
            return Ok(());
        }
        Err(ApiError::forbidden(
            ErrorCode::RoleNotAllowed,
            format!(
                "key {} may not sign as `{}`; it may sign as: {}",
                self.0.id,
                role.trim(),
                if self.0.roles.is_empty() {
                    "no role".to_owned()
                } else {
                    self.0.roles.join(", ")
                }
            ),
        )
        .with_details(vec![super::error::Detail::new(
            "/decided_by_role",
            "not a role this key may sign as",
        )])
        .with_refusal(Refusal::Role {
            role: role.trim().to_owned(),
            allowed: self.0.roles.clone(),
        }))
    }
}

impl Caller {
    /// The stored review this key may see (a reviewer key: any; an agent
    /// key: the ones it created), else 404, whether or not it exists.
    pub async fn review(&self, state: &AppState, id: MplpId) -> Result<Stored, ApiError> {
        state
            .service()
            .visible(&self.0, id)
            .await?
            .ok_or_else(|| ApiError::not_found(&format!("review {id}")))
    }
}

/// The longest a request over its key's rate is held before its 429.
const HELD: std::time::Duration = std::time::Duration::from_millis(250);

/// A 429, answered after a pause (until the key may send again, at most
/// [`HELD`]): a client that ignores `Retry-After` and asks again at once can
/// then send only a few requests a second per connection, instead of taking
/// the server's time from everyone else with thousands of refusals.
async fn over_rate(over: crate::limits::OverRate) -> ApiError {
    crate::metrics::rate_limited();
    let pause = over.wait.min(HELD);
    tokio::time::sleep(pause).await;
    ApiError::rate_limited(crate::limits::OverRate {
        wait: over.wait - pause,
        ..over
    })
}

fn unauthorized(message: &str) -> ApiError {
    ApiError::new(StatusCode::UNAUTHORIZED, ErrorCode::Unauthorized, message)
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let from_header = parts
            .headers
            .get(header::AUTHORIZATION)
            .map(|v| v.to_str().unwrap_or(""))
            .map(|v| {
                v.strip_prefix("Bearer ")
                    .map(str::trim)
                    .ok_or_else(|| unauthorized("use `Authorization: Bearer <api key>`"))
            })
            .transpose()?;
        let ticket = if parts.uri.path().ends_with("/events") {
            parts
                .uri
                .query()
                .and_then(|q| super::query::Params::find(q, "ticket"))
        } else {
            None
        };
        if let (None, Some(ticket)) = (from_header, ticket) {
            // Tickets are minted within the key's rate: spending one is not counted again.
            return match state.db.spend_event_ticket(&ticket).await? {
                Some(key) => Ok(Caller(key)),
                None => Err(unauthorized(
                    "this event ticket is unknown, used or expired: ask for a new one (POST /api/v1/events/tickets)",
                )),
            };
        }
        let secret = from_header.filter(|s| !s.is_empty()).ok_or_else(|| {
            unauthorized("an API key is required: `Authorization: Bearer <api key>`")
        })?;
        let hashed = crate::store::keys::hash(secret);
        let known = state.limits.take_known(&hashed);
        if let Some(Err(over)) = known {
            return Err(over_rate(over).await);
        }
        let key = state.db.key_for_hash(&hashed).await?;
        if let Some(device) = key.as_ref().filter(|k| k.paired_from.is_some()) {
            // A paired device's last use is listed in Settings; noting it never delays the request.
            let (db, id) = (state.db.clone(), device.id.clone());
            tokio::spawn(async move {
                if let Err(e) = db.touch_device(&id).await {
                    tracing::warn!("noting device {id}'s last use failed: {e}");
                }
            });
        }
        match key {
            Some(key) if known.is_some() => Ok(Caller(key)),
            Some(key) => match state.limits.take(&hashed, &key) {
                Ok(()) => Ok(Caller(key)),
                Err(over) => Err(over_rate(over).await),
            },
            None => Err(unauthorized("this API key is unknown or revoked")),
        }
    }
}

/// A review's id from the request's path, parsed: a malformed one names no
/// review, so it is answered as an unknown one is (404).
pub struct ReviewId(pub MplpId);

impl FromRequestParts<AppState> for ReviewId {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let Path(raw) = Path::<String>::from_request_parts(parts, state)
            .await
            .map_err(|e| ApiError::not_found(&format!("review ({e})")))?;
        MplpId::parse(&raw)
            .map(ReviewId)
            .map_err(|_| ApiError::not_found(&format!("review {raw}")))
    }
}
