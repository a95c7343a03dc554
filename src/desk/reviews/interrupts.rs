//! LangGraph's pending interrupts in the store: listed again every few
//! seconds, their threads' states, and the history decided here kept.

use super::Reviews;
use crate::desk::entry::Entry;
use countersign_domain::langgraph::ThreadStatus;
use countersign_domain::model::ConfirmStatus;
use countersign_domain::{MplpId, Review};
use leptos::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

impl Reviews {
    /// LangGraph: the status of each pending interrupt's thread that is not
    /// simply waiting.
    pub(in crate::desk) fn set_thread_states(&self, states: HashMap<MplpId, ThreadStatus>) {
        if self.thread_states.with_untracked(|s| *s != states) {
            self.thread_states.set(states);
        }
    }

    /// LangGraph: the pending reviews are the interrupts listed now (`listed`);
    /// decided ones (the history) stay, and win over a listing that still
    /// shows an interrupt this browser resumed a moment ago. Nothing changes
    /// when nothing is new (the open review page keeps what was typed).
    pub(in crate::desk) fn show_pending(&self, listed: Vec<Review>) {
        let unchanged = self.with_entries(|entries| {
            let pending = entries
                .iter()
                .filter(|e| e.status() == ConfirmStatus::Pending);
            pending.clone().count() == listed.len()
                && pending.zip(&listed).all(|(e, r)| e.review() == Some(r))
        });
        if unchanged {
            return;
        }
        self.entries.update(|entries| {
            let mut kept: HashMap<MplpId, Arc<Entry>> = HashMap::new();
            entries.retain(|e| {
                if e.status() == ConfirmStatus::Pending {
                    kept.insert(e.id(), e.clone());
                    false
                } else {
                    true
                }
            });
            for review in listed {
                let id = review.confirm.confirm_id;
                if entries.iter().any(|e| e.id() == id) {
                    continue; // decided here: the history wins
                }
                match kept.remove(&id) {
                    Some(entry) if entry.review() == Some(&review) => entries.push(entry),
                    _ => entries.push(Arc::new(Entry::new(review))),
                }
            }
            crate::desk::entry::sort(entries);
        });
    }
}
