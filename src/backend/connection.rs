//! Which backend the app talks to, if any: a Countersign server, or a
//! LangGraph server whose interrupted threads are reviewed here. Kept in session storage
//! (gone when the tab closes) unless the reviewer asks to remember it on this
//! device (local storage).

use serde::{Deserialize, Serialize};
use wasm_bindgen::JsCast;

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
    /// Signed in to this desk's own server: its session cookie (which the
    /// page cannot read) is the credential, not a key. Never saved.
    #[serde(skip)]
    pub signed_in: bool,
}

/// The cookie the server sets beside its session cookie so the app knows,
/// without a request, to open on the session (a hint only: the server
/// authenticates by the HttpOnly cookie, which the page never sees).
const SIGNED_IN_HINT: &str = "countersign_signed_in";

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
    /// The connection to use: this desk's own server when a person signed
    /// in to it, else the saved one (this tab's first, then the remembered one).
    pub fn load() -> Option<Connection> {
        if let Some(origin) = signed_in_origin() {
            return Some(Connection {
                url: origin,
                key: String::new(),
                backend: ServerKind::Countersign,
                graphs: String::new(),
                signed_in: true,
            });
        }
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

    /// Forgets that a person is signed in here (the session ended): the
    /// next load asks them to sign in again.
    pub fn forget_session() {
        let document = web_sys::window().and_then(|w| w.document());
        if let Some(document) = document.and_then(|d| d.dyn_into::<web_sys::HtmlDocument>().ok()) {
            let _ = document.set_cookie(&format!("{SIGNED_IN_HINT}=; Path=/; Max-Age=0"));
        }
    }

    /// The address without a trailing slash.
    pub fn base(&self) -> &str {
        self.url.trim_end_matches('/')
    }

    /// Whether this is a key to the Countersign server that serves this page.
    pub fn is_this_pages_server(&self) -> bool {
        let here = web_sys::window().and_then(|w| w.location().origin().ok());
        self.backend == ServerKind::Countersign
            && !self.signed_in
            && here.as_deref() == Some(self.base())
    }

    /// Whether the connection in use is the one remembered on this device
    /// (no other one saved for this tab).
    pub fn is_remembered() -> bool {
        let [session, local] = storages();
        let holds =
            |s: Option<web_sys::Storage>| s.and_then(|s| s.get_item(KEY).ok().flatten()).is_some();
        !holds(session) && holds(local)
    }
}

/// This page's origin, when its server says a person is signed in here.
fn signed_in_origin() -> Option<String> {
    if !crate::browser::served_by_server() {
        return None;
    }
    let window = web_sys::window()?;
    let document = window
        .document()?
        .dyn_into::<web_sys::HtmlDocument>()
        .ok()?;
    let cookies = document.cookie().ok()?;
    let hinted = cookies
        .split(';')
        .any(|c| c.trim() == format!("{SIGNED_IN_HINT}=1"));
    hinted.then(|| window.location().origin().ok()).flatten()
}
