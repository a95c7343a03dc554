//! Who is calling: the API key from `Authorization: Bearer <key>`; for the
//! event stream only, a single-use ticket minted with that key (`?ticket=`,
//! since browsers' EventSource cannot set headers; a key never travels in a
//! URL, where logs and histories keep it); or a signed-in person's session
//! cookie. No key or an unknown one: 401. The wrong kind of key: 403.
//!
//! A session acts as a reviewer key with the roles its person's groups give.
//! Before a request of its is answered, a state-changing one must come from
//! the desk's origin with the session's `X-Countersign-CSRF` token, and the
//! provider's word on the person must be younger than the bound (else it is
//! asked again; when it cannot say, nothing is done).

use super::error::{ApiError, ErrorCode};
use super::signin::cookie_value;
use super::AppState;
use crate::signin::provider::ProviderError;
use crate::signin::SignInError;
use crate::store::keys::{ApiKey, KeyKind};
use crate::store::sessions::Session;
use crate::store::Stored;
use axum::extract::{FromRequestParts, OptionalFromRequestParts, Path};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, StatusCode};
use countersign_domain::wire::Refusal;
use countersign_domain::MplpId;
use sha2::Digest;

/// The cookie that carries a session's secret.
pub const SESSION_COOKIE: &str = "__Host-countersign_session";

/// The header state-changing requests with a session carry its token in.
const CSRF_HEADER: &str = "x-countersign-csrf";

/// The authenticated key of a request, and the session when a signed-in
/// person sent it (then the key is the session's: `ses_…`, its person's roles).
pub struct Caller(pub ApiKey, pub Option<Session>);

impl Caller {
    /// 403 unless the key is of this kind (and, for a session, its person
    /// has a role here).
    pub fn require(&self, kind: KeyKind) -> Result<(), ApiError> {
        if let (Some(session), KeyKind::Reviewer) = (&self.1, kind) {
            if session.roles.is_empty() {
                return Err(ApiError::forbidden(
                    ErrorCode::NoRole,
                    format!(
                        "you are signed in as {}, but none of your groups gives a role on this desk: ask its operator to add you to a reviewers' group",
                        session.person.label()
                    ),
                ));
            }
        }
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
    /// The session's public id, when a session signed the request.
    pub fn session_id(&self) -> Option<&str> {
        self.1.as_ref().map(|s| s.id.as_str())
    }

    /// The signed-in person, or 403 for an API key.
    pub fn signed_in_person(&self) -> Result<countersign_domain::Person, ApiError> {
        self.1.as_ref().map(|s| s.person.clone()).ok_or_else(|| {
            ApiError::forbidden(
                ErrorCode::WrongKeyKind,
                "this is for a signed-in person; this request used an API key",
            )
        })
    }

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
        if from_header.is_none() && ticket.is_none() {
            if let Some(secret) = cookie_value(&parts.headers, SESSION_COOKIE) {
                return from_session(parts, state, &secret).await;
            }
        }
        if let (None, Some(ticket)) = (from_header, ticket) {
            // Tickets are minted within the key's rate: spending one is not counted again.
            return match state.db.spend_event_ticket(&ticket).await? {
                Some(key) => Ok(Caller(key, None)),
                None => Err(unauthorized(
                    "this event ticket is unknown, used or expired: ask for a new one (POST /api/v1/events/tickets)",
                )),
            };
        }
        let secret = from_header.filter(|s| !s.is_empty()).ok_or_else(|| {
            unauthorized("an API key is required: `Authorization: Bearer <api key>`")
        })?;
        Caller::of_key(state, secret).await
    }
}

impl Caller {
    /// The caller an API key names, within its rate: 401 for an unknown or
    /// revoked key, 403 for a reviewer key where reviewer keys are off.
    pub async fn of_key(state: &AppState, secret: &str) -> Result<Caller, ApiError> {
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
        if let Some(key) = &key {
            keys_allowed(state, key)?;
        }
        match key {
            Some(key) if known.is_some() => Ok(Caller(key, None)),
            Some(key) => match state.limits.take(&hashed, &key) {
                Ok(()) => Ok(Caller(key, None)),
                Err(over) => Err(over_rate(over).await),
            },
            None => Err(unauthorized("this API key is unknown or revoked")),
        }
    }
}

impl OptionalFromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    /// No credential, or one that names nobody (an ended session): `None`.
    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Option<Self>, ApiError> {
        match <Caller as FromRequestParts<AppState>>::from_request_parts(parts, state).await {
            Ok(caller) => Ok(Some(caller)),
            Err(e) if e.status() == StatusCode::UNAUTHORIZED => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// 403 for a reviewer key where reviewer keys are turned off.
fn keys_allowed(state: &AppState, key: &ApiKey) -> Result<(), ApiError> {
    let off = state
        .sign_in
        .as_ref()
        .is_some_and(|s| !s.config.reviewer_keys);
    if off && key.kind == KeyKind::Reviewer {
        return Err(ApiError::forbidden(
            ErrorCode::ReviewerKeysOff,
            format!(
                "reviewer keys are turned off on this server (key {}): reviewers sign in with their organisation's account",
                key.id
            ),
        ));
    }
    Ok(())
}

/// The caller behind a session cookie: live, not cross-site when it changes
/// anything, and checked with its provider when the last check is too old.
async fn from_session(parts: &Parts, state: &AppState, secret: &str) -> Result<Caller, ApiError> {
    let Some(sign_in) = &state.sign_in else {
        return Err(unauthorized(
            "sign-in is not set up on this server: use `Authorization: Bearer <api key>`",
        ));
    };
    let session = state.db.session_for_secret(secret).await?.ok_or_else(|| {
        unauthorized("your session has ended or is not one this server knows: sign in again")
    })?;
    if !parts.method.is_safe() {
        same_site(&parts.headers, &sign_in.config.origin, &session.csrf)?;
    }
    let session = sign_in
        .fresh(&state.db, session)
        .await
        .map_err(|e| match e {
            SignInError::Provider(ProviderError::Unreachable { .. }) => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                ErrorCode::ProviderUnavailable,
                format!(
                    "{e}; until it answers, your session cannot act (your groups may have changed)"
                ),
            ),
            SignInError::Db(db) => ApiError::internal(db),
            other => unauthorized(&format!("{other}; sign in again")),
        })?;
    let key = ApiKey::of_session(&session);
    match state.limits.take(&crate::store::keys::hash(secret), &key) {
        Ok(()) => Ok(Caller(key, Some(session))),
        Err(over) => Err(over_rate(over).await),
    }
}

/// 403 unless a state-changing request with a session came from the desk's
/// own origin and carries the session's token: another site can make a
/// browser send the cookie, but not these.
fn same_site(headers: &HeaderMap, origin: &str, csrf: &str) -> Result<(), ApiError> {
    let from = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok());
    if from != Some(origin) {
        return Err(ApiError::forbidden(
            ErrorCode::CrossSite,
            format!(
                "a request with your session came from {}, not from the desk ({origin}): refused",
                from.unwrap_or("a page that did not say where it is")
            ),
        ));
    }
    let token = headers.get(CSRF_HEADER).and_then(|v| v.to_str().ok());
    let digest = |t: &str| sha2::Sha256::digest(t.as_bytes());
    if token.map(digest) != Some(digest(csrf)) {
        return Err(ApiError::forbidden(
            ErrorCode::CrossSite,
            "a request with your session lacks its X-Countersign-CSRF token: refused",
        ));
    }
    Ok(())
}

/// A review's id from the request's path, parsed: a malformed one names no
/// review, so it is answered as an unknown one is (404).
pub struct ReviewId(pub MplpId);

impl FromRequestParts<AppState> for ReviewId {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let Path(raw) =
            <Path<String> as FromRequestParts<AppState>>::from_request_parts(parts, state)
                .await
                .map_err(|e| ApiError::not_found(&format!("review ({e})")))?;
        MplpId::parse(&raw)
            .map(ReviewId)
            .map_err(|_| ApiError::not_found(&format!("review {raw}")))
    }
}
