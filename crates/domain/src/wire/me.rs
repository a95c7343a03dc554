//! `GET /api/v1/me`: the calling key, so a reviewer's app knows who it
//! decides as (what the policy's checks compare).

use crate::KeyRef;
use serde::{Deserialize, Serialize};

/// The calling key and what it may do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Me {
    /// The key and its owner.
    pub key: KeyRef,
    /// `agent` or `reviewer`.
    pub kind: String,
    /// The roles a reviewer key may sign as.
    pub roles: Vec<String>,
}
