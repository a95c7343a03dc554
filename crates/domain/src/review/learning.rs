//! Learning samples from decided confirms (Confirm module spec, section 5), in the
//! shape of `learning/mplp-learning-sample-core.schema.json`, family `confirm_decision`.

use super::Review;
use crate::model::{ConfirmStatus, DecisionStatus, TargetType};
use crate::{IdSource, MplpId, Timestamp};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// A learning sample of the `confirm_decision` family.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LearningSample {
    /// This sample's id.
    pub sample_id: MplpId,
    /// Always `confirm_decision`.
    pub sample_family: String,
    /// When the sample was taken.
    pub created_at: Timestamp,
    /// What was asked.
    pub input: SampleInput,
    /// What the humans decided.
    pub output: SampleOutput,
    /// Provenance and the human feedback label.
    pub meta: SampleMeta,
}

/// The request side of a sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleInput {
    /// The confirm decided.
    pub confirm_id: MplpId,
    /// Its target type.
    pub target_type: TargetType,
    /// Its target.
    pub target_id: MplpId,
    /// The plan, when the target is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_plan_id: Option<MplpId>,
    /// Who asked.
    pub requested_by_role: String,
    /// Why they asked.
    pub request_reason: Option<String>,
    /// The plan's objective, when the target is a plan.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan_objective: Option<String>,
    /// How many steps the plan had.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan_step_count: Option<usize>,
}

/// The decision side of a sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleOutput {
    /// The confirm's final status.
    pub final_status: ConfirmStatus,
    /// How many decisions it took.
    pub decision_rounds: usize,
    /// The most recent rejection's reason, or null.
    pub rejection_reason: Option<String>,
    /// The role of the final decision.
    pub decider_role: String,
}

/// Provenance of a sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleMeta {
    /// The decision events it was taken from.
    pub source_event_ids: Vec<MplpId>,
    /// The human verdict.
    pub human_feedback_label: FeedbackLabel,
    /// Time from request to final decision.
    pub decision_latency_ms: i64,
}

/// The learning invariants' `human_feedback_label`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FeedbackLabel {
    /// Approved by a human.
    Approved,
    /// Rejected by a human.
    Rejected,
    /// Withdrawn without a verdict.
    NotReviewed,
}

/// A learning sample of a decided review, or `None` while it is still pending.
pub fn learning_sample(
    review: &Review,
    now: DateTime<Utc>,
    ids: &mut impl IdSource,
) -> Option<LearningSample> {
    let confirm = &review.confirm;
    let last = confirm.last_decision()?;
    if confirm.status == ConfirmStatus::Pending {
        return None;
    }
    let plan = review.plan();
    let rejection_reason = confirm
        .decisions()
        .iter()
        .rev()
        .find(|d| d.status == DecisionStatus::Rejected)
        .and_then(|d| d.reason.clone());
    let source_event_ids = confirm
        .events
        .iter()
        .flatten()
        .filter(|e| e.event_type.as_str().starts_with("decision."))
        .map(|e| e.event_id)
        .collect();
    let label = match confirm.status {
        ConfirmStatus::Approved => FeedbackLabel::Approved,
        ConfirmStatus::Rejected => FeedbackLabel::Rejected,
        ConfirmStatus::Pending | ConfirmStatus::Cancelled => FeedbackLabel::NotReviewed,
    };
    Some(LearningSample {
        sample_id: ids.next_id(),
        sample_family: "confirm_decision".to_owned(),
        created_at: Timestamp::from_utc(now),
        input: SampleInput {
            confirm_id: confirm.confirm_id,
            target_type: confirm.target_type,
            target_id: confirm.target_id,
            target_plan_id: plan.map(|p| p.plan_id),
            requested_by_role: confirm.requested_by_role.clone(),
            request_reason: confirm.reason.clone(),
            plan_objective: plan.map(|p| p.objective.clone()),
            plan_step_count: plan.map(|p| p.steps.len()),
        },
        output: SampleOutput {
            final_status: confirm.status,
            decision_rounds: confirm.decisions().len(),
            rejection_reason,
            decider_role: last.decided_by_role.clone(),
        },
        meta: SampleMeta {
            source_event_ids,
            human_feedback_label: label,
            decision_latency_ms: (last.decided_at.to_utc() - confirm.requested_at.to_utc())
                .num_milliseconds()
                .max(0),
        },
    })
}
