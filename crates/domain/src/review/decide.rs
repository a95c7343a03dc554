//! `decide`: the one function that turns a reviewer's decision into a new review.

use super::{Channel, KeyRef, Review, Target};
use crate::issue::Issue;
use crate::lifecycle::{plan_status_after, PlanTransitionError};
use crate::model::{ConfirmStatus, Decision, DecisionStatus, Event, EventType, PlanStatus};
use crate::policy::{PolicyRefusal, Rule, Standing};
use crate::toolcall::{outcome_for, ToolChoice, ToolDecideError};
use crate::{IdSource, MplpId, Timestamp};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// What a reviewer submits, as the form or the HTTP body gives it (the
/// decision request of the HTTP contract: its status is parsed at the boundary).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecisionInput {
    /// Approved, rejected or cancelled.
    pub status: DecisionStatus,
    /// The role the reviewer signs as.
    pub decided_by_role: String,
    /// Why; required for a rejection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// For tool calls: how the approval reaches (once, scope, edit) or feedback.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call: Option<ToolChoice>,
}

/// Why a decision cannot be recorded. On the wire (a server's refusal) it
/// travels as `{"kind": "reason_required"}`, with the variant's data under
/// `detail`, so a client shows it exactly as the browser's own check would.
#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", content = "detail", rename_all = "snake_case")]
pub enum DecideError {
    /// The request was already decided; `last` is the decision that stands.
    #[error("this request is already {status}: only a pending request can be decided")]
    NotPending {
        /// Its current status.
        status: ConfirmStatus,
        /// The decision that stands, if recorded.
        last: Option<Box<Decision>>,
    },
    /// No role given.
    #[error("say which role you decide as: `decided_by_role` is empty")]
    EmptyRole,
    /// A rejection without a reason.
    #[error("a rejection needs a reason, so the agent knows what to change")]
    ReasonRequired,
    /// Approval of a target with problems (a plan with a cycle can never be approved).
    #[error("the request cannot be approved while it has {} problem(s); the first: {}", .0.len(), .0.first().map(|i| i.to_string()).unwrap_or_default())]
    InvalidTarget(Vec<Issue>),
    /// The plan is not awaiting approval (e.g. already running).
    #[error("the plan cannot be approved now: {0}")]
    TargetNotAwaitingApproval(PlanTransitionError),
    /// A tool-call decision that the protocol refuses.
    #[error(transparent)]
    ToolCall(#[from] ToolDecideError),
    /// An approval the policy's rule refuses.
    #[error(transparent)]
    Policy(#[from] PolicyRefusal),
}

/// Who decides under which rule: what the server knows of a decision beyond
/// its body (the browser knows it too, from the policy and its own key).
#[derive(Debug, Clone, Copy)]
pub struct Judge<'a> {
    /// The rule that governs the review.
    pub rule: &'a Rule,
    /// The reviewer key deciding.
    pub reviewer: &'a KeyRef,
    /// Where the reviewer is deciding.
    pub channel: Option<Channel>,
}

/// Records a reviewer's decision on a pending review.
///
/// Pure: the clock (`now`) and the identifier source (`ids`) come from the caller,
/// so the browser and the server get the same result from the same input. On
/// success the decision is appended with a fresh `decision_id`, the confirm takes
/// its status, a plan target moves (approved -> `approved`, rejected -> `draft`),
/// and `decision.<status>` / `plan.<status>` events are appended. Approval is
/// refused while the review has any validation problem. Cost: one validation of
/// the review, O(size of the review).
pub fn decide(
    review: &Review,
    input: &DecisionInput,
    now: DateTime<Utc>,
    ids: &mut impl IdSource,
) -> Result<Review, DecideError> {
    decide_as(review, input, None, now, ids)
}

/// [`decide`] under a policy rule, by a known reviewer key: an approval
/// counts towards the rule's quorum, and the confirm stays `pending` (the
/// approval recorded in its decisions) until the quorum is met; a rejection
/// vetoes unless the rule says otherwise. The decision is attributed to the
/// key. Refused with [`DecideError::Policy`] when the rule does not admit it.
pub fn decide_under(
    review: &Review,
    input: &DecisionInput,
    judge: Judge<'_>,
    now: DateTime<Utc>,
    ids: &mut impl IdSource,
) -> Result<Review, DecideError> {
    decide_as(review, input, Some(judge), now, ids)
}

fn decide_as(
    review: &Review,
    input: &DecisionInput,
    judge: Option<Judge<'_>>,
    now: DateTime<Utc>,
    ids: &mut impl IdSource,
) -> Result<Review, DecideError> {
    let status = input.status;
    let confirm = &review.confirm;
    if confirm.status != ConfirmStatus::Pending {
        return Err(DecideError::NotPending {
            status: confirm.status,
            last: confirm.last_decision().cloned().map(Box::new),
        });
    }
    let role = input.decided_by_role.trim();
    if role.is_empty() {
        return Err(DecideError::EmptyRole);
    }
    let reason = input
        .reason
        .as_deref()
        .map(str::trim)
        .filter(|r| !r.is_empty());
    if status == DecisionStatus::Rejected && reason.is_none() {
        return Err(DecideError::ReasonRequired);
    }
    let next_plan_status = match (&review.target, status) {
        (_, DecisionStatus::Approved) => {
            let issues = review.validate();
            if !issues.is_empty() {
                return Err(DecideError::InvalidTarget(issues));
            }
            match review.plan() {
                Some(plan) => plan_status_after(plan.status, status)
                    .map_err(DecideError::TargetNotAwaitingApproval)?,
                None => None,
            }
        }
        (Some(Target::Plan(plan)), _) => plan_status_after(plan.status, status).unwrap_or(None),
        _ => None,
    };

    let partial = match (judge, status) {
        (Some(judge), DecisionStatus::Approved) => {
            let standing = Standing::of(review, judge.rule);
            standing.admits(
                review,
                judge.rule,
                judge.reviewer,
                role,
                input.tool_call.as_ref(),
            )?;
            standing.remaining() > 1
        }
        (Some(judge), DecisionStatus::Rejected) => !judge.rule.veto,
        _ => false,
    };
    if partial {
        if let Some(call) = review.tool_call().filter(|c| c.request.expired_at(now)) {
            return Err(ToolDecideError::Expired(call.request.expires_at.clone()).into());
        }
        let decision_id = ids.next_id();
        let at = Timestamp::from_utc(now);
        let mut next = record(review, decision_id, status, role, reason, &at, ids);
        if let Some(judge) = judge {
            next.attribute_last_decision(judge.reviewer, Some(&judge.rule.name), judge.channel);
        }
        return Ok(next);
    }
    let decision_id = ids.next_id();
    let tool_outcome = match (&review.target, &input.tool_call) {
        (Some(Target::ToolCall(call)), choice) => Some(outcome_for(
            call,
            choice.as_ref(),
            status,
            reason,
            role,
            decision_id,
            now,
            ids,
        )?),
        (_, Some(_)) => return Err(ToolDecideError::NotToolCall.into()),
        (_, None) => None,
    };
    let at = Timestamp::from_utc(now);
    let mut next = record(review, decision_id, status, role, reason, &at, ids);
    next.confirm.status = status.into();
    if let Some(judge) = judge {
        next.attribute_last_decision(judge.reviewer, Some(&judge.rule.name), judge.channel);
    }
    let trace_id = confirm.trace.as_ref().map(|t| t.trace_id);
    if let (Some(Target::ToolCall(call)), Some(mut outcome)) = (&mut next.target, tool_outcome) {
        // A grant names the person behind it, so the receipts of the calls it
        // lets through answer "who allowed this".
        if let (Some(grant), Some(judge)) = (&mut outcome.grant, judge) {
            grant.granted_by_key = Some(judge.reviewer.key_id.clone());
            grant.granted_by_owner = judge.reviewer.owner.clone();
            grant.granted_by_person = judge.reviewer.person.clone();
        }
        call.outcome = Some(outcome);
    }
    if let (Some(Target::Plan(plan)), Some(to)) = (&mut next.target, next_plan_status) {
        let from = plan.status;
        plan.status = to;
        let event_type = match to {
            PlanStatus::Approved => "plan.approved",
            _ => "plan.returned.to.draft",
        };
        let plan_event = event(
            ids.next_id(),
            event_type.to_owned(),
            "plan",
            &at,
            plan.trace.as_ref().map(|t| t.trace_id).or(trace_id),
            json!({
                "plan_id": plan.plan_id,
                "from": from,
                "to": to,
                "confirm_id": confirm.confirm_id,
                "decision_id": decision_id,
            }),
        );
        plan.events.get_or_insert_with(Vec::new).push(plan_event);
    }
    Ok(next)
}

/// `review` with one more decision and its `decision.<status>` event (the
/// confirm's status is the caller's to set).
fn record(
    review: &Review,
    decision_id: MplpId,
    status: DecisionStatus,
    role: &str,
    reason: Option<&str>,
    at: &Timestamp,
    ids: &mut impl IdSource,
) -> Review {
    let confirm = &review.confirm;
    let mut next = review.clone();
    let decision_event = event(
        ids.next_id(),
        format!("decision.{status}"),
        "confirm",
        at,
        confirm.trace.as_ref().map(|t| t.trace_id),
        json!({
            "confirm_id": confirm.confirm_id,
            "decision_id": decision_id,
            "decided_by_role": role,
            "reason": reason,
        }),
    );
    next.confirm
        .decisions
        .get_or_insert_with(Vec::new)
        .push(Decision {
            decision_id,
            status,
            decided_by_role: role.to_owned(),
            decided_at: at.clone(),
            reason: reason.map(str::to_owned),
        });
    next.confirm
        .events
        .get_or_insert_with(Vec::new)
        .push(decision_event);
    next
}

/// An event; `event_type` is one of this crate's dotted lowercase names.
pub(crate) fn event(
    event_id: MplpId,
    event_type: String,
    source: &str,
    at: &Timestamp,
    trace_id: Option<MplpId>,
    data: Value,
) -> Event {
    Event {
        event_id,
        event_type: EventType::trusted(event_type),
        source: source.to_owned(),
        timestamp: at.clone(),
        trace_id,
        data: Some(data),
    }
}
