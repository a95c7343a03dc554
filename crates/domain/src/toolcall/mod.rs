//! Tool-call approvals (the Confirmation UX & Approval Protocol): canonical
//! calls and their hashes, the approval request, decisions with their outcomes,
//! scope grants and single-use tokens.
//!
//! A tool-call review is an ordinary [`Review`](crate::Review): an MPLP Confirm
//! (target type `other`, `target_id` = `approvalId`) whose target is a
//! [`ToolCallReview`], so the history, export and learning samples work as for
//! plans, and [`decide`](crate::decide) records every decision.

mod canonical;
mod flow;
mod grant;
mod outcome;
mod request;
mod summary;
mod token;

pub use canonical::{canonicalize, canonicalize_text, CallHash, CanonicalError, ToolCall};
pub use flow::{
    approve_by_grant, expire_if_due, grants, is_due, new_tool_call_review, redeem, withdraw,
    WithdrawError, EXPIRED_BY,
};
pub use grant::{Scope, ScopeGrant};
pub(crate) use outcome::outcome_for;
pub use outcome::{
    OutcomeKind, ToolCallReview, ToolChoice, ToolDecideError, ToolMode, ToolOutcome,
};
pub use request::{default_reason, ApprovalRequest, RiskTier, ToolCallSubmission, DEFAULT_EXPIRY};
pub use summary::{check_summary, SummaryCheck, Unmentioned};
pub use token::{RedeemError, Redemption, Token, TOKEN_LIFETIME};
