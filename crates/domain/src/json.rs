//! Typing JSON values. Every typed read goes through JSON text, so the wasm
//! carries one deserializer per type (from text, the fast path for stored and
//! fetched reviews) instead of a second one from `serde_json::Value`.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// Types an already parsed JSON value by reading its text.
pub fn typed<T: DeserializeOwned>(value: &Value) -> serde_json::Result<T> {
    serde_json::from_str(&value.to_string())
}
