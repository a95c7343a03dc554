//! A local desk's tool-call duties besides decisions: redeeming a token,
//! closing expired requests and applying standing scope grants, with the
//! domain code a server runs for its own.

use super::Local;
use crate::browser;
use crate::desk::Entry;
use crate::split::on_demand;
use countersign_domain::policy::ExpiryDecision;
use countersign_domain::toolcall::{
    approve_by_grant, expire_if_due, grants, is_due, redeem, Redemption,
};
use countersign_domain::{MplpId, Review};

on_demand! {
    /// Closes every pending tool call past its expiry, with the domain's rules.
    in review fn close_due(local: Local) -> () {
        let now = browser::now();
        let due: Vec<Review> = local.reviews.with_entries(|entries| {
            entries
                .iter()
                .filter_map(|e| expire_if_due(e.review()?, ExpiryDecision::Cancelled, now, &mut browser::new_id))
                .collect()
        });
        for review in due {
            if local.reviews.persist(&review).is_ok() {
                local.reviews.replace(review);
            }
        }
    }
}

impl Local {
    /// Redeems the token of a tool-call review for the call about to run, with
    /// the domain's checks. Returns the failed check; nothing changes then.
    pub(in crate::desk) fn redeem(&self, id: MplpId, presented: &Redemption) -> Result<(), String> {
        let current = self.reviews.entry(id);
        let review = current
            .as_deref()
            .and_then(Entry::review)
            .ok_or_else(|| "this review is no longer here".to_owned())?;
        let next = redeem(review, presented, browser::now(), &mut browser::new_id)
            .map_err(|e| format!("{} ({})", e, e.code()))?;
        self.reviews.persist(&next).map_err(|e| e.to_string())?;
        self.reviews.replace(next);
        Ok(())
    }

    /// Closes pending tool calls past their expiry as denied by default.
    /// Finding one is cheap and done here; the closing code loads on demand,
    /// the first time one is due. Waits while the stored reviews are still
    /// being read (checked again soon).
    pub(in crate::desk) fn close_expired(&self) {
        if self.reviews.still_reading() {
            return;
        }
        let now = browser::now();
        let any_due = self.reviews.with_entries(|entries| {
            entries
                .iter()
                .any(|e| e.review().is_some_and(|r| is_due(r, now)))
        });
        if any_due {
            let local = *self;
            // A failed load is tried again at the next check.
            leptos::task::spawn_local(async move {
                let _ = close_due(local).await;
            });
        }
    }

    /// Approves newly added pending calls that a reviewer's standing scope
    /// grant covers (a server does this when the agent asks).
    pub(super) fn apply_grants(&self, reviews: Vec<Review>) -> Vec<Review> {
        let now = browser::now();
        let standing = self.reviews.with_entries(|entries| {
            grants(entries.iter().filter_map(|e| e.review()))
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
}
