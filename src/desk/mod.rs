//! The reviewer's desk: the app's state as small stores, each with one job;
//! a screen takes the one it needs with its `from_context` (the desk is the
//! one context value that holds them):
//! - `Reviews` (`reviews.rs`): the reviews held and the page a server answered,
//!   filled by `reading` (local storage), `served` (a Countersign server),
//!   `langgraph`, `seed` (the demo) and `tools` (expiry, redemption, grants);
//! - `Origin` (`origin.rs`): where reviews come from and how fresh they are,
//!   followed by `remote` and `live`;
//! - `Decisions` (`decisions/`): drafts, the outbox, the server's policy;
//! - `Preferences` (`preferences.rs`) and `Notices` (`notices.rs`).
//!
//! `Desk` holds the five and does what spans them: loading, deciding
//! (`server_decisions`, `langgraph`), following a server, importing.

mod access;
mod decisions;
mod entry;
mod langgraph;
mod listing;
mod live;
mod notices;
mod origin;
mod preferences;
mod reading;
mod remote;
mod reviews;
mod seed;
mod served;
mod server_decisions;
mod tools;

pub use access::Access;
pub use decisions::Decisions;
pub use entry::Entry;
pub use langgraph::{group_decision, InterruptFacts};
pub use listing::{Ask, Listing, PageLink};
pub use notices::Notices;
pub use origin::{Link, Origin, Source};
pub use preferences::Preferences;
pub use reviews::Reviews;
pub use reviews::Unfound;

use crate::backend::{Backend, Connection, HttpError, HttpStore, LocalStore, StoreError};
use crate::browser;
use countersign_domain::{DecideError, DecisionInput, MplpId, Review};
use leptos::prelude::*;
use std::sync::Arc;

/// Each store's `from_context`: its handle, from the desk's context.
macro_rules! from_desk {
    ($($store:ident: $field:ident),*) => {$(
        impl $store {
            /// This store, from the desk's context.
            pub fn from_context() -> Self {
                Desk::from_context().$field
            }
        }
    )*};
}

from_desk!(
    Reviews: reviews,
    Origin: origin,
    Decisions: decisions,
    Preferences: preferences,
    Notices: notices
);

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

/// The app's state: five small stores, each provided to the screens as
/// context on its own, and what spans them (loading, deciding, following a
/// server). Cheap to copy.
#[derive(Clone, Copy)]
pub struct Desk {
    reviews: Reviews,
    origin: Origin,
    decisions: Decisions,
    preferences: Preferences,
    notices: Notices,
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
        let preferences = Preferences::load(store.clone(), !remote, &mut notices);
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
        let desk = Desk {
            // Until the demo reviews are stored, what storage holds is not known either.
            reviews: Reviews::new(
                first_page.unwrap_or_default(),
                head,
                reading || needs_demo,
                store,
                server.is_some(),
            ),
            decisions: Decisions::load(server.as_ref().map(HttpStore::url)),
            origin: Origin::new(backend),
            preferences,
            notices: Notices::new(notices),
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

    /// Gives the screens the desk as context; each store's `from_context`
    /// takes its own handle from it.
    pub fn provide(self) {
        provide_context(self);
    }

    /// The desk [`Desk::provide`] gave. One context value holds every store:
    /// each type looked up by context adds its own copy of the lookup to the
    /// first load.
    pub fn from_context() -> Self {
        expect_context::<Desk>()
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
        self.reviews.read_all().await;
        let held = self.reviews.entry_now(id).filter(|e| e.review().is_some());
        let current = match held {
            Some(entry) => entry,
            // A row of a server's page: its review is fetched to be checked.
            None if self.origin.served() => self.fetch_review(id).await.map_err(|e| match e {
                Unfound::Missing => DecisionFailure::Missing,
                Unfound::Failed(e) => DecisionFailure::Server(e),
            })?,
            None => return Err(DecisionFailure::Missing),
        };
        let review = current.review().ok_or(DecisionFailure::Missing)?;
        let mut ids = browser::new_id;
        let next = self
            .decisions
            .judge(review, input, &mut ids)
            .map_err(DecisionFailure::Refused)?;
        match self.origin.source() {
            Source::Server => {
                let server = self.origin.server().ok_or(DecisionFailure::Missing)?;
                self.decide_on_server(server, id, input, idempotency_key)
                    .await
            }
            Source::Graph => match langgraph::interrupt_decision(*self, id, next).await {
                Ok(sending) => sending.await,
                Err(crate::split::LoadFailed) => Err(DecisionFailure::Unloaded),
            },
            Source::Local => self.decide_locally(next),
        }
    }

    /// Saves a decided review in this browser's storage, then shows it.
    fn decide_locally(&self, next: Review) -> Result<Arc<Entry>, DecisionFailure> {
        self.reviews
            .persist(&next)
            .map_err(DecisionFailure::NotSaved)?;
        Ok(self.reviews.replace(next))
    }

    /// Every review, for an export: those in storage, or a server's fetched
    /// page by page (LangGraph: the interrupts listed and those decided here).
    pub async fn every_review(&self) -> Result<Vec<Review>, HttpError> {
        self.reviews.read_all().await;
        if let Some(server) = self.origin.server() {
            return server.list_all().await;
        }
        Ok(self
            .reviews
            .with_entries(|e| e.iter().filter_map(|e| e.review().cloned()).collect()))
    }

    /// Adds or replaces reviews (import), saving them first. Only into local
    /// storage: on a server, agents create reviews through the API.
    pub fn add(&self, reviews: Vec<Review>) -> Result<usize, StoreError> {
        if self.origin.remote() {
            return Err(StoreError::WriteFailed(
                "imports go to this browser's storage; on a server, agents submit reviews through its API. Disconnect in Settings to import here".into(),
            ));
        }
        let reviews = self.apply_grants(reviews);
        for review in &reviews {
            self.reviews.persist(review)?;
        }
        let count = reviews.len();
        self.reviews
            .put(reviews.into_iter().map(|r| Arc::new(Entry::new(r))));
        Ok(count)
    }

    /// The inbox's page for `ask`, kept current as reviews change. A screen
    /// asks for it while shown: on a server, a change of `ask` fetches its page.
    pub fn listing(&self, ask: Memo<Ask>) -> Memo<Listing> {
        let desk = *self;
        if self.origin.served() {
            Effect::new(move |_| desk.fetch_page(ask.get()));
            return Memo::new(move |_| desk.reviews.served_listing());
        }
        Memo::new(move |_| ask.with(|ask| desk.reviews.listing(ask)))
    }

    /// A short description of the storage in use.
    pub fn storage_description(&self) -> String {
        self.origin.describe(self.reviews.local().as_ref())
    }
}
