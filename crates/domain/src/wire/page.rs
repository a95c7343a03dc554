//! The inbox's question to a backend (which reviews, in which order, from
//! where) and the page it answers with, counts included.

use super::ReviewSummary;
use crate::model::{ConfirmStatus, TargetType};
use serde::{Deserialize, Serialize};

/// How many reviews have each status (the inbox's tabs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct StatusCounts {
    /// Waiting for a decision.
    pub pending: u64,
    /// Approved.
    pub approved: u64,
    /// Rejected.
    pub rejected: u64,
    /// Cancelled (or expired).
    pub cancelled: u64,
}

impl StatusCounts {
    /// How many have `status`.
    pub fn of(&self, status: ConfirmStatus) -> u64 {
        match status {
            ConfirmStatus::Pending => self.pending,
            ConfirmStatus::Approved => self.approved,
            ConfirmStatus::Rejected => self.rejected,
            ConfirmStatus::Cancelled => self.cancelled,
        }
    }

    /// Every review, whatever its status.
    pub fn total(&self) -> u64 {
        self.pending + self.approved + self.rejected + self.cancelled
    }

    /// Sets how many have `status`.
    pub fn set(&mut self, status: ConfirmStatus, n: u64) {
        *self.slot(status) = n;
    }

    /// Counts one more review with `status`.
    pub fn add(&mut self, status: ConfirmStatus) {
        *self.slot(status) += 1;
    }

    /// Counts one review fewer with `status` (never below zero).
    pub fn remove(&mut self, status: ConfirmStatus) {
        let slot = self.slot(status);
        *slot = slot.saturating_sub(1);
    }

    fn slot(&mut self, status: ConfirmStatus) -> &mut u64 {
        match status {
            ConfirmStatus::Pending => &mut self.pending,
            ConfirmStatus::Approved => &mut self.approved,
            ConfirmStatus::Rejected => &mut self.rejected,
            ConfirmStatus::Cancelled => &mut self.cancelled,
        }
    }
}

/// Rows per page: the inbox's, and the list endpoint's when no `limit` is asked.
pub const PAGE_SIZE: usize = 50;

/// A page of the review list (`GET /api/v1/reviews?view=summary`): what its
/// rows show, where the next page starts, and the counts per status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummaryPage {
    /// The rows, in the order asked for.
    pub items: Vec<ReviewSummary>,
    /// Where the next page starts (`None` on the last page).
    #[serde(default)]
    pub next_cursor: Option<String>,
    /// How many reviews have each status (every review, not only the matching ones).
    #[serde(default)]
    pub counts: StatusCounts,
    /// The change feed's position when the page was read: the event stream
    /// opened `after` it misses no change since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<i64>,
}

/// The local inbox's default page (pending, what expires first, the first
/// page) and what frames it, as the app stores it beside its inbox index: the
/// app's start and its first paint draw the inbox from it without reading
/// every stored review.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InboxHead {
    /// How many reviews have each status.
    pub counts: StatusCounts,
    /// The roles that asked, each once, in order.
    pub requesters: Vec<String>,
    /// The first page of pending reviews, what expires first.
    pub pending: Vec<ReviewSummary>,
}

/// The roles that asked for reviews (`GET /api/v1/requesters`), for the
/// inbox's requester filter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Requesters {
    /// Each role once, in order.
    pub items: Vec<String>,
}

/// The order of a list: oldest request first (the API's default), newest
/// first, or what expires first (the inbox's default: a call that lapses in
/// five minutes comes before a plan waiting for a month).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Order {
    /// Oldest request first.
    #[default]
    Oldest,
    /// Newest request first.
    Newest,
    /// The soonest deadline first, then what has none, each oldest request first.
    Expiring,
}

impl Order {
    /// Every order, as the inbox offers them.
    pub const ALL: [Order; 3] = [Order::Expiring, Order::Oldest, Order::Newest];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Order::Oldest => "oldest",
            Order::Newest => "newest",
            Order::Expiring => "expiring",
        }
    }

    /// The order with this wire name.
    pub fn from_wire(text: &str) -> Option<Order> {
        Order::ALL.into_iter().find(|o| o.as_str() == text)
    }

    /// What a reviewer reads in the inbox's order control.
    pub fn label(self) -> &'static str {
        match self {
            Order::Oldest => "Oldest first",
            Order::Newest => "Newest first",
            Order::Expiring => "Expires first",
        }
    }

    /// Which of two rows comes first in this order (ties are broken by id,
    /// so every backend pages through the same sequence).
    pub fn compare(self, a: &ReviewSummary, b: &ReviewSummary) -> std::cmp::Ordering {
        let by_request = || a.at.cmp(&b.at).then(a.id.cmp(&b.id));
        match self {
            Order::Oldest => by_request(),
            Order::Newest => by_request().reverse(),
            Order::Expiring => match (&a.expires, &b.expires) {
                (Some(x), Some(y)) => x.cmp(y).then_with(by_request),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => by_request(),
            },
        }
    }
}

/// Which reviews a list asks for, in which order and from where.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReviewQuery {
    /// `None`: every status.
    pub status: Option<ConfirmStatus>,
    /// Only this target type.
    pub target_type: Option<TargetType>,
    /// Only what this role asked.
    pub requester: Option<String>,
    /// Text the review contains (its title, reason, call, requester or id); empty: any.
    pub text: String,
    /// The order.
    pub order: Order,
    /// Where the page starts: a `next_cursor` the backend gave.
    pub cursor: Option<String>,
    /// How many rows at most.
    pub limit: u32,
}

/// One parameter of a review query that is not understood: its name and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryProblem {
    /// The parameter.
    pub name: &'static str,
    /// What it must be.
    pub message: String,
}

impl ReviewQuery {
    /// The parameters this query is written with (`status=all` for every
    /// status), for `GET /api/v1/reviews?view=summary&…`.
    pub fn pairs(&self) -> Vec<(&'static str, String)> {
        let mut pairs = vec![(
            "status",
            self.status.map_or("all", |s| s.as_str()).to_owned(),
        )];
        if let Some(t) = self.target_type {
            pairs.push(("target_type", t.as_str().to_owned()));
        }
        if let Some(r) = &self.requester {
            pairs.push(("requester", r.clone()));
        }
        if !self.text.trim().is_empty() {
            pairs.push(("q", self.text.trim().to_owned()));
        }
        if self.order != Order::Oldest {
            pairs.push(("order", self.order.as_str().to_owned()));
        }
        if let Some(c) = &self.cursor {
            pairs.push(("cursor", c.clone()));
        }
        pairs.push(("limit", self.limit.to_string()));
        pairs
    }

    /// Reads a query from its parameters (each decoded): a missing one takes
    /// its default (every status, oldest request first, 50 rows); every one that is
    /// not understood is named.
    pub fn from_pairs<'a>(
        get: impl Fn(&str) -> Option<&'a str>,
    ) -> Result<ReviewQuery, Vec<QueryProblem>> {
        let mut problems = Vec::new();
        let mut problem = |name, message: &str| {
            problems.push(QueryProblem {
                name,
                message: message.to_owned(),
            })
        };
        let status = match get("status") {
            None | Some("all") => None,
            Some(s) => s.parse::<ConfirmStatus>().ok().or_else(|| {
                problem(
                    "status",
                    "one of: pending, approved, rejected, cancelled, all",
                );
                None
            }),
        };
        let target_type = get("target_type").and_then(|t| {
            let parsed = t.parse::<TargetType>().ok();
            if parsed.is_none() {
                problem("target_type", &format!("`{t}` is not an MPLP target type"));
            }
            parsed
        });
        let order = get("order").map_or(Order::Oldest, |o| {
            Order::from_wire(o).unwrap_or_else(|| {
                problem("order", "one of: oldest, newest, expiring");
                Order::Oldest
            })
        });
        let limit = match get("limit").map(str::parse::<u32>) {
            None => PAGE_SIZE as u32,
            Some(Ok(n)) if (1..=500).contains(&n) => n,
            Some(_) => {
                problem("limit", "a whole number from 1 to 500");
                PAGE_SIZE as u32
            }
        };
        let query = ReviewQuery {
            status,
            target_type,
            requester: get("requester").map(str::to_owned),
            text: get("q").unwrap_or_default().to_owned(),
            order,
            cursor: get("cursor").map(str::to_owned),
            limit,
        };
        if problems.is_empty() {
            Ok(query)
        } else {
            Err(problems)
        }
    }

    /// Whether a review with this summary passes the query's filters other
    /// than its text (a backend matches text against more of a review than
    /// its summary holds).
    pub fn admits(&self, summary: &ReviewSummary) -> bool {
        self.status.is_none_or(|s| summary.status == s)
            && self.target_type.is_none_or(|t| summary.target_type == t)
            && self
                .requester
                .as_ref()
                .is_none_or(|r| summary.by == r.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn read(pairs: &[(&str, &str)]) -> Result<ReviewQuery, Vec<QueryProblem>> {
        let map: HashMap<&str, &str> = pairs.iter().copied().collect();
        ReviewQuery::from_pairs(|name| map.get(name).copied())
    }

    #[test]
    fn a_query_reads_back_what_it_writes() {
        let query = ReviewQuery {
            status: Some(ConfirmStatus::Rejected),
            target_type: Some(TargetType::Plan),
            requester: Some("dba admin".into()),
            text: "rollback".into(),
            order: Order::Expiring,
            cursor: Some("2026-01-01T00:00:00.000000Z~x".into()),
            limit: 20,
        };
        let written = query.pairs();
        let pairs: Vec<(&str, &str)> = written.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert_eq!(read(&pairs), Ok(query));
    }

    #[test]
    fn missing_parameters_take_their_defaults() {
        let query = read(&[]).unwrap();
        assert_eq!(query.status, None);
        assert_eq!(query.order, Order::Oldest);
        assert_eq!(query.limit, 50);
    }

    #[test]
    fn every_parameter_not_understood_is_named() {
        let problems = read(&[
            ("status", "done"),
            ("target_type", "robot"),
            ("order", "random"),
            ("limit", "0"),
        ])
        .unwrap_err();
        let names: Vec<&str> = problems.iter().map(|p| p.name).collect();
        assert_eq!(names, ["status", "target_type", "order", "limit"]);
        assert!(problems[1].message.contains("`robot`"));
    }

    #[test]
    fn expires_first_puts_the_soonest_deadline_on_top_and_none_last() {
        let now = chrono::DateTime::parse_from_rfc3339("2026-11-25T04:00:00Z")
            .unwrap()
            .to_utc();
        let mut rows: Vec<ReviewSummary> = crate::demo::reviews(now)
            .unwrap()
            .iter()
            .map(ReviewSummary::of)
            .collect();
        rows.sort_by(|a, b| Order::Expiring.compare(a, b));
        let deadlines: Vec<_> = rows.iter().map_while(|r| r.expires.clone()).collect();
        assert!(!deadlines.is_empty() && deadlines.len() < rows.len());
        assert!(deadlines.windows(2).all(|w| w[0] <= w[1]), "{deadlines:?}");
        let rest = &rows[deadlines.len()..];
        assert!(rest.iter().all(|r| r.expires.is_none()));
        assert!(rest.windows(2).all(|w| w[0].at <= w[1].at));
        rows.sort_by(|a, b| Order::Newest.compare(a, b));
        assert!(rows.windows(2).all(|w| w[0].at >= w[1].at));
    }

    #[test]
    fn counts_never_go_below_zero() {
        let mut counts = StatusCounts::default();
        counts.add(ConfirmStatus::Pending);
        counts.remove(ConfirmStatus::Pending);
        counts.remove(ConfirmStatus::Pending);
        assert_eq!(counts.of(ConfirmStatus::Pending), 0);
        counts.add(ConfirmStatus::Approved);
        assert_eq!(counts.total(), 1);
    }
}
