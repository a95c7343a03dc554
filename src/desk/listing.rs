//! What the inbox shows for its query: one page of rows, the counts per
//! status, and where the pages before and after start. Reviews held in memory
//! (local storage, LangGraph's interrupts) are filtered and paged here; a
//! Countersign server answers the same question itself, a page at a time
//! (`served.rs`), so the desk never holds more than what is on screen.

use super::entry::Entry;
use crate::browser;
use countersign_domain::model::ConfirmStatus;
use countersign_domain::wire::{Order, ReviewQuery, StatusCounts};
use std::sync::Arc;

pub use countersign_domain::wire::PAGE_SIZE;

/// What the inbox asks for: a query (its `cursor`: where a server's page
/// starts) and which page that is, counted from 1.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Ask {
    /// Filters, order and (server) cursor.
    pub query: ReviewQuery,
    /// The page number, from 1.
    pub page: usize,
}

impl Ask {
    /// The inbox's default: pending reviews, what expires first, the first page.
    pub fn first_pending() -> Ask {
        Ask {
            query: ReviewQuery {
                status: Some(ConfirmStatus::Pending),
                order: Order::Expiring,
                ..ReviewQuery::default()
            },
            page: 1,
        }
    }

    /// Whether two asks list the same reviews (they may differ in page).
    pub fn same_filters(&self, other: &Ask) -> bool {
        ReviewQuery {
            cursor: None,
            ..self.query.clone()
        } == ReviewQuery {
            cursor: None,
            ..other.query.clone()
        }
    }
}

/// Where a page starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageLink {
    /// Its number, from 1.
    pub page: usize,
    /// A server's cursor (`None`: the first page, or a page in memory).
    pub cursor: Option<String>,
}

/// One page of the inbox, as shown.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Listing {
    /// The rows, in the asked order.
    pub rows: Vec<Arc<Entry>>,
    /// How many reviews have each status (all of them).
    pub counts: StatusCounts,
    /// How many rows come before this page.
    pub offset: usize,
    /// How many reviews match, when known (a server counts by status only).
    pub matching: Option<usize>,
    /// The page before, if any.
    pub previous: Option<PageLink>,
    /// The page after, if any.
    pub next: Option<PageLink>,
    /// The roles that asked, for the requester filter.
    pub requesters: Vec<String>,
    /// Whether a newer answer is on its way (a server is asked).
    pub loading: bool,
    /// Why the page could not be listed (a server refused or could not be asked).
    pub failure: Option<String>,
}

/// What the inbox index's head says of every review, while it stands in for
/// the index (until the index is parsed, right after the first frame).
#[derive(Debug, Clone, PartialEq)]
pub struct HeadFacts {
    /// How many reviews have each status.
    pub counts: StatusCounts,
    /// The roles that asked, each once, in order.
    pub requesters: Vec<String>,
}

/// The page for `ask` while only the head's page is held (`entries`): the
/// default page (pending, what expires first, the first page) is that page; any
/// other waits, empty, for the index (the desk says it is reading).
pub fn from_head(entries: &[Arc<Entry>], head: &HeadFacts, ask: &Ask) -> Listing {
    let pending = head.counts.of(ConfirmStatus::Pending) as usize;
    let framed = Listing {
        counts: head.counts,
        requesters: head.requesters.clone(),
        ..Listing::default()
    };
    if *ask != Ask::first_pending() {
        return framed;
    }
    let mut rows: Vec<Arc<Entry>> = entries
        .iter()
        .filter(|e| e.status() == ConfirmStatus::Pending)
        .cloned()
        .collect();
    in_order(&mut rows, ask.query.order);
    rows.truncate(PAGE_SIZE);
    Listing {
        rows,
        matching: Some(pending),
        next: (pending > PAGE_SIZE).then_some(PageLink {
            page: 2,
            cursor: None,
        }),
        ..framed
    }
}

/// The page of `entries` (every review, oldest request first) for `ask`.
pub fn in_memory(entries: &[Arc<Entry>], ask: &Ask) -> Listing {
    let query = &ask.query;
    let needle = browser::lowercase(query.text.trim());
    let mut counts = StatusCounts::default();
    let mut requesters: Vec<&str> = Vec::new();
    let mut found: Vec<&Arc<Entry>> = Vec::new();
    for entry in entries {
        counts.add(entry.status());
        requesters.push(entry.requested_by());
        if query.admits(entry.summary())
            && (needle.is_empty() || entry.haystack().contains(&needle))
        {
            found.push(entry);
        }
    }
    in_order(&mut found, query.order);
    requesters.sort_unstable();
    requesters.dedup();
    let pages = found.len().div_ceil(PAGE_SIZE).max(1);
    let page = ask.page.clamp(1, pages);
    let offset = (page - 1) * PAGE_SIZE;
    let link = |page| PageLink { page, cursor: None };
    Listing {
        rows: found
            .iter()
            .skip(offset)
            .take(PAGE_SIZE)
            .map(|e| Arc::clone(e))
            .collect(),
        counts,
        offset,
        matching: Some(found.len()),
        previous: (page > 1).then(|| link(page - 1)),
        next: (page < pages).then(|| link(page + 1)),
        requesters: requesters.into_iter().map(str::to_owned).collect(),
        loading: false,
        failure: None,
    }
}

/// Puts `rows`, held oldest request first, in `order` (a stable sort keeps
/// request order among equal deadlines).
fn in_order<E: AsRef<Entry>>(rows: &mut [E], order: Order) {
    match order {
        Order::Oldest => {}
        Order::Newest => rows.reverse(),
        Order::Expiring => {
            rows.sort_by(|a, b| order.compare(a.as_ref().summary(), b.as_ref().summary()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use countersign_domain::model::TargetType;
    use countersign_domain::wire::ReviewSummary;
    use wasm_bindgen_test::*;

    fn entries() -> Vec<Arc<Entry>> {
        let reviews = countersign_domain::demo::reviews(crate::browser::now()).unwrap();
        let mut entries: Vec<Arc<Entry>> = reviews
            .into_iter()
            .map(|r| Arc::new(Entry::new(r)))
            .collect();
        super::super::entry::sort(&mut entries);
        entries
    }

    fn ask(query: ReviewQuery) -> Ask {
        Ask { query, page: 1 }
    }

    #[wasm_bindgen_test]
    fn a_page_in_memory_counts_every_review_and_lists_the_matching_ones() {
        let entries = entries();
        let all = in_memory(&entries, &ask(ReviewQuery::default()));
        assert_eq!(all.counts.total() as usize, entries.len());
        assert_eq!(all.matching, Some(entries.len()));
        let plans = in_memory(
            &entries,
            &ask(ReviewQuery {
                target_type: Some(TargetType::Plan),
                ..ReviewQuery::default()
            }),
        );
        assert!(plans
            .rows
            .iter()
            .all(|e| e.summary().target_type == TargetType::Plan));
        assert_eq!(plans.counts, all.counts);
        let newest = in_memory(
            &entries,
            &ask(ReviewQuery {
                order: Order::Newest,
                ..ReviewQuery::default()
            }),
        );
        assert_eq!(newest.rows.first(), all.rows.last());
    }

    #[wasm_bindgen_test]
    fn the_default_page_in_memory_and_from_the_head_puts_what_expires_first_on_top() {
        let entries = entries();
        let first = in_memory(&entries, &Ask::first_pending());
        let order = Ask::first_pending().query.order;
        assert_eq!(order, Order::Expiring);
        let summaries: Vec<&ReviewSummary> = first.rows.iter().map(|e| e.summary()).collect();
        assert!(summaries[0].expires.is_some());
        assert!(summaries
            .windows(2)
            .all(|w| order.compare(w[0], w[1]).is_le()));
        let head = HeadFacts {
            counts: first.counts,
            requesters: first.requesters.clone(),
        };
        assert_eq!(
            from_head(&entries, &head, &Ask::first_pending()).rows,
            first.rows
        );
    }

    #[wasm_bindgen_test]
    fn a_search_in_memory_matches_any_case() {
        let entries = entries();
        let found = in_memory(
            &entries,
            &ask(ReviewQuery {
                text: "DATABASE migration".into(),
                ..ReviewQuery::default()
            }),
        );
        assert!(!found.rows.is_empty());
        assert!(found
            .rows
            .iter()
            .all(|e| e.haystack().contains("database migration")));
    }

    #[wasm_bindgen_test]
    fn a_search_in_memory_folds_accented_capitals_as_the_server_does() {
        for text in ["ÉTÉ À PARIS", "Straße ÅNGSTRÖM", "ΣΟΦΊΑ", "plain ASCII", ""] {
            assert_eq!(crate::browser::lowercase(text), text.to_lowercase());
        }
        let mut entries = entries();
        let at = entries
            .iter()
            .position(|e| e.review().and_then(|r| r.plan()).is_some())
            .unwrap();
        let mut review = entries[at].review().unwrap().clone();
        if let Some(countersign_domain::Target::Plan(plan)) = &mut review.target {
            plan.title = "Déployer l'ÉTÉ à Zürich".into();
        }
        let id = review.confirm.confirm_id;
        entries[at] = Arc::new(Entry::new(review));
        for needle in ["l'été", "ZÜRICH"] {
            let found = in_memory(
                &entries,
                &ask(ReviewQuery {
                    text: needle.into(),
                    ..ReviewQuery::default()
                }),
            );
            let ids: Vec<_> = found.rows.iter().map(|e| e.id()).collect();
            assert_eq!(ids, [id], "{needle}");
        }
    }
}
