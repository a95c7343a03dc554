//! The role to sign as and the reason (or feedback) the agent reads.

use super::state::FormState;
use super::Offer;
use crate::desk::Decisions;
use countersign_domain::model::DecisionStatus;
use countersign_domain::MplpId;
use leptos::prelude::*;

/// The role to sign as: chosen from the roles the reviewer's key holds when
/// the server has said which, else typed (local storage has no keys).
#[component]
pub(super) fn RoleField(
    id: MplpId,
    role: RwSignal<String>,
    role_error: RwSignal<Option<String>>,
) -> impl IntoView {
    let decisions = Decisions::from_context();
    let roles = Memo::new(move |_| decisions.signing_roles());
    // A remembered role the key does not hold gives way to one it does.
    Effect::new(move |_| {
        if let Some(first) = roles.get().and_then(|held| {
            let current = role.get_untracked();
            (!held.contains(&current)).then(|| held[0].clone())
        }) {
            role.set(first);
        }
    });
    let chosen = move |value: String| {
        decisions.edit_draft(id, |d| d.role = Some(value.clone()));
        role.set(value);
    };
    view! {
        <div class="field">
            <label for="decided-by-role">"Decide as role"</label>
            {move || match roles.get() {
                Some(held) => view! {
                    <select
                        id="decided-by-role"
                        on:change=move |ev| chosen(event_target_value(&ev))
                        aria-describedby="role-error"
                    >
                        {held.into_iter().map(|r| {
                            let selected = r == role.get_untracked();
                            view! { <option value=r.clone() selected=selected>{r.clone()}</option> }
                        }).collect_view()}
                    </select>
                }.into_any(),
                None => view! {
                    <input
                        id="decided-by-role"
                        type="text"
                        autocomplete="off"
                        prop:value=move || role.get()
                        on:input=move |ev| chosen(event_target_value(&ev))
                        aria-invalid=move || role_error.with(Option::is_some).to_string()
                        aria-describedby="role-error"
                    />
                }.into_any(),
            }}
            <p id="role-error" class="field-error" role="alert">{move || role_error.get()}</p>
        </div>
    }
}

/// The reason (or feedback) the agent reads; Ctrl+Enter rejects.
#[component]
pub(super) fn ReasonField(form: FormState, offer: Offer) -> impl IntoView {
    let is_tool = form.tool.is_some();
    let hint = match (offer.deny, offer.feedback) {
        _ if !is_tool => "(required to reject; Ctrl+Enter rejects)".to_owned(),
        (Some(deny), Some(feedback)) => format!(
            "(required to {} or {}; the agent sees it)",
            deny.to_ascii_lowercase(),
            feedback.to_ascii_lowercase()
        ),
        (Some(one), None) | (None, Some(one)) => {
            format!(
                "(required to {}; the agent sees it)",
                one.to_ascii_lowercase()
            )
        }
        (None, None) => "(kept in the history)".to_owned(),
    };
    let FormState {
        decisions,
        id,
        reason,
        reason_error,
        reason_ref,
        ..
    } = form;
    view! {
        <div class="field">
            <label for="reason">{if is_tool { "Reason or feedback " } else { "Reason " }} <span class="subtle">{hint}</span></label>
            <textarea
                id="reason"
                rows="3"
                node_ref=reason_ref
                prop:value=move || reason.get()
                on:input=move |ev| {
                    let typed = event_target_value(&ev);
                    decisions.edit_draft(id, |d| d.reason = typed.clone());
                    reason.set(typed);
                }
                on:keydown=move |ev| {
                    if ev.key() == "Enter" && (ev.ctrl_key() || ev.meta_key()) && offer.deny.is_some() {
                        ev.prevent_default();
                        form.submit(DecisionStatus::Rejected, false);
                    }
                }
                aria-invalid=move || reason_error.with(Option::is_some).to_string()
                aria-describedby="reason-error"
            ></textarea>
            <p id="reason-error" class="field-error" role="alert">{move || reason_error.get()}</p>
        </div>
    }
}
