//! The grants ledger (`/grants`): the standing approvals a Countersign
//! server holds (what each covers, who granted it, until when, how many calls
//! it let through), each revocable; revoked ones below, with who and when.

use crate::backend::HttpError;
use crate::browser;
use crate::components::loaded::Loaded;
use crate::desk::{Access, Desk};
use crate::router::href;
use countersign_domain::toolcall::{Scope, ScopeGrant};
use countersign_domain::wire::GrantRecord;
use countersign_domain::Timestamp;
use leptos::prelude::*;

/// The grants page: the ledger when a Countersign server keeps one.
#[component]
pub fn GrantsPage() -> impl IntoView {
    let ledger = match Desk::from_context().access() {
        Some(access) => view! { <ServerLedger access /> }.into_any(),
        None => view! {
            <p class="card">"Standing approvals are kept by a Countersign server. Connect to one in " <a href=href("/settings")>"Settings"</a> " to see and revoke them."</p>
        }
        .into_any(),
    };
    view! {
        <section class="grants" aria-labelledby="grants-title">
            <div class="page-head"><h1 id="grants-title">"Standing approvals"</h1></div>
            <p class="subtle">"Calls an approval “for this session”, “for 15 minutes” or “always for this workspace” lets through without asking. Revoke one and the agent’s next such call is asked again."</p>
            {ledger}
        </section>
    }
}

/// The server's grants, read when shown and again after a revocation.
#[component]
fn ServerLedger(access: Access) -> impl IntoView {
    let listed = {
        let access = access.clone();
        LocalResource::new(move || access.clone().grants())
    };
    let revoke = Action::new_unsync(move |grant_id: &String| {
        let (access, grant_id) = (access.clone(), grant_id.clone());
        async move { (grant_id.clone(), access.revoke_grant(grant_id).await) }
    });
    // Revoked: the ledger as the server now has it.
    Effect::new(move |_| {
        if let Some((_, Ok(_))) = revoke.value().get() {
            listed.refetch();
        }
    });
    view! {
        <Loaded resource=listed what="The standing approvals" shown=move |items| view! { <Ledger items revoke /> } />
    }
}

/// The live grants, then the revoked and ended ones.
#[component]
fn Ledger(items: Vec<GrantRecord>, revoke: Revoke) -> impl IntoView {
    let now = browser::now();
    let (live, ended): (Vec<_>, Vec<_>) = items.into_iter().partition(|g| g.is_live(now));
    let live_view = if live.is_empty() {
        view! { <p class="card">"No standing approvals: every call is asked."</p> }.into_any()
    } else {
        view! {
            <ul class="grant-list" aria-label="Standing approvals">
                {live.into_iter().map(|record| view! { <GrantItem record revoke /> }).collect_view()}
            </ul>
        }
        .into_any()
    };
    view! {
        {live_view}
        {(!ended.is_empty()).then(|| view! {
            <h2>"Revoked or ended"</h2>
            <ul class="grant-list" aria-label="Revoked or ended approvals">
                {ended.into_iter().map(|record| view! { <GrantItem record revoke /> }).collect_view()}
            </ul>
        })}
    }
}

/// One grant: what it covers, who granted it, its use, and its revocation.
#[component]
fn GrantItem(record: GrantRecord, revoke: Revoke) -> impl IntoView {
    let now = browser::now();
    let grant = record.grant.clone();
    let live = record.is_live(now);
    let id = grant.grant_id.to_string();
    let busy = revoke.pending();
    let failed = {
        let id = id.clone();
        move || match revoke.value().get() {
            Some((of, Err(e))) if of == id => Some(format!("Not revoked: {e}")),
            _ => None,
        }
    };
    let covers = match &grant.call_hash {
        Some(hash) => format!(
            "these exact arguments (call {})",
            &hash.as_str()[..12.min(hash.as_str().len())]
        ),
        None => "any arguments".to_owned(),
    };
    let reach = match (grant.scope, &grant.workspace) {
        (Scope::Workspace, Some(workspace)) => {
            format!("{}, workspace {workspace}", grant.scope.label())
        }
        _ => format!("{}, session {}", grant.scope.label(), grant.session_id),
    };
    let uses = match record.uses {
        1 => "let 1 call through".to_owned(),
        n => format!("let {n} calls through"),
    };
    let state = match (&record.revoked_at, &grant.expires_at) {
        (Some(at), _) => format!(
            "Revoked {} by {}",
            stamp(at).map_or(at.clone(), |t| t.ago(now)),
            record.revoked_by.clone().unwrap_or_default()
        ),
        (None, Some(end)) if !live => format!("Ended {}", end.ago(now)),
        (None, Some(end)) => format!("Until {}", end.exact()),
        (None, None) => "Until revoked".to_owned(),
    };
    let label = format!(
        "Revoke the approval of {} {}",
        grant.tool_name,
        grant.scope.label()
    );
    view! {
        <li class="card grant">
            <p class="grant-tool"><code>{grant.tool_name.clone()}</code>" with "{covers}</p>
            <p class="subtle">{reach}" · up to "{grant.max_risk.to_string()}</p>
            <p>"Granted by "{granter(&grant)}" "
                <time title=grant.granted_at.exact()>{grant.granted_at.ago(now)}</time>
                " · "{uses}" · "{state}
            </p>
            {live.then(|| view! {
                <div class="actions">
                    <button type="button" class="button-reject" aria-label=label.clone() prop:disabled=move || busy.get() on:click=move |_| { revoke.dispatch(id.clone()); }>"Revoke"</button>
                </div>
            })}
            {move || failed().map(|e| view! { <p class="field-error" role="alert">{e}</p> })}
        </li>
    }
}

/// Revoking a grant on the server: its id, and the server's answer.
type Revoke = Action<String, (String, Result<GrantRecord, HttpError>)>;

/// Who granted it: the key's owner (or the key), as its role; the role alone
/// when the decision named no key.
fn granter(grant: &ScopeGrant) -> impl IntoView {
    let role = grant.granted_by_role.clone();
    match grant
        .granted_by_owner
        .as_ref()
        .or(grant.granted_by_key.as_ref())
    {
        Some(person) => view! { <strong>{person.clone()}</strong>" as "{role} }.into_any(),
        None => view! { <strong>{role}</strong> }.into_any(),
    }
}

/// A stored time as a timestamp, if it reads as one.
fn stamp(text: &str) -> Option<Timestamp> {
    Timestamp::parse(text).ok()
}
