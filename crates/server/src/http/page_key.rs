//! A reviewer key remembered on a device also draws the desk's first page:
//! `POST /page-key` (that key as `Authorization: Bearer`) keeps it in an
//! HttpOnly cookie of this site, which the server reads only to write the
//! inbox's first rows into `/` (as it does for a signed-in reviewer), so a
//! phone's slow link draws them in one round trip. No API request is
//! authenticated by it: a request another site makes the browser send
//! carries it in vain. `POST /page-key/forget` clears it (no key needed: it
//! only ever makes this browser's page plainer).

use super::auth::Caller;
use super::error::{ApiError, ErrorCode};
use super::signin::cookie;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

/// The cookie that carries a device's reviewer key for drawing `/`.
pub const PAGE_KEY_COOKIE: &str = "__Host-countersign_page_key";

/// How long a remembered key draws the page without the app renewing it.
const KEPT_DAYS: i64 = 30;

/// `POST /api/v1/page-key` (reviewer key): this browser's `/` is drawn
/// with the key's inbox from now on.
pub async fn remember(caller: Caller, headers: HeaderMap) -> Result<Response, ApiError> {
    caller.require(crate::store::keys::KeyKind::Reviewer)?;
    let secret = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|_| caller.session_id().is_none());
    let Some(secret) = secret else {
        return Err(ApiError::forbidden(
            ErrorCode::WrongKeyKind,
            "a signed-in person's page is drawn by the session already: only a reviewer key in `Authorization: Bearer` is remembered",
        ));
    };
    let kept = cookie(
        PAGE_KEY_COOKIE,
        secret.to_owned(),
        Some(chrono::Duration::days(KEPT_DAYS)),
    );
    Ok((StatusCode::NO_CONTENT, [(header::SET_COOKIE, kept)]).into_response())
}

/// `POST /api/v1/page-key/forget`: this browser's `/` is the plain page again.
pub async fn forget() -> Response {
    let cleared = cookie(
        PAGE_KEY_COOKIE,
        String::new(),
        Some(chrono::Duration::zero()),
    );
    (StatusCode::NO_CONTENT, [(header::SET_COOKIE, cleared)]).into_response()
}
