//! Problems found while validating a document: where (JSON Pointer), what (stable code), why (message).

use serde::{Deserialize, Serialize};
use std::fmt;

/// A stable, machine-readable name for a kind of problem.
///
/// The serialized names (snake_case) are part of Countersign's public contract:
/// tools and tests match on them, so they never change meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IssueCode {
    /// The document is none of Confirm, Plan, Context or Trace.
    UnknownKind,
    /// A required field is absent.
    MissingField,
    /// A field the closed schema does not define.
    UnknownField,
    /// A value of the wrong JSON type.
    WrongType,
    /// A string outside the field's enumeration.
    InvalidEnum,
    /// An identifier that is not a lowercase UUID v4.
    InvalidId,
    /// A timestamp that is not RFC 3339 with an offset.
    InvalidTimestamp,
    /// A version that is not `MAJOR.MINOR.PATCH`.
    InvalidVersion,
    /// A protocol version other than the one Countersign speaks (1.0.0).
    UnsupportedProtocolVersion,
    /// An event type that is not dot-separated lowercase words.
    InvalidEventType,
    /// A string that must not be empty.
    EmptyString,
    /// An array with fewer items than required.
    TooFewItems,
    /// The same item twice in an array whose items must be unique.
    DuplicateItem,
    /// A number outside its allowed range.
    OutOfRange,
    /// Two steps of one plan share a `step_id`.
    DuplicateStepId,
    /// A dependency names no step of the same plan.
    UnknownDependency,
    /// A step depends on itself.
    SelfDependency,
    /// Steps depend on each other in a circle.
    DependencyCycle,
    /// A rejected decision without a reason.
    RejectionWithoutReason,
    /// A confirm whose `target_id` is not the plan it travels with.
    TargetMismatch,
    /// An object whose `context_id` is not the context it travels with.
    ContextMismatch,
    /// A trace whose `plan_id` is not the plan it travels with.
    PlanMismatch,
    /// A trace whose root span belongs to another trace.
    TraceMismatch,
    /// A review whose target object is absent or of another kind than the confirm says.
    MissingTarget,
    /// Text that is not JSON.
    InvalidJson,
    /// A number that JSON readers disagree on (outside ±(2^53 - 1) as an integer).
    UnsafeNumber,
    /// A tool call given in a form other than its RFC 8785 canonical text.
    NotCanonical,
    /// A hash that is not the SHA-256 of what it claims to hash.
    HashMismatch,
    /// A time window that ends before it starts.
    EndsBeforeStart,
    /// A decided status (approved, rejected, cancelled) that the last decision
    /// of the history does not record: edited, or forged.
    StatusWithoutDecision,
}

impl IssueCode {
    /// The stable snake_case name of the code.
    pub fn as_str(self) -> &'static str {
        use IssueCode::*;
        match self {
            UnknownKind => "unknown_kind",
            MissingField => "missing_field",
            UnknownField => "unknown_field",
            WrongType => "wrong_type",
            InvalidEnum => "invalid_enum",
            InvalidId => "invalid_id",
            InvalidTimestamp => "invalid_timestamp",
            InvalidVersion => "invalid_version",
            UnsupportedProtocolVersion => "unsupported_protocol_version",
            InvalidEventType => "invalid_event_type",
            EmptyString => "empty_string",
            TooFewItems => "too_few_items",
            DuplicateItem => "duplicate_item",
            OutOfRange => "out_of_range",
            DuplicateStepId => "duplicate_step_id",
            UnknownDependency => "unknown_dependency",
            SelfDependency => "self_dependency",
            DependencyCycle => "dependency_cycle",
            RejectionWithoutReason => "rejection_without_reason",
            TargetMismatch => "target_mismatch",
            ContextMismatch => "context_mismatch",
            PlanMismatch => "plan_mismatch",
            TraceMismatch => "trace_mismatch",
            MissingTarget => "missing_target",
            InvalidJson => "invalid_json",
            UnsafeNumber => "unsafe_number",
            NotCanonical => "not_canonical",
            HashMismatch => "hash_mismatch",
            EndsBeforeStart => "ends_before_start",
            StatusWithoutDecision => "status_without_decision",
        }
    }
}

impl fmt::Display for IssueCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One problem in a document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Issue {
    /// Where: a JSON Pointer (RFC 6901) into the document, `""` for the whole document.
    pub path: String,
    /// What: a stable machine-readable code.
    pub code: IssueCode,
    /// Why, for a human.
    pub message: String,
}

impl Issue {
    /// An issue at `path` with `code` and `message`.
    pub fn new(path: &Pointer, code: IssueCode, message: impl Into<String>) -> Self {
        Issue {
            path: path.as_str().to_owned(),
            code,
            message: message.into(),
        }
    }

    /// The same issue seen from a containing document, under `prefix`.
    pub fn under(mut self, prefix: &Pointer) -> Self {
        self.path = format!("{}{}", prefix.as_str(), self.path);
        self
    }
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "(document)"
        } else {
            &self.path
        };
        write!(f, "{path}: {} [{}]", self.message, self.code)
    }
}

/// A JSON Pointer (RFC 6901) built one token at a time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pointer(String);

impl Pointer {
    /// The pointer to the whole document.
    pub fn root() -> Self {
        Pointer(String::new())
    }

    /// The pointer to member `token` (a key or an array index) of this location.
    pub fn child(&self, token: impl fmt::Display) -> Self {
        let token = token.to_string();
        let mut path = String::with_capacity(self.0.len() + token.len() + 1);
        path.push_str(&self.0);
        path.push('/');
        for c in token.chars() {
            match c {
                '~' => path.push_str("~0"),
                '/' => path.push_str("~1"),
                c => path.push(c),
            }
        }
        Pointer(path)
    }

    /// The pointer as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointer_escapes_tilde_and_slash() {
        let p = Pointer::root().child("a/b").child("m~n").child(3);
        assert_eq!(p.as_str(), "/a~1b/m~0n/3");
    }

    #[test]
    fn issue_under_prefixes_path() {
        let issue = Issue::new(
            &Pointer::root().child("status"),
            IssueCode::InvalidEnum,
            "bad",
        );
        assert_eq!(issue.under(&Pointer::root().child(2)).path, "/2/status");
    }
}
