//! What the form holds between keystrokes and attempts, and its intents.

use super::tool_options::ToolOptions;
use crate::browser;
use crate::desk::{DecisionFailure, Decisions, Desk, Notices, Preferences};
use countersign_domain::model::DecisionStatus;
use countersign_domain::policy::PolicyRefusal;
use countersign_domain::toolcall::{ToolChoice, ToolMode};
use countersign_domain::{DecideError, DecisionInput, MplpId};
use leptos::html;
use leptos::prelude::*;

/// What the form holds between keystrokes and attempts. Its intents:
/// [`FormState::submit`] a decision, [`FormState::show`] why one failed.
#[derive(Clone, Copy)]
pub(super) struct FormState {
    pub(super) desk: Desk,
    pub(super) decisions: Decisions,
    pub(super) notices: Notices,
    pub(super) id: MplpId,
    pub(super) tool: Option<ToolOptions>,
    pub(super) role: RwSignal<String>,
    pub(super) reason: RwSignal<String>,
    pub(super) role_error: RwSignal<Option<String>>,
    pub(super) reason_error: RwSignal<Option<String>>,
    pub(super) form_error: RwSignal<Option<String>>,
    pub(super) reason_ref: NodeRef<html::Textarea>,
    /// Sends a decision under its idempotency key (one at a time).
    sending: Action<(FormState, DecisionInput, String), ()>,
    pub(super) held: RwSignal<Option<String>>,
    /// The last attempt and its idempotency key: the same decision sent again
    /// (after a network failure) keeps the key, so it is never recorded twice.
    pub(super) attempt: StoredValue<Option<(DecisionInput, String)>>,
}

impl FormState {
    /// The form of review `id`, with what was typed before it was drawn again.
    pub(super) fn new(id: MplpId, tool: Option<ToolOptions>) -> FormState {
        let decisions = Decisions::from_context();
        let draft = decisions.draft(id);
        let role = draft.role.unwrap_or_else(|| {
            Preferences::from_context()
                .get()
                .get_untracked()
                .reviewer_role
        });
        FormState {
            desk: Desk::from_context(),
            decisions,
            notices: Notices::from_context(),
            id,
            tool,
            role: RwSignal::new(role),
            reason: RwSignal::new(draft.reason),
            role_error: RwSignal::new(None),
            reason_error: RwSignal::new(None),
            form_error: RwSignal::new(None),
            reason_ref: NodeRef::new(),
            sending: Action::new_unsync(
                |(form, input, key): &(FormState, DecisionInput, String)| {
                    form.send(input.clone(), key.clone())
                },
            ),
            held: RwSignal::new(
                Desk::from_context()
                    .held(id)
                    .map(|waiting| DecisionFailure::Held(waiting).to_string()),
            ),
            attempt: StoredValue::new(None),
        }
    }

    /// Whether a decision is being sent (reactive).
    pub(super) fn busy(self) -> bool {
        self.sending.pending().get()
    }

    /// Sends the decision (once at a time), keeping the idempotency key of
    /// an identical earlier attempt.
    pub(super) fn submit(self, status: DecisionStatus, feedback: bool) {
        if self.sending.pending().get_untracked() {
            return;
        }
        self.role_error.set(None);
        self.reason_error.set(None);
        self.form_error.set(None);
        self.held.set(None);
        let tool_call = match (&self.tool, status, feedback) {
            (_, DecisionStatus::Rejected, true) => Some(ToolChoice {
                mode: Some(ToolMode::Feedback),
                ..ToolChoice::default()
            }),
            (Some(options), DecisionStatus::Approved, _) => Some(options.choice()),
            _ => None,
        };
        let input = DecisionInput {
            status,
            decided_by_role: self.role.get_untracked(),
            reason: Some(self.reason.get_untracked()),
            tool_call,
        };
        let key = self
            .attempt
            .get_value()
            .filter(|(last, _)| *last == input)
            .map(|(_, key)| key)
            .unwrap_or_else(|| browser::new_id().to_string());
        self.attempt.set_value(Some((input.clone(), key.clone())));
        self.sending.dispatch((self, input, key));
    }

    /// Decides, then forgets the draft, or shows why the decision was not
    /// recorded (a conflict reaches the notices even when the form is gone).
    async fn send(self, input: DecisionInput, key: String) {
        match self.desk.decide(self.id, &input, &key).await {
            Ok(_) => self.decisions.drop_draft(self.id),
            Err(failure) => self.show(failure),
        }
    }

    /// Shows why a decision was not recorded, next to what has to change.
    /// (Also called when a decision fails after the form may have gone.)
    pub(super) fn show(self, failure: DecisionFailure) {
        match failure {
            DecisionFailure::Refused(DecideError::EmptyRole) => {
                self.role_error
                    .set(Some(DecideError::EmptyRole.to_string()));
            }
            DecisionFailure::Refused(DecideError::ReasonRequired) => {
                self.reason_error
                    .set(Some(DecideError::ReasonRequired.to_string()));
                if let Some(el) = self.reason_ref.try_get_untracked().flatten() {
                    let _ = el.focus();
                }
            }
            DecisionFailure::RoleNotAllowed { .. }
            | DecisionFailure::Refused(DecideError::Policy(PolicyRefusal::RoleMissing {
                ..
            })) => self.role_error.set(Some(failure.to_string())),
            DecisionFailure::Conflict(message) => self.notices.tell(message),
            // The review page shows the queued decision instead of the form.
            DecisionFailure::Queued => {}
            DecisionFailure::Held(_) => self.held.set(Some(failure.to_string())),
            other => self.form_error.set(Some(other.to_string())),
        }
    }
}
