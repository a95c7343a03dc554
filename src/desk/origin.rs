//! Where reviews come from (this browser, a Countersign server, a LangGraph
//! server) and how fresh they are (the header's link state), with what only a
//! Countersign server keeps: standing approvals, webhooks, paired devices
//! ([`Access`]). The backend is chosen once, when the app loads (connecting
//! reloads the app).

use super::Access;
use crate::backend::{Backend, HttpStore, Interrupts, LocalStore};
use crate::browser;
use leptos::prelude::*;

/// Where reviews live and how fresh they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Link {
    /// This browser's local storage.
    Local,
    /// Loading from the server.
    Connecting,
    /// Connected to the server; changes arrive live.
    Live,
    /// Connected, but the live stream dropped: reconnecting.
    Reconnecting,
    /// The inbox is refreshed every so many seconds (no live stream).
    Polling(u32),
    /// The server cannot be reached (the reason).
    Offline(String),
}

impl Link {
    /// A stable name for styling (`data-state`).
    pub fn state(&self) -> &'static str {
        match self {
            Link::Local => "local",
            Link::Connecting => "connecting",
            Link::Live => "live",
            Link::Reconnecting => "reconnecting",
            Link::Polling(_) => "polling",
            Link::Offline(_) => "offline",
        }
    }

    /// A short label for the header.
    pub fn label(&self) -> String {
        match self {
            Link::Local => "This device".into(),
            Link::Connecting => "Connecting…".into(),
            Link::Live => "Live".into(),
            Link::Reconnecting => "Reconnecting…".into(),
            Link::Polling(seconds) => format!("Refreshing every {seconds} s"),
            Link::Offline(_) => "Unreachable".into(),
        }
    }
}

/// Which backend reviews come from, chosen once when the app loads: what a
/// screen branches on (the backend itself stays in the desk).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// This browser's local storage.
    Local,
    /// A Countersign server: it pages, searches and counts the inbox, and
    /// keeps grants, webhooks and paired devices.
    Server,
    /// A LangGraph server: its pending interrupts are the reviews.
    Graph,
}

impl Source {
    /// Whether reviews come from a server rather than this browser.
    pub fn remote(self) -> bool {
        self != Source::Local
    }

    /// What the inbox calls the backend when it cannot be reached.
    pub fn server_name(self) -> &'static str {
        match self {
            Source::Graph => "The LangGraph server",
            Source::Local | Source::Server => "The server",
        }
    }
}

/// The origin store (cheap to copy; provided as context).
#[derive(Clone, Copy)]
pub struct Origin {
    /// Where reviews come from.
    backend: StoredValue<Backend>,
    /// How fresh they are.
    link: RwSignal<Link>,
    /// A Countersign server not followed yet: its live stream opens once it
    /// answered first (its code would otherwise hold up the first rows).
    unfollowed: StoredValue<Option<HttpStore>>,
    /// A Countersign server's live stream, which decides the link state.
    stream: StoredValue<Stream>,
}

/// A Countersign server's live stream.
#[derive(Default)]
struct Stream {
    /// Whether it is open now (only then is the desk "Live").
    open: bool,
    /// Every how many seconds the desk polls instead, when it does.
    polling: Option<u32>,
    /// The feed position of the last change received (a reopened stream
    /// resumes after it).
    last_seen: Option<i64>,
}

impl Origin {
    pub(super) fn new(backend: Backend) -> Self {
        let link = if backend.remote() {
            Link::Connecting
        } else {
            Link::Local
        };
        Origin {
            backend: StoredValue::new(backend),
            link: RwSignal::new(link),
            unfollowed: StoredValue::new(None),
            stream: StoredValue::new(Stream::default()),
        }
    }

    /// Which backend reviews come from.
    pub fn source(&self) -> Source {
        self.backend.with_value(|b| match b {
            Backend::Local => Source::Local,
            Backend::Countersign(_) => Source::Server,
            Backend::LangGraph(_) => Source::Graph,
        })
    }

    /// Whether reviews come from a server (Countersign or LangGraph) rather
    /// than this browser's storage.
    pub fn remote(&self) -> bool {
        self.source().remote()
    }

    /// Whether a Countersign server serves this app and it is not connected
    /// to it yet: the reviewer is asked for a key before anything else.
    pub fn awaiting_server(&self) -> bool {
        !self.remote() && browser::served_by_server()
    }

    /// Whether reviews come from a Countersign server (it pages, searches and
    /// counts the inbox itself).
    pub fn served(&self) -> bool {
        self.source() == Source::Server
    }

    /// The address of the server reviews come from, if any.
    pub fn remote_url(&self) -> Option<String> {
        self.backend.with_value(|b| b.url().map(str::to_owned))
    }

    /// The Countersign server reviews come from, if that is the backend.
    pub(super) fn server(&self) -> Option<HttpStore> {
        self.backend.with_value(|b| b.server().cloned())
    }

    /// The LangGraph server this desk reviews, if any.
    pub fn langgraph(&self) -> Option<Interrupts> {
        self.backend.with_value(|b| b.interrupts().cloned())
    }

    /// Reads what is known of LangGraph's interrupts, if that is the backend.
    pub(super) fn with_interrupts<R>(
        &self,
        read: impl FnOnce(&Interrupts) -> Option<R>,
    ) -> Option<R> {
        self.backend.with_value(|b| read(b.interrupts()?))
    }

    /// Changes what is known of LangGraph's interrupts, if that is the backend.
    pub(super) fn update_interrupts<R>(
        &self,
        change: impl FnOnce(&mut Interrupts) -> R,
    ) -> Option<R> {
        self.backend
            .try_update_value(|b| b.interrupts_mut().map(change))
            .flatten()
    }

    /// A short description of the storage in use (`local`: this browser's).
    pub fn describe(&self, local: Option<&LocalStore>) -> String {
        self.backend.with_value(|b| b.describe(local))
    }

    /// Where reviews live and how fresh they are (reactive).
    pub fn link(&self) -> ReadSignal<Link> {
        self.link.read_only()
    }

    /// The link state now (not tracked).
    pub(super) fn link_now(&self) -> Link {
        self.link.get_untracked()
    }

    /// Changes the link state (views follow it only when it changes).
    pub(super) fn set_link(&self, link: Link) {
        if self.link.with_untracked(|l| *l != link) {
            self.link.set(link);
        }
    }

    /// The live stream opened.
    pub(super) fn stream_opened(&self) {
        self.stream.update_value(|s| s.open = true);
        self.set_link(Link::Live);
    }

    /// The live stream dropped (it is opened again, or polling takes over).
    pub(super) fn stream_dropped(&self) {
        self.stream.update_value(|s| s.open = false);
        if self.link_now() == Link::Live {
            self.set_link(Link::Reconnecting);
        }
    }

    /// The desk polls the server every `seconds` instead of following a stream.
    pub(super) fn polling(&self, seconds: u32) {
        self.stream.update_value(|s| s.polling = Some(seconds));
        self.set_link(Link::Polling(seconds));
    }

    /// The server answered: an unreachable one is back (live while the
    /// stream is open, else polling or reconnecting).
    pub(super) fn answered(&self) {
        if !matches!(self.link_now(), Link::Offline(_)) {
            return;
        }
        let settled = self.stream.with_value(|s| match (s.open, s.polling) {
            (true, _) => Link::Live,
            (false, Some(seconds)) => Link::Polling(seconds),
            (false, None) => Link::Reconnecting,
        });
        self.set_link(settled);
    }

    /// A change at feed `position` was received.
    pub(super) fn seen(&self, position: i64) {
        self.stream.update_value(|s| s.last_seen = Some(position));
    }

    /// The feed position of the last change received, if any.
    pub(super) fn last_seen(&self) -> Option<i64> {
        self.stream.with_value(|s| s.last_seen)
    }

    /// Holds a server until it is followed.
    pub(super) fn hold_unfollowed(&self, server: HttpStore) {
        self.unfollowed.set_value(Some(server));
    }

    /// The server held until followed, once: `None` when it is followed already.
    pub(super) fn take_unfollowed(&self) -> Option<HttpStore> {
        self.unfollowed.try_update_value(Option::take).flatten()
    }

    /// What the Countersign server reviews come from keeps for reviewers;
    /// `None` when the backend keeps none of it (this browser, LangGraph).
    pub fn access(&self) -> Option<Access> {
        self.server().map(Access)
    }
}
