//! The one error shape of every API answer:
//! `{"error": {"code", "message", "details": [{"path", "message"}]}}`.

use crate::{DecideError, Issue};
use serde::{Deserialize, Serialize};

/// The body of every error answer. `R` is how its refusal is held: typed
/// ([`Refusal`]), or kept as JSON by a client that reads it only when a
/// decision was refused (the app: so its first load does without the code).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorBody<R = Refusal> {
    /// What went wrong.
    pub error: ErrorReport<R>,
}

/// What went wrong: a stable code, a sentence, and each precise problem.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorReport<R = Refusal> {
    /// A stable code clients branch on (`already_decided`, `invalid_request`, …).
    pub code: String,
    /// A sentence a person can act on.
    pub message: String,
    /// Each precise problem (may be empty).
    #[serde(default)]
    pub details: Vec<Detail>,
    /// A refused decision (absent on other errors).
    #[serde(default = "no_refusal", skip_serializing_if = "Option::is_none")]
    pub refusal: Option<R>,
}

fn no_refusal<R>() -> Option<R> {
    None
}

/// Why a decision was refused, typed as the browser's own checks type it, so a
/// client shows a server's refusal exactly as it shows its own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "by", content = "error", rename_all = "snake_case")]
pub enum Refusal {
    /// The domain's `decide` refused it: the error the browser's check gives.
    Decide(DecideError),
    /// The key may not sign as this role.
    Role {
        /// The role asked for.
        role: String,
        /// The roles the key may sign as.
        allowed: Vec<String>,
    },
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
