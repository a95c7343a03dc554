//! Objects shared by every module: metadata, governance, trace references, events.

use super::enums::{CrossCutting, RefModule};
use crate::{EventType, MplpId, Timestamp};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// `meta`: protocol and schema versions plus optional provenance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    /// MPLP protocol version (`1.0.0`).
    pub protocol_version: String,
    /// Schema version of the object.
    pub schema_version: String,
    /// When the object was created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<Timestamp>,
    /// Who created it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
    /// When it last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<Timestamp>,
    /// Who changed it last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_by: Option<String>,
    /// Free-form unique tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// Cross-cutting concerns declared for the object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cross_cutting: Option<Vec<CrossCutting>>,
}

/// `governance`: lifecycle fence and locking (the schema spells these in camelCase).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Governance {
    /// Lifecycle phase, e.g. `review`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle_phase: Option<String>,
    /// Truth domain the object belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truth_domain: Option<String>,
    /// Whether the object is locked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locked: Option<bool>,
    /// The last Confirm that validated this state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_confirm_ref: Option<Ref>,
}

/// A reference to another MPLP object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ref {
    /// The referenced object's id.
    pub id: MplpId,
    /// The module it belongs to.
    pub module: RefModule,
    /// How it relates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A trace reference (`trace-base`): which trace and span an object belongs to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceRef {
    /// The execution chain.
    pub trace_id: MplpId,
    /// This operation's span.
    pub span_id: MplpId,
    /// The parent span, absent for a root span.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_span_id: Option<MplpId>,
    /// The context root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_id: Option<MplpId>,
    /// Free-form attributes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attributes: Option<Map<String, Value>>,
}

/// An event in an object's history (CloudEvents-like).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Event {
    /// The event's id.
    pub event_id: MplpId,
    /// Dot-separated type, e.g. `decision.approved`.
    pub event_type: EventType,
    /// Emitting module or component.
    pub source: String,
    /// When it happened.
    pub timestamp: Timestamp,
    /// The trace it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<MplpId>,
    /// Business data: an object or `null` (absent and `null` are kept apart).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub data: Option<Value>,
}

/// Deserializes a present field, `null` included, as `Some`.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}
