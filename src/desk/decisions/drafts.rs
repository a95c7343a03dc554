//! What the reviewer typed in a decision form and has not saved yet, kept per
//! review for as long as the tab lives: a form drawn again (the review loaded
//! again from the server, a live update) shows it unchanged. A handful at a
//! time, so a list.

use super::Decisions;
use countersign_domain::MplpId;
use leptos::prelude::*;

/// The typed fields of one decision form.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Draft {
    /// The role typed, if the reviewer changed it from their default.
    pub role: Option<String>,
    /// The reason typed so far.
    pub reason: String,
}

impl Decisions {
    /// The draft of a review's decision (empty when nothing was typed).
    pub fn draft(&self, id: MplpId) -> Draft {
        self.drafts
            .with_value(|d| d.iter().find(|(of, _)| *of == id).map(|(_, d)| d.clone()))
            .unwrap_or_default()
    }

    /// Changes the draft of a review's decision.
    pub fn edit_draft(&self, id: MplpId, edit: impl FnOnce(&mut Draft)) {
        self.drafts.update_value(|drafts| {
            let index = match drafts.iter().position(|(of, _)| *of == id) {
                Some(index) => index,
                None => {
                    drafts.push((id, Draft::default()));
                    drafts.len() - 1
                }
            };
            edit(&mut drafts[index].1);
        });
    }

    /// Forgets the draft once its decision is saved.
    pub fn drop_draft(&self, id: MplpId) {
        self.drafts.update_value(|d| d.retain(|(of, _)| *of != id));
    }
}
