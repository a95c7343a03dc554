//! The reviews the desk holds and what the inbox shows of them: every review
//! of local storage and LangGraph (oldest request first), or on a Countersign
//! server the page it answered, its counts and the few reviews opened last.
//! Screens read it; the backends' values (`local`, `served`, `langgraph`)
//! fill it through the intents here and in `page.rs`, the
//! only code that writes its signals.

mod interrupts;
mod opened;
mod page;
mod stored;

pub use opened::Unfound;

use super::entry::{put, sorted_entries, Entry};
use super::listing::{from_head, in_memory, Ask, HeadFacts, Listing};
use crate::backend::{LocalStore, StoreError};
use crate::browser;
use countersign_domain::langgraph::ThreadStatus;
use countersign_domain::model::ConfirmStatus;
use countersign_domain::wire::StatusCounts;
use countersign_domain::{MplpId, Review};
use leptos::prelude::*;
use page::ServedPage;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// How many opened reviews a desk on a server keeps (the rest is fetched again when opened).
const OPENED_KEPT: usize = 20;

/// The reviews store (cheap to copy; provided as context).
#[derive(Clone, Copy)]
pub struct Reviews {
    /// The reviews held, oldest request first: every review in local storage
    /// and on LangGraph; on a Countersign server, the few opened last.
    entries: RwSignal<Vec<Arc<Entry>>>,
    /// A Countersign server's counts per status (the others count `entries`).
    counts: RwSignal<StatusCounts>,
    /// The inbox page a Countersign server answered.
    served_page: RwSignal<ServedPage>,
    /// Reviews a Countersign server could not give when opened, and why.
    unfound: RwSignal<Vec<(MplpId, Unfound)>>,
    /// LangGraph: the status of each pending interrupt's thread, when it is
    /// not simply waiting (errored, busy).
    thread_states: RwSignal<HashMap<MplpId, ThreadStatus>>,
    /// Whether the stored reviews are still being read (the inbox index, or
    /// on a first visit the demo's summaries, stand in for them meanwhile).
    reading: RwSignal<bool>,
    /// Until the inbox index is parsed (right after the first frame), what
    /// its head says of every review; `entries` then hold its first page only.
    head: RwSignal<Option<HeadFacts>>,
    /// The entries of the index as storage holds it beside its head, once
    /// parsed: the index is written again only when the entries differ from
    /// them (an index without a head is written again once the reviews are read).
    indexed: StoredValue<Option<Vec<Arc<Entry>>>>,
    /// Where a local desk keeps its reviews (none: storage is unavailable).
    store: StoredValue<Option<LocalStore>>,
    /// Whether a Countersign server answers the inbox's queries.
    served: bool,
}

impl Reviews {
    pub(super) fn new(
        first_page: Vec<Arc<Entry>>,
        head: Option<HeadFacts>,
        reading: bool,
        store: Option<LocalStore>,
        served: bool,
    ) -> Self {
        Reviews {
            entries: RwSignal::new(first_page),
            counts: RwSignal::new(StatusCounts::default()),
            served_page: RwSignal::new(ServedPage::default()),
            unfound: RwSignal::new(Vec::new()),
            thread_states: RwSignal::new(HashMap::new()),
            reading: RwSignal::new(reading),
            head: RwSignal::new(head),
            indexed: StoredValue::new(None),
            store: StoredValue::new(store),
            served,
        }
    }

    /// The entry of a confirm, if held (reactive).
    pub fn entry(&self, id: MplpId) -> Option<Arc<Entry>> {
        self.entries
            .with(|entries| entries.iter().find(|e| e.id() == id).cloned())
    }

    /// The entry of a confirm, if held (not tracked).
    pub(super) fn entry_now(&self, id: MplpId) -> Option<Arc<Entry>> {
        self.entries
            .with_untracked(|entries| entries.iter().find(|e| e.id() == id).cloned())
    }

    /// The ids of the reviews held (for an import, which adds only new ones).
    pub fn held_ids(&self) -> HashSet<MplpId> {
        self.entries
            .with_untracked(|e| e.iter().map(|e| e.id()).collect())
    }

    /// How many reviews wait for a decision (the header's badge; reactive).
    pub fn pending_count(&self) -> u64 {
        if self.served {
            return self.counts.with(|c| c.of(ConfirmStatus::Pending));
        }
        if let Some(pending) = self.head.with(|h| h.as_ref().map(|h| h.counts.pending)) {
            return pending;
        }
        self.entries.with(|e| {
            e.iter()
                .filter(|e| e.status() == ConfirmStatus::Pending)
                .count() as u64
        })
    }

    /// Whether the stored reviews are still being read (reactive).
    pub fn reading(&self) -> bool {
        self.reading.get()
    }

    /// Waits until the stored reviews are read (at once when they are).
    pub async fn read_all(&self) {
        while self.reading.get_untracked() {
            browser::next_task().await;
        }
    }

    /// LangGraph: the status of a review's thread when it is not simply
    /// waiting (errored, busy) (reactive).
    pub fn thread_state(&self, id: MplpId) -> Option<ThreadStatus> {
        self.thread_states.with(|t| t.get(&id).copied())
    }

    /// Why a review could not be opened, if it could not (reactive).
    pub fn unfound(&self, id: MplpId) -> Option<Unfound> {
        self.unfound.with(|u| {
            u.iter()
                .find(|(known, _)| *known == id)
                .map(|(_, why)| why.clone())
        })
    }

    /// This browser's storage of a local desk, if there is one.
    pub(super) fn local(&self) -> Option<LocalStore> {
        self.store.get_value()
    }

    /// Saves a review in this browser's storage (a desk without storage keeps
    /// it for this visit).
    pub(super) fn persist(&self, review: &Review) -> Result<(), StoreError> {
        match self.store.get_value() {
            Some(store) => store.save(review),
            None => Ok(()),
        }
    }

    /// Reads every review held (not tracked).
    pub(super) fn with_entries<R>(&self, read: impl FnOnce(&[Arc<Entry>]) -> R) -> R {
        self.entries.with_untracked(|entries| read(entries))
    }

    /// The inbox's page for `ask` among the reviews held (reactive): while
    /// the index's head stands in for them, the head's page.
    pub(super) fn listing(&self, ask: &Ask) -> Listing {
        let head = self.head.get();
        self.entries.with(|entries| match &head {
            Some(head) => from_head(entries, head, ask),
            None => in_memory(entries, ask),
        })
    }

    /// Whether the review itself (not only its row) is held.
    pub(super) fn holds_review(&self, id: MplpId) -> bool {
        self.with_entries(|e| e.iter().any(|e| e.id() == id && e.review().is_some()))
    }

    /// Shows `reviews` in place of every review held.
    pub(super) fn show(&self, reviews: Vec<Review>) {
        self.entries.set(sorted_entries(reviews));
    }

    /// Holds nothing (the rows listed for the demo stand for nothing stored).
    pub(super) fn clear(&self) {
        self.entries.set(Vec::new());
    }

    /// Puts `new` entries in place of those with their ids (or adds them).
    pub(super) fn put(&self, new: impl IntoIterator<Item = Arc<Entry>>) {
        self.entries.update(|entries| put(entries, new));
    }

    /// Forgets a review (another tab removed it).
    pub(super) fn remove(&self, id: MplpId) {
        self.entries
            .update(|entries| entries.retain(|e| e.id() != id));
    }

    /// Shows a new version of a review that is already listed.
    pub(super) fn replace(&self, review: Review) -> Arc<Entry> {
        let entry = Arc::new(Entry::new(review));
        self.entries.update(|entries| {
            if let Some(slot) = entries.iter_mut().find(|e| e.id() == entry.id()) {
                *slot = entry.clone();
            }
        });
        entry
    }
}

/// Whether two lists of entries summarize alike (the index would not change).
pub(super) fn same_summaries(a: &[Arc<Entry>], b: &[Arc<Entry>]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(a, b)| a.summary() == b.summary())
}
