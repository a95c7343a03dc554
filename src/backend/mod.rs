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
pub use countersign::{HttpError, HttpStore};
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

    /// Whether reviews come from a server rather than this browser.
    pub fn remote(&self) -> bool {
        !matches!(self, Backend::Local)
    }

    /// The server's address, if reviews come from one.
    pub fn url(&self) -> Option<&str> {
        match self {
            Backend::Local => None,
            Backend::Countersign(server) => Some(server.url()),
            Backend::LangGraph(interrupts) => Some(interrupts.url()),
        }
    }

    /// The Countersign server, if that is the backend.
    pub fn server(&self) -> Option<&HttpStore> {
        match self {
            Backend::Countersign(server) => Some(server),
            _ => None,
        }
    }

    /// LangGraph's interrupts, if that is the backend.
    pub fn interrupts(&self) -> Option<&Interrupts> {
        match self {
            Backend::LangGraph(interrupts) => Some(interrupts),
            _ => None,
        }
    }

    /// LangGraph's interrupts, to update them.
    pub fn interrupts_mut(&mut self) -> Option<&mut Interrupts> {
        match self {
            Backend::LangGraph(interrupts) => Some(interrupts),
            _ => None,
        }
    }

    /// What the settings say about where reviews are kept (`local`: this
    /// browser's storage, when it is available).
    pub fn describe(&self, local: Option<&LocalStore>) -> String {
        match self {
            Backend::Countersign(server) => format!(
                "The Countersign server at {}: decisions are signed with your reviewer key and every reviewer sees them.",
                server.url()
            ),
            Backend::LangGraph(source) => {
                let graphs = match source.graphs() {
                    g if g.is_empty() => "every graph on it".to_owned(),
                    g => format!("its graphs {}", g.join(", ")),
                };
                format!(
                    "The LangGraph server at {}, reviewing {graphs}: every pending interrupt of their threads is a review here. A decision resumes its thread with the assistant that owns it, and is kept in this browser's history once LangGraph has run it.",
                    source.url()
                )
            }
            Backend::Local => match local {
                Some(store) => {
                    let aside = store.set_aside_count();
                    let mut text =
                        "This browser's local storage (nothing leaves this device).".to_owned();
                    if aside > 0 {
                        text.push_str(&format!(
                            " {aside} unusable value(s) are kept aside under countersign.quarantine.*."
                        ));
                    }
                    text
                }
                None => "None: browser storage is unavailable, so changes last until the page is closed.".to_owned(),
            },
        }
    }
}
