//! What `decide` needs from the browser: the time and fresh identifiers.

use chrono::{DateTime, Utc};
use countersign_domain::MplpId;

/// The current time from the browser's clock.
pub fn now() -> DateTime<Utc> {
    DateTime::from_timestamp_millis(js_sys::Date::now() as i64).unwrap_or_default()
}

/// A fresh UUID v4 from `crypto.getRandomValues` (falls back to `Math.random`
/// only where the Web Crypto API is missing).
pub fn new_id() -> MplpId {
    let mut bytes = [0u8; 16];
    let filled = web_sys::window()
        .and_then(|w| w.crypto().ok())
        .is_some_and(|c| c.get_random_values_with_u8_array(&mut bytes).is_ok());
    if !filled {
        for b in &mut bytes {
            *b = (js_sys::Math::random() * 256.0) as u8;
        }
    }
    MplpId::from_random_bytes(bytes)
}
