//! The steps of a tool call's life that are not a reviewer's decision: asking,
//! approval by a standing grant, expiry, withdrawal by its agent, and
//! redeeming the token.

use super::grant::ScopeGrant;
use super::outcome::{OutcomeKind, ToolCallReview};
use super::request::ToolCallSubmission;
use super::token::{RedeemError, Redemption};
use crate::issue::Issue;
use crate::model::{ConfirmStatus, DecisionStatus};
use crate::policy::ExpiryDecision;
use crate::review::{decide, event, DecideError, DecisionInput, KeyRef, Review, Target};
use crate::{IdSource, Timestamp};
use chrono::{DateTime, Utc};
use serde_json::json;

/// The role recorded on decisions Countersign makes itself (expiry).
pub const EXPIRED_BY: &str = "countersign";

/// A pending review for a submitted tool call, or every problem of the submission.
pub fn new_tool_call_review(
    submission: ToolCallSubmission,
    now: DateTime<Utc>,
    ids: &mut impl IdSource,
) -> Result<Review, Vec<Issue>> {
    let (confirm, request) = submission.into_request(now, ids)?;
    Ok(Review {
        confirm,
        target: Some(Target::ToolCall(ToolCallReview {
            request,
            outcome: None,
        })),
        deciders: Vec::new(),
        requester: None,
        escalate_at: None,
        target_sha256: None,
    })
}

/// Every standing grant recorded in `reviews` (made by scoped approvals).
pub fn grants<'a>(reviews: impl IntoIterator<Item = &'a Review>) -> Vec<&'a ScopeGrant> {
    reviews
        .into_iter()
        .filter_map(|review| match &review.target {
            Some(Target::ToolCall(call)) => call.outcome.as_ref()?.grant.as_ref(),
            _ => None,
        })
        .collect()
}

/// Approves a pending call because `grant` covers it: a decision signed with the
/// grant's role that names the grant, and a token of its own. `None` when the
/// grant does not cover the call (or it is not a pending tool call).
pub fn approve_by_grant(
    review: &Review,
    grant: &ScopeGrant,
    now: DateTime<Utc>,
    ids: &mut impl IdSource,
) -> Option<Result<Review, DecideError>> {
    let Some(Target::ToolCall(call)) = &review.target else {
        return None;
    };
    let name = call.request.tool_call().ok()?.name;
    if review.confirm.status != ConfirmStatus::Pending || !grant.covers(&call.request, &name, now) {
        return None;
    }
    let input = DecisionInput {
        status: DecisionStatus::Approved,
        decided_by_role: grant.granted_by_role.clone(),
        reason: Some(format!(
            "approved by grant {} ({}), made when request {} was approved",
            grant.grant_id,
            grant.scope.label(),
            grant.approval_id
        )),
        tool_call: None,
    };
    Some(decide(review, &input, now, ids).map(|mut next| {
        if let Some(Target::ToolCall(call)) = &mut next.target {
            if let Some(outcome) = &mut call.outcome {
                outcome.approved_by_grant = Some(grant.grant_id);
            }
        }
        // The decision is the granting reviewer's standing word: it is
        // attributed to their key, as their own decisions are.
        if let Some(key_id) = &grant.granted_by_key {
            let key = KeyRef {
                key_id: key_id.clone(),
                owner: grant.granted_by_owner.clone(),
                person: grant.granted_by_person.clone(),
            };
            // A standing grant, not a channel, let it through.
            next.attribute_last_decision(&key, None, None);
        }
        next
    }))
}

/// Whether `review` is a pending tool call whose `expiresAt` has passed.
pub fn is_due(review: &Review, now: DateTime<Utc>) -> bool {
    review.confirm.status == ConfirmStatus::Pending
        && review
            .tool_call()
            .is_some_and(|call| call.request.expired_at(now))
}

/// Closes a pending call whose `expiresAt` has passed as `closing` (cancelled
/// unless a policy says rejected), denied by default, with the reason the
/// agent sees. `None` when nothing is due.
pub fn expire_if_due(
    review: &Review,
    closing: ExpiryDecision,
    now: DateTime<Utc>,
    ids: &mut impl IdSource,
) -> Option<Review> {
    let Some(Target::ToolCall(call)) = review.target.as_ref().filter(|_| is_due(review, now))
    else {
        return None;
    };
    let input = DecisionInput {
        status: closing.into(),
        decided_by_role: EXPIRED_BY.into(),
        reason: Some(format!(
            "expired at {} with no decision; denied by default",
            call.request.expires_at
        )),
        tool_call: None,
    };
    let mut next = decide(review, &input, now, ids).ok()?;
    if let Some(Target::ToolCall(call)) = &mut next.target {
        if let Some(outcome) = &mut call.outcome {
            outcome.kind = OutcomeKind::Expired;
        }
    }
    Some(next)
}

/// Why an agent cannot withdraw a request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WithdrawError {
    /// Only a pending request can be withdrawn.
    #[error("only a pending request can be withdrawn; this one is {0}")]
    NotPending(ConfirmStatus),
    /// Only a tool-call request (a plan is cancelled by a reviewer).
    #[error("only a tool-call request can be withdrawn by its agent; this review is about a {0}")]
    NotToolCall(String),
}

/// Withdraws a pending tool-call request at its agent's word (its client
/// cancelled the call): cancelled, decided by the role that asked, with
/// `reason` if the agent gave one, so nobody approves a call that will not
/// run. The outcome's kind is `withdrawn`.
pub fn withdraw(
    review: &Review,
    reason: Option<&str>,
    now: DateTime<Utc>,
    ids: &mut impl IdSource,
) -> Result<Review, WithdrawError> {
    let confirm = &review.confirm;
    if confirm.status != ConfirmStatus::Pending {
        return Err(WithdrawError::NotPending(confirm.status));
    }
    if !matches!(review.target, Some(Target::ToolCall(_))) {
        return Err(WithdrawError::NotToolCall(
            confirm.target_type.as_str().to_owned(),
        ));
    }
    // Past its expiry it closes as expired, which is what it became.
    if is_due(review, now) {
        return expire_if_due(review, ExpiryDecision::Cancelled, now, ids)
            .ok_or(WithdrawError::NotPending(confirm.status));
    }
    let input = DecisionInput {
        status: DecisionStatus::Cancelled,
        decided_by_role: confirm.requested_by_role.clone(),
        reason: Some(match reason.map(str::trim).filter(|r| !r.is_empty()) {
            Some(reason) => format!("withdrawn by the agent: {reason}"),
            None => "withdrawn by the agent".to_owned(),
        }),
        tool_call: None,
    };
    // A pending tool call before its expiry takes a cancellation with a reason.
    let mut next =
        decide(review, &input, now, ids).map_err(|_| WithdrawError::NotPending(confirm.status))?;
    if let Some(Target::ToolCall(call)) = &mut next.target {
        if let Some(outcome) = &mut call.outcome {
            outcome.kind = OutcomeKind::Withdrawn;
        }
    }
    Ok(next)
}

/// Redeems the review's token for the call about to run: every check of
/// [`Token::redeem`](super::Token::redeem), then the token is marked used and a
/// `token.redeemed` event recorded. The review is the one the token was minted on.
pub fn redeem(
    review: &Review,
    presented: &Redemption,
    now: DateTime<Utc>,
    ids: &mut impl IdSource,
) -> Result<Review, RedeemError> {
    let token = match &review.target {
        Some(Target::ToolCall(call)) => call.outcome.as_ref().and_then(|o| o.token.as_ref()),
        _ => None,
    }
    .filter(|token| token.token_id == presented.token_id)
    .ok_or(RedeemError::Unknown(presented.token_id))?;
    let used = token.redeem(presented, now)?;
    let mut next = review.clone();
    let at = Timestamp::from_utc(now);
    let trace_id = review.confirm.trace.as_ref().map(|t| t.trace_id);
    next.confirm.events.get_or_insert_with(Vec::new).push(event(
        ids.next_id(),
        "token.redeemed".into(),
        "countersign",
        &at,
        trace_id,
        json!({
            "token_id": used.token_id,
            "approval_id": used.approval_id,
            "tool_call_hash": used.tool_call_hash,
            "client_device_id": presented.client_device_id,
        }),
    ));
    if let Some(Target::ToolCall(call)) = &mut next.target {
        if let Some(outcome) = &mut call.outcome {
            outcome.token = Some(used);
        }
    }
    Ok(next)
}
