//! The Confirm module: an approval request and its decision records.

use super::common::{Event, Governance, Meta, TraceRef};
use super::enums::{ConfirmStatus, DecisionStatus, TargetType};
use crate::{MplpId, Timestamp};
use serde::{Deserialize, Serialize};

/// An MPLP Confirm: someone asks a role to approve a target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Confirm {
    /// Protocol metadata.
    pub meta: Meta,
    /// Lifecycle and locking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub governance: Option<Governance>,
    /// This request's id.
    pub confirm_id: MplpId,
    /// What kind of object is to be approved.
    pub target_type: TargetType,
    /// Which object.
    pub target_id: MplpId,
    /// Where the request stands.
    pub status: ConfirmStatus,
    /// Who asked.
    pub requested_by_role: String,
    /// When.
    pub requested_at: Timestamp,
    /// Why the request was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Decisions so far, oldest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decisions: Option<Vec<Decision>>,
    /// Trace binding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceRef>,
    /// Key events (creation, decisions, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<Event>>,
}

impl Confirm {
    /// Whether the status is what the history says: pending, or the status of
    /// the last decision. A confirm that fails this was edited outside
    /// Countersign (validation reports it as `status_without_decision`).
    pub fn status_recorded(&self) -> bool {
        self.status == ConfirmStatus::Pending
            || self
                .decisions()
                .last()
                .is_some_and(|d| ConfirmStatus::from(d.status) == self.status)
    }

    /// The decisions, oldest first (empty when none).
    pub fn decisions(&self) -> &[Decision] {
        self.decisions.as_deref().unwrap_or(&[])
    }

    /// The most recent decision, if any.
    pub fn last_decision(&self) -> Option<&Decision> {
        self.decisions().last()
    }
}

/// One reviewer decision on a Confirm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Decision {
    /// This record's id.
    pub decision_id: MplpId,
    /// The outcome.
    pub status: DecisionStatus,
    /// The role that decided.
    pub decided_by_role: String,
    /// When.
    pub decided_at: Timestamp,
    /// Why (required for rejections).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}
