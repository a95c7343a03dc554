//! A review's row: the columns its filters, indexes and feed read, derived
//! from the review (its JSON document is the truth every answer reads).

use super::{audit, stored_time, DbError};
use countersign_domain::toolcall::CallHash;
use countersign_domain::wire::{ChangeKind, ReceiptDecision, ReviewSummary};
use countersign_domain::Review;

/// Zero bytes stored beside a new review's row on SQLite (its `spare`
/// column), given back as its changes grow it: a decision adds about 860
/// bytes, and a row that grows on one of the table's full pages makes SQLite
/// rebalance that page with its neighbours (migration 0024).
pub(super) const ROOM: i64 = 1024;

/// The columns a change may resize, with the room they share.
const RESIZED: [&str; 5] = ["doc", "summary", "search", "status", "escalate_at"];

/// SQLite's new `spare` of a row that an `UPDATE` changes: what its resized
/// columns grew by is taken from it (and what they shrank by given to it),
/// so the row keeps its size. `new` gives the expression of a column's new
/// value, or None when the update leaves it. A row stored without room
/// keeps none.
pub(super) fn room_left(new: impl Fn(&str) -> Option<&'static str>) -> String {
    let size = |changed: bool| {
        RESIZED
            .iter()
            .map(|&column| {
                let value = if changed { new(column) } else { None };
                format!("octet_length(COALESCE({}, ''))", value.unwrap_or(column))
            })
            .collect::<Vec<_>>()
            .join(" + ")
    };
    format!(
        "CASE WHEN spare IS NULL THEN NULL ELSE zeroblob(max(0, octet_length(spare) + {} - ({}))) END",
        size(false),
        size(true)
    )
}

/// The columns list filters use, derived from the review.
pub(super) struct Columns {
    pub(super) id: String,
    pub(super) status: String,
    pub(super) target_type: String,
    pub(super) requester: String,
    pub(super) requested_at: String,
    pub(super) search: String,
    pub(super) doc: String,
    /// The hash the audit chain keeps of `doc`, made with the columns (on
    /// the request's thread, not the writer's).
    doc_sha256: CallHash,
    pub(super) summary: String,
    pub(super) expires_at: Option<String>,
    pub(super) escalate_at: Option<String>,
    pub(super) approval_id: Option<String>,
    /// The latest decision (`ReceiptDecision` as JSON), if any.
    latest_decision: Option<String>,
}

impl Columns {
    /// The audit entry of a change that leaves this row stored.
    pub(super) fn audited(&self, kind: ChangeKind, at: &str) -> audit::Entry {
        audit::Entry {
            kind: kind.as_str(),
            subject: self.id.clone(),
            subject_type: "review",
            doc_sha256: self.doc_sha256.clone(),
            at: at.to_owned(),
        }
    }

    /// The decision a change of `kind` to this row recorded, as the feed
    /// stores it: the latest one, for a decision or an expiry.
    pub(super) fn decision_of(&self, kind: ChangeKind) -> Option<&str> {
        matches!(kind, ChangeKind::Decided | ChangeKind::Expired)
            .then_some(self.latest_decision.as_deref())
            .flatten()
    }

    pub(super) fn of(review: &Review) -> Columns {
        Columns::with_doc(review, serde_json::to_string(review).unwrap_or_default())
    }

    /// The columns of a review already serialized as `doc`.
    pub(super) fn with_doc(review: &Review, doc: String) -> Columns {
        let confirm = &review.confirm;
        let request = review.tool_call().map(|c| &c.request);
        Columns {
            id: confirm.confirm_id.to_string(),
            status: confirm.status.to_string(),
            target_type: confirm.target_type.to_string(),
            requester: lookup_text(&confirm.requested_by_role),
            requested_at: stored_time(confirm.requested_at.to_utc()),
            search: search_text(review),
            doc_sha256: CallHash::of_canonical(&doc),
            doc,
            summary: serde_json::to_string(&ReviewSummary::of(review)).unwrap_or_default(),
            expires_at: request.map(|r| stored_time(r.expires_at.to_utc())),
            escalate_at: review.escalation_due().map(|at| stored_time(at.to_utc())),
            approval_id: request.map(|r| r.approval_id.to_string()),
            latest_decision: ReceiptDecision::latest(review)
                .and_then(|d| serde_json::to_string(&d).ok()),
        }
    }
}

/// What a text search looks in: the plan's title and objective, the tool
/// call's summary and arguments, the reason, the requester and the id,
/// lowercased.
pub(super) fn search_text(review: &Review) -> String {
    let confirm = &review.confirm;
    let plan = review.plan();
    let request = review.tool_call().map(|c| &c.request);
    let search = [
        plan.map(|p| p.title.as_str()).unwrap_or_default(),
        plan.map(|p| p.objective.as_str()).unwrap_or_default(),
        request
            .map(|r| r.human_summary.as_str())
            .unwrap_or_default(),
        request
            .map(|r| r.tool_call_canonical.as_str())
            .unwrap_or_default(),
        confirm.reason.as_deref().unwrap_or_default(),
        confirm.requested_by_role.as_str(),
        &confirm.confirm_id.to_string(),
    ]
    .join(" ")
    .to_lowercase();
    lookup_text(&search)
}

/// Text as stored in a lookup column (requester, search, tool name): NUL,
/// which PostgreSQL text cannot hold, becomes U+FFFD. The JSON document keeps
/// the exact text and is what every answer and every check reads; filters
/// pass their values through here too, so they still match.
pub(super) fn lookup_text(text: &str) -> String {
    text.replace('\0', "\u{fffd}")
}

pub(super) fn parse_doc(id: &str, doc: &str) -> Result<Review, DbError> {
    serde_json::from_str(doc).map_err(|e| DbError::Damaged(format!("review {id}: {e}")))
}
