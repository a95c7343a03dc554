//! `POST /slack/actions`, the Request URL of the Slack app's interactivity:
//! a click on a Countersign message's buttons. Slack waits 3 seconds for an
//! answer, so the request is checked and parsed here and answered at once;
//! the decision and the message's update follow (`crate::slack`). And the
//! desk's side of linking a Slack account to the signed-in person
//! (`/api/v1/slack/…`, a session's only).

use super::auth::Caller;
use super::body::JsonBody;
use super::error::ApiError;
use super::AppState;
use crate::slack::payload::NotAClick;
use crate::store::slack::NotLinked;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use countersign_domain::wire::ErrorCode;
use serde_json::json;

/// A click: 200 once it is Slack's and a click on Countersign's buttons;
/// 401 when Slack did not sign it (or not lately), 400 when it is not a
/// click, 404 where Slack is not set up.
pub async fn actions(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    let (Some(slack), Some(sign_in)) = (state.slack.clone(), state.sign_in.clone()) else {
        return (StatusCode::NOT_FOUND, "Slack is not set up on this server").into_response();
    };
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let signed = slack.verify(
        header("x-slack-request-timestamp"),
        header("x-slack-signature"),
        &body,
    );
    if let Err(refused) = signed {
        tracing::warn!("a request to /slack/actions was refused: {refused}");
        return (StatusCode::UNAUTHORIZED, refused.to_string()).into_response();
    }
    let click = match crate::slack::payload::parse(&body) {
        Ok(click) => click,
        // The desk's link button: Slack opens the link and tells us too.
        Err(NotAClick::OtherButton(_)) => return StatusCode::OK.into_response(),
        Err(not) => return (StatusCode::BAD_REQUEST, not.to_string()).into_response(),
    };
    tokio::spawn(async move {
        let reply = slack.answer(state.service(), &sign_in, &click).await;
        let url = click.response_url.clone();
        let sent = tokio::task::spawn_blocking(move || slack.send(&url, &reply)).await;
        match sent {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::warn!(review = %click.review, "answering a Slack click failed: {e}")
            }
            Err(e) => tracing::warn!(review = %click.review, "answering a Slack click failed: {e}"),
        }
    });
    StatusCode::OK.into_response()
}

/// `GET /api/v1/slack/link-codes/{code}` (a session): the Slack user a live
/// link code was sent to, for the desk to ask "link this account to you?";
/// the code is not taken.
pub async fn link_code(
    State(state): State<AppState>,
    caller: Caller,
    Path(code): Path<String>,
) -> Result<Json<serde_json::Value>, ApiError> {
    caller.signed_in_person()?;
    match state.db.slack_link_code(&code).await? {
        Some(slack) => Ok(Json(json!({ "slack": slack }))),
        None => Err(ApiError::not_found(&format!("{}", NotLinked::Unknown))),
    }
}

/// `POST /api/v1/slack/links` `{"code"}` (a session): links the Slack user
/// the code was sent to to the signed-in person, taking the code.
pub async fn link(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<serde_json::Value>), ApiError> {
    let person = caller.signed_in_person()?;
    let code = body.get("code").and_then(|c| c.as_str()).ok_or_else(|| {
        ApiError::bad_request(
            ErrorCode::InvalidRequest,
            "send {\"code\": \"slk_…\"}, the code in the link Slack showed you",
        )
    })?;
    match state.db.link_slack(code, &person).await {
        Ok(link) => Ok((StatusCode::CREATED, Json(json!({ "link": link })))),
        Err(NotLinked::Db(e)) => Err(e.into()),
        Err(refused) => Err(ApiError::not_found(&refused.to_string())),
    }
}

/// `GET /api/v1/slack/links` (a session): the person's linked Slack accounts.
pub async fn links(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<serde_json::Value>, ApiError> {
    let person = caller.signed_in_person()?;
    let links = state.db.slack_links(&person).await?;
    Ok(Json(json!({ "links": links })))
}

/// `POST /api/v1/slack/links/{team_id}/{user_id}/unlink` (a session):
/// unlinks one of the person's Slack accounts.
pub async fn unlink(
    State(state): State<AppState>,
    caller: Caller,
    Path((team_id, user_id)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    let person = caller.signed_in_person()?;
    if state.db.unlink_slack(&person, &team_id, &user_id).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found(&format!(
            "your Slack account {team_id}/{user_id}"
        )))
    }
}
