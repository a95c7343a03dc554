//! Tool-call approvals over HTTP: agents ask before one risky call (a standing
//! scope grant may approve it at once), redeem the token right before running
//! it, or withdraw the request when the call will not run after all.
//! Reviewers decide through the ordinary decisions endpoint.

use super::auth::{Caller, ReviewId};
use super::body::{check_fields, object, JsonBody};
use super::error::{ApiError, Detail, ErrorCode};
use super::AppState;
use crate::store::keys::KeyKind;
use crate::usecases::{self, NotSpent};
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use countersign_domain::toolcall::{
    CallHash, RedeemError, Redemption, ToolCall, ToolCallSubmission, WithdrawError,
};
use countersign_domain::wire::{Answer, Redeemed};
use serde::Deserialize;
use serde_json::{json, Value};

const SUBMISSION_FIELDS: &[&str] = &[
    "approvalId",
    "requestedByRole",
    "sessionId",
    "runId",
    "workspace",
    "clientDeviceId",
    "toolCall",
    "humanSummary",
    "riskTier",
    "riskReasons",
    "sideEffects",
    "rollbackNotes",
    "expiresAt",
    "diff",
    "suggestedAlternatives",
    "dryRun",
    "editable",
    "reason",
];

const SUBMISSION_REQUIRED: &[&str] = &[
    "requestedByRole",
    "sessionId",
    "runId",
    "toolCall",
    "humanSummary",
    "riskTier",
];

/// `POST /api/v1/tool-calls` (agent): ask before running a tool call. 201 with
/// the review and its outcome: pending, or approved at once (with a token) when
/// a reviewer's scope grant covers the call; 422 with every problem.
pub async fn submit(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<Answer>), ApiError> {
    caller.require(KeyKind::Agent)?;
    let refuse = |details| ApiError::invalid("the tool-call request was refused", details);
    let fields = object(&body, "").map_err(|d| refuse(vec![d]))?;
    let details = check_fields(fields, "", SUBMISSION_FIELDS, SUBMISSION_REQUIRED);
    if !details.is_empty() {
        return Err(refuse(details));
    }
    let submission = ToolCallSubmission::deserialize(&body)
        .map_err(|e| refuse(vec![Detail::new("", e.to_string())]))?;
    let answer = usecases::ask_tool_call(state.service(), &caller.0, submission).await?;
    Ok((StatusCode::CREATED, Json(answer)))
}

/// `POST /api/v1/reviews/{id}/redeem` (the agent that asked): spend the token
/// right before running the call. Every check is the domain's; a refusal names
/// the failed one (`token_unknown`, `token_expired`, `token_used`,
/// `token_hash_mismatch`, `token_device_mismatch`, `token_other_approval`).
/// Two redemptions at the same instant: one wins, the other is `token_used`.
pub async fn redeem_token(
    State(state): State<AppState>,
    caller: Caller,
    ReviewId(id): ReviewId,
    JsonBody(body): JsonBody,
) -> Result<Json<Redeemed>, ApiError> {
    caller.require(KeyKind::Agent)?;
    let presented = redemption(&body)?;
    let redeemed = usecases::redeem(state.service(), &caller.0, id, &presented).await?;
    Ok(Json(redeemed))
}

/// `POST /api/v1/reviews/{id}/withdraw` (the agent that asked), `{"reason"?}`:
/// the call will not run after all (its client cancelled it), so the pending
/// request closes as cancelled and no reviewer spends time on it. 409 when it
/// is decided already, or not a tool call.
pub async fn withdraw_request(
    State(state): State<AppState>,
    caller: Caller,
    ReviewId(id): ReviewId,
    JsonBody(body): JsonBody,
) -> Result<Json<Answer>, ApiError> {
    caller.require(KeyKind::Agent)?;
    let refuse = |details| ApiError::invalid("the withdrawal was refused", details);
    let fields = object(&body, "").map_err(|d| refuse(vec![d]))?;
    let mut details = check_fields(fields, "", &["reason"], &[]);
    let reason = match fields.get("reason") {
        None | Some(Value::Null) => None,
        Some(Value::String(reason)) => Some(reason.clone()),
        Some(_) => {
            details.push(Detail::new("/reason", "expected a string"));
            None
        }
    };
    if !details.is_empty() {
        return Err(refuse(details));
    }
    let answer = usecases::withdraw(state.service(), &caller.0, id, reason.as_deref()).await?;
    Ok(Json(answer))
}

impl From<NotSpent<RedeemError>> for ApiError {
    fn from(e: NotSpent<RedeemError>) -> Self {
        match e {
            NotSpent::NotFound(id) => ApiError::not_found(&format!("review {id}")),
            NotSpent::Refused(e) => {
                let status = match e {
                    RedeemError::Unknown(_) => StatusCode::NOT_FOUND,
                    _ => StatusCode::CONFLICT,
                };
                ApiError::new(status, e.code(), e.to_string())
            }
            NotSpent::Busy => ApiError::busy(),
            NotSpent::Broken(e) => ApiError::internal(e),
        }
    }
}

impl From<NotSpent<WithdrawError>> for ApiError {
    fn from(e: NotSpent<WithdrawError>) -> Self {
        match e {
            NotSpent::NotFound(id) => ApiError::not_found(&format!("review {id}")),
            NotSpent::Refused(e) => ApiError::new(
                StatusCode::CONFLICT,
                ErrorCode::CannotWithdraw,
                e.to_string(),
            ),
            NotSpent::Busy => ApiError::busy(),
            NotSpent::Broken(e) => ApiError::internal(e),
        }
    }
}

/// `{"tokenId", "toolCall" | "toolCallHash", "clientDeviceId"?, "approvalId"?}`:
/// the call itself (hashed here) or its hash.
fn redemption(body: &Value) -> Result<Redemption, ApiError> {
    let refuse = |details| ApiError::invalid("the redemption was refused", details);
    let fields = object(body, "").map_err(|d| refuse(vec![d]))?;
    let mut details = check_fields(
        fields,
        "",
        &[
            "tokenId",
            "approvalId",
            "toolCall",
            "toolCallHash",
            "clientDeviceId",
        ],
        &["tokenId"],
    );
    let hash = match (fields.get("toolCall"), fields.get("toolCallHash")) {
        (Some(call), None) => match ToolCall::deserialize(call) {
            Ok(call) => match call.hash() {
                Ok(hash) => Some(hash),
                Err(e) => {
                    details.push(Detail::new(format!("/toolCall{}", e.path()), e.to_string()));
                    None
                }
            },
            Err(e) => {
                details.push(Detail::new(
                    "/toolCall",
                    format!("must be {{\"name\": string, \"args\": object}}: {e}"),
                ));
                None
            }
        },
        (None, Some(Value::String(hash))) => Some(CallHash::from_hex(hash)),
        _ => {
            details.push(Detail::new(
                "/toolCall",
                "send the call about to run as `toolCall` (or its hash as `toolCallHash`), not both",
            ));
            None
        }
    };
    let mut rest = body.clone();
    if let Some(map) = rest.as_object_mut() {
        map.remove("toolCall");
        map.insert("toolCallHash".into(), json!(hash));
    }
    if !details.is_empty() {
        return Err(refuse(details));
    }
    Redemption::deserialize(&rest).map_err(|e| refuse(vec![Detail::new("", e.to_string())]))
}
