//! The HTTP contract's types, shared by the server, the app and the agent
//! client: what a list row shows of a review.

use crate::model::{ConfirmStatus, TargetType};
use crate::toolcall::RiskTier;
use crate::{MplpId, Review, Timestamp};
use serde::{Deserialize, Serialize};
use std::hash::{Hash, Hasher};

/// What the inbox lists of a review. Local storage keeps one for every review
/// in a single small value (the inbox index), so the inbox's first page is
/// drawn before the reviews themselves are read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewSummary {
    /// The confirm's id.
    pub id: MplpId,
    /// The confirm's status.
    pub status: ConfirmStatus,
    /// What the confirm is about.
    #[serde(rename = "type")]
    pub target_type: TargetType,
    /// The role that asked.
    pub by: String,
    /// When it was asked.
    pub at: Timestamp,
    /// How many decisions its history holds.
    pub decisions: usize,
    /// What is asked, in a few words.
    pub title: String,
    /// Its tag: a tool call and its risk, or the target type.
    pub kind: RowKind,
    /// A plan's step count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<usize>,
    /// A tool call's exact name and session (similar calls are grouped by them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<CallKey>,
    /// Nobody decided it within its policy's escalation delay.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub escalated: bool,
    /// When a tool call's request lapses if nobody decides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<Timestamp>,
}

impl ReviewSummary {
    /// The summary of a review.
    pub fn of(review: &Review) -> Self {
        let confirm = &review.confirm;
        ReviewSummary {
            id: confirm.confirm_id,
            status: confirm.status,
            target_type: confirm.target_type,
            by: confirm.requested_by_role.clone(),
            at: confirm.requested_at.clone(),
            decisions: confirm.decisions().len(),
            title: title(review),
            kind: match review.tool_call() {
                Some(call) => RowKind::ToolCall(call.request.risk_tier),
                None => RowKind::Target(confirm.target_type),
            },
            steps: review.plan().map(|p| p.steps.len()),
            call: ReviewSummary::call_of(review),
            escalated: review.escalated(),
            expires: review.tool_call().map(|c| c.request.expires_at.clone()),
        }
    }

    /// A number that changes when anything the inbox shows of it changes.
    pub fn fingerprint(&self) -> u64 {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        (self.id, self.status.as_str(), self.target_type.as_str()).hash(&mut hasher);
        (&self.by, self.at.as_str(), self.decisions, &self.title).hash(&mut hasher);
        (&self.kind, self.steps, &self.call, self.escalated).hash(&mut hasher);
        self.expires
            .as_ref()
            .map(Timestamp::as_str)
            .hash(&mut hasher);
        hasher.finish()
    }

    /// A tool call's exact name and session.
    pub fn call_of(review: &Review) -> Option<CallKey> {
        review.tool_call().map(|call| CallKey {
            tool: call.request.tool_call().map(|c| c.name).unwrap_or_default(),
            session: call.request.session_id.clone(),
        })
    }
}

/// A list row's tag: a tool call with its risk tier, or what else the confirm
/// is about. Written as the row shows it (`tool call R3`, `plan`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RowKind {
    /// A tool call, at this risk.
    ToolCall(RiskTier),
    /// Any other confirm, by what it is about.
    Target(TargetType),
}

impl std::fmt::Display for RowKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RowKind::ToolCall(risk) => write!(f, "tool call {risk}"),
            RowKind::Target(target) => write!(f, "{target}"),
        }
    }
}

impl std::str::FromStr for RowKind {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        if let Some(risk) = text.strip_prefix("tool call ") {
            const TIERS: [RiskTier; 5] = [
                RiskTier::R0,
                RiskTier::R1,
                RiskTier::R2,
                RiskTier::R3,
                RiskTier::R4,
            ];
            return TIERS
                .into_iter()
                .find(|tier| tier.to_string() == risk)
                .map(RowKind::ToolCall)
                .ok_or_else(|| format!("`{risk}` is not a risk tier (R0 to R4)"));
        }
        text.parse().map(RowKind::Target).map_err(|e| e.to_string())
    }
}

impl Serialize for RowKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for RowKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::parsed_text::deserialize_parsed(deserializer, "a row's tag", str::parse)
    }
}

/// A tool call's exact name and session: similar calls are grouped by them.
/// Written as the pair `[tool, session]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "(String, String)", into = "(String, String)")]
pub struct CallKey {
    /// The tool's exact name.
    pub tool: String,
    /// The agent's session.
    pub session: String,
}

impl From<(String, String)> for CallKey {
    fn from((tool, session): (String, String)) -> Self {
        CallKey { tool, session }
    }
}

impl From<CallKey> for (String, String) {
    fn from(key: CallKey) -> Self {
        (key.tool, key.session)
    }
}

/// What is asked, in a few words: a tool call's exact name and then the
/// agent's summary, a plan's title, or the confirm's reason or target.
fn title(review: &Review) -> String {
    if let Some(call) = review.tool_call() {
        let name = call.request.tool_call().map(|c| c.name).unwrap_or_default();
        let summary = crate::text::markdown::plain_text(&call.request.human_summary);
        let summary = summary.trim();
        let summary = summary
            .strip_prefix(name.as_str())
            .map(|rest| rest.trim_start_matches([':', ' ']))
            .unwrap_or(summary);
        let title = format!("{}: {summary}", crate::text::reveal::label(&name));
        return match edit_of(call) {
            Some(changes) => format!("{title} — approved with changes: {changes}"),
            None => title,
        };
    }
    match (review.plan(), review.confirm.target_type) {
        (Some(plan), _) => plan.title.clone(),
        (None, TargetType::Other) => review
            .confirm
            .reason
            .clone()
            .unwrap_or_else(|| "Request".into()),
        (None, kind) => format!("{kind} {}", review.confirm.target_id),
    }
}

/// What a reviewer's edit changed of a call's arguments, each changed
/// argument as `name old → new` (`—` where there was none), in name order;
/// `None` when the call was not approved with changes.
fn edit_of(call: &crate::toolcall::ToolCallReview) -> Option<String> {
    let outcome = call.outcome.as_ref()?;
    if outcome.kind != crate::toolcall::OutcomeKind::Edited {
        return None;
    }
    let asked = call.request.tool_call().ok()?.args;
    let approved: serde_json::Value =
        serde_json::from_str(outcome.approved_call.as_deref()?).ok()?;
    let approved = approved.get("args")?.as_object()?;
    let shown = |value: Option<&serde_json::Value>| match value {
        None => "—".to_owned(),
        Some(serde_json::Value::String(text)) => crate::text::reveal::label(text),
        Some(other) => crate::text::reveal::label(&other.to_string()),
    };
    let names: std::collections::BTreeSet<&String> = asked.keys().chain(approved.keys()).collect();
    let changes: Vec<String> = names
        .into_iter()
        .filter(|name| asked.get(*name) != approved.get(*name))
        .map(|name| {
            let (old, new) = (shown(asked.get(name)), shown(approved.get(name)));
            format!("{} {old} → {new}", crate::text::reveal::label(name))
        })
        .collect();
    (!changes.is_empty()).then(|| changes.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn demo() -> Vec<Review> {
        let now = chrono::DateTime::parse_from_rfc3339("2026-11-25T04:00:00Z")
            .unwrap()
            .to_utc();
        crate::demo::reviews(now).unwrap()
    }

    #[test]
    fn a_summary_says_what_the_inbox_row_shows() {
        let reviews = demo();
        let plan = reviews
            .iter()
            .find(|r| {
                r.plan()
                    .is_some_and(|p| p.title == "Database Migration Plan")
            })
            .unwrap();
        let summary = ReviewSummary::of(plan);
        assert_eq!(summary.title, "Database Migration Plan");
        assert_eq!(summary.kind.to_string(), "plan");
        assert_eq!(summary.steps, Some(3));
        assert_eq!(summary.call, None);
        assert_eq!(summary.decisions, plan.confirm.decisions().len());

        let call = reviews.iter().find(|r| r.tool_call().is_some()).unwrap();
        let summary = ReviewSummary::of(call);
        let request = &call.tool_call().unwrap().request;
        let name = request.tool_call().unwrap().name;
        assert!(
            summary.title.starts_with(&format!("{name}: ")),
            "{}",
            summary.title
        );
        assert_eq!(summary.kind, RowKind::ToolCall(request.risk_tier));
        assert_eq!(
            summary.kind.to_string(),
            format!("tool call {}", request.risk_tier)
        );
        let key = CallKey {
            tool: name,
            session: request.session_id.clone(),
        };
        assert_eq!(summary.call, Some(key));
    }

    #[test]
    fn a_summary_is_written_as_rows_stored_before_were() {
        for review in demo() {
            let summary = ReviewSummary::of(&review);
            let written = serde_json::to_value(&summary).unwrap();
            assert_eq!(written["kind"], summary.kind.to_string());
            if let Some(key) = &summary.call {
                assert_eq!(written["call"], serde_json::json!([key.tool, key.session]));
            }
            let read: ReviewSummary = serde_json::from_value(written).unwrap();
            assert_eq!(read, summary);
        }
        let unknown = serde_json::from_value::<RowKind>(serde_json::json!("tool call R9"));
        assert!(unknown.unwrap_err().to_string().contains("R9"));
    }

    #[test]
    fn the_fingerprint_follows_what_the_row_shows() {
        let summary = ReviewSummary::of(&demo()[0]);
        let mut edited = summary.clone();
        assert_eq!(summary.fingerprint(), edited.fingerprint());
        edited.title.push('!');
        assert_ne!(summary.fingerprint(), edited.fingerprint());
    }
}
