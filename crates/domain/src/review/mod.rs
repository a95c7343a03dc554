//! A review: a Confirm together with the object it asks about, and the pure
//! operations on it that the browser and the server share.

mod decide;
mod escalate;
mod learning;
mod person;
mod resubmit;

pub(crate) use decide::event;
pub use decide::{decide, decide_under, DecideError, DecisionInput, Judge};
pub use escalate::{escalate_if_due, ESCALATED};
pub use learning::{
    learning_sample, FeedbackLabel, LearningSample, SampleInput, SampleMeta, SampleOutput,
};
pub use person::{KeyRef, Person};
pub use resubmit::{resubmit, Resubmission, ResubmitError};

use crate::issue::{Issue, IssueCode, Pointer};
use crate::model::{Confirm, Context, Decision, Plan, TargetType, Trace};
use crate::toolcall::{canonicalize, CallHash, CanonicalError, ToolCallReview};
use crate::validate::validate_bundle;
use crate::{MplpId, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The object a Confirm asks about, when it is an MPLP object.
// A review holds one target and is moved whole, rarely: boxing the tool call
// would add an allocation to every review for no gain.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// A plan to approve before it runs.
    Plan(Plan),
    /// A context to approve.
    Context(Context),
    /// A trace to approve.
    Trace(Trace),
    /// A tool call an agent asks to run (the confirm's target type is `other`).
    ToolCall(ToolCallReview),
}

impl Target {
    /// The target's own id.
    pub fn id(&self) -> MplpId {
        match self {
            Target::Plan(p) => p.plan_id,
            Target::Context(c) => c.context_id,
            Target::Trace(t) => t.trace_id,
            Target::ToolCall(c) => c.request.approval_id,
        }
    }

    /// The confirm target type this object is.
    pub fn target_type(&self) -> TargetType {
        match self {
            Target::Plan(_) => TargetType::Plan,
            Target::Context(_) => TargetType::Context,
            Target::Trace(_) => TargetType::Trace,
            Target::ToolCall(_) => TargetType::Other,
        }
    }

    /// The key it is stored under (`plan`, `tool_call`…).
    pub(crate) fn key(&self) -> &'static str {
        match self {
            Target::Plan(_) => "plan",
            Target::Context(_) => "context",
            Target::Trace(_) => "trace",
            Target::ToolCall(_) => "tool_call",
        }
    }

    pub(crate) fn to_value(&self) -> Value {
        let result = match self {
            Target::Plan(p) => serde_json::to_value(p),
            Target::Context(c) => serde_json::to_value(c),
            Target::Trace(t) => serde_json::to_value(t),
            Target::ToolCall(c) => serde_json::to_value(c),
        };
        result.unwrap_or(Value::Null)
    }
}

/// A Confirm and its target, as stored and shown. Serialized as
/// `{"confirm": {...}, "target": {"plan": {...}}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Review {
    /// The approval request.
    pub confirm: Confirm,
    /// What it asks about; absent for targets that are not MPLP objects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Target>,
    /// Which reviewer key made each decision (MPLP's decision records have
    /// no place for it): what receipts and policies name as "who".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deciders: Vec<Decider>,
    /// The agent key that asked, as the server recorded it: policies forbid
    /// its owner from approving.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requester: Option<KeyRef>,
    /// When the server escalates it if nobody has decided it by then (the
    /// policy rule's `escalate_after`, fixed when it was asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalate_at: Option<Timestamp>,
    /// SHA-256 of the target's RFC 8785 canonical JSON as it was asked, set by
    /// [`Review::fix_target_hash`] when the request is stored and when it is
    /// resubmitted: what a receipt names (a decision then moves a plan's status,
    /// which is not what was asked). Absent for tool calls, whose receipts name
    /// their `toolCallHash`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_sha256: Option<CallHash>,
}

/// The reviewer key behind one decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Decider {
    /// The decision (`decision_id` of the confirm's record).
    pub decision_id: MplpId,
    /// The public id of the reviewer key that sent it.
    pub key_id: String,
    /// The key's owner, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// The signed-in person who decided, when the provider named them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub person: Option<Person>,
    /// The policy rule the decision was checked against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// Where the reviewer decided (absent before channels were recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<Channel>,
}

/// Where a reviewer made a decision: every channel makes the same decision,
/// and receipts and the audit chain say which one it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Channel {
    /// The desk, signed in (a session) or connected with a reviewer key in the browser.
    Desk,
    /// The HTTP API with a reviewer key (a script, an SDK, a paired device).
    Api,
    /// A button in a Slack message.
    Slack,
    /// The confirmation an e-mail's link opens.
    Email,
}

impl Channel {
    /// How a sentence says where a decision was made: "approved by Dana
    /// in Slack".
    pub fn phrase(self) -> &'static str {
        match self {
            Channel::Desk => "in the desk",
            Channel::Api => "through the API",
            Channel::Slack => "in Slack",
            Channel::Email => "by e-mail",
        }
    }
}

impl Decider {
    /// The key or session that made the decision, as the policy compares callers.
    pub fn key_ref(&self) -> KeyRef {
        KeyRef {
            key_id: self.key_id.clone(),
            owner: self.owner.clone(),
            person: self.person.clone(),
        }
    }
}

impl Review {
    /// Records the hash of the target as it is now (see
    /// [`Review::target_sha256`]): called when the request is asked or asked again.
    /// On error the hash is absent, never a stale one.
    pub fn fix_target_hash(&mut self) -> Result<(), CanonicalError> {
        self.target_sha256 = None;
        if let Some(target) = self
            .target
            .as_ref()
            .filter(|t| !matches!(t, Target::ToolCall(_)))
        {
            self.target_sha256 = Some(CallHash::of_canonical(&canonicalize(&target.to_value())?));
        }
        Ok(())
    }

    /// Records that `key` made the confirm's latest decision, under `rule`,
    /// through `channel`.
    pub fn attribute_last_decision(
        &mut self,
        key: &KeyRef,
        rule: Option<&str>,
        channel: Option<Channel>,
    ) {
        if let Some(decision) = self.confirm.last_decision() {
            self.deciders.push(Decider {
                decision_id: decision.decision_id,
                key_id: key.key_id.clone(),
                owner: key.owner.clone(),
                person: key.person.clone(),
                rule: rule.map(str::to_owned),
                channel,
            });
        }
    }

    /// The reviewer key (or session) that made a decision, when one was recorded.
    pub fn decider_of(&self, decision_id: MplpId) -> Option<&Decider> {
        self.deciders.iter().find(|d| d.decision_id == decision_id)
    }

    /// The decisions since the request was last (re)submitted: the ones a
    /// quorum counts. Decision events mark where each resubmission fell.
    pub fn current_round(&self) -> &[Decision] {
        let decisions = self.confirm.decisions();
        let events = self.confirm.events.as_deref().unwrap_or_default();
        let Some(last_resubmit) = events
            .iter()
            .rposition(|e| e.event_type.as_str() == "confirm.resubmitted")
        else {
            return decisions;
        };
        let before = events[..last_resubmit]
            .iter()
            .filter(|e| e.event_type.as_str().starts_with("decision."))
            .count();
        &decisions[before.min(decisions.len())..]
    }

    /// The plan under review, if the target is a plan.
    pub fn plan(&self) -> Option<&Plan> {
        match &self.target {
            Some(Target::Plan(p)) => Some(p),
            _ => None,
        }
    }

    /// The tool call under review, if the target is one.
    pub fn tool_call(&self) -> Option<&ToolCallReview> {
        match &self.target {
            Some(Target::ToolCall(c)) => Some(c),
            _ => None,
        }
    }

    /// Every problem of the confirm and its target, with paths into the review
    /// (`/confirm/...`, `/target/plan/...`): each one's schema and rules, and the
    /// binding between them (the target is the object the confirm names).
    pub fn validate(&self) -> Vec<Issue> {
        let confirm_path = Pointer::root().child("confirm");
        let confirm = serde_json::to_value(&self.confirm).unwrap_or(Value::Null);
        let Some(target) = &self.target else {
            let mut issues: Vec<Issue> = validate_bundle(&[confirm])
                .into_iter()
                .flat_map(|report| report.issues)
                .map(|issue| issue.under(&confirm_path))
                .collect();
            if matches!(
                self.confirm.target_type,
                TargetType::Plan | TargetType::Context | TargetType::Trace
            ) {
                issues.push(Issue::new(
                    &Pointer::root().child("target"),
                    IssueCode::MissingTarget,
                    format!(
                        "the {} this request is about ({}) is missing, so it cannot be reviewed",
                        self.confirm.target_type, self.confirm.target_id
                    ),
                ));
            }
            return issues;
        };
        let target_path = Pointer::root().child("target").child(target.key());
        if let Target::ToolCall(call) = target {
            return self.validate_tool_call(confirm, call, &confirm_path, &target_path);
        }
        let reports = validate_bundle(&[confirm, target.to_value()]);
        let mut issues = Vec::new();
        for (report, prefix) in reports.into_iter().zip([&confirm_path, &target_path]) {
            issues.extend(report.issues.into_iter().map(|i| i.under(prefix)));
        }
        if target.target_type() != self.confirm.target_type {
            issues.push(Issue::new(
                &confirm_path.child("target_type"),
                IssueCode::MissingTarget,
                format!(
                    "the request is about a {}, but the object under review is a {}",
                    self.confirm.target_type,
                    target.target_type()
                ),
            ));
        } else if target.id() != self.confirm.target_id && target.target_type() != TargetType::Plan
        {
            // (plans are already checked by the bundle rules)
            issues.push(Issue::new(
                &confirm_path.child("target_id"),
                IssueCode::TargetMismatch,
                format!(
                    "{} is not the {} under review ({})",
                    self.confirm.target_id,
                    target.key(),
                    target.id()
                ),
            ));
        }
        issues
    }
}

impl Review {
    /// A tool call's problems: the confirm alone, the request, and the binding
    /// (target type `other`, `target_id` = `approvalId`).
    fn validate_tool_call(
        &self,
        confirm: Value,
        call: &ToolCallReview,
        confirm_path: &Pointer,
        target_path: &Pointer,
    ) -> Vec<Issue> {
        let mut issues: Vec<Issue> = validate_bundle(&[confirm])
            .into_iter()
            .flat_map(|report| report.issues)
            .map(|issue| issue.under(confirm_path))
            .collect();
        let request_path = target_path.child("request");
        issues.extend(
            call.request
                .validate()
                .into_iter()
                .map(|issue| issue.under(&request_path)),
        );
        if self.confirm.target_type != TargetType::Other {
            issues.push(Issue::new(
                &confirm_path.child("target_type"),
                IssueCode::MissingTarget,
                format!(
                    "a tool call is asked with target type `other`, not `{}`",
                    self.confirm.target_type
                ),
            ));
        }
        if self.confirm.target_id != call.request.approval_id {
            issues.push(Issue::new(
                &confirm_path.child("target_id"),
                IssueCode::TargetMismatch,
                format!(
                    "{} is not the tool-call request under review ({})",
                    self.confirm.target_id, call.request.approval_id
                ),
            ));
        }
        issues
    }
}
