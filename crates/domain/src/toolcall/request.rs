//! The approval request an agent sends before one risky tool call, and the
//! submission form it arrives in (the call as an object, expiry optional).

use super::canonical::{canonicalize, CallHash, ToolCall};
use crate::issue::{Issue, IssueCode, Pointer};
use crate::model::{Confirm, ConfirmStatus, Meta, TargetType};
use crate::{IdSource, MplpId, Timestamp, PROTOCOL_VERSION};
use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// How long a request waits for a decision when the agent does not say.
pub const DEFAULT_EXPIRY: Duration = Duration::minutes(5);

/// How risky a call is, from R0 (read-only) to R4 (irreversible, high impact).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum RiskTier {
    /// Read-only, no side effects.
    R0,
    /// Local, easily undone.
    R1,
    /// Visible side effects that can be undone.
    R2,
    /// Hard to undo, or reaches outside systems.
    R3,
    /// Irreversible or high impact (money, deletion, production).
    R4,
}

impl RiskTier {
    /// What the tier means, in the words a reviewer reads beside it.
    pub fn meaning(self) -> &'static str {
        match self {
            RiskTier::R0 => "read-only, no side effects",
            RiskTier::R1 => "local and easily undone",
            RiskTier::R2 => "visible side effects that can be undone",
            RiskTier::R3 => "hard to undo, or reaches outside systems",
            RiskTier::R4 => "irreversible or high impact",
        }
    }
}

/// The Confirm's reason when the agent gives none: the call and its summary,
/// which the review page already shows (so it does not show this twice).
pub fn default_reason(tool: &str, summary: &str) -> String {
    format!("run {tool}: {summary}")
}

impl fmt::Display for RiskTier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RiskTier::R0 => "R0",
            RiskTier::R1 => "R1",
            RiskTier::R2 => "R2",
            RiskTier::R3 => "R3",
            RiskTier::R4 => "R4",
        })
    }
}

/// An approval request (the protocol's `ApprovalRequest`), stored beside the
/// MPLP Confirm that asks for it (target type `other`, target id = `approvalId`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApprovalRequest {
    /// This request's id; also the confirm's `target_id`.
    pub approval_id: MplpId,
    /// The agent session the call belongs to.
    pub session_id: String,
    /// The run within the session.
    pub run_id: String,
    /// The workspace, for grants "always for this workspace".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// The device of the agent that will run the call; tokens are bound to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_device_id: Option<String>,
    /// The exact call, RFC 8785 canonical JSON of `{name, args}`.
    pub tool_call_canonical: String,
    /// SHA-256 of `tool_call_canonical`, lowercase hex.
    pub tool_call_hash: CallHash,
    /// The agent's summary; checked against the canonical call, never trusted.
    pub human_summary: String,
    /// How risky.
    pub risk_tier: RiskTier,
    /// Why it is that risky.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub risk_reasons: Vec<String>,
    /// What running it will change (best effort).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub side_effects: Vec<String>,
    /// How to undo it, or why it cannot be undone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rollback_notes: Vec<String>,
    /// When the agent asked.
    pub requested_at: Timestamp,
    /// After this nobody can approve it; it is closed as denied.
    pub expires_at: Timestamp,
    /// A diff of what the call changes, when it modifies something existing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// Safer calls the agent could make instead.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suggested_alternatives: Vec<String>,
    /// What a dry run of the call reports, when the tool offers one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<String>,
    /// False when the agent cannot run edited arguments: no reviewer is
    /// offered an edit, and an edit is refused.
    #[serde(default = "yes", skip_serializing_if = "is_yes")]
    pub editable: bool,
}

fn yes() -> bool {
    true
}

fn is_yes(value: &bool) -> bool {
    *value
}

impl ApprovalRequest {
    /// The call it asks to run.
    pub fn tool_call(&self) -> Result<ToolCall, String> {
        ToolCall::from_canonical(&self.tool_call_canonical)
    }

    /// Whether it can no longer be approved at `now`.
    pub fn expired_at(&self, now: DateTime<Utc>) -> bool {
        now >= self.expires_at.to_utc()
    }

    /// Every problem: the canonical text is canonical, names a tool and hashes
    /// to `toolCallHash`; ids and times make sense. Paths are relative to the
    /// request. O(size of the call).
    pub fn validate(&self) -> Vec<Issue> {
        let root = Pointer::root();
        let mut issues = Vec::new();
        let canonical_path = root.child("toolCallCanonical");
        match serde_json::from_str::<Value>(&self.tool_call_canonical) {
            Err(e) => issues.push(Issue::new(
                &canonical_path,
                IssueCode::InvalidJson,
                format!("the tool call is not JSON: {e}"),
            )),
            Ok(value) => {
                match canonicalize(&value) {
                    Err(e) => issues.push(Issue::new(
                        &canonical_path,
                        IssueCode::UnsafeNumber,
                        e.to_string(),
                    )),
                    Ok(text) if text != self.tool_call_canonical => issues.push(Issue::new(
                        &canonical_path,
                        IssueCode::NotCanonical,
                        "the tool call is not in RFC 8785 canonical form (sorted keys, no spaces); \
                         send it as an object in `toolCall` and Countersign canonicalizes it",
                    )),
                    Ok(_) => {}
                }
                if let Err(e) = crate::json::typed::<ToolCall>(&value) {
                    issues.push(Issue::new(
                        &canonical_path,
                        IssueCode::WrongType,
                        format!(
                            "the tool call must be {{\"name\": string, \"args\": object}}: {e}"
                        ),
                    ));
                } else if value["name"].as_str().is_some_and(|n| n.trim().is_empty()) {
                    issues.push(Issue::new(
                        &canonical_path.child("name"),
                        IssueCode::EmptyString,
                        "the tool's name is empty",
                    ));
                }
            }
        }
        let expected = CallHash::of_canonical(&self.tool_call_canonical);
        if expected != self.tool_call_hash {
            issues.push(Issue::new(
                &root.child("toolCallHash"),
                IssueCode::HashMismatch,
                format!(
                    "{} is not the SHA-256 of the canonical call ({expected})",
                    self.tool_call_hash
                ),
            ));
        }
        for (field, text) in [
            ("sessionId", &self.session_id),
            ("runId", &self.run_id),
            ("humanSummary", &self.human_summary),
        ] {
            if text.trim().is_empty() {
                issues.push(Issue::new(
                    &root.child(field),
                    IssueCode::EmptyString,
                    format!("`{field}` is empty"),
                ));
            }
        }
        if self.expires_at <= self.requested_at {
            issues.push(Issue::new(
                &root.child("expiresAt"),
                IssueCode::EndsBeforeStart,
                format!(
                    "expires at {} which is not after it was requested ({})",
                    self.expires_at, self.requested_at
                ),
            ));
        }
        issues
    }
}

/// What an agent posts to ask before a tool call: the call as an object (it is
/// canonicalized here, once), expiry optional (five minutes by default).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolCallSubmission {
    /// The request's id; a new one is made when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_id: Option<MplpId>,
    /// The agent session.
    pub session_id: String,
    /// The run within the session.
    pub run_id: String,
    /// The workspace, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// The agent's device, to bind the token to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_device_id: Option<String>,
    /// The call: `{"name": ..., "args": {...}}`.
    pub tool_call: Value,
    /// The agent's one-line summary.
    pub human_summary: String,
    /// How risky.
    pub risk_tier: RiskTier,
    /// Why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub risk_reasons: Vec<String>,
    /// Predicted side effects.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub side_effects: Vec<String>,
    /// Rollback or safety notes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rollback_notes: Vec<String>,
    /// When it expires; five minutes after the request when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<Timestamp>,
    /// A diff of what it changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// Safer alternatives.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suggested_alternatives: Vec<String>,
    /// A dry run's report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<String>,
    /// False when the agent cannot run edited arguments (true when absent).
    #[serde(default = "yes", skip_serializing_if = "is_yes")]
    pub editable: bool,
    /// Why the agent asks (the confirm's `reason`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The agent's role (the confirm's `requested_by_role`).
    pub requested_by_role: String,
}

impl ToolCallSubmission {
    /// The pending confirm and its approval request, or every problem (paths
    /// relative to the submission). `now` is the request time.
    pub fn into_request(
        self,
        now: DateTime<Utc>,
        ids: &mut impl IdSource,
    ) -> Result<(Confirm, ApprovalRequest), Vec<Issue>> {
        let root = Pointer::root();
        let requested_by_role = self.requested_by_role.trim().to_owned();
        if requested_by_role.is_empty() {
            return Err(vec![Issue::new(
                &root.child("requestedByRole"),
                IssueCode::EmptyString,
                "say which agent role asks: `requestedByRole` is empty",
            )]);
        }
        let requested_by_role = requested_by_role.as_str();
        let call_path = root.child("toolCall");
        let call: ToolCall = crate::json::typed(&self.tool_call).map_err(|e| {
            vec![Issue::new(
                &call_path,
                IssueCode::WrongType,
                format!("`toolCall` must be {{\"name\": string, \"args\": object}}: {e}"),
            )]
        })?;
        let canonical = call.canonical().map_err(|e| {
            let mut issue = Issue::new(&call_path, IssueCode::UnsafeNumber, e.to_string());
            issue.path.push_str(e.path());
            vec![issue]
        })?;
        let requested_at = Timestamp::from_utc(now);
        let approval_id = self.approval_id.unwrap_or_else(|| ids.next_id());
        let request = ApprovalRequest {
            approval_id,
            session_id: self.session_id,
            run_id: self.run_id,
            workspace: self.workspace,
            client_device_id: self.client_device_id,
            tool_call_hash: CallHash::of_canonical(&canonical),
            tool_call_canonical: canonical,
            human_summary: self.human_summary,
            risk_tier: self.risk_tier,
            risk_reasons: self.risk_reasons,
            side_effects: self.side_effects,
            rollback_notes: self.rollback_notes,
            expires_at: self
                .expires_at
                .unwrap_or_else(|| Timestamp::from_utc(now + DEFAULT_EXPIRY)),
            requested_at: requested_at.clone(),
            diff: self.diff,
            suggested_alternatives: self.suggested_alternatives,
            dry_run: self.dry_run,
            editable: self.editable,
        };
        let issues: Vec<Issue> = request
            .validate()
            .into_iter()
            .map(|mut issue| {
                // Report against what the agent sent.
                if issue.path.starts_with("/toolCallCanonical") {
                    issue.path = issue.path.replacen("/toolCallCanonical", "/toolCall", 1);
                }
                issue
            })
            .collect();
        if !issues.is_empty() {
            return Err(issues);
        }
        let confirm = Confirm {
            meta: Meta {
                protocol_version: PROTOCOL_VERSION.to_owned(),
                schema_version: PROTOCOL_VERSION.to_owned(),
                created_at: Some(requested_at.clone()),
                created_by: Some(requested_by_role.to_owned()),
                updated_at: None,
                updated_by: None,
                tags: Some(vec!["tool-call".to_owned(), request.risk_tier.to_string()]),
                cross_cutting: None,
            },
            governance: None,
            confirm_id: ids.next_id(),
            target_type: TargetType::Other,
            target_id: approval_id,
            status: ConfirmStatus::Pending,
            requested_by_role: requested_by_role.to_owned(),
            requested_at,
            reason: Some(
                self.reason
                    .unwrap_or_else(|| default_reason(&call.name, &request.human_summary)),
            ),
            decisions: None,
            trace: None,
            events: None,
        };
        Ok((confirm, request))
    }
}
