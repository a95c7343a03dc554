//! The reviewer's desk: every review with what the views need precomputed, the
//! store (local storage, or a server with live updates), the settings and what
//! went wrong loading them. Provided as context.

mod drafts;
mod entry;
mod judging;
mod langgraph;
mod listing;
mod live;
mod reading;
mod remote;
mod seed;
mod served;
mod server_decisions;
mod tools;

pub use entry::Entry;
pub use langgraph::{group_decision, InterruptFacts};
pub use listing::{Ask, Listing, PageLink};
pub use served::Unfound;

use crate::backend::{
    outbox, Backend, Connection, HttpError, HttpStore, LocalStore, SetAside, StoreError,
};
use crate::browser;
use crate::settings::Settings;
use countersign_domain::wire::{
    Device, DeviceList, GrantList, GrantRecord, Pairing, StatusCounts, WebhookList,
};
use countersign_domain::{DecideError, DecisionInput, MplpId, Review};
use leptos::prelude::*;
use std::sync::Arc;

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

/// The app's state, shared through context (cheap to copy).
#[derive(Clone, Copy)]
pub struct Desk {
    /// The reviews held, oldest request first: every review in local storage
    /// and on LangGraph; on a Countersign server, the few opened last.
    entries: RwSignal<Vec<Arc<Entry>>>,
    /// A Countersign server's counts per status (the others count `entries`).
    counts: RwSignal<StatusCounts>,
    /// The inbox page a Countersign server answered.
    served_page: RwSignal<served::ServedPage>,
    /// Reviews a Countersign server could not give when opened, and why.
    unfound: RwSignal<Vec<(MplpId, Unfound)>>,
    /// A Countersign server not followed yet: its live stream opens once it
    /// answered first (its code would otherwise hold up the first rows).
    unfollowed: StoredValue<Option<HttpStore>>,
    /// The reviewer's settings.
    settings: RwSignal<Settings>,
    /// Problems found while loading (set-aside values, unavailable storage).
    notices: RwSignal<Vec<String>>,
    /// Where reviews live and how fresh they are.
    link: RwSignal<Link>,
    /// Decisions kept on this device until the server has them.
    outbox: RwSignal<Vec<outbox::Queued>>,
    /// This browser's storage: the reviews of a local desk, the settings,
    /// and what a server's desk keeps on this device.
    store: StoredValue<Option<LocalStore>>,
    /// Where reviews come from.
    backend: StoredValue<Backend>,
    /// LangGraph: the status of each pending interrupt's thread, when it is
    /// not simply waiting (errored, busy).
    thread_states:
        RwSignal<std::collections::HashMap<MplpId, countersign_domain::langgraph::ThreadStatus>>,
    drafts: StoredValue<Vec<(MplpId, drafts::Draft)>>,
    /// Whether the stored reviews are still being read (the inbox index, or
    /// on a first visit the demo's summaries, stand in for them meanwhile).
    reading: RwSignal<bool>,
    /// Until the inbox index is parsed (right after the first frame), what
    /// its head says of every review; `entries` then hold its first page only.
    head: RwSignal<Option<listing::HeadFacts>>,
    /// The entries of the index as storage holds it beside its head, once
    /// parsed: the index is written again only when the entries differ from
    /// them (an index without a head is written again once the reviews are read).
    indexed: StoredValue<Option<Vec<Arc<Entry>>>>,
    /// A Countersign server's approval policy and this reviewer's key.
    judging: RwSignal<Option<Arc<judging::Judging>>>,
}

impl Desk {
    /// Opens local storage, seeds the demo data on first start (listing its
    /// rows meanwhile), lists the reviews from the inbox index if there is
    /// one, and reads the stored reviews right after the first frame; or,
    /// when a server connection is saved, starts loading from the server.
    pub fn load() -> Self {
        let mut notices = Vec::new();
        let connection = Connection::load();
        let store = match LocalStore::open() {
            Ok(store) => Some(store),
            Err(e) => {
                notices.push(format!(
                    "{e}. Reviews shown now will not be kept after a reload."
                ));
                None
            }
        };
        let backend = Backend::connect(connection, store.as_ref());
        let remote = backend.remote();
        let settings = store
            .as_ref()
            .map(|store| load_settings(store, !remote, &mut notices))
            .unwrap_or_default();
        // Local storage: the inbox is drawn from the index's head (or the
        // index itself, written before heads were), then the index is parsed
        // and every review read.
        let local = store.clone().filter(|_| !remote);
        // Served by a Countersign server and not connected to it yet: the app
        // asks for the reviewer key (Settings), and never shows the demo there.
        let awaiting = !remote && browser::served_by_server();
        let needs_demo = local.as_ref().is_none_or(|s| !s.seeded()) && !remote && !awaiting;
        let reading = local.is_some() && !needs_demo && !awaiting;
        let head = local
            .as_ref()
            .filter(|_| reading)
            .and_then(reading::stored_head);
        let listed = local
            .as_ref()
            .filter(|_| reading && head.is_none())
            .and_then(LocalStore::index_text)
            .and_then(|index| reading::listed_entries(&index));
        let indexed = head.is_some() || listed.is_some();
        // A first visit lists the demo's rows at once, from their summaries
        // (in the first load), while the demo's own code is fetched to store them.
        let (first_page, head) = if needs_demo {
            let demo = countersign_domain::demo::summaries(browser::now()).ok();
            (demo.map(reading::listed), None)
        } else if let Some(head) = head {
            let (facts, page) = head.split();
            (Some(page), Some(facts))
        } else {
            (listed, None)
        };
        browser::mark("countersign:loaded");
        let server = backend.server().cloned();
        let queued = server
            .as_ref()
            .map(|s| outbox::all(s.url()))
            .unwrap_or_default();
        let desk = Desk {
            outbox: RwSignal::new(queued),
            entries: RwSignal::new(first_page.unwrap_or_default()),
            counts: RwSignal::new(StatusCounts::default()),
            served_page: RwSignal::new(Default::default()),
            unfound: RwSignal::new(Vec::new()),
            settings: RwSignal::new(settings),
            notices: RwSignal::new(notices),
            link: RwSignal::new(if remote {
                Link::Connecting
            } else {
                Link::Local
            }),
            // Until the demo reviews are stored, what storage holds is not known either.
            reading: RwSignal::new(reading || needs_demo),
            head: RwSignal::new(head),
            indexed: StoredValue::new(None),
            store: StoredValue::new(store),
            backend: StoredValue::new(backend),
            unfollowed: StoredValue::new(None),
            thread_states: RwSignal::new(Default::default()),
            drafts: StoredValue::new(Default::default()),
            judging: RwSignal::new(None),
        };
        match server {
            // The first page comes first; the stream follows from its position.
            Some(server) => desk.follow_after_first_answer(server),
            None if remote => desk.follow_remote(None),
            None => {}
        }
        if let Some(store) = local {
            if reading {
                desk.read_stored_reviews(store.clone(), indexed);
            }
            desk.follow_other_tabs(store.clone());
            desk.keep_index(store);
        }
        if needs_demo {
            desk.seed_demo();
        }
        desk
    }

    /// Whether reviews come from a server (Countersign or LangGraph) rather
    /// than this browser's storage.
    pub fn remote(&self) -> bool {
        self.backend.with_value(Backend::remote)
    }

    /// Whether a Countersign server serves this app and it is not connected
    /// to it yet: the reviewer is asked for a key before anything else.
    pub fn awaiting_server(&self) -> bool {
        !self.remote() && browser::served_by_server()
    }

    /// Whether reviews come from a Countersign server.
    pub fn is_served(&self) -> bool {
        self.server().is_some()
    }

    /// The address of the server reviews come from, if any.
    pub fn remote_url(&self) -> Option<String> {
        self.backend.with_value(|b| b.url().map(str::to_owned))
    }

    /// The standing approvals of the Countersign server reviews come from;
    /// `None` when the backend keeps none (this browser, LangGraph).
    pub async fn grants(&self) -> Option<Result<GrantList, HttpError>> {
        let server = self.server()?;
        Some(server.grants().await)
    }

    /// The server's webhooks and their latest deliveries, when the backend
    /// is a Countersign server.
    pub async fn webhooks(&self) -> Option<Result<WebhookList, HttpError>> {
        let server = self.server()?;
        Some(server.webhooks().await)
    }

    /// A one-time code that pairs another device with this reviewer key.
    pub async fn pairing(&self) -> Result<Pairing, String> {
        let server = self
            .server()
            .ok_or("devices are paired with a Countersign server")?;
        server.pairing().await.map_err(|e| e.to_string())
    }

    /// The devices paired from this key (or its owner), when on a server.
    pub async fn devices(&self) -> Option<Result<DeviceList, HttpError>> {
        let server = self.server()?;
        Some(server.devices().await)
    }

    /// Revokes a paired device; answered once the server has recorded it.
    pub async fn revoke_device(&self, key_id: &str) -> Result<Device, String> {
        let server = self
            .server()
            .ok_or("devices are paired with a Countersign server")?;
        server
            .revoke_device(key_id)
            .await
            .map_err(|e| e.to_string())
    }

    /// Revokes a standing approval on the server; answered only once the
    /// server has recorded it.
    pub async fn revoke_grant(&self, grant_id: &str) -> Result<GrantRecord, String> {
        let server = self
            .server()
            .ok_or("only a Countersign server keeps standing approvals")?;
        server
            .revoke_grant(grant_id)
            .await
            .map_err(|e| e.to_string())
    }

    /// The Countersign server reviews come from, if that is the backend.
    fn server(&self) -> Option<HttpStore> {
        self.backend.with_value(|b| b.server().cloned())
    }

    /// The entry of a confirm, if present.
    pub fn entry(&self, id: MplpId) -> Option<Arc<Entry>> {
        self.entries
            .with(|entries| entries.iter().find(|e| e.id() == id).cloned())
    }

    /// Checks a decision with the domain's `decide`, then saves it (in local
    /// storage, or on the server under `idempotency_key`, so a retry of the same
    /// attempt is never recorded twice), then shows it. Nothing changes on
    /// screen or in storage when a step fails. When someone else decided first,
    /// their decision is shown and the failure says who and what.
    pub async fn decide(
        &self,
        id: MplpId,
        input: &DecisionInput,
        idempotency_key: &str,
    ) -> Result<Arc<Entry>, DecisionFailure> {
        self.read_all().await;
        let held = self
            .entries
            .with_untracked(|entries| entries.iter().find(|e| e.id() == id).cloned())
            .filter(|e| e.review().is_some());
        let current = match held {
            Some(entry) => entry,
            // A row of a server's page: its review is fetched to be checked.
            None if self.served() => self.fetch_review(id).await.map_err(|e| match e {
                Unfound::Missing => DecisionFailure::Missing,
                Unfound::Failed(e) => DecisionFailure::Server(e),
            })?,
            None => return Err(DecisionFailure::Missing),
        };
        let review = current.review().ok_or(DecisionFailure::Missing)?;
        let mut ids = browser::new_id;
        let next = self
            .judge(review, input, &mut ids)
            .map_err(DecisionFailure::Refused)?;
        enum Via {
            Local,
            Server(HttpStore),
            LangGraph,
        }
        let via = self.backend.with_value(|b| match b {
            Backend::Local => Via::Local,
            Backend::Countersign(server) => Via::Server(server.clone()),
            Backend::LangGraph(_) => Via::LangGraph,
        });
        match via {
            Via::Local => self.decide_locally(next),
            Via::Server(server) => {
                self.decide_on_server(server, id, input, idempotency_key)
                    .await
            }
            Via::LangGraph => match langgraph::interrupt_decision(*self, id, next).await {
                Ok(sending) => sending.await,
                Err(crate::split::LoadFailed) => Err(DecisionFailure::Unloaded),
            },
        }
    }

    /// Saves a decided review in this browser's storage, then shows it.
    fn decide_locally(&self, next: Review) -> Result<Arc<Entry>, DecisionFailure> {
        self.persist(&next).map_err(DecisionFailure::NotSaved)?;
        let id = next.confirm.confirm_id;
        let entry = Arc::new(Entry::new(next));
        self.entries.update(|entries| {
            if let Some(slot) = entries.iter_mut().find(|e| e.id() == id) {
                *slot = entry.clone();
            }
        });
        Ok(entry)
    }

    /// The ids of the reviews held (for an import, which adds only new ones).
    pub fn held_ids(&self) -> std::collections::HashSet<MplpId> {
        self.entries
            .with_untracked(|e| e.iter().map(|e| e.id()).collect())
    }

    /// Every review, for an export: those in storage, or a server's fetched
    /// page by page (LangGraph: the interrupts listed and those decided here).
    pub async fn every_review(&self) -> Result<Vec<Review>, HttpError> {
        self.read_all().await;
        if let Some(server) = self.server() {
            return server.list_all().await;
        }
        Ok(self
            .entries
            .with_untracked(|e| e.iter().filter_map(|e| e.review().cloned()).collect()))
    }

    /// Adds or replaces reviews (import), saving them first. Only into local
    /// storage: on a server, agents create reviews through the API.
    pub fn add(&self, reviews: Vec<Review>) -> Result<usize, StoreError> {
        if self.remote() {
            return Err(StoreError::WriteFailed(
                "imports go to this browser's storage; on a server, agents submit reviews through its API. Disconnect in Settings to import here".into(),
            ));
        }
        let reviews = self.apply_grants(reviews);
        for review in &reviews {
            self.persist(review)?;
        }
        let count = reviews.len();
        self.entries.update(|entries| {
            put(
                entries,
                reviews.into_iter().map(|r| Arc::new(Entry::new(r))),
            );
        });
        Ok(count)
    }

    /// Saves the settings and applies them.
    pub fn save_settings(&self, settings: Settings) -> Result<(), StoreError> {
        if let Some(store) = self.store.get_value() {
            let text = serde_json::to_value(&settings)
                .map_err(|e| StoreError::WriteFailed(e.to_string()))?
                .to_string();
            store.save_settings_text(&text)?;
        }
        self.settings.set(settings);
        Ok(())
    }

    /// A short description of the storage in use.
    pub fn storage_description(&self) -> String {
        let local = self.store.get_value();
        self.backend.with_value(|b| b.describe(local.as_ref()))
    }

    fn persist(&self, review: &Review) -> Result<(), StoreError> {
        match self.store.get_value() {
            Some(store) => store.save(review),
            None => Ok(()),
        }
    }
}

/// The inbox's entries for `reviews`, oldest request first.
fn sorted_entries(reviews: Vec<Review>) -> Vec<Arc<Entry>> {
    let mut entries: Vec<Arc<Entry>> = reviews
        .into_iter()
        .map(|r| Arc::new(Entry::new(r)))
        .collect();
    sort(&mut entries);
    entries
}

/// Puts `new` entries in place of those with their ids (or adds them), then
/// sorts.
fn put(entries: &mut Vec<Arc<Entry>>, new: impl IntoIterator<Item = Arc<Entry>>) {
    for entry in new {
        match entries.iter_mut().find(|e| e.id() == entry.id()) {
            Some(slot) => *slot = entry,
            None => entries.push(entry),
        }
    }
    sort(entries);
}

/// Oldest request first (the id breaks ties, so the order is stable).
fn sort(entries: &mut [Arc<Entry>]) {
    entries.sort_by(|a, b| {
        a.requested_at()
            .cmp(b.requested_at())
            .then(a.id().cmp(&b.id()))
    });
}

impl Desk {
    /// The reviewer's settings (reactive).
    pub fn settings(&self) -> ReadSignal<Settings> {
        self.settings.read_only()
    }

    /// Where reviews live and how fresh they are (reactive).
    pub fn link(&self) -> ReadSignal<Link> {
        self.link.read_only()
    }

    /// What the reviewer should know: problems found loading, undeliverable
    /// decisions (reactive).
    pub fn notices(&self) -> ReadSignal<Vec<String>> {
        self.notices.read_only()
    }

    /// LangGraph: the status of a review's thread when it is not simply
    /// waiting (errored, busy) (reactive).
    pub fn thread_state(&self, id: MplpId) -> Option<countersign_domain::langgraph::ThreadStatus> {
        self.thread_states.with(|t| t.get(&id).copied())
    }

    /// Adds a notice for the reviewer.
    pub fn notify(&self, notice: String) {
        self.notices.update(|n| n.push(notice));
    }
}

/// The stored settings; unusable ones are set aside (`set_aside`) or, for a
/// desk on a server, ignored.
fn load_settings(store: &LocalStore, set_aside: bool, notices: &mut Vec<String>) -> Settings {
    let Some(text) = store.settings_text() else {
        return Settings::default();
    };
    match serde_json::from_str::<Settings>(&text) {
        Ok(settings) => settings,
        Err(e) => {
            if set_aside {
                notices.push(describe_set_aside(
                    &store.set_aside_settings(&text, e.to_string()),
                ));
            }
            Settings::default()
        }
    }
}

fn describe_set_aside(s: &SetAside) -> String {
    format!(
        "A stored value could not be used and was kept aside as {} (not deleted): {}",
        s.moved_to, s.reason
    )
}
