//! A tool-call request as a reviewer must see it: the exact canonical call
//! (never only the summary), the summary checked against it in this browser,
//! the risk and why, side effects, rollback notes, the diff, alternatives, a
//! dry run when offered, a live countdown to expiry, and once decided the
//! outcome with its token.

use countersign_domain::text::reveal;
use countersign_domain::toolcall::{ApprovalRequest, OutcomeKind, ToolCallReview, ToolOutcome};
use countersign_markup::CheckedBy;
use leptos::prelude::*;

pub use countersign_markup::pretty;

/// Seconds left before the request expires (negative once expired), ticking.
pub fn seconds_left(request: &ApprovalRequest) -> Signal<i64> {
    let expires = request.expires_at.to_utc();
    let left = move || (expires - crate::browser::now()).num_seconds();
    let signal = RwSignal::new(left());
    if let Ok(handle) = set_interval_with_handle(
        move || signal.set(left()),
        std::time::Duration::from_secs(1),
    ) {
        on_cleanup(move || handle.clear());
    }
    signal.into()
}

/// The request panel.
#[component]
pub fn ToolCallPanel(
    call: ToolCallReview,
    pending: bool,
    /// A LangGraph interrupt: it does not expire, and LangGraph runs the call
    /// when resumed (no token is redeemed).
    #[prop(optional)]
    interrupt: bool,
) -> impl IntoView {
    let request = call.request.clone();
    let name = request.tool_call().map(|c| c.name).unwrap_or_default();
    // The parts that say the same before the app has loaded are the markup
    // the server's drawing of the review shows (countersign-markup).
    view! {
        <section class="card tool-call" aria-labelledby="call-title">
            <h2 id="call-title">"Tool call " <code>{reveal::label(&name)}</code></h2>
            <p class="tool-risk" inner_html=countersign_markup::call_risk(&request)></p>
            {(pending && !interrupt).then(|| view! { <Countdown request=request.clone() /> })}
            <div class="exact-call" inner_html=countersign_markup::exact_call(&request, CheckedBy::Browser)></div>
            <div class="agent-summary" inner_html=countersign_markup::agent_summary(&request)></div>
            <div class="call-notes" inner_html=countersign_markup::call_notes(&request)></div>
            {request.dry_run.clone().map(|report| view! { <DryRun report /> })}
            <dl class="fields" inner_html=countersign_markup::call_fields(&request)></dl>
            {call.outcome.clone().map(|outcome| view! { <OutcomeView outcome interrupt /> })}
        </section>
    }
}

/// The time left to decide, ticking; then that it expired.
#[component]
fn Countdown(request: ApprovalRequest) -> impl IntoView {
    let left = seconds_left(&request);
    view! {
        <p class="countdown" role="timer" aria-live="off">
            {move || {
                left.track();
                countersign_markup::countdown(&request, crate::browser::now())
            }}
        </p>
    }
}

/// The tool's dry-run report, shown on request.
#[component]
fn DryRun(report: String) -> impl IntoView {
    let shown = RwSignal::new(false);
    view! {
        <p>
            <button type="button" aria-expanded=move || shown.get().to_string()
                on:click=move |_| shown.update(|s| *s = !*s)>"Dry run"</button>
            " " <span class="subtle">"What the tool reports when run without effect."</span>
        </p>
        <Show when=move || shown.get()>
            <pre class="dry-run" aria-label="Dry-run report"><code>{report.clone()}</code></pre>
        </Show>
    }
}

/// What was decided, and the token.
#[component]
fn OutcomeView(outcome: ToolOutcome, interrupt: bool) -> impl IntoView {
    let kind = match outcome.kind {
        OutcomeKind::Approved => "Approved",
        OutcomeKind::Edited => "Approved with modifications",
        OutcomeKind::Denied => "Denied",
        OutcomeKind::Feedback => "Answered with feedback",
        OutcomeKind::Cancelled => "Cancelled",
        OutcomeKind::Expired => "Expired: denied by default",
        OutcomeKind::Withdrawn => "Withdrawn by the agent",
    };
    let edited = (outcome.kind == OutcomeKind::Edited)
        .then(|| outcome.approved_call.clone())
        .flatten();
    view! {
        <h3>"Outcome"</h3>
        <p><strong>{kind}</strong> {outcome.message.clone().map(|m| format!(": “{m}”"))}</p>
        {edited.map(|call| view! {
            <p class="subtle">"The approved call (the reviewer’s edit):"</p>
            <pre class="call-json" aria-label="Approved call"><code>{reveal::json(&pretty(&call))}</code></pre>
            <p class="subtle">"Hash of the call as asked: " <code>{outcome.original_hash.to_string()}</code></p>
        })}
        {outcome.grant.clone().map(|g| view! {
            <p>{format!("Grant {} ", g.grant_id)} <strong>{g.scope.label()}</strong>
               {if g.call_hash.is_none() { " for every call of this tool" } else { " for this exact call" }}</p>
        })}
        {outcome.approved_by_grant.map(|g| view! { <p>{format!("Approved without asking by grant {g}.")}</p> })}
        {interrupt.then(|| view! {
            <p class="subtle">"LangGraph ran the thread with this answer: its run ended without error and the interrupt no longer waits (no token to redeem)."</p>
        })}
        {outcome.token.clone().filter(|_| !interrupt).map(|t| view! {
            <dl class="fields token" aria-label="Approval token">
                <dt>"Token"</dt><dd><code>{t.token_id.to_string()}</code></dd>
                <dt>"For the call with hash"</dt><dd><code>{t.tool_call_hash.to_string()}</code></dd>
                <dt>"Expires"</dt><dd>{t.expires_at.exact()}</dd>
                <dt>"Use"</dt><dd>{match &t.used_at {
                    Some(at) => format!("used at {}", at.exact()),
                    None => "single use, not used yet".to_owned(),
                }}</dd>
            </dl>
        })}
    }
}

/// Redeems an approved call's token, as the agent would right before running
/// it: the call about to run is checked against the token (hash, expiry, use,
/// device) by the domain, in this browser. Local storage only: on a server the
/// agent redeems its own token.
#[component]
pub fn RedeemForm(id: countersign_domain::MplpId, call: ToolCallReview) -> impl IntoView {
    let desk = crate::desk::Desk::from_context();
    let Some(outcome) = call.outcome.clone() else {
        return ().into_any();
    };
    let Some(token) = outcome.token.clone() else {
        return ().into_any();
    };
    let approved = outcome
        .approved_call
        .clone()
        .unwrap_or_else(|| call.request.tool_call_canonical.clone());
    let text = RwSignal::new(pretty(&approved));
    let device = RwSignal::new(call.request.client_device_id.clone().unwrap_or_default());
    let result = RwSignal::new(None::<Result<(), String>>);
    let used = token.used_at.is_some();
    let redeem = move |_| {
        let presented = text.with_untracked(|t| {
            serde_json::from_str::<countersign_domain::toolcall::ToolCall>(t)
                .map_err(|e| format!("the call is not {{\"name\", \"args\"}} JSON: {e}"))
                .and_then(|c| c.hash().map_err(|e| e.to_string()))
        });
        let hash = match presented {
            Ok(hash) => hash,
            Err(e) => return result.set(Some(Err(e))),
        };
        let redemption = countersign_domain::toolcall::Redemption {
            token_id: token.token_id,
            approval_id: Some(token.approval_id),
            tool_call_hash: hash,
            client_device_id: Some(device.get_untracked()).filter(|d| !d.is_empty()),
        };
        result.set(Some(desk.redeem(id, &redemption)));
    };
    view! {
        <section class="card" aria-labelledby="redeem-title">
            <h2 id="redeem-title">"Redeem the token"</h2>
            <p class="subtle">
                {if used { "This token was used; redeeming again is refused." } else { "What the agent does right before running the call: the call must be exactly the approved one." }}
            </p>
            <div class="field">
                <label for="redeem-call">"Call about to run"</label>
                <textarea id="redeem-call" class="code" rows="6" spellcheck="false"
                    prop:value=move || text.get() on:input=move |ev| text.set(event_target_value(&ev))></textarea>
            </div>
            <div class="field">
                <label for="redeem-device">"Device"</label>
                <input id="redeem-device" type="text" prop:value=move || device.get()
                    on:input=move |ev| device.set(event_target_value(&ev)) />
            </div>
            <div class="actions"><button type="button" on:click=redeem>"Redeem"</button></div>
            <p role="status" class=move || match result.get() { Some(Err(_)) => "field-error", _ => "subtle" }>
                {move || result.get().map(|r| match r {
                    Ok(()) => "Redeemed: the call may run now, once.".to_owned(),
                    Err(e) => format!("Refused: {e}"),
                })}
            </p>
        </section>
    }
    .into_any()
}
