//! Re-opening a rejected request: only its requester may, optionally with a revised plan.

use super::decide::event;
use super::{Review, Target};
use crate::model::{ConfirmStatus, Plan, PlanStatus};
use crate::toolcall::CanonicalError;
use crate::{IdSource, MplpId, Timestamp};
use chrono::{DateTime, Utc};
use serde_json::json;

/// The requester's resubmission of a rejected request.
#[derive(Debug, Clone, PartialEq)]
pub struct Resubmission {
    /// The role resubmitting; must be the confirm's `requested_by_role`.
    pub by_role: String,
    /// The plan revised after the rejection (same `plan_id`), if any.
    pub revised_plan: Option<Plan>,
    /// A new reason for the request, if any.
    pub reason: Option<String>,
}

/// Why a resubmission is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResubmitError {
    /// Only a rejected request can be resubmitted.
    #[error("only a rejected request can be resubmitted; this one is {0}")]
    NotRejected(ConfirmStatus),
    /// Someone other than the requester.
    #[error("only the requester `{requester}` can resubmit; `{found}` cannot")]
    NotRequester {
        /// The role that asked.
        requester: String,
        /// The role that tried.
        found: String,
    },
    /// The revised plan is another plan.
    #[error("the revised plan {found} is not the plan under review ({expected})")]
    OtherPlan {
        /// The plan under review.
        expected: MplpId,
        /// The plan given.
        found: MplpId,
    },
    /// The plan has no canonical JSON, so no receipt could name it by hash.
    #[error("the plan has no canonical form for its receipt's hash: {0}")]
    Unhashable(CanonicalError),
}

/// Re-opens a rejected review as pending (`rejected -> pending`); its plan, or the
/// revised plan, becomes `proposed` again. Appends a `confirm.resubmitted` event.
pub fn resubmit(
    review: &Review,
    input: Resubmission,
    now: DateTime<Utc>,
    ids: &mut impl IdSource,
) -> Result<Review, ResubmitError> {
    let confirm = &review.confirm;
    if confirm.status != ConfirmStatus::Rejected {
        return Err(ResubmitError::NotRejected(confirm.status));
    }
    if input.by_role.trim() != confirm.requested_by_role {
        return Err(ResubmitError::NotRequester {
            requester: confirm.requested_by_role.clone(),
            found: input.by_role,
        });
    }
    if let Some(plan) = &input.revised_plan {
        if plan.plan_id != confirm.target_id {
            return Err(ResubmitError::OtherPlan {
                expected: confirm.target_id,
                found: plan.plan_id,
            });
        }
    }
    let at = Timestamp::from_utc(now);
    let mut next = review.clone();
    let revised = input.revised_plan.is_some();
    if let Some(plan) = input.revised_plan {
        next.target = Some(Target::Plan(plan));
    }
    if let Some(Target::Plan(plan)) = &mut next.target {
        if plan.status == PlanStatus::Draft {
            plan.status = PlanStatus::Proposed;
        }
    }
    next.fix_target_hash().map_err(ResubmitError::Unhashable)?;
    if let Some(reason) = input
        .reason
        .map(|r| r.trim().to_owned())
        .filter(|r| !r.is_empty())
    {
        next.confirm.reason = Some(reason);
    }
    next.confirm.status = ConfirmStatus::Pending;
    // A new round waits anew: the server sets its escalation time again.
    next.escalate_at = None;
    let resubmitted = event(
        ids.next_id(),
        "confirm.resubmitted".to_owned(),
        "confirm",
        &at,
        confirm.trace.as_ref().map(|t| t.trace_id),
        json!({
            "confirm_id": confirm.confirm_id,
            "requested_by_role": confirm.requested_by_role,
            "revised_plan": revised,
        }),
    );
    next.confirm
        .events
        .get_or_insert_with(Vec::new)
        .push(resubmitted);
    Ok(next)
}
