//! The reviewer's desk: the app's state as small stores, each with one job;
//! a screen takes the one it needs with its `from_context` (the desk is the
//! one context value that holds them):
//! - `Reviews` (`reviews/`): the reviews held and the page a server answered;
//! - `Origin` (`origin.rs`): where reviews come from and how fresh they are;
//! - `Decisions` (`decisions/`): drafts, the outbox, the server's policy;
//! - `Preferences` (`preferences.rs`) and `Notices` (`notices.rs`).
//!
//! The backend is chosen once, when the app loads, as one of three values
//! that fill those stores and carry what differs between backends: `Local`
//! (`local/`: this browser's storage, the demo, redeeming), `Served`
//! (`served/`: a Countersign server's pages, decisions and live stream) and
//! `Graph` (`langgraph/`: a LangGraph server's interrupts). `Desk` holds the
//! stores and that value, and is the one place that matches on it: one match
//! per intent (deciding, opening, listing, importing, exporting). `follow`
//! is the split point that follows a server; `failure` says why a decision
//! was not recorded, whichever backend it went to.

mod access;
mod decisions;
mod entry;
mod failure;
mod follow;
mod langgraph;
mod listing;
mod local;
mod notices;
mod origin;
mod preferences;
mod reviews;
mod served;

pub use access::Access;
pub use decisions::Decisions;
pub use entry::Entry;
pub use failure::DecisionFailure;
pub use langgraph::InterruptFacts;
pub use listing::{Ask, Listing, PageLink};
pub use notices::Notices;
pub use origin::{Link, Origin, Source};
pub use preferences::Preferences;
pub use reviews::Reviews;
pub use reviews::Unfound;

use crate::backend::{Backend, Connection, HttpError, LocalStore, StoreError};
use crate::browser;
use crate::split::LoadFailed;
use countersign_domain::toolcall::Redemption;
use countersign_domain::{DecisionInput, MplpId, Review};
use langgraph::Graph;
use leptos::prelude::*;
use local::Local;
use served::Served;
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

/// The app's state: five small stores, each provided to the screens as
/// context on its own, and the backend they come from. Cheap to copy.
#[derive(Clone, Copy)]
pub struct Desk {
    reviews: Reviews,
    origin: Origin,
    decisions: Decisions,
    preferences: Preferences,
    notices: Notices,
    sourced: Sourced,
}

/// The backend, chosen once, with what it does.
#[derive(Clone, Copy)]
enum Sourced {
    /// This browser's local storage.
    Local(Local),
    /// A Countersign server.
    Served(Served),
    /// A LangGraph server.
    Graph(Graph),
}

impl Desk {
    /// Opens local storage and the saved connection, and starts the backend:
    /// a local desk lists its rows from the inbox index (or the demo's
    /// summaries on a first start) and reads the stored reviews right after
    /// the first frame; a server's desk asks for its first page, then follows it.
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
        let remote = connection.is_some();
        let preferences = Preferences::load(store.clone(), !remote, &mut notices);
        let mut start = match remote {
            true => local::Start::default(),
            false => local::Start::plan(store.as_ref()),
        };
        browser::mark("countersign:loaded");
        let backend = Backend::connect(connection.clone(), store.as_ref());
        let served = matches!(backend, Backend::Countersign(_));
        let reviews = Reviews::new(
            start.first_page.take().unwrap_or_default(),
            start.head.take(),
            start.waits(),
            store,
            served,
        );
        let origin = Origin::new(connection);
        let decisions = Decisions::load(served.then(|| origin.remote_url()).flatten().as_deref());
        let notices = Notices::new(notices);
        let sourced = match backend {
            Backend::Local => Sourced::Local(Local::new(reviews, notices)),
            Backend::Countersign(server) => Sourced::Served(Served::new(
                (reviews, origin, decisions, preferences, notices),
                server,
            )),
            Backend::LangGraph(interrupts) => Sourced::Graph(Graph::new(
                (reviews, origin, decisions, notices),
                interrupts,
            )),
        };
        match sourced {
            Sourced::Local(local) => local.start(start),
            // The first page comes first; the stream follows from its position.
            Sourced::Served(served) => follow::server_once_answered(served, origin),
            Sourced::Graph(graph) => follow::threads(graph, origin),
        }
        Desk {
            reviews,
            origin,
            decisions,
            preferences,
            notices,
            sourced,
        }
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
    /// storage, on the server under `idempotency_key` so a retry of the same
    /// attempt is never recorded twice, or by resuming LangGraph's thread),
    /// then shows it. Nothing changes on screen or in storage when a step
    /// fails. When someone else decided first, their decision is shown and
    /// the failure says who and what.
    pub async fn decide(
        &self,
        id: MplpId,
        input: &DecisionInput,
        idempotency_key: &str,
    ) -> Result<Arc<Entry>, DecisionFailure> {
        self.reviews.read_all().await;
        let held = self.reviews.entry_now(id).filter(|e| e.review().is_some());
        let current = match (held, self.sourced) {
            (Some(entry), _) => entry,
            // A row of a server's page: its review is fetched to be checked.
            (None, Sourced::Served(served)) => {
                served.fetch_review(id).await.map_err(|e| match e {
                    Unfound::Missing => DecisionFailure::Missing,
                    Unfound::Failed(e) => DecisionFailure::Server(e),
                })?
            }
            (None, _) => return Err(DecisionFailure::Missing),
        };
        let review = current.review().ok_or(DecisionFailure::Missing)?;
        let next = self
            .decisions
            .judge(review, input, &mut browser::new_id)
            .map_err(DecisionFailure::Refused)?;
        match self.sourced {
            Sourced::Local(local) => local.decide(next),
            Sourced::Served(served) => served.decide(id, input, idempotency_key).await,
            Sourced::Graph(graph) => match langgraph::interrupt_decision(graph, id, next).await {
                Ok(sending) => sending.await,
                Err(LoadFailed) => Err(DecisionFailure::Unloaded),
            },
        }
    }

    /// Decides similar calls of one LangGraph thread with one input and
    /// resumes the thread once with every answer (see
    /// [`langgraph::group_decision`]); `Ok(None)` when they are to be decided
    /// one by one (another backend, or not one action each of one thread).
    pub async fn decide_group(
        &self,
        ids: Vec<MplpId>,
        input: DecisionInput,
    ) -> Result<Option<Result<usize, DecisionFailure>>, LoadFailed> {
        match self.sourced {
            Sourced::Graph(graph) => Ok(langgraph::group_decision(graph, ids, input).await?.await),
            Sourced::Local(_) | Sourced::Served(_) => Ok(None),
        }
    }

    /// Fetches a review to open it, unless the desk holds it (a local or
    /// LangGraph desk holds every review); one the server cannot give is
    /// listed in `unfound` with why.
    pub fn open(&self, id: MplpId) {
        if let Sourced::Served(served) = self.sourced {
            served.open(id);
        }
    }

    /// The inbox's page for `ask`, kept current as reviews change. A screen
    /// asks for it while shown: on a server, a change of `ask` fetches its page.
    pub fn listing(&self, ask: Memo<Ask>) -> Memo<Listing> {
        if let Sourced::Served(served) = self.sourced {
            return served.listing(ask);
        }
        let reviews = self.reviews;
        Memo::new(move |_| ask.with(|ask| reviews.listing(ask)))
    }

    /// Every review, for an export: those in storage, or a server's fetched
    /// page by page (LangGraph: the interrupts listed and those decided here).
    pub async fn every_review(&self) -> Result<Vec<Review>, HttpError> {
        if let Sourced::Served(served) = self.sourced {
            return served.every_review().await;
        }
        self.reviews.read_all().await;
        Ok(self
            .reviews
            .with_entries(|e| e.iter().filter_map(|e| e.review().cloned()).collect()))
    }

    /// Adds or replaces reviews (import), saving them first. Only into local
    /// storage: on a server, agents create reviews through the API.
    pub fn add(&self, reviews: Vec<Review>) -> Result<usize, StoreError> {
        match self.sourced {
            Sourced::Local(local) => local.add(reviews),
            Sourced::Served(_) | Sourced::Graph(_) => Err(StoreError::WriteFailed(
                "imports go to this browser's storage; on a server, agents submit reviews through its API. Disconnect in Settings to import here".into(),
            )),
        }
    }

    /// Redeems the token of a tool-call review for the call about to run, with
    /// the domain's checks, in local storage (on a server only the agent that
    /// asked may redeem, with its agent key). Returns the failed check; nothing
    /// changes then.
    pub fn redeem(&self, id: MplpId, presented: &Redemption) -> Result<(), String> {
        match self.sourced {
            Sourced::Local(local) => local.redeem(id, presented),
            Sourced::Served(_) | Sourced::Graph(_) => {
                Err("on a server, only the agent that asked redeems its token".into())
            }
        }
    }

    /// Closes pending tool calls past their expiry as denied by default
    /// (local storage only: a server closes its own).
    pub fn close_expired(&self) {
        if let Sourced::Local(local) = self.sourced {
            local.close_expired();
        }
    }

    /// Replaces every review with fresh demo data (local storage only).
    pub async fn reset_demo(&self) -> Result<(), StoreError> {
        match self.sourced {
            Sourced::Local(local) => local.reset_demo().await,
            Sourced::Served(_) | Sourced::Graph(_) => Err(StoreError::WriteFailed(
                "the demo data is for this browser's storage; disconnect in Settings to reset it"
                    .into(),
            )),
        }
    }

    /// A short description of the storage in use.
    pub fn storage_description(&self) -> String {
        match self.sourced {
            Sourced::Local(local) => local.describe(),
            Sourced::Served(served) => served.describe(),
            Sourced::Graph(graph) => graph.describe(),
        }
    }

    /// What the Countersign server reviews come from keeps for reviewers;
    /// `None` when the backend keeps none of it (this browser, LangGraph).
    pub fn access(&self) -> Option<Access> {
        match self.sourced {
            Sourced::Served(served) => Some(served.access()),
            Sourced::Local(_) | Sourced::Graph(_) => None,
        }
    }

    /// What the review page shows of the LangGraph interrupt behind a review
    /// (`None`: not a pending interrupt).
    pub fn interrupt_facts(&self, id: MplpId) -> Option<InterruptFacts> {
        match self.sourced {
            Sourced::Graph(graph) => graph.interrupt_facts(id),
            Sourced::Local(_) | Sourced::Served(_) => None,
        }
    }

    /// How many other actions of the same LangGraph interrupt still wait,
    /// when this review's decision is held until they are decided too.
    pub fn held(&self, id: MplpId) -> Option<usize> {
        match self.sourced {
            Sourced::Graph(graph) => graph.held(id),
            Sourced::Local(_) | Sourced::Served(_) => None,
        }
    }
}
