//! Reading the stored reviews, a slice per task, so the page answers input
//! meanwhile. When local storage holds an inbox index, the inbox's first page
//! is drawn from its head (the default page, stored beside it: a start need
//! not parse a summary of every review before its first frame), the index is
//! parsed right after that frame, and the reviews read next replace the
//! index's entries (a damaged or edited review is set aside exactly as before).
//! Without an index the inbox says it is reading until they are read. The
//! code that parses and checks reviews is not in the first load: it comes
//! with the first slice. The index is written again after every change, a
//! moment after it is shown, when it differs; with it, the head's drawing (its
//! HTML, which the next visit's boot script draws with no code to fetch first),
//! written again too once its times no longer hold.

use super::Local;
use crate::backend::{LoadOutcome, LocalStore};
use crate::browser;
use crate::desk::entry::sorted;
use crate::desk::entry::Entry;
use crate::desk::listing::{in_memory, Ask, HeadFacts, Listing};
use crate::router;
use crate::split::{on_demand, LoadFailed};
use chrono::{DateTime, Utc};
use countersign_domain::wire::{InboxHead, ReviewSummary};
use countersign_markup::Inbox;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::StorageEvent;

/// Reviews read per task: about 10 ms of work, so input waits no longer.
const SLICE: usize = 200;

/// How long to wait before fetching the reading code again after a failure.
const RETRY: std::time::Duration = std::time::Duration::from_secs(3);

/// Said while the reading code cannot be fetched (removed once it is).
const CANNOT_READ: &str = "The stored reviews cannot be read yet: the app's code for reading them \
     did not come from its server. Trying again every few seconds; nothing stored is lost.";

/// The head of the inbox's default page as `listing` shows it.
fn head_of(listing: Listing) -> InboxHead {
    InboxHead {
        counts: listing.counts,
        requesters: listing.requesters,
        pending: listing.rows.iter().map(|e| e.summary().clone()).collect(),
    }
}

on_demand! {
    /// Writes the inbox index, its head and the head's drawing.
    in review fn write_index(store: LocalStore, summaries: Vec<ReviewSummary>, head: InboxHead) -> () {
        let index = serde_json::to_string(&summaries);
        let drawing = drawing_of(&head);
        let head = serde_json::to_string(&head);
        match (index, head) {
            (Ok(index), Ok(head)) => store.save_index_text(&index, &head, drawing.as_deref()),
            _ => store.remove_index(),
        }
    }
}

/// The inbox's first page as the first paint writes it, stored for the boot
/// script to draw on the next visit with no code to fetch first. It is drawn
/// only by the build that wrote it, under the same base, and only until its
/// times ("asked 2 hours ago") would be said otherwise.
#[derive(Serialize, Deserialize)]
struct Drawing {
    build: String,
    base: String,
    /// Milliseconds since the epoch, as the boot script's clock counts.
    until: i64,
    #[serde(default, skip_deserializing)]
    html: String,
}

/// The drawing of `head` as of now (no HTML, for good, when no review is
/// pending: the app says why the inbox is empty); `None` in a build without
/// a name (no boot script reads it there).
fn drawing_of(head: &InboxHead) -> Option<String> {
    let build = browser::build()?;
    let (now, base) = (browser::now(), router::base());
    let (until, html) = match Inbox::head(head) {
        Some(inbox) => (inbox.holds_until(now), inbox.first_paint(now, base)),
        None => (DateTime::<Utc>::MAX_UTC, String::new()),
    };
    let drawing = Drawing {
        build,
        base: base.to_owned(),
        until: until.timestamp_millis(),
        html,
    };
    serde_json::to_string(&drawing).ok()
}

/// Whether the stored drawing is this build's, under this base, and its
/// times still hold.
fn drawing_holds(store: &LocalStore) -> bool {
    let Some(drawing) = store
        .drawing_text()
        .and_then(|text| serde_json::from_str::<Drawing>(&text).ok())
    else {
        return false;
    };
    Some(drawing.build) == browser::build()
        && drawing.base == router::base()
        && drawing.until > browser::now().timestamp_millis()
}

/// What `head` says of every review, and its page as entries.
pub(super) fn split_head(head: InboxHead) -> (HeadFacts, Vec<Arc<Entry>>) {
    let facts = HeadFacts {
        counts: head.counts,
        requesters: head.requesters,
    };
    (facts, listed(head.pending))
}

/// The stored index head, if there is one and it parses.
pub(super) fn stored_head(store: &LocalStore) -> Option<InboxHead> {
    serde_json::from_str(&store.head_text()?).ok()
}

on_demand! {
    /// Reads and checks the stored reviews under `keys`; unusable values are
    /// moved aside and listed.
    in reading fn read_stored(store: LocalStore, keys: Vec<String>) -> LoadOutcome {
        store.read(&keys)
    }
}

/// The entries of an inbox index, oldest request first, if it is one.
/// (Not inlined: its parse loop is hot at start, and V8 optimizes a hot
/// function whole; see `WASM_OPT` in scripts/split-app.mjs.)
#[inline(never)]
pub(super) fn listed_entries(index: &str) -> Option<Vec<Arc<Entry>>> {
    let summaries: Vec<ReviewSummary> = serde_json::from_str(index).ok()?;
    Some(listed(summaries))
}

/// Entries standing for reviews not read yet, in the inbox's order.
pub(super) fn listed(summaries: Vec<ReviewSummary>) -> Vec<Arc<Entry>> {
    sorted(summaries.into_iter().map(Entry::listed))
}

impl Local {
    /// Reads the stored reviews, a slice per task: once the first frame is on
    /// screen when it is drawn from the index; at once without one (the first
    /// page waits for them, saying so while their code is fetched). While the
    /// reading code cannot be fetched, says so and tries again.
    pub(super) fn read_stored_reviews(self, store: LocalStore, indexed: bool) {
        leptos::task::spawn_local(async move {
            if indexed {
                browser::after_paint().await;
                self.parse_index(&store);
            }
            loop {
                match read_slices(&store).await {
                    Ok(outcome) => {
                        self.notices.withdraw(CANNOT_READ);
                        return self.finish_reading(outcome);
                    }
                    Err(LoadFailed) => {
                        self.notices.tell_once(CANNOT_READ.to_owned());
                        browser::pause(RETRY).await;
                    }
                }
            }
        });
    }

    /// Lists every review of the inbox index in place of its head's page.
    /// Without a usable index, the head stands until the reviews are read.
    fn parse_index(&self, store: &LocalStore) {
        if !self.reviews.has_head() {
            return;
        }
        if let Some(all) = store.index_text().and_then(|i| listed_entries(&i)) {
            self.reviews.index_parsed(all);
        }
    }

    /// Shows what was read, and says what was set aside.
    fn finish_reading(&self, outcome: LoadOutcome) {
        self.reviews.read(outcome.reviews);
        self.notices.set_aside(&outcome.set_aside);
        browser::mark("countersign:reviews-read");
    }

    /// Keeps the inbox index in step with the entries (local storage only),
    /// written a moment after each change is shown, and only when it differs
    /// from what storage holds.
    pub(super) fn keep_index(self, store: LocalStore) {
        let reviews = self.reviews;
        Effect::new(move |_| {
            reviews.track();
            let store = store.clone();
            set_timeout(
                move || {
                    let current = match reviews.unindexed() {
                        Some(current) => current,
                        // Once read, an index whose drawing no longer holds is
                        // written again with it (one writer keeps them in step).
                        None if !reviews.still_reading()
                            && browser::build().is_some()
                            && !drawing_holds(&store) =>
                        {
                            reviews.held()
                        }
                        None => return,
                    };
                    let summaries = current.iter().map(|e| e.summary().clone()).collect();
                    let head = head_of(in_memory(&current, &Ask::first_pending()));
                    leptos::task::spawn_local(async move {
                        // When the writing code cannot be fetched, the index is
                        // written at the next change, or found stale at the next start.
                        if write_index(store, summaries, head).await.is_ok() {
                            reviews.indexed_as(current);
                        }
                    });
                },
                std::time::Duration::ZERO,
            );
        });
    }
}

impl Local {
    /// Follows this browser's other tabs on the same desk: a review one of
    /// them stores or removes (the `storage` event) is shown here as well, so
    /// a decision made in one tab never waits in another as pending.
    pub(super) fn follow_other_tabs(self, store: LocalStore) {
        let on_storage = Closure::<dyn Fn(StorageEvent)>::new(move |event: StorageEvent| {
            let Some(key) = event.key() else {
                return;
            };
            let Some(id) = store.review_at(&key) else {
                return;
            };
            if event.new_value().is_none() {
                return self.reviews.remove(id);
            }
            let store = store.clone();
            leptos::task::spawn_local(async move {
                // Storage holds the other tab's value by now: read it as at start.
                let Ok(outcome) = read_stored(store, vec![key]).await else {
                    return;
                };
                self.reviews
                    .put(outcome.reviews.into_iter().map(|r| Arc::new(Entry::new(r))));
                self.notices.set_aside(&outcome.set_aside);
            });
        });
        if let Some(window) = web_sys::window() {
            let _ = window
                .add_event_listener_with_callback("storage", on_storage.as_ref().unchecked_ref());
        }
        on_storage.forget();
    }
}

/// Reads every stored review, a slice per task.
async fn read_slices(store: &LocalStore) -> Result<LoadOutcome, LoadFailed> {
    let mut outcome = LoadOutcome::default();
    for (i, keys) in store.review_keys().chunks(SLICE).enumerate() {
        if i > 0 {
            browser::next_task().await;
        }
        let slice = read_stored(store.clone(), keys.to_vec()).await?;
        outcome.reviews.extend(slice.reviews);
        outcome.set_aside.extend(slice.set_aside);
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::desk::reviews::same_summaries;
    use wasm_bindgen_test::*;

    #[wasm_bindgen_test]
    fn an_index_lists_its_entries_oldest_first() {
        let reviews = countersign_domain::demo::reviews(crate::browser::now()).unwrap();
        let mut summaries: Vec<ReviewSummary> = reviews.iter().map(ReviewSummary::of).collect();
        summaries.reverse();
        let index = serde_json::to_string(&summaries).unwrap();
        let listed = listed_entries(&index).unwrap();
        assert_eq!(listed.len(), reviews.len());
        assert!(listed.iter().all(|e| e.review().is_none()));
        assert!(listed
            .windows(2)
            .all(|w| w[0].requested_at() <= w[1].requested_at()));
        let read: Vec<Arc<Entry>> = reviews
            .into_iter()
            .map(|r| Arc::new(Entry::new(r)))
            .collect();
        let mut sorted = read.clone();
        crate::desk::entry::sort(&mut sorted);
        assert!(same_summaries(&listed, &sorted));
        assert!(!same_summaries(&listed, &sorted[1..]));
    }

    #[wasm_bindgen_test]
    fn what_is_not_an_index_lists_nothing() {
        assert!(listed_entries("{ not json").is_none());
        assert!(listed_entries(r#"[{"id":"x"}]"#).is_none());
        assert_eq!(listed_entries("[]").map(|e| e.len()), Some(0));
    }
}
