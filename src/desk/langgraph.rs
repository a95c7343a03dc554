//! The desk on a LangGraph server: every pending interrupt of the interrupted
//! threads is a tool-call review (mapped by the domain's `langgraph` module),
//! listed again every few seconds; a decision is checked by the domain, then
//! resumes its thread, and is recorded in this browser's history only once
//! LangGraph accepted the resume.

use super::{DecisionFailure, Desk, Entry, Link};
use crate::browser;
use crate::store::{HttpError, LangGraphStore, LocalStore};
use countersign_domain::langgraph::{
    pending_interrupts, resume_run, resume_value, Answer, PendingInterrupt,
};
use countersign_domain::model::ConfirmStatus;
use countersign_domain::{MplpId, Review};
use leptos::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

/// How often the interrupted threads are listed again.
pub const POLL_SECONDS: u32 = 3;

/// A LangGraph server and what was last listed from it.
#[derive(Clone)]
pub struct Interrupts {
    store: LangGraphStore,
    /// Decided interrupts, kept in this browser.
    history: Option<LocalStore>,
    /// Where held decisions are kept across reloads.
    held_store: Option<LocalStore>,
    /// The pending interrupt behind each review, by confirm id.
    pending: HashMap<MplpId, PendingInterrupt>,
    /// Decisions on actions whose interrupt still waits for its other actions
    /// (LangGraph takes the answers of one interrupt together).
    held: HashMap<MplpId, Review>,
}

impl Interrupts {
    /// A source for this server; `local` keeps decided interrupts and the
    /// decisions held for their interrupt's other actions (read by `read_kept`).
    pub fn new(store: LangGraphStore, local: Option<&LocalStore>) -> Self {
        Interrupts {
            store,
            history: local.map(LocalStore::langgraph_history),
            held_store: local.map(LocalStore::langgraph_held),
            pending: HashMap::new(),
            held: HashMap::new(),
        }
    }

    /// Reads what this browser keeps: the held decisions, and the decided
    /// interrupts (returned, with what could not be read).
    fn read_kept(&mut self) -> (Vec<Review>, Vec<crate::store::SetAside>) {
        if let Some(store) = &self.held_store {
            let outcome = store.load();
            self.held = outcome
                .reviews
                .into_iter()
                .map(|r| (r.confirm.confirm_id, r))
                .collect();
        }
        match &self.history {
            Some(history) => {
                let outcome = history.load();
                (outcome.reviews, outcome.set_aside)
            }
            None => (Vec::new(), Vec::new()),
        }
    }

    /// Keeps only the held decisions whose action is still pending.
    fn forget_held_unless(&mut self, keep: impl Fn(&MplpId) -> bool) {
        let store = self.held_store.clone();
        self.held.retain(|id, _| {
            let kept = keep(id);
            if !kept {
                if let Some(store) = &store {
                    store.remove(id);
                }
            }
            kept
        });
    }

    /// The server's address.
    pub fn url(&self) -> &str {
        self.store.url()
    }
}

impl Desk {
    /// The LangGraph server this desk reviews, if any.
    pub fn langgraph(&self) -> Option<Interrupts> {
        self.langgraph.get_value()
    }

    /// The answers the interrupt behind a review allows (`None`: not an interrupt).
    pub fn allowed_answers(&self, id: MplpId) -> Option<Vec<Answer>> {
        self.langgraph
            .with_value(|l| Some(l.as_ref()?.pending.get(&id)?.allowed.clone()))
    }

    /// How many other actions of the same interrupt still wait, when this
    /// review's decision is held until they are decided too.
    pub fn held(&self, id: MplpId) -> Option<usize> {
        self.langgraph.with_value(|l| {
            let l = l.as_ref()?;
            l.held.get(&id)?;
            let p = l.pending.get(&id)?;
            Some(
                siblings(&l.pending, p)
                    .filter(|s| !l.held.contains_key(s.0))
                    .count(),
            )
        })
    }

    /// Lists the interrupted threads now and every few seconds after.
    pub(super) fn follow_langgraph(self) {
        let kept = self
            .langgraph
            .try_update_value(|l| l.as_mut().map(Interrupts::read_kept))
            .flatten();
        if let Some((history, set_aside)) = kept {
            self.notices
                .update(|n| n.extend(set_aside.iter().map(super::describe_set_aside)));
            self.entries.set(super::sorted_entries(history));
        }
        leptos::task::spawn_local(self.refresh_langgraph());
        // The desk lives as long as the page, so the interval is never cleared.
        let _ = set_interval_with_handle(
            move || leptos::task::spawn_local(self.refresh_langgraph()),
            std::time::Duration::from_secs(POLL_SECONDS.into()),
        );
    }

    async fn refresh_langgraph(self) {
        let Some(source) = self.langgraph.get_value() else {
            return;
        };
        match source.store.interrupted_threads().await {
            Ok(threads) => {
                let pending = threads.iter().flat_map(pending_interrupts).collect();
                self.show_interrupts(pending);
                self.set_link(Link::Polling(POLL_SECONDS));
            }
            Err(e) => self.set_link(Link::Offline(e.to_string())),
        }
    }

    /// Changes the link state only when it changes (views follow it).
    fn set_link(&self, link: Link) {
        if self.link.with_untracked(|l| *l != link) {
            self.link.set(link);
        }
    }

    /// Replaces the pending reviews with the interrupts listed now; decided
    /// ones (the history) stay, and win over a listing that still shows an
    /// interrupt this browser resumed a moment ago.
    fn show_interrupts(&self, listed: Vec<PendingInterrupt>) {
        let now = browser::now();
        let mut pending = HashMap::new();
        let mut reviews = Vec::new();
        for interrupt in listed {
            match interrupt.to_review(now) {
                Ok(review) => {
                    reviews.push(review);
                    pending.insert(reviews[reviews.len() - 1].confirm.confirm_id, interrupt);
                }
                Err(issues) => self.notices.update(|n| {
                    let text = format!(
                        "An interrupt of thread {} could not be shown: {}",
                        interrupt.thread_id,
                        issues.first().map(|i| i.to_string()).unwrap_or_default()
                    );
                    if !n.contains(&text) {
                        n.push(text);
                    }
                }),
            }
        }
        self.langgraph.update_value(|l| {
            if let Some(l) = l {
                l.forget_held_unless(|id| pending.contains_key(id));
                l.pending = pending;
            }
        });
        let unchanged = self.entries.with_untracked(|entries| {
            let listed = entries
                .iter()
                .filter(|e| e.status() == ConfirmStatus::Pending);
            listed.clone().count() == reviews.len()
                && listed.zip(&reviews).all(|(e, r)| e.review() == Some(r))
        });
        if unchanged {
            // Nothing new: the open review page keeps what the reviewer typed.
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
            for review in reviews {
                let id = review.confirm.confirm_id;
                if entries.iter().any(|e| e.id() == id) {
                    continue; // decided here: the history wins
                }
                match kept.remove(&id) {
                    Some(entry) if entry.review() == Some(&review) => entries.push(entry),
                    _ => entries.push(Arc::new(Entry::new(review))),
                }
            }
            super::sort(entries);
        });
    }

    /// Resumes the thread of a decided review (`decided`, checked by the
    /// domain already), then records it. When its interrupt holds other
    /// actions still undecided, the decision is held (`Held`) and sent with theirs.
    pub(super) async fn decide_interrupt(
        &self,
        id: MplpId,
        decided: Review,
    ) -> Result<Arc<Entry>, DecisionFailure> {
        let source = self.langgraph.get_value().ok_or(DecisionFailure::Missing)?;
        let interrupt = source.pending.get(&id).ok_or(DecisionFailure::Missing)?;
        let mut decided_here: Vec<(MplpId, Review)> = siblings(&source.pending, interrupt)
            .filter_map(|(sid, _)| Some((*sid, source.held.get(sid)?.clone())))
            .collect();
        decided_here.push((id, decided.clone()));
        let waiting = siblings(&source.pending, interrupt).count() + 1 - decided_here.len();
        if waiting > 0 {
            let kept = source
                .held_store
                .as_ref()
                .map_or(Ok(()), |store| store.save(&decided));
            kept.map_err(DecisionFailure::NotSaved)?;
            self.langgraph.update_value(|l| {
                if let Some(l) = l {
                    l.held.insert(id, decided);
                }
            });
            return Err(DecisionFailure::Held(waiting));
        }
        // Every action of the interrupt is decided: their answers, in order.
        let mut actions: Vec<(&PendingInterrupt, &Review)> = decided_here
            .iter()
            .filter_map(|(sid, review)| Some((source.pending.get(sid)?, review)))
            .collect();
        actions.sort_by_key(|(p, _)| p.index);
        let mut answers = Vec::new();
        for (p, review) in &actions {
            let outcome = review
                .tool_call()
                .and_then(|c| c.outcome.as_ref())
                .ok_or(DecisionFailure::Missing)?;
            answers.push(p.answer_for(outcome).map_err(DecisionFailure::NotAllowed)?);
        }
        let keyed = {
            let mut ids: Vec<&str> = source
                .pending
                .values()
                .filter(|p| p.thread_id == interrupt.thread_id)
                .map(|p| p.interrupt_id.as_str())
                .collect();
            ids.sort_unstable();
            ids.dedup();
            ids.len() > 1
        };
        let body = resume_run(
            source.store.assistant(),
            vec![(
                interrupt.interrupt_id.clone(),
                resume_value(&interrupt.shape, answers),
            )],
            keyed,
        );
        source
            .store
            .resume(&interrupt.thread_id, &body)
            .await
            .map_err(|e| {
                if let HttpError::Unreachable(_) = &e {
                    self.set_link(Link::Offline(e.to_string()));
                }
                DecisionFailure::Server(e)
            })?;
        // LangGraph has it: record every decided action in this browser's history.
        let mut recorded = None;
        for (sid, review) in decided_here {
            if let Some(history) = &source.history {
                if let Err(e) = history.save(&review) {
                    self.notices.update(|n| {
                        n.push(format!("LangGraph resumed the thread, but this browser could not keep the decision in its history: {e}"))
                    });
                }
            }
            let entry = Arc::new(Entry::new(review));
            self.entries.update(|entries| {
                if let Some(slot) = entries.iter_mut().find(|e| e.id() == sid) {
                    *slot = entry.clone();
                }
            });
            if sid == id {
                recorded = Some(entry);
            }
        }
        let thread = interrupt.thread_id.clone();
        let interrupt_id = interrupt.interrupt_id.clone();
        self.langgraph.update_value(|l| {
            if let Some(l) = l {
                l.pending
                    .retain(|_, p| !(p.thread_id == thread && p.interrupt_id == interrupt_id));
                let pending: Vec<MplpId> = l.pending.keys().copied().collect();
                l.forget_held_unless(|sid| pending.contains(sid));
            }
        });
        recorded.ok_or(DecisionFailure::Missing)
    }
}

/// The other actions of the same interrupt.
fn siblings<'a>(
    pending: &'a HashMap<MplpId, PendingInterrupt>,
    of: &'a PendingInterrupt,
) -> impl Iterator<Item = (&'a MplpId, &'a PendingInterrupt)> {
    pending.iter().filter(move |(_, p)| {
        p.thread_id == of.thread_id && p.interrupt_id == of.interrupt_id && p.index != of.index
    })
}
