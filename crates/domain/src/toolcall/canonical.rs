//! RFC 8785 canonical JSON (through `serde_json_canonicalizer`) and the SHA-256
//! call hash, with the one check the crate leaves to us: integers that an
//! IEEE 754 double cannot hold exactly are refused, so the browser, the server
//! and a JavaScript agent can never hash one call two ways.

use crate::issue::Pointer;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::fmt;

/// Why a value has no canonical form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CanonicalError {
    /// The text is not JSON.
    #[error("not JSON: {0}")]
    InvalidJson(String),
    /// An integer a double cannot hold exactly.
    #[error("{path}: {number} is not exactly a JSON number: canonical JSON (an IEEE 754 double) writes it as {reads_as}; send it as a string")]
    UnsafeNumber {
        /// JSON Pointer to the number.
        path: String,
        /// The number as written.
        number: String,
        /// How canonical JSON would write it.
        reads_as: String,
    },
}

impl CanonicalError {
    /// The JSON Pointer of the problem, `""` for the whole text.
    pub fn path(&self) -> &str {
        match self {
            CanonicalError::InvalidJson(_) => "",
            CanonicalError::UnsafeNumber { path, .. } => path,
        }
    }
}

/// The RFC 8785 canonical text of a JSON value. O(n log n) in the value's size
/// (object keys are sorted).
pub fn canonicalize(value: &Value) -> Result<String, CanonicalError> {
    check_numbers(value, &Pointer::root())?;
    serde_json_canonicalizer::to_string(value)
        .map_err(|e| CanonicalError::InvalidJson(e.to_string()))
}

/// Parses JSON text and returns its canonical text.
pub fn canonicalize_text(text: &str) -> Result<String, CanonicalError> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| CanonicalError::InvalidJson(e.to_string()))?;
    canonicalize(&value)
}

/// Refuses integers whose canonical form (that of the nearest double, as RFC
/// 8785 writes numbers) reads back as another integer, such as 2^53 + 1:
/// `serde_json` and Python keep them exactly, JavaScript rounds them, so the
/// hash would cover one number and the tool receive another.
fn check_numbers(value: &Value, at: &Pointer) -> Result<(), CanonicalError> {
    match value {
        Value::Number(n) => {
            let exact = n.as_u64().map(i128::from).or(n.as_i64().map(i128::from));
            match exact {
                Some(int) if int.unsigned_abs() > 1 << 53 => {
                    let as_double = serde_json_canonicalizer::to_string(&(int as f64))
                        .map_err(|e| CanonicalError::InvalidJson(e.to_string()))?;
                    if as_double != int.to_string() {
                        return Err(CanonicalError::UnsafeNumber {
                            path: at.as_str().to_owned(),
                            number: n.to_string(),
                            reads_as: as_double,
                        });
                    }
                    Ok(())
                }
                _ => Ok(()),
            }
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(i, item)| check_numbers(item, &at.child(i))),
        Value::Object(map) => map
            .iter()
            .try_for_each(|(key, item)| check_numbers(item, &at.child(key))),
        _ => Ok(()),
    }
}

/// A lowercase hex SHA-256 of canonical call bytes (64 characters).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CallHash(String);

impl CallHash {
    /// The hash of canonical text. O(n).
    pub fn of_canonical(canonical: &str) -> Self {
        let digest = Sha256::digest(canonical.as_bytes());
        let mut hex = String::with_capacity(64);
        for byte in digest {
            hex.push(char::from_digit(u32::from(byte >> 4), 16).unwrap_or('0'));
            hex.push(char::from_digit(u32::from(byte & 0xf), 16).unwrap_or('0'));
        }
        CallHash(hex)
    }

    /// A hash given as hex text (compared as lowercase; a malformed one matches nothing).
    pub fn from_hex(text: &str) -> Self {
        CallHash(text.trim().to_ascii_lowercase())
    }

    /// The hex text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for CallHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A tool invocation: the tool's name and its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    /// The tool's name.
    pub name: String,
    /// Its arguments by name.
    #[serde(default)]
    pub args: Map<String, Value>,
}

impl ToolCall {
    /// The call's canonical text (`{"args":{...},"name":"..."}`).
    /// O(n log n) in the call's size, without copying the arguments.
    pub fn canonical(&self) -> Result<String, CanonicalError> {
        let args = Pointer::root().child("args");
        self.args
            .iter()
            .try_for_each(|(key, value)| check_numbers(value, &args.child(key)))?;
        serde_json_canonicalizer::to_string(self)
            .map_err(|e| CanonicalError::InvalidJson(e.to_string()))
    }

    /// The call's hash: SHA-256 of its canonical text.
    pub fn hash(&self) -> Result<CallHash, CanonicalError> {
        Ok(CallHash::of_canonical(&self.canonical()?))
    }

    /// The call its canonical text describes.
    pub fn from_canonical(text: &str) -> Result<Self, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sorts_keys_and_drops_whitespace() {
        let value = json!({"b": [1, {"z": true, "a": null}], "a": "x"});
        assert_eq!(
            canonicalize(&value).unwrap(),
            r#"{"a":"x","b":[1,{"a":null,"z":true}]}"#
        );
    }

    #[test]
    fn refuses_integers_a_double_cannot_hold() {
        let ok = json!({"n": (1u64 << 53) - 1, "m": -(1i64 << 53), "big": 1152921504606847000u64});
        assert_eq!(
            canonicalize(&ok).unwrap(),
            r#"{"big":1152921504606847000,"m":-9007199254740992,"n":9007199254740991}"#
        );
        // 2^60 is a double, but canonical JSON writes it with other digits.
        assert!(canonicalize(&json!({"n": 1u64 << 60})).is_err());
        let too_big = json!({"args": {"amounts": [1, 9007199254740993u64]}});
        let err = canonicalize(&too_big).unwrap_err();
        assert_eq!(err.path(), "/args/amounts/1");
        assert!(err.to_string().contains("9007199254740993"), "{err}");
        assert!(
            err.to_string().contains("writes it as 9007199254740992"),
            "{err}"
        );
        let too_small = json!({"n": -9007199254740993i64});
        assert_eq!(canonicalize(&too_small).unwrap_err().path(), "/n");
    }

    #[test]
    fn hash_is_lowercase_hex_sha256() {
        assert_eq!(
            CallHash::of_canonical("").as_str(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        let call = ToolCall {
            name: "send".into(),
            args: json!({"to": "a"}).as_object().unwrap().clone(),
        };
        assert_eq!(
            call.canonical().unwrap(),
            r#"{"args":{"to":"a"},"name":"send"}"#
        );
        assert_eq!(
            call.hash().unwrap(),
            CallHash::of_canonical(r#"{"args":{"to":"a"},"name":"send"}"#)
        );
    }
}
