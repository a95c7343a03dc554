//! The reviews a Countersign server gave when they were opened: the few
//! opened last are held, kept newer than a late answer, and those the server
//! could not give are listed with why.

use super::{Reviews, OPENED_KEPT};
use crate::backend::HttpError;
use crate::desk::entry::Entry;
use countersign_domain::{MplpId, Review};
use leptos::prelude::*;
use std::sync::Arc;

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

impl Reviews {
    /// Replaces the held copy of a review with `review` unless the held one
    /// has seen more changes (a live change may overtake an answer).
    pub(in crate::desk) fn keep_newer(&self, review: Review) {
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

    /// Holds a review a server gave when it was opened (the few opened last
    /// are kept).
    pub(in crate::desk) fn hold_opened(&self, review: Review) -> Arc<Entry> {
        let entry = Arc::new(Entry::new(review));
        let id = entry.id();
        self.entries.update(|entries| {
            entries.retain(|e| e.id() != id);
            if entries.len() >= OPENED_KEPT {
                entries.remove(0);
            }
            entries.push(entry.clone());
        });
        self.unfound.update(|u| u.retain(|(known, _)| *known != id));
        entry
    }

    /// Says why a server could not give a review when it was opened.
    pub(in crate::desk) fn not_found(&self, id: MplpId, why: Unfound) {
        self.unfound.update(|u| {
            u.retain(|(known, _)| *known != id);
            u.push((id, why));
        });
    }
}
