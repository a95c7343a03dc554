//! The grants ledger (reviewer): `GET /api/v1/grants` lists the standing
//! approvals (tool, argument match, who granted it, when, until when, how
//! many calls it let through); `POST /api/v1/grants/{grant_id}/revoke` ends
//! one, so the agent's next such call is asked again.

use super::auth::Caller;
use super::error::{ApiError, Detail, ErrorCode};
use super::query::Params;
use super::AppState;
use crate::store::grants::GrantRecord;
use crate::store::keys::KeyKind;
use crate::usecases::{self, NotRevoked};
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::Json;
use countersign_domain::wire::GrantList;

/// `GET /api/v1/grants[?revoked=include]`: newest first, live ones only
/// unless revoked ones are asked for too.
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(raw): RawQuery,
) -> Result<Json<GrantList>, ApiError> {
    caller.require(KeyKind::Reviewer)?;
    let params = Params::parse(raw.as_deref(), &["revoked"])?;
    let with_revoked = match params.get("revoked").map(String::as_str) {
        None => false,
        Some("include") => true,
        Some(_) => {
            return Err(ApiError::bad_request(
                ErrorCode::InvalidParameter,
                "revoked takes one value: include",
            )
            .with_details(vec![Detail::new("revoked", "`include`, or leave it out")]))
        }
    };
    let items: Vec<GrantRecord> = state.db.grants(with_revoked).await?;
    Ok(Json(GrantList { items }))
}

/// `POST /api/v1/grants/{grant_id}/revoke`: 200 with the revoked grant; 409
/// when it was revoked before (naming when and by whom); 404 when unknown.
pub async fn revoke(
    State(state): State<AppState>,
    caller: Caller,
    Path(grant_id): Path<String>,
) -> Result<Json<GrantRecord>, ApiError> {
    caller.require(KeyKind::Reviewer)?;
    let revoked = usecases::revoke_grant(state.service(), &caller.0, &grant_id).await?;
    Ok(Json(revoked))
}

impl From<NotRevoked> for ApiError {
    fn from(e: NotRevoked) -> Self {
        match e {
            NotRevoked::NotFound(what) => ApiError::not_found(&what),
            NotRevoked::Already(grant) => ApiError::new(
                StatusCode::CONFLICT,
                ErrorCode::AlreadyRevoked,
                format!(
                    "grant {} was already revoked at {} by {}",
                    grant.grant.grant_id,
                    grant.revoked_at.unwrap_or_default(),
                    grant.revoked_by.unwrap_or_default()
                ),
            ),
            NotRevoked::Db(e) => e.into(),
        }
    }
}
