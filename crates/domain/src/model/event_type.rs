//! Event type names: dot-separated lowercase words (`decision.approved`).

use crate::parsed_text::deserialize_parsed;
use serde::{Deserialize, Deserializer, Serialize};
use std::fmt;

/// Why a string is not an event type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not an event type: use dot-separated words of lowercase letters and digits, each starting with a letter (e.g. decision.approved)")]
pub struct EventTypeError(pub String);

/// An event type matching the schema pattern `^[a-z][a-z0-9]*(\.[a-z][a-z0-9]*)*$`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(into = "String")]
pub struct EventType(String);

impl EventType {
    /// Checks the pattern without a regex engine (keeps the wasm small).
    pub fn parse(text: &str) -> Result<Self, EventTypeError> {
        let valid = !text.is_empty()
            && text.split('.').all(|word| {
                let mut bytes = word.bytes();
                matches!(bytes.next(), Some(b'a'..=b'z'))
                    && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            });
        if valid {
            Ok(EventType(text.to_owned()))
        } else {
            Err(EventTypeError(text.to_owned()))
        }
    }

    /// One of this crate's own names (`decision.approved`, ...), built from
    /// literals and enum names that match the pattern; checked in debug builds.
    pub(crate) fn trusted(name: String) -> Self {
        debug_assert!(Self::parse(&name).is_ok(), "{name}");
        EventType(name)
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for EventType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_parsed(
            deserializer,
            "an event type (dot-separated lowercase words)",
            Self::parse,
        )
    }
}

impl From<EventType> for String {
    fn from(t: EventType) -> String {
        t.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern() {
        for ok in [
            "plan.created",
            "decision.approved",
            "vsl.transition.applied",
            "a1.b2",
        ] {
            assert!(EventType::parse(ok).is_ok(), "{ok}");
        }
        for bad in [
            "plan_approved",
            "Plan.created",
            "plan.",
            ".plan",
            "1plan",
            "",
            "plan..x",
            "plan.créé",
        ] {
            assert!(EventType::parse(bad).is_err(), "{bad}");
        }
    }
}
