//! The Plan module: an objective broken into steps that form a DAG.

use super::common::{Event, Meta, TraceRef};
use super::enums::{PlanStatus, StepStatus};
use crate::MplpId;
use serde::{Deserialize, Serialize};

/// An MPLP Plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// Protocol metadata.
    pub meta: Meta,
    /// This plan's id.
    pub plan_id: MplpId,
    /// The context it belongs to.
    pub context_id: MplpId,
    /// Short name.
    pub title: String,
    /// What the plan achieves.
    pub objective: String,
    /// Lifecycle status.
    pub status: PlanStatus,
    /// The steps (at least one).
    pub steps: Vec<PlanStep>,
    /// Main execution trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceRef>,
    /// Key events (approvals, status changes, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<Event>>,
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanStep {
    /// This step's id.
    pub step_id: MplpId,
    /// The work to do.
    pub description: String,
    /// Execution status.
    pub status: StepStatus,
    /// Steps that must complete first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependencies: Option<Vec<MplpId>>,
    /// The role responsible.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_role: Option<String>,
    /// Display or execution order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_index: Option<u64>,
}

impl PlanStep {
    /// The step's dependencies (empty when none).
    pub fn dependencies(&self) -> &[MplpId] {
        self.dependencies.as_deref().unwrap_or(&[])
    }
}
