//! The inbox on a Countersign server: the server answers each query with one
//! page of summaries and the counts, so what the desk holds does not grow
//! with the number of reviews. A live change patches the page shown and the
//! counts in place; only a change the desk cannot place (a text search)
//! asks for the page again.

use super::listing::{Ask, Listing, PageLink, PAGE_SIZE};
use super::{Desk, Entry, Link};
use crate::backend::{HttpError, HttpStore};
use countersign_domain::model::ConfirmStatus;
use countersign_domain::wire::{
    Change, ChangeKind, Order, ReviewQuery, ReviewSummary, SummaryPage,
};
use countersign_domain::{MplpId, Review};
use leptos::prelude::*;
use std::sync::Arc;

/// How many opened reviews a desk on a server keeps (the rest is fetched again when opened).
const OPENED_KEPT: usize = 20;

/// Why a review could not be opened.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Unfound {
    /// The server has no review with this id.
    #[error("the server has no review with this id")]
    Missing,
    /// The server could not be asked, or refused.
    #[error("{0}")]
    Failed(HttpError),
}

/// The page the server last answered, and what is asked now.
#[derive(Debug, Default)]
pub(super) struct ServedPage {
    /// What the inbox asks for now.
    asked: Option<Ask>,
    /// What `rows` answer.
    answered: Option<Ask>,
    /// The rows, as the server listed them (patched by live changes since).
    rows: Vec<Arc<Entry>>,
    /// Where the page after starts.
    next: Option<String>,
    /// Why the last ask failed, if it did.
    failure: Option<String>,
    /// The change feed's position when the first page was read (the live
    /// stream opens after it).
    position: Option<i64>,
    /// Every role that asked (the requester filter's choices), once listed.
    requesters: Option<Vec<String>>,
    /// The cursor of each page seen with these filters (page 1's is `None`),
    /// so "Previous" goes back to where it was.
    trail: Vec<Option<String>>,
    /// Counts each request, so only the answer to the latest one is shown.
    asks: u64,
}

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
    /// Whether a Countersign server answers the inbox's queries.
    pub(super) fn served(&self) -> bool {
        self.backend.with_value(|b| b.server().is_some())
    }

    /// The listing of the page the server answered (reactive).
    pub(super) fn served_listing(&self) -> Listing {
        let counts = self.counts.get();
        self.served_page.with(|p| {
            let Some(ask) = p.answered.as_ref().or(p.asked.as_ref()) else {
                return Listing {
                    counts,
                    loading: true,
                    ..Listing::default()
                };
            };
            let query = &ask.query;
            let plain = query.target_type.is_none()
                && query.requester.is_none()
                && query.text.trim().is_empty();
            let matching = plain.then(|| match query.status {
                Some(status) => counts.of(status),
                None => counts.total(),
            });
            let mut requesters: Vec<String> = p.requesters.clone().unwrap_or_default();
            requesters.extend(p.rows.iter().map(|e| e.requested_by().to_owned()));
            requesters.extend(query.requester.clone());
            requesters.sort_unstable();
            requesters.dedup();
            let page = ask.page.max(1);
            let previous = (page > 1).then(|| match p.trail.get(page - 2) {
                Some(cursor) => PageLink {
                    page: page - 1,
                    cursor: cursor.clone(),
                },
                // Opened at a later page: "Previous" starts again from the first.
                None => PageLink {
                    page: 1,
                    cursor: None,
                },
            });
            Listing {
                rows: p.rows.clone(),
                counts,
                offset: (page - 1) * PAGE_SIZE,
                matching: matching.map(|n| n as usize),
                previous,
                next: p.next.clone().map(|cursor| PageLink {
                    page: page + 1,
                    cursor: Some(cursor),
                }),
                requesters,
                loading: p.asked != p.answered,
                failure: p.failure.clone(),
            }
        })
    }

    /// Asks the server for the page of `ask` (nothing when it is the page shown).
    pub(super) fn fetch_page(&self, ask: Ask) {
        let fresh = self
            .served_page
            .with_untracked(|p| p.answered.as_ref() != Some(&ask));
        if fresh {
            self.ask_again(ask);
        }
    }

    /// Asks the server for the page of `ask`, shown when it is still what the
    /// inbox asks for once it arrives.
    fn ask_again(&self, ask: Ask) {
        let Some(server) = self.server() else {
            return;
        };
        let desk = *self;
        let mut number = 0;
        self.served_page.update(|p| {
            p.asks += 1;
            number = p.asks;
            p.asked = Some(ask.clone());
        });
        leptos::task::spawn_local(async move {
            let answer = ask_page(server, ask.clone()).await;
            if desk.served_page.with_untracked(|p| p.asks != number) {
                return;
            }
            match answer {
                Ok(page) => desk.show_page(ask, page),
                Err(e) => desk.page_failed(ask, e),
            }
        });
    }

    fn show_page(&self, ask: Ask, page: SummaryPage) {
        self.counts.set(page.counts);
        self.served_page.update(|p| {
            let same = p.answered.as_ref().is_some_and(|a| a.same_filters(&ask));
            if !same {
                p.trail = vec![None];
            }
            let index = ask.page.max(1) - 1;
            p.trail.truncate(index);
            p.trail.resize(index, None);
            p.trail.push(ask.query.cursor.clone());
            p.rows = page
                .items
                .into_iter()
                .map(|s| Arc::new(Entry::listed(s)))
                .collect();
            p.next = page.next_cursor;
            p.failure = None;
            p.position = p.position.or(page.position);
            p.answered = Some(ask);
        });
        if matches!(self.link.get_untracked(), Link::Offline(_)) {
            self.link.set(super::live::settled_link());
        }
        self.start_following();
        self.list_requesters();
    }

    /// Lists every requester once (after the first page: the first rows do
    /// not wait for it).
    fn list_requesters(&self) {
        let Some(server) = self.server() else {
            return;
        };
        let listed = self.served_page.try_update_untracked(|p| {
            let first = p.requesters.is_none();
            p.requesters.get_or_insert_with(Vec::new);
            first
        });
        if listed != Some(true) {
            return;
        }
        let desk = *self;
        leptos::task::spawn_local(async move {
            match server.requesters().await {
                Ok(listed) => desk
                    .served_page
                    .update(|p| p.requesters = Some(listed.items)),
                // Asked again with the next page.
                Err(_) => desk.served_page.update_untracked(|p| p.requesters = None),
            }
        });
    }

    /// The change feed's position when the first page was read, if known.
    pub(super) fn first_position(&self) -> Option<i64> {
        self.served_page.with_untracked(|p| p.position)
    }

    /// Says why the page could not be listed. A page asked for again keeps its
    /// rows (the failure is said above them); another one shows none.
    fn page_failed(&self, ask: Ask, error: HttpError) {
        if matches!(error, HttpError::Unreachable(_))
            && self.link.get_untracked() == Link::Connecting
        {
            self.link.set(Link::Offline(error.to_string()));
        }
        self.served_page.update(|p| {
            if p.answered.as_ref() != Some(&ask) {
                p.rows.clear();
                p.next = None;
            }
            p.failure = Some(error.to_string());
            p.answered = Some(ask);
        });
        self.start_following();
    }

    /// Asks for the page shown again (after the live stream dropped, or on
    /// the fallback poll) and the counts with it.
    pub(super) fn refresh_page(&self) {
        match self.served_page.with_untracked(|p| p.asked.clone()) {
            Some(ask) => self.ask_again(ask),
            None => self.count(),
        }
    }

    /// Asks for the counts alone (the header's badge) unless a page is asked
    /// for, which brings them.
    pub(super) fn count(&self) {
        let (Some(server), false) = (
            self.server(),
            self.served_page.with_untracked(|p| p.asked.is_some()),
        ) else {
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
                desk.counts.set(page.counts);
                desk.served_page
                    .update_untracked(|p| p.position = p.position.or(page.position));
            }
            desk.start_following();
        });
    }

    /// Applies a change this desk made (or read whole): the review opened,
    /// the row shown and the counts follow it.
    pub(super) fn apply_change(&self, kind: ChangeKind, review: Review) {
        let summary = ReviewSummary::of(&review);
        self.keep_newer(review);
        self.apply_summary(kind, summary);
    }

    /// A change the server announced: applied, and a new pending request
    /// told to a reviewer who opted into notifications.
    pub(super) fn announced(&self, change: Change) {
        let new =
            change.kind == ChangeKind::Created && change.summary.status == ConfirmStatus::Pending;
        if new && self.settings.with_untracked(|s| s.notify) {
            crate::notify::tell_new(&change.summary);
        }
        self.apply_summary(change.kind, change.summary);
    }

    /// Applies a change the server announced, given as the review's new row:
    /// the row shown and the counts follow it, and a review held opened that
    /// the row says changed is fetched again.
    pub(super) fn apply_summary(&self, kind: ChangeKind, summary: ReviewSummary) {
        let before = self.known_status(summary.id).or(match kind {
            ChangeKind::Created => None,
            ChangeKind::Decided | ChangeKind::Expired | ChangeKind::Escalated => {
                Some(ConfirmStatus::Pending)
            }
            ChangeKind::Resubmitted => Some(ConfirmStatus::Rejected),
            ChangeKind::Redeemed => Some(summary.status),
        });
        if before != Some(summary.status) {
            self.counts.update(|c| {
                if let Some(status) = before {
                    c.remove(status);
                }
                c.add(summary.status);
            });
        }
        let id = summary.id;
        let outdated = self.entries.with_untracked(|entries| {
            entries
                .iter()
                .find(|e| e.id() == id)
                .and_then(|e| e.review())
                .is_some_and(|held| ReviewSummary::of(held) != summary)
        });
        let mut ask_again = None;
        self.served_page.update(|p| {
            if let Some(known) = p.requesters.as_mut() {
                if !known.contains(&summary.by) {
                    known.push(summary.by.clone());
                    known.sort_unstable();
                }
            }
            if !patch(p, summary) {
                ask_again = p.answered.clone();
            }
        });
        if let Some(ask) = ask_again {
            self.ask_again(ask);
        }
        if outdated {
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
        let held = self
            .entries
            .with_untracked(|e| e.iter().any(|e| e.id() == id && e.review().is_some()));
        if held || !self.served() {
            return;
        }
        let desk = *self;
        leptos::task::spawn_local(async move {
            if let Err(why) = desk.fetch_review(id).await {
                desk.unfound.update(|u| {
                    u.retain(|(known, _)| *known != id);
                    u.push((id, why));
                });
            }
            desk.start_following();
        });
    }

    /// Why a review could not be opened, if it could not.
    pub fn unfound(&self, id: MplpId) -> Option<Unfound> {
        self.unfound.with(|u| {
            u.iter()
                .find(|(known, _)| *known == id)
                .map(|(_, why)| why.clone())
        })
    }

    /// The review from the server, held from now on (the few opened last are kept).
    pub(super) async fn fetch_review(&self, id: MplpId) -> Result<Arc<Entry>, Unfound> {
        let server = self.server().ok_or(Unfound::Missing)?;
        let review = server.review(&id.to_string()).await.map_err(|e| match e {
            HttpError::Refused { status: 404, .. } => Unfound::Missing,
            other => Unfound::Failed(other),
        })?;
        let entry = Arc::new(Entry::new(review));
        self.entries.update(|entries| {
            entries.retain(|e| e.id() != id);
            if entries.len() >= OPENED_KEPT {
                entries.remove(0);
            }
            entries.push(entry.clone());
        });
        self.unfound.update(|u| u.retain(|(known, _)| *known != id));
        Ok(entry)
    }

    /// Replaces the held copy of a review with `review` unless the held one
    /// has seen more changes (a live change may overtake an answer).
    pub(super) fn keep_newer(&self, review: Review) {
        let changes = |r: &Review| {
            r.confirm.decisions().len() + r.confirm.events.as_ref().map_or(0, Vec::len)
        };
        self.entries.update(|entries| {
            let id = review.confirm.confirm_id;
            if let Some(slot) = entries.iter_mut().find(|e| e.id() == id) {
                let newer = slot
                    .review()
                    .is_none_or(|held| changes(held) <= changes(&review) && *held != review);
                if newer {
                    *slot = Arc::new(Entry::new(review));
                }
            }
        });
    }

    /// The status the desk last saw of a review (its row, or its opened copy).
    fn known_status(&self, id: MplpId) -> Option<ConfirmStatus> {
        self.served_page
            .with_untracked(|p| p.rows.iter().find(|e| e.id() == id).map(|e| e.status()))
            .or_else(|| {
                self.entries
                    .with_untracked(|e| e.iter().find(|e| e.id() == id).map(|e| e.status()))
            })
    }
}

/// Patches the page with a review's new summary: its row is replaced, or
/// removed when it no longer matches; a new review that matches is put in its
/// place when the page covers that place. Returns false when the desk cannot
/// tell (a text search: the server matches more than a summary holds).
fn patch(page: &mut ServedPage, summary: ReviewSummary) -> bool {
    let Some(ask) = &page.answered else {
        return true;
    };
    let query = &ask.query;
    let admitted = query.admits(&summary);
    if let Some(i) = page.rows.iter().position(|e| e.id() == summary.id) {
        if admitted {
            page.rows[i] = Arc::new(Entry::listed(summary));
        } else {
            page.rows.remove(i);
        }
        return true;
    }
    if !admitted {
        return true;
    }
    if !query.text.trim().is_empty() {
        return false;
    }
    let key = |s: &ReviewSummary| (s.at.clone(), s.id);
    let new = key(&summary);
    // Where it goes among the rows in the page's order.
    let before = |row: &Arc<Entry>| {
        let row = key(row.summary());
        match query.order {
            Order::Oldest => new < row,
            Order::Newest => new > row,
        }
    };
    let at = page.rows.iter().position(before);
    let first_page = ask.page <= 1;
    let last_page = page.next.is_none();
    match at {
        // Before every row: only page 1 starts there.
        Some(0) if !first_page => {}
        Some(i) => page.rows.insert(i, Arc::new(Entry::listed(summary))),
        // After every row: only the last page ends there.
        None if last_page => page.rows.push(Arc::new(Entry::listed(summary))),
        None => {}
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use countersign_domain::Timestamp;
    use wasm_bindgen_test::*;

    /// A pending summary asked at `minute` past the hour, its id ending in `n`.
    fn summary(minute: u32, n: u32) -> ReviewSummary {
        let review = countersign_domain::demo::reviews(crate::browser::now())
            .unwrap()
            .remove(0);
        ReviewSummary {
            id: MplpId::parse(&format!("00000000-0000-4000-8000-{n:012}")).unwrap(),
            status: ConfirmStatus::Pending,
            at: Timestamp::parse(&format!("2026-11-25T10:{minute:02}:00Z")).unwrap(),
            ..ReviewSummary::of(&review)
        }
    }

    fn page(order: Order, page: usize, minutes: &[u32], next: bool) -> ServedPage {
        let ask = Ask {
            query: countersign_domain::wire::ReviewQuery {
                status: Some(ConfirmStatus::Pending),
                order,
                ..Default::default()
            },
            page,
        };
        ServedPage {
            asked: Some(ask.clone()),
            answered: Some(ask),
            rows: minutes
                .iter()
                .map(|m| Arc::new(Entry::listed(summary(*m, *m))))
                .collect(),
            next: next.then(|| "cursor".to_owned()),
            ..ServedPage::default()
        }
    }

    fn minutes(page: &ServedPage) -> Vec<u32> {
        page.rows
            .iter()
            .map(|e| e.summary().at.as_str()[14..16].parse().unwrap())
            .collect()
    }

    #[wasm_bindgen_test]
    fn a_decided_review_leaves_the_pending_page_and_a_changed_one_is_replaced() {
        let mut shown = page(Order::Oldest, 1, &[1, 2, 3], false);
        let decided = ReviewSummary {
            status: ConfirmStatus::Approved,
            ..summary(2, 2)
        };
        assert!(patch(&mut shown, decided));
        assert_eq!(minutes(&shown), [1, 3]);
        let retitled = ReviewSummary {
            title: "Renamed".into(),
            ..summary(3, 3)
        };
        assert!(patch(&mut shown, retitled));
        assert_eq!(shown.rows[1].title(), "Renamed");
    }

    #[wasm_bindgen_test]
    fn a_new_review_goes_to_its_place_when_the_page_covers_it() {
        // Oldest first: the newest request ends the last page only.
        let mut last = page(Order::Oldest, 2, &[1, 3], false);
        assert!(patch(&mut last, summary(2, 2)));
        assert!(patch(&mut last, summary(9, 9)));
        assert_eq!(minutes(&last), [1, 2, 3, 9]);
        let mut middle = page(Order::Oldest, 1, &[1, 3], true);
        assert!(patch(&mut middle, summary(9, 9)));
        assert_eq!(minutes(&middle), [1, 3]);
        // Newest first: it starts page 1 only.
        let mut first = page(Order::Newest, 1, &[3, 1], true);
        assert!(patch(&mut first, summary(9, 9)));
        assert_eq!(minutes(&first), [9, 3, 1]);
        let mut second = page(Order::Newest, 2, &[3, 1], false);
        assert!(patch(&mut second, summary(9, 9)));
        assert_eq!(minutes(&second), [3, 1]);
    }

    #[wasm_bindgen_test]
    fn a_new_review_under_a_text_search_asks_for_the_page_again() {
        let mut shown = page(Order::Oldest, 1, &[1], false);
        if let Some(ask) = shown.answered.as_mut() {
            ask.query.text = "rollback".into();
        }
        assert!(!patch(&mut shown, summary(9, 9)));
        assert_eq!(minutes(&shown), [1]);
    }
}
