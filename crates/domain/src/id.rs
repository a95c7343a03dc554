//! MPLP identifiers: lowercase, hyphenated UUID v4.

use crate::parsed_text::deserialize_parsed;
use serde::{Deserialize, Deserializer, Serialize};
use std::fmt;
use std::str::FromStr;
use uuid::Uuid;

/// Why a string is not an MPLP identifier.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    /// Not of the form `xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx` in lowercase hex.
    #[error("is not a lowercase hyphenated UUID (8-4-4-4-12 hex digits)")]
    Malformed,
    /// A UUID, but not version 4 with the RFC 4122 variant.
    #[error(
        "is a UUID but not version 4 (the 13th digit must be 4 and the 17th one of 8, 9, a, b)"
    )]
    NotVersion4,
}

/// An MPLP identifier (`confirm_id`, `plan_id`, `step_id`, ...): a lowercase UUID v4.
///
/// Constructed only through [`MplpId::parse`] or [`MplpId::from_uuid`], so every value is valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(into = "String")]
pub struct MplpId(Uuid);

impl MplpId {
    /// Parses the schema's form: 36 characters, lowercase hex, version 4, RFC 4122 variant.
    pub fn parse(text: &str) -> Result<Self, IdError> {
        let well_formed = text.len() == 36
            && text.bytes().enumerate().all(|(i, b)| match i {
                8 | 13 | 18 | 23 => b == b'-',
                _ => b.is_ascii_digit() || (b'a'..=b'f').contains(&b),
            });
        if !well_formed {
            return Err(IdError::Malformed);
        }
        let uuid = Uuid::parse_str(text).map_err(|_| IdError::Malformed)?;
        Self::from_uuid(uuid)
    }

    /// Wraps a UUID that is version 4 with the RFC 4122 variant.
    pub fn from_uuid(uuid: Uuid) -> Result<Self, IdError> {
        if uuid.get_version_num() == 4 && uuid.get_variant() == uuid::Variant::RFC4122 {
            Ok(MplpId(uuid))
        } else {
            Err(IdError::NotVersion4)
        }
    }

    /// Builds a UUID v4 from 16 random bytes (sets the version and variant bits).
    pub fn from_random_bytes(bytes: [u8; 16]) -> Self {
        MplpId(uuid::Builder::from_random_bytes(bytes).into_uuid())
    }

    /// The underlying UUID.
    pub fn as_uuid(&self) -> Uuid {
        self.0
    }
}

impl fmt::Display for MplpId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0.hyphenated(), f)
    }
}

impl FromStr for MplpId {
    type Err = IdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl<'de> Deserialize<'de> for MplpId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_parsed(deserializer, "a lowercase hyphenated UUID v4", Self::parse)
    }
}

impl From<MplpId> for String {
    fn from(id: MplpId) -> String {
        id.to_string()
    }
}

/// A source of fresh identifiers, so `decide` stays pure: the browser draws from
/// `crypto.getRandomValues`, the server from the OS, tests from a counter.
pub trait IdSource {
    /// A new, unused identifier.
    fn next_id(&mut self) -> MplpId;
}

impl<F: FnMut() -> MplpId> IdSource for F {
    fn next_id(&mut self) -> MplpId {
        self()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_schema_examples() {
        for s in [
            "550e8400-e29b-41d4-a716-446655440000",
            "123e4567-e89b-42d3-a456-426614174000",
        ] {
            assert_eq!(MplpId::parse(s).unwrap().to_string(), s);
        }
    }

    #[test]
    fn rejects_spec_prose_ids_and_wrong_forms() {
        for s in [
            "conf-8829-x1",
            "plan-550e8400-e29b-41d4-a716-446655440001",
            "550E8400-E29B-41D4-A716-446655440000",
            "550e8400e29b41d4a716446655440000",
            "{550e8400-e29b-41d4-a716-446655440000}",
            "",
        ] {
            assert_eq!(MplpId::parse(s), Err(IdError::Malformed), "{s}");
        }
        // version 1 and a wrong variant
        assert_eq!(
            MplpId::parse("123e4567-e89b-12d3-a456-426614174000"),
            Err(IdError::NotVersion4)
        );
        assert_eq!(
            MplpId::parse("123e4567-e89b-42d3-c456-426614174000"),
            Err(IdError::NotVersion4)
        );
    }

    #[test]
    fn random_bytes_make_valid_v4() {
        let id = MplpId::from_random_bytes([0xff; 16]);
        assert_eq!(MplpId::parse(&id.to_string()), Ok(id));
    }
}
