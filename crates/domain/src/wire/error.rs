//! The one error shape of every API answer:
//! `{"error": {"code", "message", "details": [{"path", "message"}]}}`.

use crate::Issue;
use serde::{Deserialize, Serialize};

/// The body of every error answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// What went wrong.
    pub error: ErrorReport,
}

/// What went wrong: a stable code, a sentence, and each precise problem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorReport {
    /// A stable code clients branch on (`already_decided`, `invalid_request`, …).
    pub code: String,
    /// A sentence a person can act on.
    pub message: String,
    /// Each precise problem (may be empty).
    #[serde(default)]
    pub details: Vec<Detail>,
}

/// One precise problem: where (a JSON Pointer into the request, or a
/// parameter's name) and what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Detail {
    /// JSON Pointer into the request body (or the parameter name), "" for the whole body.
    pub path: String,
    /// What is wrong there.
    pub message: String,
}

impl Detail {
    /// A problem at `path`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Detail {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// A validation problem, with its code after the message.
impl From<&Issue> for Detail {
    fn from(issue: &Issue) -> Self {
        Detail::new(
            issue.path.clone(),
            format!("{} ({})", issue.message, issue.code.as_str()),
        )
    }
}
