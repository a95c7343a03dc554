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
    /// A stable code clients branch on.
    pub code: ErrorCode,
    /// A sentence a person can act on.
    pub message: String,
    /// Each precise problem (may be empty).
    #[serde(default)]
    pub details: Vec<Detail>,
    /// A refused decision (absent on other errors).
    #[serde(default = "no_refusal", skip_serializing_if = "Option::is_none")]
    pub refusal: Option<R>,
}

/// Every error code the API answers with: stable, so clients branch on them.
/// The OpenAPI document lists the same set (a test holds them together).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ErrorCode {
    /// The review was decided already (the decision that stands is named).
    AlreadyDecided,
    /// The id is taken by a different review.
    AlreadyExists,
    /// The grant was revoked before.
    AlreadyRevoked,
    /// The body is over the server's size limit.
    BodyTooLarge,
    /// The review kept changing under a write: try again.
    Busy,
    /// The review cannot be resubmitted (not rejected).
    CannotResubmit,
    /// The request cannot be withdrawn (decided, or not a tool call).
    CannotWithdraw,
    /// The review changed between a read and a write: read it again.
    ChangedMeanwhile,
    /// A request with a session's cookie came from another site, or without
    /// the session's `X-Countersign-CSRF` token.
    CrossSite,
    /// A decision needs an `Idempotency-Key` header.
    IdempotencyKeyRequired,
    /// The `Idempotency-Key` was used for a different decision.
    IdempotencyKeyReused,
    /// The server failed; nothing was changed.
    Internal,
    /// A query parameter has a value it does not take.
    InvalidParameter,
    /// Well-formed JSON that breaks the rules (the details say where).
    InvalidRequest,
    /// The request cannot be approved while it has problems.
    InvalidTarget,
    /// The body is not JSON.
    MalformedJson,
    /// The link from an e-mail that came with a decision cannot be used
    /// for it: unknown or spent, expired, about another request, or sent to
    /// someone other than the person signed in.
    MailLinkRefused,
    /// This path does not take this method.
    MethodNotAllowed,
    /// Signed in, but none of the person's groups gives a role here.
    NoRole,
    /// No such thing, or not one this key may see.
    NotFound,
    /// The pairing code is unknown, used or expired.
    PairingRefused,
    /// The approval policy refused the decision.
    PolicyRefused,
    /// The identity provider could not confirm the person's groups again:
    /// nothing is done until it can.
    ProviderUnavailable,
    /// The key sent more requests than its rate allows.
    RateLimited,
    /// The tool call's request expired before it was decided.
    RequestExpired,
    /// Reviewer keys are turned off here: reviewers sign in.
    ReviewerKeysOff,
    /// The key may not sign as this role.
    RoleNotAllowed,
    /// The thing to approve is not waiting for approval.
    TargetNotAwaitingApproval,
    /// The token presented is not this approval's.
    TokenUnknown,
    /// The token expired before it was redeemed.
    TokenExpired,
    /// The token was redeemed before.
    TokenUsed,
    /// The call presented is not the call approved.
    TokenHashMismatch,
    /// The device presenting the token is not the one approved.
    TokenDeviceMismatch,
    /// The token belongs to another approval.
    TokenOtherApproval,
    /// No key, or a key the server does not know.
    Unauthorized,
    /// A query parameter this endpoint does not take.
    UnknownParameter,
    /// The body could not be read.
    UnreadableBody,
    /// The body is not `application/json`.
    UnsupportedMediaType,
    /// The key is of the wrong kind (agent or reviewer) for this.
    WrongKeyKind,
    /// A code this version does not know (a newer server's).
    #[serde(other)]
    Unknown,
}

impl ErrorCode {
    /// Every code, in the order the OpenAPI document lists them.
    pub const ALL: &'static [ErrorCode] = <ErrorCode as strum::VariantArray>::VARIANTS;

    /// The code as the API writes it, e.g. `already_decided`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
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
