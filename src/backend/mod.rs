//! Where reviews come from, one module per backend: this browser's local
//! storage (`local`, the embedded default, which also keeps the settings and
//! what a server's desk keeps on this device), a Countersign-compatible
//! server over HTTP (`countersign`, with its `outbox`), a LangGraph server
//! whose pending interrupts are the reviews (`langgraph`). `Backend` is the
//! one the desk uses; a fourth is a new module and a variant here.

mod connection;
mod countersign;
mod fetch;
mod js_text;
mod langgraph;
mod local;
pub mod outbox;

pub use connection::{Connection, ServerKind};
pub use countersign::{HttpError, HttpStore, SessionList, SessionState};
pub use langgraph::{Interrupts, LangGraphStore};
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

/// The backend the desk reads and decides through.
#[derive(Clone)]
pub enum Backend {
    /// This browser's local storage.
    Local,
    /// A Countersign server: it pages, searches and counts by itself.
    Countersign(HttpStore),
    /// A LangGraph server: its pending interrupts are the reviews.
    LangGraph(Interrupts),
}

impl Backend {
    /// The backend a saved connection names (none: local storage); `local`
    /// keeps what a LangGraph desk keeps on this device.
    pub fn connect(connection: Option<Connection>, local: Option<&LocalStore>) -> Self {
        match connection {
            None => Backend::Local,
            Some(c) => match c.backend {
                ServerKind::Countersign => Backend::Countersign(HttpStore::new(c)),
                ServerKind::LangGraph => {
                    Backend::LangGraph(Interrupts::new(LangGraphStore::new(c), local))
                }
            },
        }
    }
}
