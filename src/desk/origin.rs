//! Where reviews come from (this browser, a Countersign server, a LangGraph
//! server) and how fresh they are (the header's link state). The backend is
//! chosen once, when the app loads (connecting reloads the app); what it
//! does is the desk's (`Desk`'s one match per intent).

use crate::backend::{Connection, ServerKind};
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
    /// The server reviews come from, if any.
    connection: StoredValue<Option<Connection>>,
    /// How fresh they are.
    link: RwSignal<Link>,
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
    pub(super) fn new(connection: Option<Connection>) -> Self {
        let link = match connection {
            Some(_) => Link::Connecting,
            None => Link::Local,
        };
        Origin {
            connection: StoredValue::new(connection),
            link: RwSignal::new(link),
            stream: StoredValue::new(Stream::default()),
        }
    }

    /// Which backend reviews come from.
    pub fn source(&self) -> Source {
        self.connection
            .with_value(|c| match c.as_ref().map(|c| c.backend) {
                None => Source::Local,
                Some(ServerKind::Countersign) => Source::Server,
                Some(ServerKind::LangGraph) => Source::Graph,
            })
    }

    /// Whether a Countersign server serves this app and it is not connected
    /// to it yet: the reviewer is asked for a key before anything else.
    pub fn awaiting_server(&self) -> bool {
        !self.source().remote() && browser::served_by_server()
    }

    /// The connection to the server reviews come from, if any.
    pub fn connection(&self) -> Option<Connection> {
        self.connection.get_value()
    }

    /// The address of the server reviews come from, if any.
    pub fn remote_url(&self) -> Option<String> {
        self.connection
            .with_value(|c| c.as_ref().map(|c| c.base().to_owned()))
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
}
