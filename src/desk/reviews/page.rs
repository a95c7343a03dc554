//! The inbox page a Countersign server answered: what the inbox asks for,
//! what the server answered (rows, cursors, counts, the change feed's position)
//! and how a live change patches it in place. The asking is the desk's
//! (`served.rs`); what it answered is kept here.

use super::Reviews;
use crate::desk::entry::Entry;
use crate::desk::listing::{Ask, Listing, PageLink, PAGE_SIZE};
use countersign_domain::model::ConfirmStatus;
use countersign_domain::wire::{ChangeKind, ReviewSummary, StatusCounts, SummaryPage};
use countersign_domain::MplpId;
use leptos::prelude::*;
use std::sync::Arc;

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

/// What a change did to the page.
pub(in crate::desk) struct Patched {
    /// The page to ask for again: the change could not be placed in it.
    pub ask_again: Option<Ask>,
    /// Whether the review's opened copy is older than the change.
    pub outdated: bool,
}

impl Reviews {
    /// The listing of the page the server answered (reactive).
    pub(in crate::desk) fn served_listing(&self) -> Listing {
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

    /// Whether `ask` is the page answered last.
    pub(in crate::desk) fn answers(&self, ask: &Ask) -> bool {
        self.served_page
            .with_untracked(|p| p.answered.as_ref() == Some(ask))
    }

    /// What the inbox asks for now, if anything.
    pub(in crate::desk) fn asked(&self) -> Option<Ask> {
        self.served_page.with_untracked(|p| p.asked.clone())
    }

    /// Records that `ask` is asked for now; the number returned tells its
    /// answer from the answers to older requests.
    pub(in crate::desk) fn ask(&self, ask: Ask) -> u64 {
        let mut number = 0;
        self.served_page.update(|p| {
            p.asks += 1;
            number = p.asks;
            p.asked = Some(ask);
        });
        number
    }

    /// Whether request `number` is still the latest.
    pub(in crate::desk) fn is_latest(&self, number: u64) -> bool {
        self.served_page.with_untracked(|p| p.asks == number)
    }

    /// Shows the page the server answered for `ask`, and its counts.
    pub(in crate::desk) fn show_page(&self, ask: Ask, page: SummaryPage) {
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
    }

    /// Says why `ask` could not be listed. A page asked for again keeps its
    /// rows (the failure is said above them); another one shows none.
    pub(in crate::desk) fn page_failed(&self, ask: Ask, why: String) {
        self.served_page.update(|p| {
            if p.answered.as_ref() != Some(&ask) {
                p.rows.clear();
                p.next = None;
            }
            p.failure = Some(why);
            p.answered = Some(ask);
        });
    }

    /// The counts (and the feed's position) a request for them answered.
    pub(in crate::desk) fn counted(&self, counts: StatusCounts, position: Option<i64>) {
        self.counts.set(counts);
        self.served_page
            .update_untracked(|p| p.position = p.position.or(position));
    }

    /// The change feed's position when the first page was read, if known.
    pub(in crate::desk) fn first_position(&self) -> Option<i64> {
        self.served_page.with_untracked(|p| p.position)
    }

    /// Whether the requesters are to be listed: once, from the first page on.
    pub(in crate::desk) fn requesters_unlisted(&self) -> bool {
        self.served_page
            .try_update_untracked(|p| {
                let first = p.requesters.is_none();
                p.requesters.get_or_insert_with(Vec::new);
                first
            })
            .unwrap_or(false)
    }

    /// Every role that asked, as the server listed them (`None`: listing
    /// failed, asked again with the next page).
    pub(in crate::desk) fn requesters_listed(&self, listed: Option<Vec<String>>) {
        match listed {
            Some(listed) => self.served_page.update(|p| p.requesters = Some(listed)),
            None => self.served_page.update_untracked(|p| p.requesters = None),
        }
    }

    /// Applies a review's new row: the counts and the page shown follow it.
    pub(in crate::desk) fn patch(&self, kind: ChangeKind, summary: ReviewSummary) -> Patched {
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
        let outdated = self.entry_now(id).is_some_and(|held| {
            held.review()
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
        Patched {
            ask_again,
            outdated,
        }
    }

    /// The status the desk last saw of a review (its row, or its opened copy).
    fn known_status(&self, id: MplpId) -> Option<ConfirmStatus> {
        self.served_page
            .with_untracked(|p| p.rows.iter().find(|e| e.id() == id).map(|e| e.status()))
            .or_else(|| self.entry_now(id).map(|e| e.status()))
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
    // Where it goes among the rows in the page's order.
    let before = |row: &Arc<Entry>| query.order.compare(&summary, row.summary()).is_lt();
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
    use countersign_domain::wire::Order;
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
