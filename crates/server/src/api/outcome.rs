//! A review's status in the agent's terms: blocked while pending, denied (with
//! the reason) when rejected or cancelled, approved when approved; for tool
//! calls also the kind (`edited`, `feedback`, `expired`...), the approved call
//! and the token to redeem before running it.

use countersign_domain::model::ConfirmStatus;
use countersign_domain::toolcall::{OutcomeKind, Token};
use countersign_domain::Review;
use serde::Serialize;

/// What the agent may do now.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Outcome {
    /// The review.
    pub confirm_id: String,
    /// The confirm's status.
    pub status: String,
    /// `TOOL_BLOCKED_PENDING_APPROVAL`, `TOOL_DENIED` or `APPROVED`.
    pub outcome: &'static str,
    /// The deciding reviewer's reason, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The role that decided, if decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_by_role: Option<String>,
    /// When it was decided, if decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<String>,
    /// Tool calls: what kind of outcome (`approved`, `edited`, `denied`, `feedback`, `cancelled`, `expired`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<OutcomeKind>,
    /// Tool calls: the approved call, canonical JSON (the reviewer's edit when `edited`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approved_call: Option<String>,
    /// Tool calls: the scope grant that approved it without asking, if one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approved_by_grant: Option<String>,
    /// Tool calls: the single-use token to redeem right before running the call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<Token>,
}

impl Outcome {
    /// The outcome of a review as it stands.
    pub fn of(review: &Review) -> Outcome {
        let confirm = &review.confirm;
        let outcome = match confirm.status {
            ConfirmStatus::Pending => "TOOL_BLOCKED_PENDING_APPROVAL",
            ConfirmStatus::Approved => "APPROVED",
            ConfirmStatus::Rejected | ConfirmStatus::Cancelled => "TOOL_DENIED",
        };
        let last = (confirm.status != ConfirmStatus::Pending)
            .then(|| confirm.last_decision())
            .flatten();
        let tool = review.tool_call().and_then(|c| c.outcome.as_ref());
        Outcome {
            kind: tool.map(|o| o.kind),
            approved_call: tool.and_then(|o| o.approved_call.clone()),
            approved_by_grant: tool.and_then(|o| o.approved_by_grant.map(|g| g.to_string())),
            token: tool.and_then(|o| o.token.clone()),
            confirm_id: confirm.confirm_id.to_string(),
            status: confirm.status.to_string(),
            outcome,
            reason: last.and_then(|d| d.reason.clone()),
            decided_by_role: last.map(|d| d.decided_by_role.clone()),
            decided_at: last.map(|d| d.decided_at.to_string()),
        }
    }

    /// Whether the agent must still wait.
    pub fn is_pending(&self) -> bool {
        self.outcome == "TOOL_BLOCKED_PENDING_APPROVAL"
    }
}
