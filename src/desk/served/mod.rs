//! The inbox on a Countersign server: the server answers each query with one
//! page of summaries and the counts, so what the desk holds does not grow
//! with the number of reviews. A live change patches the page shown and the
//! counts in place (`reviews/page.rs`); only a change the desk cannot place
//! (a text search) asks for the page again. This module does the asking.

use super::listing::{Ask, PAGE_SIZE};
use super::{Desk, Entry, Link, Unfound};
use crate::backend::{HttpError, HttpStore};
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

impl Desk {
    /// Asks the server for the page of `ask` (nothing when it is the page shown).
    pub(super) fn fetch_page(&self, ask: Ask) {
        if !self.reviews.answers(&ask) {
            self.ask_again(ask);
        }
    }

    /// Asks the server for the page of `ask`, shown when it is still what the
    /// inbox asks for once it arrives.
    fn ask_again(&self, ask: Ask) {
        let Some(server) = self.origin.server() else {
            return;
        };
        let desk = *self;
        let number = self.reviews.ask(ask.clone());
        leptos::task::spawn_local(async move {
            let answer = ask_page(server, ask.clone()).await;
            if !desk.reviews.is_latest(number) {
                return;
            }
            match answer {
                Ok(page) => desk.show_page(ask, page),
                Err(e) => desk.page_failed(ask, e),
            }
        });
    }

    fn show_page(&self, ask: Ask, page: SummaryPage) {
        self.reviews.show_page(ask, page);
        self.origin.answered();
        self.start_following();
        self.list_requesters();
    }

    /// Lists every requester once (after the first page: the first rows do
    /// not wait for it).
    fn list_requesters(&self) {
        let Some(server) = self.origin.server() else {
            return;
        };
        if !self.reviews.requesters_unlisted() {
            return;
        }
        let reviews = self.reviews;
        leptos::task::spawn_local(async move {
            let listed = server.requesters().await.ok();
            reviews.requesters_listed(listed.map(|l| l.items));
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
        self.start_following();
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
        let (Some(server), None) = (self.origin.server(), self.reviews.asked()) else {
            return;
        };
        let desk = *self;
        leptos::task::spawn_local(async move {
            let ask = Ask {
                query: ReviewQuery {
                    limit: 1,
                    ..ReviewQuery::default()
                },
                page: 1,
            };
            if let Ok(page) = ask_page(server, ask).await {
                desk.reviews.counted(page.counts, page.position);
            }
            desk.start_following();
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
            let desk = *self;
            leptos::task::spawn_local(async move {
                // A failure leaves the held copy; the next change tries again.
                let _ = desk.fetch_review(id).await;
            });
        }
    }

    /// Fetches a review to open it, unless the desk holds it; one the server
    /// cannot give is listed in `unfound` with why.
    pub fn open(&self, id: MplpId) {
        if self.reviews.holds_review(id) || !self.origin.served() {
            return;
        }
        let desk = *self;
        leptos::task::spawn_local(async move {
            if let Err(why) = desk.fetch_review(id).await {
                desk.reviews.not_found(id, why);
            }
            desk.start_following();
        });
    }

    /// The review from the server, held from now on (the few opened last are kept).
    pub(super) async fn fetch_review(&self, id: MplpId) -> Result<Arc<Entry>, Unfound> {
        let server = self.origin.server().ok_or(Unfound::Missing)?;
        let review = server.review(id).await.map_err(|e| match e {
            HttpError::Refused { status: 404, .. } => Unfound::Missing,
            other => Unfound::Failed(other),
        })?;
        Ok(self.reviews.hold_opened(review))
    }
}
