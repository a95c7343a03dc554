//! Reading this browser's storage into the store: the inbox index's head
//! stands in until the index is parsed, then the reviews read replace the
//! index's rows; the index is written again when it no longer lists them.

use super::{same_summaries, Reviews};
use crate::desk::entry::{put, Entry};
use countersign_domain::Review;
use leptos::prelude::*;
use std::sync::Arc;

impl Reviews {
    /// Whether the stored reviews are still being read (not tracked).
    pub(in crate::desk) fn still_reading(&self) -> bool {
        self.reading.get_untracked()
    }

    /// The stored reviews are read (or, on a first visit, the demo stored).
    pub(in crate::desk) fn done_reading(&self) {
        self.reading.set(false);
    }

    /// Whether the inbox index's head stands in for the index.
    pub(in crate::desk) fn has_head(&self) -> bool {
        self.head.with_untracked(Option::is_some)
    }

    /// Lists every review of the inbox index (`all`) in place of its head's
    /// page. A review changed on this desk meanwhile (another tab's) stays.
    pub(in crate::desk) fn index_parsed(&self, all: Vec<Arc<Entry>>) {
        self.entries.update(|entries| {
            let changed: Vec<Arc<Entry>> =
                entries.drain(..).filter(|e| e.review().is_some()).collect();
            entries.extend(all.iter().cloned());
            put(entries, changed);
        });
        self.indexed.set_value(Some(all));
        self.head.set(None);
    }

    /// Shows the stored reviews read. A review changed on this desk while
    /// reading (a decision, an import) is newer than its stored copy read
    /// before, so it stays.
    pub(in crate::desk) fn read(&self, reviews: Vec<Review>) {
        self.reading.set(false);
        self.head.set(None);
        self.entries.update(|entries| {
            let changed: Vec<Arc<Entry>> =
                entries.drain(..).filter(|e| e.review().is_some()).collect();
            entries.extend(reviews.into_iter().map(|r| Arc::new(Entry::new(r))));
            put(entries, changed);
        });
    }

    /// Subscribes the running effect to every change of the reviews held.
    pub(in crate::desk) fn track(&self) {
        self.entries.track();
    }

    /// The reviews held when the inbox index no longer lists them as they
    /// are (`None` while reading, or when it does).
    pub(in crate::desk) fn unindexed(&self) -> Option<Vec<Arc<Entry>>> {
        if self.reading.get_untracked() {
            return None;
        }
        let current = self.entries.get_untracked();
        let same = self.indexed.with_value(|stored| {
            stored
                .as_deref()
                .is_some_and(|stored| same_summaries(stored, &current))
        });
        (!same).then_some(current)
    }

    /// The reviews held, as they are now.
    pub(in crate::desk) fn held(&self) -> Vec<Arc<Entry>> {
        self.entries.get_untracked()
    }

    /// The inbox index now lists `entries`.
    pub(in crate::desk) fn indexed_as(&self, entries: Vec<Arc<Entry>>) {
        self.indexed.set_value(Some(entries));
    }
}
