//! Similar pending tool calls (same tool, same session) decided with one
//! action: each call still gets its own decision and, when approved, its own
//! single-use token.

use crate::desk::{Desk, Entry, Preferences};
use crate::router::href;
use crate::split::{on_demand, LoadFailed};
use countersign_domain::model::{ConfirmStatus, DecisionStatus};
use countersign_domain::toolcall::{ToolChoice, ToolMode};
use countersign_domain::wire::CallKey;
use countersign_domain::{DecisionInput, MplpId};
use leptos::prelude::*;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// Pending tool calls grouped by (tool, session), groups of two or more only,
/// in the order of their oldest call. O(n log n).
pub fn similar_calls(entries: &[Arc<Entry>]) -> Vec<(String, String, Vec<Arc<Entry>>)> {
    let mut groups: Vec<(String, String, Vec<Arc<Entry>>)> = Vec::new();
    for entry in entries {
        let Some(CallKey {
            tool: name,
            session,
        }) = entry.call()
        else {
            continue;
        };
        if entry.status() != ConfirmStatus::Pending {
            continue;
        }
        match groups
            .iter_mut()
            .find(|(n, s, _)| *n == name && *s == session)
        {
            Some((_, _, members)) => members.push(entry.clone()),
            None => groups.push((name, session, vec![entry.clone()])),
        }
    }
    groups.retain(|(_, _, members)| members.len() > 1);
    groups
}

/// What a group says when the code that decides could not be fetched.
const NOT_LOADED: &str =
    "Nothing decided: the decision code could not be loaded (the app's server did not answer). Try again.";

on_demand! {
    /// Decides each call of a group in turn, each with its own decision (and
    /// token); says how many were decided and the first refusal. The decision
    /// code is shared with the review page and loads on demand.
    in review fn decide_each(desk: Desk, ids: Vec<MplpId>, input: DecisionInput) -> Pin<Box<dyn Future<Output = String>>> {
        Box::pin(async move {
            let status = input.status;
            let all_done = |done: usize| format!(
                "{done} call(s) {status}, each with its own decision{}.",
                if status == DecisionStatus::Approved { " and token" } else { "" }
            );
            // LangGraph: one run takes every answer of the thread, or none
            // (its code is LangGraph's chunk: not fetched for other backends).
            match desk.decide_group(ids.clone(), input.clone()).await {
                Ok(Some(Ok(done))) => return all_done(done),
                Ok(Some(Err(e))) => return format!("Nothing decided: {e}"),
                Ok(None) => {}
                Err(LoadFailed) => return NOT_LOADED.to_owned(),
            }
            let (mut done, mut failed) = (0, Vec::new());
            for id in ids {
                let key = crate::browser::new_id().to_string();
                match desk.decide(id, &input, &key).await {
                    Ok(_) => done += 1,
                    Err(e) => failed.push(e.to_string()),
                }
            }
            match failed.first() {
                None => all_done(done),
                Some(first) => format!("{done} {status}; {} refused: {first}", failed.len()),
            }
        })
    }
}

/// One group with its two actions.
#[component]
pub fn CallGroup(
    name: String,
    session: String,
    members: Vec<Arc<Entry>>,
    /// Where the outcome is said: the inbox's, since a decided group is gone.
    result: RwSignal<Option<String>>,
) -> impl IntoView {
    let desk = Desk::from_context();
    let preferences = Preferences::from_context();
    let reason = RwSignal::new(String::new());
    // The summary goes to the inbox's `result`: a decided group is gone.
    let deciding = Action::new_unsync(move |(ids, input): &(Vec<MplpId>, DecisionInput)| {
        let (ids, input) = (ids.clone(), input.clone());
        async move {
            let summary = match decide_each(desk, ids, input).await {
                Ok(deciding) => deciding.await,
                Err(LoadFailed) => NOT_LOADED.to_owned(),
            };
            result.set(Some(summary));
        }
    });
    let busy = move || deciding.pending().get();
    let ids: Vec<_> = members.iter().map(|e| e.id()).collect();
    let count = ids.len();
    let decide_all = move |status: DecisionStatus| {
        if deciding.pending().get_untracked() {
            return;
        }
        let input = DecisionInput {
            status,
            decided_by_role: preferences.get().get_untracked().reviewer_role,
            reason: Some(reason.get_untracked()),
            tool_call: (status == DecisionStatus::Approved).then(|| ToolChoice {
                mode: Some(ToolMode::Once),
                ..ToolChoice::default()
            }),
        };
        result.set(None);
        deciding.dispatch((ids.clone(), input));
    };
    let label = format!("{count} similar calls: {name} in session {session}");
    view! {
        <li class="call-group card" aria-label=label.clone()>
            <p><strong>{format!("{count} × ")}<code>{name.clone()}</code></strong> {format!(" in session {session}")}</p>
            <ul class="plain-list">
                {members.iter().map(|e| view! { <li><a href=href(&format!("/reviews/{}", e.id()))>{e.title().to_owned()}</a></li> }).collect_view()}
            </ul>
            <div class="actions">
                <button type="button" class="button-approve" disabled=busy
                    on:click={let d = decide_all.clone(); move |_| d(DecisionStatus::Approved)}>{format!("Approve each once ({count})")}</button>
                <label class="visually-hidden" for=format!("group-reason-{name}-{session}")>"Reason to deny the group"</label>
                <input id=format!("group-reason-{name}-{session}") type="text" placeholder="Reason to deny"
                    prop:value=move || reason.get() on:input=move |ev| reason.set(event_target_value(&ev)) />
                <button type="button" class="button-reject" disabled=busy
                    on:click=move |_| decide_all(DecisionStatus::Rejected)>{format!("Deny each ({count})")}</button>
            </div>
        </li>
    }
}
