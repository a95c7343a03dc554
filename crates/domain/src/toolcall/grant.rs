//! Scope grants: an approval that also covers later calls of the same tool
//! (same arguments, unless the reviewer chose the whole tool) for a session,
//! for 15 minutes, or always in a workspace. Each covered call still gets its
//! own decision and its own token.

use super::canonical::CallHash;
use super::request::{ApprovalRequest, RiskTier};
use crate::{MplpId, Timestamp};
use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use std::fmt;

/// How far an approval reaches beyond its own call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Scope {
    /// The rest of the agent session.
    #[serde(rename = "session")]
    Session,
    /// The next 15 minutes, in the same session.
    #[serde(rename = "15m")]
    FifteenMinutes,
    /// Always, in the same workspace. Refused for R4, confirmed twice for R3.
    #[serde(rename = "workspace")]
    Workspace,
}

impl Scope {
    /// Every scope, narrowest first.
    pub const ALL: [Scope; 3] = [Scope::Session, Scope::FifteenMinutes, Scope::Workspace];

    /// The wire name (`session`, `15m`, `workspace`).
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Session => "session",
            Scope::FifteenMinutes => "15m",
            Scope::Workspace => "workspace",
        }
    }

    /// How a reviewer reads it.
    pub fn label(self) -> &'static str {
        match self {
            Scope::Session => "for this session",
            Scope::FifteenMinutes => "for 15 minutes",
            Scope::Workspace => "always for this workspace",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

impl std::str::FromStr for Scope {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Scope::ALL
            .into_iter()
            .find(|scope| scope.as_str() == s)
            .ok_or_else(|| format!("`{s}` is not a scope: choose session, 15m or workspace"))
    }
}

/// A standing approval made by a reviewer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScopeGrant {
    /// The grant's id, named by every decision it makes.
    pub grant_id: MplpId,
    /// The request whose approval created it.
    pub approval_id: MplpId,
    /// How far it reaches.
    pub scope: Scope,
    /// The tool it covers.
    pub tool_name: String,
    /// The exact call it covers; `None` when the reviewer chose the whole tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_hash: Option<CallHash>,
    /// The highest risk it covers (the granting request's).
    pub max_risk: RiskTier,
    /// The session it was granted in.
    pub session_id: String,
    /// The workspace, for workspace grants.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// The role it was granted as.
    pub granted_by_role: String,
    /// The reviewer key that granted it, when the decision was made with one
    /// (on a Countersign server, always).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub granted_by_key: Option<String>,
    /// That key's owner, the person who granted it, when the key has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub granted_by_owner: Option<String>,
    /// The signed-in person who granted it, when the provider named them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub granted_by_person: Option<crate::Person>,
    /// When.
    pub granted_at: Timestamp,
    /// When it stops covering calls (15-minute grants).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<Timestamp>,
}

impl ScopeGrant {
    /// The time a grant of `scope` made at `now` ends, if it ends by time.
    pub fn ends(scope: Scope, now: DateTime<Utc>) -> Option<Timestamp> {
        (scope == Scope::FifteenMinutes).then(|| Timestamp::from_utc(now + Duration::minutes(15)))
    }

    /// Whether this grant approves `request` at `now`: same tool, same call
    /// unless the whole tool was granted, no riskier than what was granted, within
    /// the scope's session or workspace and its time. O(1).
    pub fn covers(&self, request: &ApprovalRequest, tool_name: &str, now: DateTime<Utc>) -> bool {
        if tool_name != self.tool_name || request.risk_tier > self.max_risk {
            return false;
        }
        if let Some(hash) = &self.call_hash {
            if hash != &request.tool_call_hash {
                return false;
            }
        }
        if self
            .expires_at
            .as_ref()
            .is_some_and(|end| now >= end.to_utc())
        {
            return false;
        }
        match self.scope {
            Scope::Session | Scope::FifteenMinutes => request.session_id == self.session_id,
            Scope::Workspace => {
                self.workspace.is_some() && request.workspace.as_ref() == self.workspace.as_ref()
            }
        }
    }
}
