//! A Countersign server as the backend. The server answers each query with
//! one page of summaries and the counts, so what the desk holds does not grow
//! with the number of reviews. A live change patches the page shown and the
//! counts in place (`reviews/page.rs`); only a change the desk cannot place
//! (a text search) asks for the page again. This module does the asking;
//! `decisions` posts decisions (and the outbox), `live` follows the server.

mod decisions;
pub(super) mod live;

use super::listing::{Ask, Listing, PAGE_SIZE};
use super::{Access, Decisions, Entry, Link, Notices, Origin, Preferences, Reviews, Unfound};
use crate::backend::{Connection, HttpError, HttpStore};
use countersign_domain::model::ConfirmStatus;
use countersign_domain::wire::{Change, ChangeKind, ReviewQuery, ReviewSummary, SummaryPage};
use countersign_domain::{MplpId, Review};
use leptos::prelude::*;
use std::sync::Arc;

/// Asks the server for one page (in the first load: on a server, the first
/// rows wait for nothing else).
async fn ask_page(server: HttpStore, ask: Ask) -> Result<SummaryPage, HttpError> {
    let mut query = ask.query;
    if query.limit == 0 {
        query.limit = PAGE_SIZE as u32;
    }
    server.page(&query).await
}

/// A desk on a Countersign server (cheap to copy).
#[derive(Clone, Copy)]
pub(super) struct Served {
    reviews: Reviews,
    origin: Origin,
    decisions: Decisions,
    preferences: Preferences,
    notices: Notices,
    server: StoredValue<HttpStore>,
    /// Whether the server answered once (or a second passed): the desk
    /// follows the server from then on, so the first rows never wait behind
    /// the code that follows it.
    answered: RwSignal<bool>,
}

impl Served {
    pub(super) fn new(
        (reviews, origin, decisions, preferences, notices): (
            Reviews,
            Origin,
            Decisions,
            Preferences,
            Notices,
        ),
        server: HttpStore,
    ) -> Self {
        Served {
            reviews,
            origin,
            decisions,
            preferences,
            notices,
            server: StoredValue::new(server),
            answered: RwSignal::new(false),
        }
    }

    /// The server.
    fn server(&self) -> HttpStore {
        self.server.get_value()
    }

    /// What the server keeps for its reviewers.
    pub(super) fn access(&self) -> Access {
        Access(self.server())
    }

    /// What the settings say about where reviews are kept.
    pub(super) fn describe(&self) -> String {
        let (url, signed_in) = self
            .server
            .with_value(|s| (s.url().to_owned(), s.signed_in()));
        let by = if signed_in {
            "in your name, as you signed in"
        } else {
            "with your reviewer key"
        };
        format!("The Countersign server at {url}: decisions are signed {by} and every reviewer sees them.")
    }

    /// Whether the server answered once (reactive): the desk follows it then.
    pub(super) fn has_answered(&self) -> bool {
        self.answered.get()
    }

    /// The server answered (or the desk waited long enough for it).
    pub(super) fn first_answer(&self) {
        if !self.answered.get_untracked() {
            self.answered.set(true);
        }
    }

    /// Every review, fetched page by page (an export).
    pub(super) async fn every_review(&self) -> Result<Vec<Review>, HttpError> {
        self.server().list_all().await
    }

    /// The inbox's page for `ask`, fetched whenever `ask` changes and kept
    /// current by the live stream.
    pub(super) fn listing(self, ask: Memo<Ask>) -> Memo<Listing> {
        Effect::new(move |_| self.fetch_page(ask.get()));
        let reviews = self.reviews;
        Memo::new(move |_| reviews.served_listing())
    }

    /// Asks the server for the page of `ask` (nothing when it is the page shown).
    fn fetch_page(&self, ask: Ask) {
        if !self.reviews.answers(&ask) {
            self.ask_again(ask);
        }
    }

    /// Asks the server for the page of `ask`, shown when it is still what the
    /// inbox asks for once it arrives.
    fn ask_again(&self, ask: Ask) {
        let server = self.server();
        let served = *self;
        let number = self.reviews.ask(ask.clone());
        leptos::task::spawn_local(async move {
            let answer = ask_page(server, ask.clone()).await;
            if !served.reviews.is_latest(number) {
                return;
            }
            match answer {
                Ok(page) => served.show_page(ask, page),
                Err(e) => served.page_failed(ask, e),
            }
        });
    }

    fn show_page(&self, ask: Ask, page: SummaryPage) {
        self.reviews.show_page(ask, page);
        self.origin.answered();
        self.first_answer();
        self.list_requesters();
    }

    /// Lists every requester once (after the first page: the first rows do
    /// not wait for it), and then renews the server's drawing of this page
    /// for a key remembered on this device.
    fn list_requesters(&self) {
        if !self.reviews.requesters_unlisted() {
            return;
        }
        let (server, reviews) = (self.server(), self.reviews);
        leptos::task::spawn_local(async move {
            let listed = server.requesters().await.ok();
            reviews.requesters_listed(listed.map(|l| l.items));
            if Connection::is_remembered() {
                server.keep_page(true).await;
            }
        });
    }

    /// Says why the page could not be listed; an unreachable server while
    /// connecting is said in the header too.
    fn page_failed(&self, ask: Ask, error: HttpError) {
        if matches!(error, HttpError::Unreachable(_)) && self.origin.link_now() == Link::Connecting
        {
            self.origin.set_link(Link::Offline(error.to_string()));
        }
        self.reviews.page_failed(ask, error.to_string());
        self.first_answer();
    }

    /// Asks for the page shown again (after the live stream dropped, or on
    /// the fallback poll) and the counts with it.
    pub(super) fn refresh_page(&self) {
        match self.reviews.asked() {
            Some(ask) => self.ask_again(ask),
            None => self.count(),
        }
    }

    /// Asks for the counts alone (the header's badge) unless a page is asked
    /// for, which brings them.
    pub(super) fn count(&self) {
        if self.reviews.asked().is_some() {
            return;
        }
        let (server, served) = (self.server(), *self);
        leptos::task::spawn_local(async move {
            let ask = Ask {
                query: ReviewQuery {
                    limit: 1,
                    ..ReviewQuery::default()
                },
                page: 1,
            };
            if let Ok(page) = ask_page(server, ask).await {
                served.reviews.counted(page.counts, page.position);
            }
            served.first_answer();
        });
    }

    /// Applies a change this desk made (or read whole): the review opened,
    /// the row shown and the counts follow it.
    pub(super) fn apply_change(&self, kind: ChangeKind, review: Review) {
        let summary = ReviewSummary::of(&review);
        self.reviews.keep_newer(review);
        self.apply_summary(kind, summary);
    }

    /// A change the server announced: applied, and a new pending request
    /// told to a reviewer who opted into notifications.
    pub(super) fn announced(&self, change: Change) {
        let new =
            change.kind == ChangeKind::Created && change.summary.status == ConfirmStatus::Pending;
        if new && self.preferences.get().with_untracked(|s| s.notify) {
            crate::notify::tell_new(&change.summary);
        }
        self.apply_summary(change.kind, change.summary);
    }

    /// Applies a change the server announced, given as the review's new row:
    /// the row shown and the counts follow it, a page it cannot be placed in
    /// is asked for again, and a review held opened that the row says changed
    /// is fetched again.
    fn apply_summary(&self, kind: ChangeKind, summary: ReviewSummary) {
        let id = summary.id;
        let patched = self.reviews.patch(kind, summary);
        if let Some(ask) = patched.ask_again {
            self.ask_again(ask);
        }
        if patched.outdated {
            let served = *self;
            leptos::task::spawn_local(async move {
                // A failure leaves the held copy; the next change tries again.
                let _ = served.fetch_review(id).await;
            });
        }
    }

    /// Fetches a review to open it, unless the desk holds it; one the server
    /// cannot give is listed in `unfound` with why.
    pub(super) fn open(&self, id: MplpId) {
        if self.reviews.holds_review(id) {
            return;
        }
        let served = *self;
        leptos::task::spawn_local(async move {
            if let Err(why) = served.fetch_review(id).await {
                served.reviews.not_found(id, why);
            }
            served.first_answer();
        });
    }

    /// The review from the server, held from now on (the few opened last are kept).
    pub(super) async fn fetch_review(&self, id: MplpId) -> Result<Arc<Entry>, Unfound> {
        let review = self.server().review(id).await.map_err(|e| match e {
            HttpError::Refused { status: 404, .. } => Unfound::Missing,
            other => Unfound::Failed(other),
        })?;
        Ok(self.reviews.hold_opened(review))
    }
}
