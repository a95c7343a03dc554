//! Which backend the app talks to, if any: a Countersign server, or a
//! LangGraph server whose interrupted threads are reviewed here. Kept in session storage
//! (gone when the tab closes) unless the reviewer asks to remember it on this
//! device (local storage).

use serde::{Deserialize, Serialize};

const KEY: &str = "countersign.v1.connection";

/// Which kind of server a connection is to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ServerKind {
    /// A server speaking Countersign's HTTP API.
    #[default]
    Countersign,
    /// A LangGraph server (Agent Protocol API): its interrupts are the reviews.
    LangGraph,
}

/// A backend and the key to use with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Connection {
    /// Base address, e.g. `https://review.example.com` (no `/api/v1`).
    pub url: String,
    /// The reviewer API key (Countersign), or the optional `x-api-key` (LangGraph).
    pub key: String,
    /// The kind of server.
    #[serde(default)]
    pub backend: ServerKind,
    /// LangGraph: the graphs (or assistants) whose threads are reviewed,
    /// comma-separated; empty: every graph on the server. Only a filter: each
    /// thread is resumed by the assistant that owns it.
    #[serde(default, alias = "assistant", skip_serializing_if = "String::is_empty")]
    pub graphs: String,
}

fn storages() -> [Option<web_sys::Storage>; 2] {
    let window = web_sys::window();
    [
        window
            .as_ref()
            .and_then(|w| w.session_storage().ok().flatten()),
        window
            .as_ref()
            .and_then(|w| w.local_storage().ok().flatten()),
    ]
}

impl Connection {
    /// The saved connection (this tab's first, then the remembered one).
    pub fn load() -> Option<Connection> {
        storages().into_iter().flatten().find_map(|storage| {
            let text = storage.get_item(KEY).ok().flatten()?;
            serde_json::from_str(&text).ok()
        })
    }

    /// Saves it for this tab, or on this device when `remember`.
    pub fn save(&self, remember: bool) -> Result<(), String> {
        Connection::forget();
        let [session, local] = storages();
        let storage = if remember { local } else { session };
        let text = serde_json::to_value(self)
            .map_err(|e| e.to_string())?
            .to_string();
        storage
            .ok_or_else(|| "browser storage is not available here".to_owned())?
            .set_item(KEY, &text)
            .map_err(|_| "the browser refused to save the connection".to_owned())
    }

    /// Forgets it everywhere.
    pub fn forget() {
        for storage in storages().into_iter().flatten() {
            let _ = storage.remove_item(KEY);
        }
    }

    /// The address without a trailing slash.
    pub fn base(&self) -> &str {
        self.url.trim_end_matches('/')
    }
}
