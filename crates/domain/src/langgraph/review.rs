//! An interrupt as a pending tool-call review, the same on every poll.

use super::{PendingInterrupt, Shape};
use crate::toolcall::{new_tool_call_review, RiskTier, ToolCallSubmission};
use crate::{Issue, MplpId, Review, Timestamp};
use chrono::{DateTime, Duration, Utc};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// The requester role of an interrupt whose thread names no graph.
const UNNAMED_AGENT: &str = "langgraph-agent";

impl PendingInterrupt {
    /// A stable id for this action (the same on every poll), so the review of an
    /// interrupt keeps its URL and history. A UUID v4 layout over SHA-256.
    pub fn approval_id(&self) -> MplpId {
        self.stable_id("approval")
    }

    /// An id derived from this action and `what`: the same on every poll.
    fn stable_id(&self, what: &str) -> MplpId {
        let digest = Sha256::digest(
            format!(
                "{}\n{}\n{}\n{what}",
                self.thread_id, self.interrupt_id, self.index
            )
            .as_bytes(),
        );
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(&digest[..16]);
        MplpId::from_random_bytes(bytes)
    }

    /// The interrupt as a pending tool-call review, the same on every poll (its
    /// ids derive from the thread, interrupt and position). The requester is
    /// the graph that owns the thread. Interrupts do not expire, so the request
    /// is open for 30 days from when the thread last changed; the risk tier is
    /// R2 (LangGraph gives none).
    pub fn to_review(&self, now: DateTime<Utc>) -> Result<Review, Vec<Issue>> {
        let requested = self
            .updated_at
            .as_deref()
            .and_then(|t| Timestamp::parse(t).ok())
            .map_or(now, |t| t.to_utc());
        let summary = match (&self.shape, &self.description) {
            (Shape::Unrecognized { note }, _) => note.clone(),
            (_, Some(d)) if !d.trim().is_empty() => d.clone(),
            _ => format!("{} {}", self.name, Value::Object(self.args.clone())),
        };
        let agent = self.agent.as_ref().map_or(UNNAMED_AGENT, |a| a.name());
        let submission = ToolCallSubmission {
            approval_id: Some(self.approval_id()),
            session_id: self.thread_id.clone(),
            run_id: self.interrupt_id.clone(),
            workspace: None,
            client_device_id: None,
            tool_call: json!({"name": self.name, "args": self.args}),
            human_summary: summary,
            risk_tier: RiskTier::R2,
            risk_reasons: vec!["asked by a LangGraph interrupt, which gives no risk tier".into()],
            side_effects: Vec::new(),
            rollback_notes: Vec::new(),
            expires_at: Some(Timestamp::from_utc(requested + Duration::days(30))),
            diff: None,
            suggested_alternatives: Vec::new(),
            dry_run: None,
            // What the interrupt takes decides what is offered (its own answers).
            editable: true,
            reason: Some(format!(
                "LangGraph graph {agent}, thread {}, asks: {}",
                self.thread_id, self.name
            )),
            requested_by_role: agent.to_owned(),
        };
        let mut count = 0;
        let mut ids = || {
            count += 1;
            self.stable_id(&format!("id {count}"))
        };
        new_tool_call_review(submission, requested, &mut ids)
    }
}
