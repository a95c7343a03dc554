//! Decisions on a Countersign server: posted with an idempotency key; a
//! decision made while the server is unreachable is kept on this device (the
//! outbox) and delivered once it is back; when someone else decided first,
//! theirs is shown and the reviewer is told who and what.

use super::Served;
use crate::backend::{outbox, HttpError};
use crate::desk::{DecisionFailure, Entry};
use countersign_domain::wire::{ChangeKind, ReceiptDecision, Refusal};
use countersign_domain::{DecideError, DecisionInput, MplpId, Review};
use std::sync::Arc;

impl Served {
    /// Posts a decision the domain accepted to the server, then shows what
    /// the server stored. Its refusal reaches the form as the browser's own
    /// check would have said it.
    pub(in crate::desk) async fn decide(
        &self,
        id: MplpId,
        input: &DecisionInput,
        idempotency_key: &str,
    ) -> Result<Arc<Entry>, DecisionFailure> {
        let server = self.server();
        match server.decide(id, input, idempotency_key).await {
            Ok(stored) => {
                self.apply_change(ChangeKind::Decided, stored);
                self.reviews.entry(id).ok_or(DecisionFailure::Missing)
            }
            Err(refused) if decided_first(&refused) => {
                let latest = server.review(id).await.map_err(DecisionFailure::Server)?;
                let conflict = describe_conflict(&latest);
                self.apply_change(ChangeKind::Decided, latest);
                Err(DecisionFailure::Conflict(conflict))
            }
            Err(HttpError::Unreachable(_)) => {
                self.decisions
                    .queue(outbox::Queued {
                        confirm_id: id,
                        server: server.url().to_owned(),
                        input: input.clone(),
                        idempotency_key: idempotency_key.to_owned(),
                    })
                    .map_err(DecisionFailure::NotSaved)?;
                Err(DecisionFailure::Queued)
            }
            Err(e) => Err(match e.refusal() {
                Some(Refusal::Decide(refused)) => DecisionFailure::Refused(refused),
                Some(Refusal::Role { role, allowed }) => {
                    DecisionFailure::RoleNotAllowed { role, allowed }
                }
                None => DecisionFailure::Server(e),
            }),
        }
    }

    /// Sends the queued decisions, each with its own idempotency key; keeps the
    /// ones the server still cannot be reached for. Refusals and conflicts are
    /// reported as notices (the review then shows what the server has).
    pub(super) async fn deliver_queued(&self) {
        let server = self.server();
        for queued in self.decisions.waiting() {
            let result = server
                .decide(queued.confirm_id, &queued.input, &queued.idempotency_key)
                .await;
            let notice = match result {
                Err(HttpError::Unreachable(_)) => return,
                Ok(review) => {
                    self.apply_change(ChangeKind::Decided, review);
                    None
                }
                Err(refused) if decided_first(&refused) => {
                    match server.review(queued.confirm_id).await {
                        Ok(latest) => {
                            let text = describe_conflict(&latest);
                            self.apply_change(ChangeKind::Decided, latest);
                            Some(format!("Your queued decision was not delivered. {text}"))
                        }
                        Err(e) => Some(format!("Your queued decision was not delivered: {e}")),
                    }
                }
                Err(e) => Some(format!("The server refused your queued decision: {e}")),
            };
            self.decisions.delivered(queued.confirm_id);
            if let Some(text) = notice {
                self.notices.tell(text);
            }
        }
    }
}

/// Whether the server refused a decision because the review was decided first.
fn decided_first(error: &HttpError) -> bool {
    matches!(
        error.refusal(),
        Some(Refusal::Decide(DecideError::NotPending { .. }))
    )
}

fn describe_conflict(latest: &Review) -> String {
    let who = ReceiptDecision::latest(latest)
        .map(|d| {
            let reason = latest
                .confirm
                .last_decision()
                .and_then(|l| l.reason.as_ref());
            format!(
                "{} by {} as {} at {}{}",
                d.status,
                d.who(),
                d.decided_by_role,
                d.decided_at.exact(),
                reason.map(|r| format!(": “{r}”")).unwrap_or_default()
            )
        })
        .unwrap_or_else(|| latest.confirm.status.to_string());
    format!("Someone decided first — {who}. Your decision was not recorded; the review now shows theirs.")
}
