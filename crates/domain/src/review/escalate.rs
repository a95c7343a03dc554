//! Escalation: a pending review nobody has decided within its policy rule's
//! `escalate_after` is flagged once per round, with a `confirm.escalated`
//! event, so the inbox marks it and the server tells whoever listens.

use super::{event, Review};
use crate::model::ConfirmStatus;
use crate::{IdSource, Timestamp};
use chrono::{DateTime, Utc};
use serde_json::json;

/// The event type that marks an escalated review.
pub const ESCALATED: &str = "confirm.escalated";

/// The review flagged as escalated, if it is pending, not escalated yet in
/// this round, and its escalation time has come. `None` when nothing is due.
pub fn escalate_if_due(
    review: &Review,
    now: DateTime<Utc>,
    ids: &mut impl IdSource,
) -> Option<Review> {
    let due = review.escalation_due()?;
    if due.to_utc() > now {
        return None;
    }
    let confirm = &review.confirm;
    let waited = (now - confirm.requested_at.to_utc()).num_seconds().max(0);
    let escalated = event(
        ids.next_id(),
        ESCALATED.to_owned(),
        "confirm",
        &Timestamp::from_utc(now),
        confirm.trace.as_ref().map(|t| t.trace_id),
        json!({
            "confirm_id": confirm.confirm_id,
            "due_at": due,
            "waited_seconds": waited,
        }),
    );
    let mut next = review.clone();
    next.escalate_at = None;
    next.confirm
        .events
        .get_or_insert_with(Vec::new)
        .push(escalated);
    Some(next)
}

impl Review {
    /// Whether it was escalated since it was last (re)submitted.
    pub fn escalated(&self) -> bool {
        let events = self.confirm.events.as_deref().unwrap_or_default();
        events
            .iter()
            .rev()
            .take_while(|e| e.event_type.as_str() != "confirm.resubmitted")
            .any(|e| e.event_type.as_str() == ESCALATED)
    }

    /// When it is to be escalated: pending, not escalated yet, with a time set.
    pub fn escalation_due(&self) -> Option<&Timestamp> {
        let waiting = self.confirm.status == ConfirmStatus::Pending && !self.escalated();
        self.escalate_at.as_ref().filter(|_| waiting)
    }
}
