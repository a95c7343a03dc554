//! Tool-call approvals over HTTP: agents ask before one risky call (a standing
//! scope grant may approve it at once), redeem the token right before running
//! it, or withdraw the request when the call will not run after all.
//! Reviewers decide through the ordinary decisions endpoint.

use super::auth::Caller;
use super::body::{check_fields, object, JsonBody};
use super::error::{ApiError, Detail};
use super::AppState;
use crate::changes::{new_id, ByGrant};
use crate::store::keys::KeyKind;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use countersign_domain::toolcall::{
    approve_by_grant, new_tool_call_review, redeem, withdraw, CallHash, RedeemError, Redemption,
    ToolCall, ToolCallSubmission,
};
use countersign_domain::wire::ChangeKind;
use countersign_domain::wire::{Answer, Redeemed};
use countersign_domain::{Review, Target, Timestamp};
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
    let now = chrono::Utc::now();
    let mut review = new_tool_call_review(submission, now, &mut new_id)
        .map_err(|issues| refuse(issues.iter().map(Detail::from).collect()))?;
    review.requester = Some(caller.0.key_ref());
    let rule = state.changes.policy().rule_for(&review).into_owned();
    state.changes.policy().schedule_escalation(&mut review, now);
    if let (Some(delay), Some(Target::ToolCall(call))) = (rule.expires_after, &mut review.target) {
        let cap = now + delay.duration();
        if call.request.expires_at.to_utc() > cap {
            call.request.expires_at = Timestamp::from_utc(cap);
        }
    }
    // A standing grant is one reviewer's word: it never stands in for a quorum.
    // A call it covers is stored approved, never pending for a moment.
    if !rule.needs_quorum() {
        if let Some(approved) = store_approved_by_grant(&state, &review, &caller.0.id).await? {
            return Ok((StatusCode::CREATED, Json(state.answer(approved)?)));
        }
    }
    if state.changes.create(&review, &caller.0.id).await?.is_some() {
        return Err(already_exists());
    }
    Ok((StatusCode::CREATED, Json(state.answer(review)?)))
}

fn already_exists() -> ApiError {
    ApiError::new(
        StatusCode::CONFLICT,
        "already_exists",
        "a review for this approvalId already exists",
    )
    .with_details(vec![Detail::new("/approvalId", "already taken")])
}

/// Stores a new call approved by the first live grant that covers it,
/// recording the decision that names the grant: the approved review, or
/// `None` when no grant covers it (nothing stored: ask a reviewer).
async fn store_approved_by_grant(
    state: &AppState,
    review: &Review,
    created_by: &str,
) -> Result<Option<Review>, ApiError> {
    let Some(call) = review.tool_call() else {
        return Ok(None);
    };
    let name = call.request.tool_call().map_err(ApiError::internal)?.name;
    let now = chrono::Utc::now();
    for grant in state.db.grants_for_tool(&name).await? {
        let Some(decided) = approve_by_grant(review, &grant, now, &mut new_id) else {
            continue;
        };
        let approved = decided.map_err(ApiError::internal)?;
        // A grant revoked meanwhile approves nothing: the next one may.
        match state
            .changes
            .create_approved_by_grant(&approved, created_by, &grant.grant_id.to_string())
            .await?
        {
            ByGrant::Stored => return Ok(Some(approved)),
            ByGrant::Taken => return Err(already_exists()),
            ByGrant::GrantGone => continue,
        }
    }
    Ok(None)
}

/// `POST /api/v1/reviews/{id}/redeem` (the agent that asked): spend the token
/// right before running the call. Every check is the domain's; a refusal names
/// the failed one (`token_unknown`, `token_expired`, `token_used`,
/// `token_hash_mismatch`, `token_device_mismatch`, `token_other_approval`).
/// Two redemptions at the same instant: one wins, the other is `token_used`.
pub async fn redeem_token(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> Result<Json<Redeemed>, ApiError> {
    caller.require(KeyKind::Agent)?;
    let presented = redemption(&body)?;
    for _ in 0..8 {
        let stored = caller.review(&state, &id).await?;
        let next =
            redeem(&stored.review, &presented, chrono::Utc::now(), &mut new_id).map_err(|e| {
                crate::metrics::redemption(Some(e.code()));
                redeem_refusal(e)
            })?;
        if state
            .changes
            .replace(stored.version, &next, ChangeKind::Redeemed)
            .await?
        {
            let token = next
                .tool_call()
                .and_then(|c| c.outcome.as_ref())
                .and_then(|o| o.token.clone());
            crate::metrics::redemption(None);
            return Ok(Json(Redeemed {
                redeemed: true,
                token,
            }));
        }
    }
    Err(ApiError::busy())
}

/// `POST /api/v1/reviews/{id}/withdraw` (the agent that asked), `{"reason"?}`:
/// the call will not run after all (its client cancelled it), so the pending
/// request closes as cancelled and no reviewer spends time on it. 409 when it
/// is decided already, or not a tool call.
pub async fn withdraw_request(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
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
    for _ in 0..8 {
        let stored = caller.review(&state, &id).await?;
        let next = withdraw(
            &stored.review,
            reason.as_deref(),
            chrono::Utc::now(),
            &mut new_id,
        )
        .map_err(|e| ApiError::new(StatusCode::CONFLICT, "cannot_withdraw", e.to_string()))?;
        if state
            .changes
            .replace(stored.version, &next, ChangeKind::Decided)
            .await?
        {
            return Ok(Json(state.answer(next)?));
        }
    }
    Err(ApiError::busy())
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

fn redeem_refusal(e: RedeemError) -> ApiError {
    let status = match e {
        RedeemError::Unknown(_) => StatusCode::NOT_FOUND,
        _ => StatusCode::CONFLICT,
    };
    ApiError::new(status, e.code(), e.to_string())
}
