//! Deciding LangGraph interrupts: a decision is checked by the domain, held
//! while other actions of its interrupt wait, then sent with theirs; a group
//! of one thread's calls is answered by one run. What LangGraph took is
//! recorded in this browser's history.

use super::Graph;
use super::{answer_of, siblings};
use crate::backend::Interrupts;
use crate::browser;
use crate::desk::{DecisionFailure, Entry};
use countersign_domain::langgraph::{resume_run, resume_value, AnswerRefused, PendingInterrupt};
use countersign_domain::{DecisionInput, MplpId, Review};
use leptos::prelude::*;
use std::sync::Arc;

impl Graph {
    /// Resumes the thread of a decided review (`decided`, checked by the
    /// domain already), then records it. When its interrupt holds other
    /// actions still undecided, the decision is held (`Held`) and sent with theirs.
    pub(super) async fn decide_interrupt(
        &self,
        id: MplpId,
        decided: Review,
    ) -> Result<Arc<Entry>, DecisionFailure> {
        let source = self.interrupts.get_value();
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
            self.interrupts.update_value(|l| {
                l.held.insert(id, decided);
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
    pub(super) async fn decide_together(
        &self,
        ids: &[MplpId],
        input: &DecisionInput,
    ) -> Option<Result<usize, DecisionFailure>> {
        let source = self.interrupts.get_value();
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
                .reviews
                .entry_now(*id)
                .and_then(|e| e.review().cloned())
                .ok_or(DecisionFailure::Missing)?;
            let next = self
                .decisions
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
                    self.notices.tell(format!("LangGraph took your decision, but this browser could not keep it in its history: {e}"));
                }
            }
            if let Some(p) = source.pending.get(&sid) {
                answered.push((p.thread_id.clone(), p.interrupt_id.clone()));
            }
            recorded.push(self.reviews.replace(review));
        }
        self.interrupts.update_value(|l| {
            l.pending.retain(|_, p| {
                !answered
                    .iter()
                    .any(|(t, i)| p.thread_id == *t && p.interrupt_id == *i)
            });
            let pending: Vec<MplpId> = l.pending.keys().copied().collect();
            l.forget_held_unless(|sid| pending.contains(sid));
        });
        leptos::task::spawn_local(self.refresh_langgraph());
        recorded
    }
}
