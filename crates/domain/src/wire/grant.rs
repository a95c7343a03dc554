//! The grants ledger as it travels: each standing approval with how often it
//! was used and whether it was revoked (by whom, when).

use crate::toolcall::ScopeGrant;
use serde::{Deserialize, Serialize};

/// A grant as the ledger lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantRecord {
    /// The grant.
    pub grant: ScopeGrant,
    /// The review whose approval made it.
    pub review_id: String,
    /// How many calls it approved without asking.
    pub uses: i64,
    /// When it was revoked, if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<String>,
    /// The reviewer key that revoked it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_by: Option<String>,
}

impl GrantRecord {
    /// Whether it still approves calls (revoked or past its end: no).
    pub fn is_live(&self, now: chrono::DateTime<chrono::Utc>) -> bool {
        self.revoked_at.is_none()
            && self
                .grant
                .expires_at
                .as_ref()
                .is_none_or(|end| now < end.to_utc())
    }
}

/// The answer of `GET /grants`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantList {
    /// Newest first.
    pub items: Vec<GrantRecord>,
}
