//! What a decision on a tool call produced: approval (once, with scope, or with
//! modified arguments) with its token, denial, feedback, or expiry.

use super::canonical::{CallHash, ToolCall};
use super::grant::{Scope, ScopeGrant};
use super::request::{ApprovalRequest, RiskTier};
use super::token::Token;
use crate::model::DecisionStatus;
use crate::{IdSource, MplpId, Timestamp};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool-call review's target: the request and, once decided, its outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolCallReview {
    /// What the agent asked.
    pub request: ApprovalRequest,
    /// What was decided, once it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<ToolOutcome>,
}

/// The kind of outcome, in udspy's terms where they exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeKind {
    /// Approved as asked.
    Approved,
    /// Approved with modified arguments.
    Edited,
    /// Denied, with the reason the agent sees.
    Denied,
    /// Not approved; text returned to the agent to revise.
    Feedback,
    /// Cancelled by a reviewer.
    Cancelled,
    /// Nobody decided before it expired: denied by default.
    Expired,
    /// Withdrawn by the agent that asked (its client cancelled the call).
    Withdrawn,
}

impl OutcomeKind {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeKind::Approved => "approved",
            OutcomeKind::Edited => "edited",
            OutcomeKind::Denied => "denied",
            OutcomeKind::Feedback => "feedback",
            OutcomeKind::Cancelled => "cancelled",
            OutcomeKind::Expired => "expired",
            OutcomeKind::Withdrawn => "withdrawn",
        }
    }
}

/// The recorded outcome of a tool-call request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolOutcome {
    /// The confirm decision this outcome belongs to.
    pub decision_id: MplpId,
    /// What kind.
    pub kind: OutcomeKind,
    /// What the agent is told (the denial reason or the feedback).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The hash of the call as asked.
    pub original_hash: CallHash,
    /// The approved call, canonical (differs from the request's when edited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_call: Option<String>,
    /// The approved call's hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_hash: Option<CallHash>,
    /// The grant this approval created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant: Option<ScopeGrant>,
    /// The grant that approved this call without asking, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_by_grant: Option<MplpId>,
    /// The token to run the approved call once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<Token>,
}

/// How a decision on a tool call reaches: an approval `once`, with a `scope`
/// or with modifications (`edit`); a rejection that denies (`deny`) or sends
/// `feedback`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolMode {
    /// Approve this call only.
    Once,
    /// Approve this call and grant later ones within a scope.
    Scope,
    /// Approve the call with modified arguments.
    Edit,
    /// Deny the call, with a reason.
    Deny,
    /// Not an approval: text returned to the agent.
    Feedback,
}

impl ToolMode {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolMode::Once => "once",
            ToolMode::Scope => "scope",
            ToolMode::Edit => "edit",
            ToolMode::Deny => "deny",
            ToolMode::Feedback => "feedback",
        }
    }
}

impl std::fmt::Display for ToolMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a reviewer approves or answers a tool call, beside the decision status.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolChoice {
    /// How the decision reaches; absent: the status's plain meaning (approve
    /// once, deny, cancel).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ToolMode>,
    /// For `scope`: how far the grant reaches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
    /// For `scope`: cover every call of the tool, not only these arguments.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub whole_tool: bool,
    /// The explicit second confirmation a workspace grant needs for R3.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub confirm_high_risk: bool,
    /// For `edit`: the modified arguments, as JSON text (re-canonicalized here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<String>,
}

/// Why a tool-call decision is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", content = "detail", rename_all = "snake_case")]
pub enum ToolDecideError {
    /// Past `expiresAt`.
    #[error("this request expired at {0}; an expired request cannot be approved")]
    Expired(Timestamp),
    /// A mode that does not fit the status.
    #[error("`{mode}` does not go with `{status}`: approve once, with scope or with modifications; reject with a reason or with feedback")]
    UnknownMode {
        /// The mode given.
        mode: ToolMode,
        /// The status given.
        status: DecisionStatus,
    },
    /// A scope mode without a valid scope.
    #[error("{0}")]
    BadScope(String),
    /// Workspace grants are never made for R4.
    #[error(
        "`always for this workspace` is refused for R4 calls; approve once or for this session"
    )]
    ScopeRefused,
    /// Workspace grants for R3 need the second confirmation.
    #[error("`always for this workspace` on an R3 call needs an explicit second confirmation")]
    NeedsConfirmation,
    /// The modified arguments are not a JSON object, or have no canonical form.
    #[error("the modified arguments {0}")]
    BadArgs(String),
    /// Tool-call options on a review that is not a tool call.
    #[error("tool-call options apply only to tool-call requests")]
    NotToolCall,
    /// An edit of a call whose agent cannot run edited arguments.
    #[error("this agent cannot run edited arguments: approve the call as asked, or deny it with a reason")]
    EditRefused,
}

/// Works out a decision's outcome before it is recorded. `decision_id` is the
/// id the confirm decision will carry. O(size of the call) for edits.
#[allow(clippy::too_many_arguments)]
pub(crate) fn outcome_for(
    review: &ToolCallReview,
    choice: Option<&ToolChoice>,
    status: DecisionStatus,
    reason: Option<&str>,
    role: &str,
    decision_id: MplpId,
    now: DateTime<Utc>,
    ids: &mut impl IdSource,
) -> Result<ToolOutcome, ToolDecideError> {
    let request = &review.request;
    let mode = choice.and_then(|c| c.mode);
    let base = ToolOutcome {
        decision_id,
        kind: OutcomeKind::Denied,
        message: reason.map(str::to_owned),
        original_hash: request.tool_call_hash.clone(),
        approved_call: None,
        approved_hash: None,
        grant: None,
        approved_by_grant: None,
        token: None,
    };
    let unfit = |mode| ToolDecideError::UnknownMode { mode, status };
    match status {
        DecisionStatus::Rejected => match mode {
            None | Some(ToolMode::Deny) => Ok(base),
            Some(ToolMode::Feedback) => Ok(ToolOutcome {
                kind: OutcomeKind::Feedback,
                ..base
            }),
            Some(other) => Err(unfit(other)),
        },
        DecisionStatus::Cancelled => match mode {
            None => Ok(ToolOutcome {
                kind: OutcomeKind::Cancelled,
                ..base
            }),
            Some(other) => Err(unfit(other)),
        },
        DecisionStatus::Approved => {
            if request.expired_at(now) {
                return Err(ToolDecideError::Expired(request.expires_at.clone()));
            }
            let (kind, call, scope) = match mode {
                None | Some(ToolMode::Once) => (
                    OutcomeKind::Approved,
                    request.tool_call_canonical.clone(),
                    None,
                ),
                Some(ToolMode::Scope) => {
                    let scope = parse_scope(choice, request.risk_tier)?;
                    (
                        OutcomeKind::Approved,
                        request.tool_call_canonical.clone(),
                        Some(scope),
                    )
                }
                Some(ToolMode::Edit) => {
                    if !request.editable {
                        return Err(ToolDecideError::EditRefused);
                    }
                    let call = edited_call(request, choice)?;
                    let kind = if call == request.tool_call_canonical {
                        OutcomeKind::Approved
                    } else {
                        OutcomeKind::Edited
                    };
                    (kind, call, None)
                }
                Some(other) => return Err(unfit(other)),
            };
            let hash = CallHash::of_canonical(&call);
            let grant = match scope {
                Some(scope) => Some(ScopeGrant {
                    grant_id: ids.next_id(),
                    approval_id: request.approval_id,
                    scope,
                    tool_name: request
                        .tool_call()
                        .map(|c| c.name)
                        .map_err(ToolDecideError::BadArgs)?,
                    call_hash: (!choice.is_some_and(|c| c.whole_tool)).then(|| hash.clone()),
                    max_risk: request.risk_tier,
                    session_id: request.session_id.clone(),
                    workspace: request.workspace.clone(),
                    granted_by_role: role.to_owned(),
                    granted_by_key: None,
                    granted_by_owner: None,
                    granted_by_person: None,
                    granted_at: Timestamp::from_utc(now),
                    expires_at: ScopeGrant::ends(scope, now),
                }),
                None => None,
            };
            let token = Token::mint(
                ids.next_id(),
                request.approval_id,
                hash.clone(),
                scope,
                request.client_device_id.clone(),
                now,
            );
            Ok(ToolOutcome {
                kind,
                approved_call: Some(call),
                approved_hash: Some(hash),
                grant,
                token: Some(token),
                ..base
            })
        }
    }
}

fn parse_scope(choice: Option<&ToolChoice>, risk: RiskTier) -> Result<Scope, ToolDecideError> {
    let scope = choice.and_then(|c| c.scope).ok_or_else(|| {
        ToolDecideError::BadScope(
            "choose how far the approval reaches: session, 15m or workspace".into(),
        )
    })?;
    if scope == Scope::Workspace {
        if risk == RiskTier::R4 {
            return Err(ToolDecideError::ScopeRefused);
        }
        if risk == RiskTier::R3 && !choice.is_some_and(|c| c.confirm_high_risk) {
            return Err(ToolDecideError::NeedsConfirmation);
        }
    }
    Ok(scope)
}

/// The request's call with the reviewer's arguments, canonical.
fn edited_call(
    request: &ApprovalRequest,
    choice: Option<&ToolChoice>,
) -> Result<String, ToolDecideError> {
    let text = choice
        .and_then(|c| c.args.as_deref())
        .ok_or_else(|| ToolDecideError::BadArgs("are missing".into()))?;
    let args: Value = serde_json::from_str(text)
        .map_err(|e| ToolDecideError::BadArgs(format!("are not JSON: {e}")))?;
    let Value::Object(args) = args else {
        return Err(ToolDecideError::BadArgs(
            "must be a JSON object of named arguments".into(),
        ));
    };
    let name = request.tool_call().map_err(ToolDecideError::BadArgs)?.name;
    ToolCall { name, args }
        .canonical()
        .map_err(|e| ToolDecideError::BadArgs(format!("cannot be canonicalized: {e}")))
}
