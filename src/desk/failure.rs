//! Why a decision was not recorded, whichever backend it went to.

use crate::backend::{HttpError, StoreError};
use countersign_domain::DecideError;

/// Why a decision was not recorded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DecisionFailure {
    /// The domain refused it.
    #[error("{0}")]
    Refused(DecideError),
    /// It is valid but could not be saved.
    #[error("{0}")]
    NotSaved(StoreError),
    /// The server refused it or could not be reached.
    #[error("{0}")]
    Server(HttpError),
    /// The server's key may not sign as this role.
    #[error("`{role}` is not a role this key may sign as (it may sign as: {})", if allowed.is_empty() { "no role".to_owned() } else { allowed.join(", ") })]
    RoleNotAllowed {
        /// The role asked for.
        role: String,
        /// The roles the key may sign as.
        allowed: Vec<String>,
    },
    /// Someone else decided first; the review now shows their decision.
    #[error("{0}")]
    Conflict(String),
    /// The server is unreachable: the decision is kept on this device and
    /// sent when the server is back.
    #[error("the server cannot be reached: your decision is kept on this device and will be sent when it is back")]
    Queued,
    /// The review is not on this desk.
    #[error("this review is no longer here")]
    Missing,
    /// LangGraph: the interrupt does not take this answer (nothing was sent).
    #[error("LangGraph cannot take this decision: {0}")]
    NotAllowed(countersign_domain::langgraph::AnswerRefused),
    /// LangGraph: the run resuming the thread failed or did not take the
    /// answer; nothing was recorded.
    #[error("LangGraph did not take your decision: {0}. Nothing was recorded; your decision is still here to retry or change")]
    RunFailed(String),
    /// LangGraph: the run was started, but whether it took the answer could
    /// not be learned (the server stopped answering); nothing was recorded.
    #[error("LangGraph was sent your decision, but whether it ran it could not be confirmed ({0}). Nothing was recorded here; look at the thread before deciding again")]
    Unconfirmed(String),
    /// LangGraph: the interrupt no longer waits (answered elsewhere).
    #[error("this interrupt no longer waits for an answer (it was answered elsewhere, or its thread moved on); nothing was sent")]
    Gone,
    /// The code that sends this decision could not be fetched.
    #[error(
        "the app's code for sending this decision could not be loaded; nothing was sent, try again"
    )]
    Unloaded,
    /// LangGraph: the decision waits for the other actions of its interrupt
    /// (how many), which LangGraph takes together; nothing was sent yet.
    #[error("held: this interrupt asks about {0} more action(s), and LangGraph takes the answers together; nothing is sent until you decide them")]
    Held(usize),
}
