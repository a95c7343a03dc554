//! This browser's local storage as the backend (the embedded default): the
//! browser does what a server does otherwise, with the same domain code.
//! `reading` reads the stored reviews and keeps the inbox index, `seed`
//! stores the demo, `tools` redeems, expires and applies standing grants.

mod reading;
mod seed;
mod tools;

use super::entry::Entry;
use super::listing::HeadFacts;
use super::{DecisionFailure, Notices, Reviews};
use crate::backend::{LocalStore, StoreError};
use crate::browser;
use countersign_domain::Review;
use std::sync::Arc;

/// A desk on this browser's storage (cheap to copy).
#[derive(Clone, Copy)]
pub(super) struct Local {
    reviews: Reviews,
    notices: Notices,
}

/// What a local desk shows before its stored reviews are read, and what it
/// does next.
#[derive(Default)]
pub(super) struct Start {
    /// The inbox's first rows: the index's head or the index itself, or on a
    /// first visit the demo's summaries.
    pub first_page: Option<Vec<Arc<Entry>>>,
    /// What the index's head says of every review.
    pub head: Option<HeadFacts>,
    /// Whether the stored reviews are read after the first frame.
    pub reading: bool,
    /// Whether the demo is stored first (a first visit).
    pub needs_demo: bool,
    /// Whether the first rows came from an inbox index.
    indexed: bool,
}

impl Start {
    /// The start of a desk on `store` (none: storage is unavailable). A
    /// Countersign server serving this app and not connected to yet asks for
    /// the reviewer key (Settings), and never shows the demo there.
    pub fn plan(store: Option<&LocalStore>) -> Self {
        if browser::served_by_server() {
            return Start::default();
        }
        let needs_demo = store.is_none_or(|s| !s.seeded());
        let reading = store.is_some() && !needs_demo;
        if needs_demo {
            // A first visit lists the demo's rows at once, from their summaries
            // (in the first load), while the demo's own code is fetched to store them.
            let demo = countersign_domain::demo::summaries(browser::now()).ok();
            return Start {
                first_page: demo.map(reading::listed),
                needs_demo,
                ..Start::default()
            };
        }
        let Some(store) = store.filter(|_| reading) else {
            return Start::default();
        };
        // The inbox is drawn from the index's head (or the index itself,
        // written before heads were), then the index is parsed and every
        // review read.
        if let Some(head) = reading::stored_head(store) {
            let (facts, page) = reading::split_head(head);
            return Start {
                first_page: Some(page),
                head: Some(facts),
                reading,
                indexed: true,
                ..Start::default()
            };
        }
        let listed = store
            .index_text()
            .and_then(|index| reading::listed_entries(&index));
        Start {
            indexed: listed.is_some(),
            first_page: listed,
            reading,
            ..Start::default()
        }
    }

    /// Whether the desk counts as reading until the reviews (or the demo) are stored.
    pub fn waits(&self) -> bool {
        self.reading || self.needs_demo
    }
}

impl Local {
    pub(super) fn new(reviews: Reviews, notices: Notices) -> Self {
        Local { reviews, notices }
    }

    /// Reads the stored reviews (or stores the demo) and follows the other
    /// tabs and the inbox index.
    pub(super) fn start(self, start: Start) {
        if let Some(store) = self.reviews.local() {
            if start.reading {
                self.read_stored_reviews(store.clone(), start.indexed);
            }
            self.follow_other_tabs(store.clone());
            self.keep_index(store);
        }
        if start.needs_demo {
            self.seed_demo();
        }
    }

    /// Saves a decided review (checked by the domain already) in this
    /// browser's storage, then shows it.
    pub(super) fn decide(&self, next: Review) -> Result<Arc<Entry>, DecisionFailure> {
        self.reviews
            .persist(&next)
            .map_err(DecisionFailure::NotSaved)?;
        Ok(self.reviews.replace(next))
    }

    /// Adds or replaces reviews (an import), saving them first; a call a
    /// standing grant covers is approved as it is added.
    pub(super) fn add(&self, reviews: Vec<Review>) -> Result<usize, StoreError> {
        let reviews = self.apply_grants(reviews);
        for review in &reviews {
            self.reviews.persist(review)?;
        }
        let count = reviews.len();
        self.reviews
            .put(reviews.into_iter().map(|r| Arc::new(Entry::new(r))));
        Ok(count)
    }

    /// What the settings say about where reviews are kept.
    pub(super) fn describe(&self) -> String {
        let Some(store) = self.reviews.local() else {
            return "None: browser storage is unavailable, so changes last until the page is closed.".to_owned();
        };
        let mut text = "This browser's local storage (nothing leaves this device).".to_owned();
        let aside = store.set_aside_count();
        if aside > 0 {
            text.push_str(&format!(
                " {aside} unusable value(s) are kept aside under countersign.quarantine.*."
            ));
        }
        text
    }
}
