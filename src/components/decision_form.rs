//! Approve, reject (with a reason) or cancel: checked by the domain's `decide`
//! in the browser before anything is saved; errors appear next to their field,
//! and what the reviewer typed stays on screen until the decision is saved.
//! On a server, a retry of the same decision reuses its idempotency key.

use crate::browser;
use crate::desk::{DecisionFailure, Desk};
use crate::store::HttpError;
use countersign_domain::{DecideError, DecisionInput, MplpId};
use leptos::html;
use leptos::prelude::*;

/// The decision form of one pending review.
#[component]
pub fn DecisionForm(id: MplpId, problems: usize) -> impl IntoView {
    let desk = expect_context::<Desk>();
    let role = RwSignal::new(desk.settings.get_untracked().reviewer_role);
    let reason = RwSignal::new(String::new());
    let role_error = RwSignal::new(None::<String>);
    let reason_error = RwSignal::new(None::<String>);
    let form_error = RwSignal::new(None::<String>);
    let reason_ref = NodeRef::<html::Textarea>::new();
    let busy = RwSignal::new(false);
    // The last attempt and its idempotency key: the same decision sent again
    // (after a network failure) keeps the key, so it is never recorded twice.
    let attempt = StoredValue::new(None::<(DecisionInput, String)>);

    let focus_reason = move || {
        if let Some(el) = reason_ref.get_untracked() {
            let _ = el.focus();
        }
    };
    let show = move |failure: DecisionFailure| match failure {
        DecisionFailure::Refused(DecideError::EmptyRole) => {
            role_error.set(Some(DecideError::EmptyRole.to_string()));
        }
        DecisionFailure::Refused(DecideError::ReasonRequired) => {
            reason_error.set(Some(DecideError::ReasonRequired.to_string()));
            focus_reason();
        }
        DecisionFailure::Server(HttpError::Refused {
            message, details, ..
        }) => {
            let mut placed = false;
            for (path, detail) in details {
                match path.as_str() {
                    "/reason" => reason_error.set(Some(detail)),
                    "/decided_by_role" => role_error.set(Some(detail)),
                    _ => continue,
                }
                placed = true;
            }
            if !placed {
                form_error.set(Some(message));
            }
        }
        DecisionFailure::Conflict(message) => desk.notices.update(|n| n.push(message)),
        // The review page shows the queued decision instead of the form.
        DecisionFailure::Queued => {}
        other => form_error.set(Some(other.to_string())),
    };
    let submit = move |status: &'static str| {
        if busy.get_untracked() {
            return;
        }
        role_error.set(None);
        reason_error.set(None);
        form_error.set(None);
        let input = DecisionInput {
            status: status.to_owned(),
            decided_by_role: role.get_untracked(),
            reason: Some(reason.get_untracked()),
            tool_call: None,
        };
        let key = attempt
            .get_value()
            .filter(|(last, _)| *last == input)
            .map(|(_, key)| key)
            .unwrap_or_else(|| browser::new_id().to_string());
        attempt.set_value(Some((input.clone(), key.clone())));
        busy.set(true);
        leptos::task::spawn_local(async move {
            let outcome = desk.decide(id, &input, &key).await;
            busy.set(false);
            if let Err(failure) = outcome {
                show(failure);
            }
        });
    };

    let blocked = problems > 0;
    view! {
        <form class="decision" aria-labelledby="decision-title" on:submit=|ev| ev.prevent_default()>
            <h2 id="decision-title">"Your decision"</h2>
            <div class="field">
                <label for="decided-by-role">"Decide as role"</label>
                <input
                    id="decided-by-role"
                    type="text"
                    autocomplete="off"
                    prop:value=move || role.get()
                    on:input=move |ev| role.set(event_target_value(&ev))
                    aria-invalid=move || role_error.with(Option::is_some).to_string()
                    aria-describedby="role-error"
                />
                <p id="role-error" class="field-error" role="alert">{move || role_error.get()}</p>
            </div>
            <div class="field">
                <label for="reason">"Reason " <span class="subtle">"(required to reject; Ctrl+Enter rejects)"</span></label>
                <textarea
                    id="reason"
                    rows="3"
                    node_ref=reason_ref
                    prop:value=move || reason.get()
                    on:input=move |ev| reason.set(event_target_value(&ev))
                    on:keydown=move |ev| {
                        if ev.key() == "Enter" && (ev.ctrl_key() || ev.meta_key()) {
                            ev.prevent_default();
                            submit("rejected");
                        }
                    }
                    aria-invalid=move || reason_error.with(Option::is_some).to_string()
                    aria-describedby="reason-error"
                ></textarea>
                <p id="reason-error" class="field-error" role="alert">{move || reason_error.get()}</p>
            </div>
            {blocked.then(|| view! {
                <p id="approval-blocked" class="notice notice-danger">
                    {format!(
                        "Approval is impossible: this request has {problems} validation problem{} (listed under Problems). You can still reject or cancel it.",
                        if problems == 1 { "" } else { "s" }
                    )}
                </p>
            })}
            <p class="field-error" role="alert">{move || form_error.get()}</p>
            <p class="subtle" role="status">{move || busy.get().then_some("Saving your decision…")}</p>
            <div class="actions">
                <button
                    id="approve"
                    type="button"
                    class="button-approve"
                    disabled=move || blocked || busy.get()
                    aria-describedby=blocked.then_some("approval-blocked")
                    aria-keyshortcuts="a"
                    on:click=move |_| submit("approved")
                >"Approve"</button>
                <button id="reject" type="button" class="button-reject" aria-keyshortcuts="r" disabled=move || busy.get() on:click=move |_| submit("rejected")>"Reject"</button>
                <button id="cancel" type="button" class="button-quiet" disabled=move || busy.get() on:click=move |_| submit("cancelled")>"Cancel request"</button>
            </div>
        </form>
    }
}
