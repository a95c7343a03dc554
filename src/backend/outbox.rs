//! Decisions made while the server is unreachable: kept in local storage with
//! their idempotency key until the server has them, so they are never lost and
//! (the server keeps the first result of a key) never recorded twice.

use countersign_domain::{DecisionInput, MplpId};
use serde::{Deserialize, Serialize};

const PREFIX: &str = "countersign.v1.outbox.";

/// A decision waiting for the server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Queued {
    /// The review's confirm_id.
    pub confirm_id: MplpId,
    /// The server it is for.
    pub server: String,
    /// The decision.
    pub input: DecisionInput,
    /// Sent with every attempt.
    pub idempotency_key: String,
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

/// Keeps a decision until it is delivered.
pub fn put(queued: &Queued) -> Result<(), String> {
    let text = serde_json::to_value(queued)
        .map_err(|e| e.to_string())?
        .to_string();
    storage()
        .ok_or_else(|| "browser storage is not available".to_owned())?
        .set_item(&format!("{PREFIX}{}", queued.confirm_id), &text)
        .map_err(|_| "browser storage refused to keep the decision".to_owned())
}

/// Every queued decision for this server.
pub fn all(server: &str) -> Vec<Queued> {
    let Some(storage) = storage() else {
        return Vec::new();
    };
    (0..storage.length().unwrap_or(0))
        .filter_map(|i| storage.key(i).ok().flatten())
        .filter(|key| key.starts_with(PREFIX))
        .filter_map(|key| storage.get_item(&key).ok().flatten())
        .filter_map(|text| serde_json::from_str::<Queued>(&text).ok())
        .filter(|q| q.server == server)
        .collect()
}

/// Drops a delivered (or refused) decision.
pub fn remove(confirm_id: MplpId) {
    if let Some(storage) = storage() {
        let _ = storage.remove_item(&format!("{PREFIX}{confirm_id}"));
    }
}
