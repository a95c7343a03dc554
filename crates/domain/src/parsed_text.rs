//! Deserializing values that are parsed from a JSON string (ids, timestamps,
//! event types) straight from the document's text: the string is borrowed when
//! the parser can lend it, instead of being copied into a `String` first.

use serde::de::{Deserializer, Error, Visitor};
use std::fmt;

/// Deserializes a string and parses it with `parse`; a parse error becomes the
/// deserializer's error with the parser's message. `expecting` names the form
/// (it completes "invalid type: integer `5`, expected ...").
pub(crate) fn deserialize_parsed<'de, D, T, E>(
    deserializer: D,
    expecting: &'static str,
    parse: fn(&str) -> Result<T, E>,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    E: fmt::Display,
{
    deserializer.deserialize_str(ParsedText { expecting, parse })
}

struct ParsedText<T, E> {
    expecting: &'static str,
    parse: fn(&str) -> Result<T, E>,
}

impl<T, E: fmt::Display> Visitor<'_> for ParsedText<T, E> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expecting)
    }

    fn visit_str<Err: Error>(self, text: &str) -> Result<T, Err> {
        (self.parse)(text).map_err(Err::custom)
    }
}

#[cfg(test)]
mod tests {
    use crate::model::EventType;
    use crate::{MplpId, Timestamp};

    #[test]
    fn parses_borrowed_and_escaped_text() {
        let id: MplpId = serde_json::from_str("\"550e8400-e29b-41d4-a716-446655440000\"").unwrap();
        assert_eq!(id.to_string(), "550e8400-e29b-41d4-a716-446655440000");
        // An escape makes the parser build the string: parsed the same way.
        let at: Timestamp = serde_json::from_str("\"2025-12-01T12:00:00\\u002e000Z\"").unwrap();
        assert_eq!(at.as_str(), "2025-12-01T12:00:00.000Z");
        let from_value: EventType =
            serde_json::from_value(serde_json::json!("decision.approved")).unwrap();
        assert_eq!(from_value.as_str(), "decision.approved");
    }

    #[test]
    fn errors_name_the_problem_and_the_form() {
        let bad = serde_json::from_str::<MplpId>("\"conf-1\"")
            .unwrap_err()
            .to_string();
        assert!(bad.contains("is not a lowercase hyphenated UUID"), "{bad}");
        let wrong_type = serde_json::from_str::<Timestamp>("5")
            .unwrap_err()
            .to_string();
        assert!(
            wrong_type.contains("invalid type: integer `5`, expected an RFC 3339 date-time"),
            "{wrong_type}"
        );
    }
}
