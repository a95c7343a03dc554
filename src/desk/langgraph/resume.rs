//! Resuming a LangGraph thread and confirming it took the answers: wait
//! while another run holds the thread, check each interrupt still waits,
//! start the run, wait for it to end, and check the answered interrupts are
//! gone. Anything less is not recorded.

use super::Graph;
use super::BUSY_WAIT_MS;
use crate::backend::{HttpError, LangGraphStore};
use crate::browser;
use crate::desk::{DecisionFailure, Link};
use countersign_domain::langgraph::{run_failure, PendingInterrupt};

impl Graph {
    /// Sends the resume of `interrupts` (all of one thread) and follows it:
    /// waits while another run holds the thread, checks each interrupt still
    /// waits, starts the run, waits for it to end, and checks it ended without
    /// error and every answered interrupt is gone. An unreachable server is
    /// shown as such.
    pub(super) async fn resume_and_confirm(
        &self,
        store: &LangGraphStore,
        interrupts: &[&PendingInterrupt],
        body: &serde_json::Value,
    ) -> Result<(), DecisionFailure> {
        self.follow_resume(store, interrupts, body)
            .await
            .inspect_err(|e| {
                if let DecisionFailure::Server(HttpError::Unreachable(_)) = e {
                    self.origin.set_link(Link::Offline(e.to_string()));
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
