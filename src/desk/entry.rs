//! One review as the desk holds it: what the inbox lists of it (its summary)
//! and, once read from storage, the review itself.

use crate::browser;
use countersign_domain::model::ConfirmStatus;
use countersign_domain::wire::{CallKey, ReviewSummary};
use countersign_domain::{MplpId, Review, Timestamp};
use std::sync::{Arc, OnceLock};

/// A review on the desk: listed from the inbox index until it is read, then
/// with the review (which every check and decision uses).
#[derive(Debug)]
pub struct Entry {
    content: Content,
    /// How many validation problems it has, counted the first time a view asks
    /// (the inbox shows 50 rows, so loading 1,000 reviews validates 50).
    problems: OnceLock<usize>,
    /// Lowercased text the search box matches against, made at the first search.
    haystack: OnceLock<String>,
}

#[derive(Debug)]
enum Content {
    /// Read from storage; the summary is made when first asked for.
    Read(Box<Review>, OnceLock<ReviewSummary>),
    /// Known only from the inbox index.
    Listed(ReviewSummary),
}

impl Entry {
    /// Wraps a review (its summary, validation and search text wait until asked for).
    pub fn new(review: Review) -> Self {
        Entry::with(Content::Read(Box::new(review), OnceLock::new()))
    }

    /// A review known only from the inbox index, not read yet.
    pub fn listed(summary: ReviewSummary) -> Self {
        Entry::with(Content::Listed(summary))
    }

    fn with(content: Content) -> Self {
        Entry {
            content,
            problems: OnceLock::new(),
            haystack: OnceLock::new(),
        }
    }

    /// What the inbox lists of it.
    pub fn summary(&self) -> &ReviewSummary {
        match &self.content {
            Content::Read(review, summary) => summary.get_or_init(|| ReviewSummary::of(review)),
            Content::Listed(summary) => summary,
        }
    }

    /// The review, once read from storage (`None` while the inbox index
    /// stands in for it, for a moment after the app starts).
    pub fn review(&self) -> Option<&Review> {
        match &self.content {
            Content::Read(review, _) => Some(review),
            Content::Listed(_) => None,
        }
    }

    /// The lowercased text the search box matches against: titles, reason,
    /// the tool call, the requester and the id.
    pub fn haystack(&self) -> &str {
        self.haystack.get_or_init(|| {
            let Some(review) = self.review() else {
                let summary = self.summary();
                return browser::lowercase(
                    &[summary.title.as_str(), &summary.by, &summary.id.to_string()].join(" "),
                );
            };
            browser::lowercase(
                &[
                    review.plan().map(|p| p.title.as_str()).unwrap_or_default(),
                    review
                        .plan()
                        .map(|p| p.objective.as_str())
                        .unwrap_or_default(),
                    review.confirm.reason.as_deref().unwrap_or_default(),
                    review
                        .tool_call()
                        .map(|c| c.request.tool_call_canonical.as_str())
                        .unwrap_or_default(),
                    review.confirm.requested_by_role.as_str(),
                    &review.confirm.confirm_id.to_string(),
                ]
                .join(" "),
            )
        })
    }

    /// How many validation problems the review has (0 = valid); `None` until
    /// it is read.
    pub fn problems(&self) -> Option<usize> {
        let review = self.review()?;
        Some(*self.problems.get_or_init(|| review.validate().len()))
    }

    /// What is asked, in a few words.
    pub fn title(&self) -> &str {
        &self.summary().title
    }

    /// The confirm's id.
    pub fn id(&self) -> MplpId {
        match self.review() {
            Some(review) => review.confirm.confirm_id,
            None => self.summary().id,
        }
    }

    /// The confirm's status.
    pub fn status(&self) -> ConfirmStatus {
        match self.review() {
            Some(review) => review.confirm.status,
            None => self.summary().status,
        }
    }

    /// The role that asked.
    pub fn requested_by(&self) -> &str {
        match self.review() {
            Some(review) => &review.confirm.requested_by_role,
            None => &self.summary().by,
        }
    }

    /// A tool call's exact name and session.
    pub fn call(&self) -> Option<CallKey> {
        match self.review() {
            Some(review) => ReviewSummary::call_of(review),
            None => self.summary().call.clone(),
        }
    }

    /// When it was asked.
    pub fn requested_at(&self) -> &Timestamp {
        match self.review() {
            Some(review) => &review.confirm.requested_at,
            None => &self.summary().at,
        }
    }
}

/// Entries are immutable and replaced whole when their review changes, so two
/// entries are the same when they are the same object (cheap for `Memo`).
impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

/// The inbox's entries for `reviews`, oldest request first.
pub(super) fn sorted_entries(reviews: Vec<Review>) -> Vec<Arc<Entry>> {
    sorted(reviews.into_iter().map(Entry::new))
}

/// `entries`, shared, in the inbox's order.
pub(super) fn sorted(entries: impl IntoIterator<Item = Entry>) -> Vec<Arc<Entry>> {
    let mut entries: Vec<Arc<Entry>> = entries.into_iter().map(Arc::new).collect();
    sort(&mut entries);
    entries
}

/// Puts `new` entries in place of those with their ids (or adds them), then
/// sorts.
pub(super) fn put(entries: &mut Vec<Arc<Entry>>, new: impl IntoIterator<Item = Arc<Entry>>) {
    for entry in new {
        match entries.iter_mut().find(|e| e.id() == entry.id()) {
            Some(slot) => *slot = entry,
            None => entries.push(entry),
        }
    }
    sort(entries);
}

/// Oldest request first (the id breaks ties, so the order is stable).
pub(super) fn sort(entries: &mut [Arc<Entry>]) {
    entries.sort_by(|a, b| {
        a.requested_at()
            .cmp(b.requested_at())
            .then(a.id().cmp(&b.id()))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::*;

    fn demo() -> Vec<Review> {
        countersign_domain::demo::reviews(crate::browser::now()).unwrap()
    }

    #[wasm_bindgen_test]
    fn a_listed_entry_answers_from_its_summary_until_it_is_read() {
        let review = demo().remove(0);
        let read = Entry::new(review.clone());
        let listed = Entry::listed(read.summary().clone());
        assert!(listed.review().is_none());
        assert_eq!(listed.problems(), None);
        assert_eq!(
            (
                listed.id(),
                listed.status(),
                listed.title(),
                listed.requested_at()
            ),
            (read.id(), read.status(), read.title(), read.requested_at())
        );
        assert_eq!(read.review(), Some(&review));
        assert!(read.problems().is_some());
    }
}
