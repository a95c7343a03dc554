//! Deciding: what the reviewer typed and has not sent (`drafts`), decisions
//! kept on this device until the server has them (the outbox), and the
//! server's approval policy the browser checks a decision against first
//! (`judging`). The desk's `decide` sends a decision; this store keeps what
//! surrounds it.

mod drafts;
mod judging;

pub use drafts::Draft;

use crate::backend::{outbox, StoreError};
use countersign_domain::MplpId;
use judging::Judging;
use leptos::prelude::*;
use std::sync::Arc;

/// The decisions store (cheap to copy; provided as context).
#[derive(Clone, Copy)]
pub struct Decisions {
    /// Decisions kept on this device until the server has them.
    outbox: RwSignal<Vec<outbox::Queued>>,
    /// What was typed per review and not sent yet.
    drafts: StoredValue<Vec<(MplpId, Draft)>>,
    /// A Countersign server's approval policy and this reviewer's key.
    judging: RwSignal<Option<Arc<Judging>>>,
}

impl Decisions {
    /// The store, with the decisions queued on this device for `server`.
    pub(super) fn load(server: Option<&str>) -> Self {
        Decisions {
            outbox: RwSignal::new(server.map(outbox::all).unwrap_or_default()),
            drafts: StoredValue::new(Vec::new()),
            judging: RwSignal::new(None),
        }
    }

    /// The queued decision of a review, if any (reactive).
    pub fn queued(&self, id: MplpId) -> Option<outbox::Queued> {
        self.outbox
            .with(|q| q.iter().find(|o| o.confirm_id == id).cloned())
    }

    /// Whether any decision waits for the server.
    pub(super) fn any_waiting(&self) -> bool {
        self.outbox.with_untracked(|q| !q.is_empty())
    }

    /// Every queued decision, oldest first.
    pub(super) fn waiting(&self) -> Vec<outbox::Queued> {
        self.outbox.get_untracked()
    }

    /// Keeps a decision on this device until the server is back (one per review).
    pub(super) fn queue(&self, queued: outbox::Queued) -> Result<(), StoreError> {
        outbox::put(&queued).map_err(StoreError::WriteFailed)?;
        self.outbox.update(|q| {
            q.retain(|o| o.confirm_id != queued.confirm_id);
            q.push(queued);
        });
        Ok(())
    }

    /// Forgets a queued decision the server answered.
    pub(super) fn delivered(&self, confirm_id: MplpId) {
        outbox::remove(confirm_id);
        self.outbox
            .update(|q| q.retain(|o| o.confirm_id != confirm_id));
    }
}
