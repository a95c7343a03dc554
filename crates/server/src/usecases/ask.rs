//! An agent asks: for a review of a plan or change, for one tool call (stored
//! approved at once when a reviewer's standing grant covers it), or for a
//! rejected review to be looked at again.

use super::{Broken, Service};
use crate::changes::{new_id, ByGrant};
use crate::store::keys::ApiKey;
use countersign_domain::review::{Resubmission, ResubmitError};
use countersign_domain::toolcall::{approve_by_grant, new_tool_call_review, ToolCallSubmission};
use countersign_domain::wire::{Answer, ChangeKind};
use countersign_domain::{resubmit, Issue, MplpId, Review, Target, Timestamp};

/// A review asked for, as stored.
#[derive(Debug)]
pub enum Asked {
    /// Stored now.
    New(Answer),
    /// The same review was stored before (a retry): as it stands now.
    Again(Answer),
}

/// Why a request was not stored.
#[derive(Debug, thiserror::Error)]
pub enum NotAsked {
    /// The tool call's request breaks the rules: every problem.
    #[error("the tool-call request was refused")]
    Invalid(Vec<Issue>),
    /// Its `confirm_id` names a different review.
    #[error("a different review with confirm_id {0} already exists")]
    Taken(String),
    /// A review for the tool call's `approvalId` exists already.
    #[error("a review for this approvalId already exists")]
    ApprovalTaken,
    /// The server failed.
    #[error(transparent)]
    Broken(#[from] Broken),
}

/// Stores `review` as asked by `agent`, its escalation scheduled by policy.
pub async fn ask_review(
    service: Service<'_>,
    agent: &ApiKey,
    mut review: Review,
) -> Result<Asked, NotAsked> {
    review.requester = Some(agent.key_ref());
    let policy = service.changes.policy();
    policy.schedule_escalation(&mut review, chrono::Utc::now());
    match service.changes.create(&review, &agent.id).await? {
        None => Ok(Asked::New(service.answer(review)?)),
        Some(existing) if existing.review == review || same_request(&existing.review, &review) => {
            Ok(Asked::Again(service.answer(existing.review)?))
        }
        Some(_) => Err(NotAsked::Taken(review.confirm.confirm_id.to_string())),
    }
}

/// A retried create matches the stored review as first submitted, even after
/// decisions were added to it.
fn same_request(stored: &Review, submitted: &Review) -> bool {
    stored.confirm.confirm_id == submitted.confirm.confirm_id
        && stored.confirm.requested_at == submitted.confirm.requested_at
        && stored.confirm.requested_by_role == submitted.confirm.requested_by_role
}

/// Stores a tool call `agent` asks to run: approved at once when a standing
/// grant covers it (and its rule needs no quorum), else pending, its expiry
/// capped by its rule.
pub async fn ask_tool_call(
    service: Service<'_>,
    agent: &ApiKey,
    submission: ToolCallSubmission,
) -> Result<Answer, NotAsked> {
    let now = chrono::Utc::now();
    let mut review =
        new_tool_call_review(submission, now, &mut new_id).map_err(NotAsked::Invalid)?;
    review.requester = Some(agent.key_ref());
    let policy = service.changes.policy();
    let rule = policy.rule_for(&review).into_owned();
    policy.schedule_escalation(&mut review, now);
    if let (Some(delay), Some(Target::ToolCall(call))) = (rule.expires_after, &mut review.target) {
        let cap = now + delay.duration();
        if call.request.expires_at.to_utc() > cap {
            call.request.expires_at = Timestamp::from_utc(cap);
        }
    }
    // A standing grant is one reviewer's word: it never stands in for a quorum.
    // A call it covers is stored approved, never pending for a moment.
    if !rule.needs_quorum() {
        if let Some(approved) = store_approved_by_grant(service, &review, &agent.id).await? {
            return Ok(service.answer(approved)?);
        }
    }
    if service.changes.create(&review, &agent.id).await?.is_some() {
        return Err(NotAsked::ApprovalTaken);
    }
    Ok(service.answer(review)?)
}

/// Stores a new call approved by the first live grant that covers it,
/// recording the decision that names the grant: the approved review, or
/// `None` when no grant covers it (nothing stored: ask a reviewer).
async fn store_approved_by_grant(
    service: Service<'_>,
    review: &Review,
    created_by: &str,
) -> Result<Option<Review>, NotAsked> {
    let Some(call) = review.tool_call() else {
        return Ok(None);
    };
    let name = call.request.tool_call().map_err(Broken::StoredCall)?.name;
    let now = chrono::Utc::now();
    for grant in service.db.grants_for_tool(&name).await? {
        let Some(decided) = approve_by_grant(review, &grant, now, &mut new_id) else {
            continue;
        };
        let approved = decided.map_err(Broken::Grant)?;
        let grant_id = grant.grant_id.to_string();
        // A grant revoked meanwhile approves nothing: the next one may.
        match service
            .changes
            .create_approved_by_grant(&approved, created_by, &grant_id)
            .await?
        {
            ByGrant::Stored => return Ok(Some(approved)),
            ByGrant::Taken => return Err(NotAsked::ApprovalTaken),
            ByGrant::GrantGone => continue,
        }
    }
    Ok(None)
}

/// Why a review was not opened again.
#[derive(Debug, thiserror::Error)]
pub enum NotResubmitted {
    /// No review with this id that `agent` asked for.
    #[error("review {0}")]
    NotFound(MplpId),
    /// The domain refused it (not rejected; a plan that cannot be hashed).
    #[error(transparent)]
    Refused(ResubmitError),
    /// The revised review breaks the rules: every problem.
    #[error("the revised review has problems")]
    Invalid(Vec<Issue>),
    /// Another change landed between the read and the write.
    #[error("the review changed while it was being resubmitted; read it again")]
    ChangedMeanwhile,
    /// The server failed.
    #[error(transparent)]
    Broken(#[from] Broken),
}

/// Opens review `id`, rejected, for review again as `agent` resubmits it.
pub async fn resubmit_review(
    service: Service<'_>,
    agent: &ApiKey,
    id: MplpId,
    resubmission: Resubmission,
) -> Result<Answer, NotResubmitted> {
    let stored = service
        .visible(agent, id)
        .await?
        .ok_or(NotResubmitted::NotFound(id))?;
    let now = chrono::Utc::now();
    let mut next = resubmit(&stored.review, resubmission, now, &mut new_id)
        .map_err(NotResubmitted::Refused)?;
    service.changes.policy().schedule_escalation(&mut next, now);
    let problems = next.validate();
    if !problems.is_empty() {
        return Err(NotResubmitted::Invalid(problems));
    }
    let replaced = service
        .changes
        .replace(&stored, &next, ChangeKind::Resubmitted)
        .await?;
    if !replaced {
        return Err(NotResubmitted::ChangedMeanwhile);
    }
    Ok(service.answer(next)?)
}
