//! The desk on a LangGraph server: every pending interrupt of every thread
//! that may hold one (interrupted, errored or busy) is a tool-call review
//! (mapped by the domain's `langgraph` module), listed again every few
//! seconds. A decision is checked by the domain, then resumes its thread with
//! the assistant that owns it (`decide.rs`); it is recorded in this browser's
//! history only once the run ended without error and the answered interrupt
//! is gone (`resume.rs`).

mod decide;
mod resume;

use super::{DecisionFailure, Decisions, Entry, Link, Notices, Origin, Reviews};
use crate::backend::Interrupts;
use crate::browser;
use crate::split::on_demand;
use countersign_domain::langgraph::{
    pending_interrupts, Agent, Answer, PendingInterrupt, ThreadStatus,
};
use countersign_domain::{DecisionInput, MplpId, Review};
use leptos::prelude::*;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// How often the waiting threads are listed again.
pub const POLL_SECONDS: u32 = 3;
/// How long a decision waits for a busy thread's run to end before it is sent.
const BUSY_WAIT_MS: u32 = 30_000;

/// What the review page shows of the interrupt behind a review.
#[derive(Debug, Clone, PartialEq)]
pub struct InterruptFacts {
    /// The answers it takes.
    pub allowed: Vec<Answer>,
    /// The assistant that owns its thread (`None`: it cannot be resumed from here).
    pub agent: Option<Agent>,
    /// What its thread is doing.
    pub status: ThreadStatus,
    /// Why the thread's last run failed, if it did.
    pub error: Option<String>,
}

on_demand! {
    /// Resumes the thread of a decided review. Its code, with the check of
    /// answers against a response schema (the `jsonschema` crate and its
    /// regular expressions: most of the chunk), is a chunk of its own, so
    /// following a Countersign server never fetches it; it is fetched ahead
    /// once LangGraph's threads are listed.
    in decisions fn interrupt_decision / preload_decisions (graph: Graph, id: MplpId, decided: Review)
        -> Pin<Box<dyn Future<Output = Result<Arc<Entry>, DecisionFailure>>>>
    {
        Box::pin(async move { graph.decide_interrupt(id, decided).await })
    }
}

on_demand! {
    /// Decides similar calls of one thread (a group) with one input, each
    /// with its own decision, and resumes the thread once with every answer:
    /// `None` when they are not all interrupts of one action each in one
    /// thread (then each is decided on its own). Returns how many were decided.
    in decisions fn group_decision(graph: Graph, ids: Vec<MplpId>, input: DecisionInput)
        -> Pin<Box<dyn Future<Output = Option<Result<usize, DecisionFailure>>>>>
    {
        Box::pin(async move { graph.decide_together(&ids, &input).await })
    }
}

/// A desk on a LangGraph server (cheap to copy).
#[derive(Clone, Copy)]
pub(super) struct Graph {
    reviews: Reviews,
    origin: Origin,
    decisions: Decisions,
    notices: Notices,
    /// What is known of the server's interrupts.
    interrupts: StoredValue<Interrupts>,
}

impl Graph {
    pub(super) fn new(
        (reviews, origin, decisions, notices): (Reviews, Origin, Decisions, Notices),
        interrupts: Interrupts,
    ) -> Self {
        Graph {
            reviews,
            origin,
            decisions,
            notices,
            interrupts: StoredValue::new(interrupts),
        }
    }

    /// What the settings say about where reviews are kept.
    pub(super) fn describe(&self) -> String {
        self.interrupts.with_value(|source| {
            let graphs = match source.graphs() {
                g if g.is_empty() => "every graph on it".to_owned(),
                g => format!("its graphs {}", g.join(", ")),
            };
            format!(
                "The LangGraph server at {}, reviewing {graphs}: every pending interrupt of their threads is a review here. A decision resumes its thread with the assistant that owns it, and is kept in this browser's history once LangGraph has run it.",
                source.url()
            )
        })
    }

    /// What the review page shows of the interrupt behind a review (`None`:
    /// not a pending interrupt).
    pub(super) fn interrupt_facts(&self, id: MplpId) -> Option<InterruptFacts> {
        self.interrupts.with_value(|l| {
            let p = l.pending.get(&id)?;
            Some(InterruptFacts {
                allowed: p.allowed.clone(),
                agent: p.agent.clone(),
                status: p.thread_status,
                error: p.thread_error.clone(),
            })
        })
    }

    /// How many other actions of the same interrupt still wait, when this
    /// review's decision is held until they are decided too.
    pub(super) fn held(&self, id: MplpId) -> Option<usize> {
        self.interrupts.with_value(|l| {
            l.held.get(&id)?;
            let p = l.pending.get(&id)?;
            Some(
                siblings(&l.pending, p)
                    .filter(|s| !l.held.contains_key(s.0))
                    .count(),
            )
        })
    }

    /// Lists the waiting threads now and every few seconds after.
    pub(super) fn follow(self) {
        if let Some((history, set_aside)) = self.interrupts.try_update_value(Interrupts::read_kept)
        {
            self.notices.set_aside(&set_aside);
            self.reviews.show(history);
        }
        leptos::task::spawn_local(self.refresh_langgraph());
        // The desk lives as long as the page, so the interval is never cleared.
        let _ = set_interval_with_handle(
            move || leptos::task::spawn_local(self.refresh_langgraph()),
            std::time::Duration::from_secs(POLL_SECONDS.into()),
        );
    }

    async fn refresh_langgraph(self) {
        let mut source = self.interrupts.get_value();
        match source.store.waiting_threads(&mut source.states).await {
            Ok(threads) => {
                if !matches!(self.origin.link_now(), Link::Polling(_)) {
                    // First listing: the decision code is fetched while the reviewer reads.
                    leptos::task::spawn_local(async {
                        let _ = preload_decisions().await;
                    });
                }
                let pending = threads.iter().flat_map(pending_interrupts).collect();
                self.interrupts.update_value(|l| l.states = source.states);
                self.show_interrupts(pending);
                self.origin.set_link(Link::Polling(POLL_SECONDS));
            }
            Err(e) => self.origin.set_link(Link::Offline(e.to_string())),
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
                    pending.insert(review.confirm.confirm_id, interrupt);
                    reviews.push(review);
                }
                Err(issues) => self.notices.tell_once(format!(
                    "An interrupt of thread {} could not be shown: {}",
                    interrupt.thread_id,
                    issues.first().map(|i| i.to_string()).unwrap_or_default()
                )),
            }
        }
        let states: HashMap<MplpId, ThreadStatus> = pending
            .iter()
            .filter(|(_, p)| p.thread_status != ThreadStatus::Interrupted)
            .map(|(id, p)| (*id, p.thread_status))
            .collect();
        self.reviews.set_thread_states(states);
        self.interrupts.update_value(|l| {
            l.forget_held_unless(|id| pending.contains_key(id));
            l.pending = pending;
        });
        self.reviews.show_pending(reviews);
    }
}

/// The answer a decided review gives its interrupt, checked.
fn answer_of(p: &PendingInterrupt, review: &Review) -> Result<serde_json::Value, DecisionFailure> {
    let outcome = review
        .tool_call()
        .and_then(|c| c.outcome.as_ref())
        .ok_or(DecisionFailure::Missing)?;
    p.answer_for(outcome).map_err(DecisionFailure::NotAllowed)
}

/// The other actions of the same interrupt.
fn siblings<'a>(
    pending: &'a HashMap<MplpId, PendingInterrupt>,
    of: &'a PendingInterrupt,
) -> impl Iterator<Item = (&'a MplpId, &'a PendingInterrupt)> {
    pending
        .iter()
        .filter(move |(_, p)| p.same_interrupt(of) && p.index != of.index)
}
