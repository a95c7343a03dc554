//! The Trace module, as far as a plan review needs it.

use super::common::{Event, Governance, Meta, TraceRef};
use super::enums::{SegmentStatus, TraceStatus};
use crate::{MplpId, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// An MPLP Trace: the record of an execution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trace {
    /// Protocol metadata.
    pub meta: Meta,
    /// Lifecycle and locking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub governance: Option<Governance>,
    /// This trace's id.
    pub trace_id: MplpId,
    /// The context.
    pub context_id: MplpId,
    /// The plan executed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_id: Option<MplpId>,
    /// The root span.
    pub root_span: TraceRef,
    /// Status.
    pub status: TraceStatus,
    /// Start time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Timestamp>,
    /// End time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<Timestamp>,
    /// Segments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segments: Option<Vec<TraceSegment>>,
    /// Events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<Event>>,
}

/// One segment of a trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceSegment {
    /// Segment id.
    pub segment_id: MplpId,
    /// Parent segment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_segment_id: Option<MplpId>,
    /// Label.
    pub label: String,
    /// Status.
    pub status: SegmentStatus,
    /// Start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Timestamp>,
    /// End.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<Timestamp>,
    /// Attributes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attributes: Option<Map<String, Value>>,
}
