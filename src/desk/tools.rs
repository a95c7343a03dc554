//! The desk's tool-call duties besides decisions: redeeming a token, closing
//! expired requests and applying standing scope grants. In local storage the
//! browser does what the server does otherwise, with the same domain code.

use super::{Desk, Entry};
use crate::browser;
use countersign_domain::toolcall::{approve_by_grant, expire_if_due, grants, redeem, Redemption};
use countersign_domain::{MplpId, Review};
use leptos::prelude::*;
use std::sync::Arc;

impl Desk {
    /// Redeems the token of a tool-call review for the call about to run, with
    /// the domain's checks, in local storage (on a server only the agent that
    /// asked may redeem, with its agent key). Returns the failed check; nothing
    /// changes then.
    pub fn redeem(&self, id: MplpId, presented: &Redemption) -> Result<(), String> {
        if self.remote() {
            return Err("on a server, only the agent that asked redeems its token".into());
        }
        let current = self
            .entry(&id.to_string())
            .ok_or_else(|| "this review is no longer here".to_owned())?;
        let next = redeem(
            &current.review,
            presented,
            browser::now(),
            &mut browser::new_id,
        )
        .map_err(|e| format!("{} ({})", e, e.code()))?;
        self.persist(&next).map_err(|e| e.to_string())?;
        self.replace(next);
        Ok(())
    }

    /// Closes pending tool calls past their expiry as denied by default
    /// (local storage only: a server closes its own). Returns how many.
    pub fn close_expired(&self) -> usize {
        if self.remote() {
            return 0;
        }
        let now = browser::now();
        let due: Vec<Review> = self.entries.with_untracked(|entries| {
            entries
                .iter()
                .filter_map(|e| expire_if_due(&e.review, now, &mut browser::new_id))
                .collect()
        });
        let count = due.len();
        for review in due {
            if self.persist(&review).is_ok() {
                self.replace(review);
            }
        }
        count
    }

    /// Approves newly added pending calls that a reviewer's standing scope
    /// grant covers (local storage; a server does this when the agent asks).
    pub(super) fn apply_grants(&self, reviews: Vec<Review>) -> Vec<Review> {
        let now = browser::now();
        let standing = self.entries.with_untracked(|entries| {
            grants(entries.iter().map(|e| &e.review))
                .into_iter()
                .cloned()
                .collect::<Vec<_>>()
        });
        reviews
            .into_iter()
            .map(|review| {
                standing
                    .iter()
                    .find_map(|g| approve_by_grant(&review, g, now, &mut browser::new_id))
                    .and_then(Result::ok)
                    .unwrap_or(review)
            })
            .collect()
    }

    /// Shows a new version of a review that is already listed.
    fn replace(&self, review: Review) {
        let entry = Arc::new(Entry::new(review));
        self.entries.update(|entries| {
            if let Some(slot) = entries.iter_mut().find(|e| e.id() == entry.id()) {
                *slot = entry;
            }
        });
    }
}
