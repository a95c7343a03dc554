//! The desk on a LangGraph server: every pending interrupt of every thread
//! that may hold one (interrupted, errored or busy) is a tool-call review
//! (mapped by the domain's `langgraph` module), listed again every few
//! seconds. A decision is checked by the domain, then resumes its thread with
//! the assistant that owns it; it is recorded in this browser's history only
//! once the run ended without error and the answered interrupt is gone.

use super::{DecisionFailure, Desk, Entry, Link};
use crate::backend::{HttpError, Interrupts, LangGraphStore};
use crate::browser;
use crate::split::on_demand;
use countersign_domain::langgraph::{
    pending_interrupts, resume_run, resume_value, run_failure, Agent, Answer, AnswerRefused,
    PendingInterrupt, ThreadStatus,
};
use countersign_domain::model::ConfirmStatus;
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
    in decisions fn interrupt_decision / preload_decisions (desk: Desk, id: MplpId, decided: Review)
        -> Pin<Box<dyn Future<Output = Result<Arc<Entry>, DecisionFailure>>>>
    {
        Box::pin(async move { desk.decide_interrupt(id, decided).await })
    }
}

on_demand! {
    /// Decides similar calls of one thread (a group) with one input, each
    /// with its own decision, and resumes the thread once with every answer:
    /// `None` when they are not all interrupts of one action each in one
    /// thread (then each is decided on its own). Returns how many were decided.
    in decisions fn group_decision(desk: Desk, ids: Vec<MplpId>, input: DecisionInput)
        -> Pin<Box<dyn Future<Output = Option<Result<usize, DecisionFailure>>>>>
    {
        Box::pin(async move { desk.decide_together(&ids, &input).await })
    }
}

impl Desk {
    /// The LangGraph server this desk reviews, if any.
    pub fn langgraph(&self) -> Option<Interrupts> {
        self.backend.with_value(|b| b.interrupts().cloned())
    }

    /// What the review page shows of the interrupt behind a review (`None`:
    /// not a pending interrupt).
    pub fn interrupt_facts(&self, id: MplpId) -> Option<InterruptFacts> {
        self.backend.with_value(|b| {
            let p = b.interrupts()?.pending.get(&id)?;
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
    pub fn held(&self, id: MplpId) -> Option<usize> {
        self.backend.with_value(|b| {
            let l = b.interrupts()?;
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
    pub(super) fn follow_langgraph(self) {
        let kept = self
            .backend
            .try_update_value(|b| b.interrupts_mut().map(Interrupts::read_kept))
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
        let Some(mut source) = self.langgraph() else {
            return;
        };
        match source.store.waiting_threads(&mut source.states).await {
            Ok(threads) => {
                if self.link.with_untracked(|l| !matches!(l, Link::Polling(_))) {
                    // First listing: the decision code is fetched while the reviewer reads.
                    leptos::task::spawn_local(async {
                        let _ = preload_decisions().await;
                    });
                }
                let pending = threads.iter().flat_map(pending_interrupts).collect();
                self.backend.update_value(|b| {
                    if let Some(l) = b.interrupts_mut() {
                        l.states = source.states;
                    }
                });
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
                    pending.insert(review.confirm.confirm_id, interrupt);
                    reviews.push(review);
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
        let states: HashMap<MplpId, ThreadStatus> = pending
            .iter()
            .filter(|(_, p)| p.thread_status != ThreadStatus::Interrupted)
            .map(|(id, p)| (*id, p.thread_status))
            .collect();
        if self.thread_states.with_untracked(|s| *s != states) {
            self.thread_states.set(states);
        }
        self.backend.update_value(|b| {
            if let Some(l) = b.interrupts_mut() {
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
    async fn decide_interrupt(
        &self,
        id: MplpId,
        decided: Review,
    ) -> Result<Arc<Entry>, DecisionFailure> {
        let source = self.langgraph().ok_or(DecisionFailure::Missing)?;
        let interrupt = source.pending.get(&id).ok_or(DecisionFailure::Missing)?;
        let mut decided_here: Vec<(MplpId, Review)> = siblings(&source.pending, interrupt)
            .filter_map(|(sid, _)| Some((*sid, source.held.get(sid)?.clone())))
            .collect();
        decided_here.push((id, decided.clone()));
        let waiting = siblings(&source.pending, interrupt).count() + 1 - decided_here.len();
        // Every answer is checked before anything is held or sent.
        let this_answer = answer_of(interrupt, &decided)?;
        if waiting > 0 {
            let kept = source
                .held_store
                .as_ref()
                .map_or(Ok(()), |store| store.save(&decided));
            kept.map_err(DecisionFailure::NotSaved)?;
            self.backend.update_value(|b| {
                if let Some(l) = b.interrupts_mut() {
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
            answers.push(if p.index == interrupt.index {
                this_answer.clone()
            } else {
                answer_of(p, review)?
            });
        }
        let agent = interrupt
            .agent
            .as_ref()
            .ok_or(DecisionFailure::NotAllowed(AnswerRefused::NoAgent))?;
        let body = resume_run(
            agent,
            [(
                interrupt.interrupt_id.clone(),
                resume_value(&interrupt.shape, answers),
            )],
        );
        self.resume_and_confirm(&source.store, &[interrupt], &body)
            .await?;
        // LangGraph took it: record every decided action in this browser's history.
        let recorded = self.record_taken(&source, decided_here);
        recorded
            .into_iter()
            .find(|e| e.id() == id)
            .ok_or(DecisionFailure::Missing)
    }

    /// The group's decisions (see [`group_decision`]): each checked by the
    /// domain, then one run resumes the thread with every answer, keyed by
    /// interrupt id; all are recorded once LangGraph confirmed it, none before.
    async fn decide_together(
        &self,
        ids: &[MplpId],
        input: &DecisionInput,
    ) -> Option<Result<usize, DecisionFailure>> {
        let source = self.langgraph()?;
        let interrupts: Vec<&PendingInterrupt> = ids
            .iter()
            .map(|id| source.pending.get(id))
            .collect::<Option<_>>()?;
        let first = *interrupts.first()?;
        let alone = |p: &&PendingInterrupt| {
            p.thread_id == first.thread_id && siblings(&source.pending, p).next().is_none()
        };
        if !interrupts.iter().all(alone) {
            return None;
        }
        Some(self.resume_together(&source, ids, &interrupts, input).await)
    }

    async fn resume_together(
        &self,
        source: &Interrupts,
        ids: &[MplpId],
        interrupts: &[&PendingInterrupt],
        input: &DecisionInput,
    ) -> Result<usize, DecisionFailure> {
        let mut decided = Vec::new();
        let mut answers = Vec::new();
        for (id, interrupt) in ids.iter().zip(interrupts) {
            let review = self
                .entries
                .with_untracked(|e| e.iter().find(|e| e.id() == *id).cloned())
                .and_then(|e| e.review().cloned())
                .ok_or(DecisionFailure::Missing)?;
            let next = self
                .judge(&review, input, &mut browser::new_id)
                .map_err(DecisionFailure::Refused)?;
            let answer = answer_of(interrupt, &next)?;
            answers.push((
                interrupt.interrupt_id.clone(),
                resume_value(&interrupt.shape, vec![answer]),
            ));
            decided.push((*id, next));
        }
        let agent = interrupts
            .first()
            .and_then(|p| p.agent.as_ref())
            .ok_or(DecisionFailure::NotAllowed(AnswerRefused::NoAgent))?;
        let body = resume_run(agent, answers);
        self.resume_and_confirm(&source.store, interrupts, &body)
            .await?;
        Ok(self.record_taken(source, decided).len())
    }

    /// Records decisions LangGraph took in this browser's history and on the
    /// desk, forgets their interrupts, and lists the threads again.
    fn record_taken(&self, source: &Interrupts, decided: Vec<(MplpId, Review)>) -> Vec<Arc<Entry>> {
        let mut recorded = Vec::new();
        let mut answered = Vec::new();
        for (sid, review) in decided {
            if let Some(history) = &source.history {
                if let Err(e) = history.save(&review) {
                    self.notify(format!("LangGraph took your decision, but this browser could not keep it in its history: {e}"));
                }
            }
            if let Some(p) = source.pending.get(&sid) {
                answered.push((p.thread_id.clone(), p.interrupt_id.clone()));
            }
            let entry = Arc::new(Entry::new(review));
            self.entries.update(|entries| {
                if let Some(slot) = entries.iter_mut().find(|e| e.id() == sid) {
                    *slot = entry.clone();
                }
            });
            recorded.push(entry);
        }
        self.backend.update_value(|b| {
            if let Some(l) = b.interrupts_mut() {
                l.pending.retain(|_, p| {
                    !answered
                        .iter()
                        .any(|(t, i)| p.thread_id == *t && p.interrupt_id == *i)
                });
                let pending: Vec<MplpId> = l.pending.keys().copied().collect();
                l.forget_held_unless(|sid| pending.contains(sid));
            }
        });
        leptos::task::spawn_local(self.refresh_langgraph());
        recorded
    }

    /// Sends the resume of `interrupts` (all of one thread) and follows it:
    /// waits while another run holds the thread, checks each interrupt still
    /// waits, starts the run, waits for it to end, and checks it ended without
    /// error and every answered interrupt is gone. An unreachable server is
    /// shown as such.
    async fn resume_and_confirm(
        &self,
        store: &LangGraphStore,
        interrupts: &[&PendingInterrupt],
        body: &serde_json::Value,
    ) -> Result<(), DecisionFailure> {
        self.follow_resume(store, interrupts, body)
            .await
            .inspect_err(|e| {
                if let DecisionFailure::Server(HttpError::Unreachable(_)) = e {
                    self.set_link(Link::Offline(e.to_string()));
                }
            })
    }

    async fn follow_resume(
        &self,
        store: &LangGraphStore,
        interrupts: &[&PendingInterrupt],
        body: &serde_json::Value,
    ) -> Result<(), DecisionFailure> {
        let Some(interrupt) = interrupts.first() else {
            return Err(DecisionFailure::Missing);
        };
        let thread = interrupt.thread_id.as_str();
        let mut waited = 0;
        while store
            .thread(thread)
            .await
            .map_err(DecisionFailure::Server)?["status"]
            == "busy"
        {
            if waited >= BUSY_WAIT_MS {
                return Err(DecisionFailure::RunFailed(
                    "the thread is still running another answer; nothing was sent, try again in a moment".into(),
                ));
            }
            browser::pause(std::time::Duration::from_millis(500)).await;
            waited += 500;
        }
        let state = store.state(thread).await.map_err(DecisionFailure::Server)?;
        if !interrupts.iter().all(|i| pending_in(&state, i)) {
            return Err(DecisionFailure::Gone);
        }
        let run = store
            .start_run(thread, body)
            .await
            .map_err(DecisionFailure::Server)?;
        // From here the answer is sent: a failure to learn the outcome must not
        // say "nothing was sent".
        let unconfirmed = |e: HttpError| {
            DecisionFailure::Unconfirmed(match e {
                HttpError::Unreachable(base) => format!("{base} could not be reached"),
                other => other.to_string(),
            })
        };
        let ended = store.join(thread, &run).await.map_err(unconfirmed)?;
        if let Some(failure) = run_failure(&ended) {
            return Err(DecisionFailure::RunFailed(failure));
        }
        let state = store.state(thread).await.map_err(unconfirmed)?;
        if interrupts.iter().any(|i| pending_in(&state, i)) {
            return Err(DecisionFailure::RunFailed(
                "the run ended, but the interrupt still waits for an answer: the graph did not take it".into(),
            ));
        }
        Ok(())
    }
}

/// Whether the interrupt is among a thread state's pending interrupts.
fn pending_in(state: &serde_json::Value, interrupt: &PendingInterrupt) -> bool {
    state["interrupts"].as_array().is_some_and(|list| {
        list.iter()
            .any(|i| i["id"] == interrupt.interrupt_id.as_str())
    })
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
