//! Where reviews and settings live: the browser's local storage (the embedded
//! default, no backend needed), a Countersign-compatible server over HTTP, or
//! a LangGraph server whose interrupts are reviewed here.

mod connection;
mod fetch;
mod http;
mod js_text;
mod langgraph;
mod local;
pub mod outbox;

pub use connection::{Backend, Connection};
pub use http::{HttpError, HttpStore};
pub use langgraph::{LangGraphStore, StateCache};
pub use local::{LoadOutcome, LocalStore};

/// Why the store could not do what was asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The browser refuses storage (private mode, disabled, sandboxed frame).
    #[error("browser storage is not available here: {0}")]
    Unavailable(String),
    /// The storage quota is full.
    #[error("browser storage is full, so this change was not saved; export your reviews and remove some to make room")]
    QuotaExceeded,
    /// Any other refusal by the browser.
    #[error("the browser refused to save: {0}")]
    WriteFailed(String),
}

/// A stored value that could not be used, and where it was put aside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetAside {
    /// The key it was stored under.
    pub key: String,
    /// The key it was moved to (never deleted).
    pub moved_to: String,
    /// What was wrong with it.
    pub reason: String,
}
