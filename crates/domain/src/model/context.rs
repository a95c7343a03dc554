//! The Context module: the project/environment a plan runs in.

use super::common::{Event, Governance, Meta, TraceRef};
use super::enums::ContextStatus;
use crate::{MplpId, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// An MPLP Context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Context {
    /// Protocol metadata.
    pub meta: Meta,
    /// Lifecycle and locking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub governance: Option<Governance>,
    /// This context's id.
    pub context_id: MplpId,
    /// Domain and environment.
    pub root: ContextRoot,
    /// Name.
    pub title: String,
    /// Longer description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Lifecycle status.
    pub status: ContextStatus,
    /// Tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// Working language.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Owning role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_role: Option<String>,
    /// Free-form constraints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constraints: Option<Map<String, Value>>,
    /// Creation time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<Timestamp>,
    /// Last change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<Timestamp>,
    /// Trace binding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceRef>,
    /// Key events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<Event>>,
}

/// `root`: where the context lives; open to extra fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextRoot {
    /// Business domain.
    pub domain: String,
    /// Environment (dev, test, prod, ...).
    pub environment: String,
    /// Entry point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_point: Option<String>,
    /// Any other fields, kept as they came.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
