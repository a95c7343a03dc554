//! What an agent is told about its request: the outcome (blocked, denied or
//! approved, with the approved call and the token for tool calls), the answer
//! that carries a review with its outcome, and a redemption's answer.

use super::Receipt;
use crate::model::ConfirmStatus;
use crate::toolcall::{OutcomeKind, Token};
use crate::{MplpId, Review, Timestamp};
use serde::{Deserialize, Serialize};

/// What the agent may do now, in the protocol's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Verdict {
    /// Pending: the action must not run yet.
    #[serde(rename = "TOOL_BLOCKED_PENDING_APPROVAL")]
    Blocked,
    /// Rejected or cancelled: the action must not run.
    #[serde(rename = "TOOL_DENIED")]
    Denied,
    /// Approved: the action may run (a tool call after redeeming its token).
    #[serde(rename = "APPROVED")]
    Approved,
}

impl Verdict {
    /// The verdict for a confirm's status.
    pub fn of(status: ConfirmStatus) -> Verdict {
        match status {
            ConfirmStatus::Pending => Verdict::Blocked,
            ConfirmStatus::Approved => Verdict::Approved,
            ConfirmStatus::Rejected | ConfirmStatus::Cancelled => Verdict::Denied,
        }
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Blocked => "TOOL_BLOCKED_PENDING_APPROVAL",
            Verdict::Denied => "TOOL_DENIED",
            Verdict::Approved => "APPROVED",
        }
    }
}

/// A review's status in the agent's terms; for tool calls also the kind
/// (`edited`, `feedback`, `expired`…), the approved call and the token to
/// redeem before running it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Outcome {
    /// The review.
    pub confirm_id: MplpId,
    /// The confirm's status.
    pub status: ConfirmStatus,
    /// What the agent may do now.
    pub outcome: Verdict,
    /// The deciding reviewer's reason, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The role that decided, if decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by_role: Option<String>,
    /// When it was decided, if decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<Timestamp>,
    /// Tool calls: what kind of outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<OutcomeKind>,
    /// Tool calls: the approved call, canonical JSON (the reviewer's edit when `edited`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_call: Option<String>,
    /// Tool calls: the same approved call as a JSON object (`{"name", "args"}`),
    /// for clients that would otherwise parse JSON inside JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_tool_call: Option<serde_json::Value>,
    /// Tool calls: the scope grant that approved it without asking, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_by_grant: Option<MplpId>,
    /// Tool calls: the single-use token to redeem right before running the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<Token>,
    /// Once decided, on a server with a signing key: the signed receipt of
    /// the decision (and of the token), checkable offline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt: Option<Receipt>,
}

impl Outcome {
    /// The outcome of a review as it stands.
    pub fn of(review: &Review) -> Outcome {
        let confirm = &review.confirm;
        let last = (confirm.status != ConfirmStatus::Pending)
            .then(|| confirm.last_decision())
            .flatten();
        let tool = review.tool_call().and_then(|c| c.outcome.as_ref());
        Outcome {
            confirm_id: confirm.confirm_id,
            status: confirm.status,
            outcome: Verdict::of(confirm.status),
            reason: last.and_then(|d| d.reason.clone()),
            decided_by_role: last.map(|d| d.decided_by_role.clone()),
            decided_at: last.map(|d| d.decided_at.clone()),
            kind: tool.map(|o| o.kind),
            approved_call: tool.and_then(|o| o.approved_call.clone()),
            // Canonical JSON the server wrote: it reads back.
            approved_tool_call: tool
                .and_then(|o| o.approved_call.as_deref())
                .and_then(|call| serde_json::from_str(call).ok()),
            approved_by_grant: tool.and_then(|o| o.approved_by_grant),
            token: tool.and_then(|o| o.token.clone()),
            receipt: None,
        }
    }

    /// Whether the agent must still wait.
    pub fn is_pending(&self) -> bool {
        self.outcome == Verdict::Blocked
    }
}

/// The answer to a creation, a decision or a resubmission: the review as
/// stored, and its outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    /// The review as stored.
    pub review: Review,
    /// What the agent may do now.
    pub outcome: Outcome,
}

impl Answer {
    /// The answer for a stored review.
    pub fn of(review: Review) -> Answer {
        Answer {
            outcome: Outcome::of(&review),
            review,
        }
    }
}

/// The answer to a redemption: the call may run now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Redeemed {
    /// Always true: a refused redemption is an error answer.
    pub redeemed: bool,
    /// The token, now marked used.
    pub token: Option<Token>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outcome_reads_back_what_it_wrote() {
        let reviews =
            crate::demo::reviews(chrono::DateTime::from_timestamp(1_795_000_000, 0).unwrap())
                .unwrap();
        for review in &reviews {
            let outcome = Outcome::of(review);
            let text = serde_json::to_string(&outcome).unwrap();
            assert_eq!(serde_json::from_str::<Outcome>(&text).unwrap(), outcome);
            assert_eq!(
                outcome.is_pending(),
                outcome.status == ConfirmStatus::Pending
            );
        }
    }

    #[test]
    fn wire_names_are_what_serde_writes() {
        use crate::toolcall::ToolMode;
        for verdict in [Verdict::Blocked, Verdict::Denied, Verdict::Approved] {
            assert_eq!(serde_json::to_value(verdict).unwrap(), verdict.as_str());
        }
        for kind in [
            OutcomeKind::Approved,
            OutcomeKind::Edited,
            OutcomeKind::Denied,
            OutcomeKind::Feedback,
            OutcomeKind::Cancelled,
            OutcomeKind::Expired,
        ] {
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str());
        }
        for mode in [
            ToolMode::Once,
            ToolMode::Scope,
            ToolMode::Edit,
            ToolMode::Deny,
            ToolMode::Feedback,
        ] {
            assert_eq!(serde_json::to_value(mode).unwrap(), mode.as_str());
        }
    }

    #[test]
    fn a_verdict_the_protocol_does_not_name_is_refused() {
        let refused = serde_json::from_str::<Verdict>("\"MAYBE\"");
        assert!(refused.is_err());
        assert_eq!(
            serde_json::from_str::<Verdict>("\"TOOL_DENIED\"").unwrap(),
            Verdict::Denied
        );
    }
}
