//! One review (`/reviews/:confirm_id`): what is asked, the plan and its DAG, every
//! problem with its path, the decision form, the history, events, trace and raw JSON.

use crate::components::dag::PlanGraph;
use crate::components::decision_form::DecisionForm;
use crate::components::tool_call::{RedeemForm, ToolCallPanel};
use crate::desk::{Decisions, Desk, Link, Origin, Reviews, Source, Unfound};
use crate::download::download;
use crate::exchange;
use crate::router::href;
use countersign_domain::langgraph::Answer;
use countersign_domain::model::{Confirm, ConfirmStatus, Plan};
use countersign_domain::policy::Rule;
use countersign_domain::text::reveal;
use countersign_domain::toolcall::RiskTier;
use countersign_domain::{MplpId, Review};
use leptos::prelude::*;
use std::sync::Arc;

/// The review page.
#[component]
pub fn ReviewPage(
    /// The confirm id from the URL.
    id: String,
) -> impl IntoView {
    let desk = Desk::from_context();
    let (reviews, origin) = (Reviews::from_context(), Origin::from_context());
    let Ok(confirm_id) = MplpId::parse(&id) else {
        return view! { <NoSuchReview id /> }.into_any();
    };
    // On a server, the review is fetched (a desk there holds only what is on screen).
    desk.open(confirm_id);
    // Re-rendered only when this review changes, not when any other does
    // (what the reviewer typed in the form stays).
    let entry = Memo::new(move |_| reviews.entry(confirm_id));
    // The server's drawing of this review (if the boot script showed one)
    // stands while the review is read, and gives way to whatever comes then.
    Effect::new(move |_| {
        let reading = match entry.get() {
            Some(entry) => entry.review().is_none(),
            None => {
                reviews.reading()
                    || (reviews.unfound(confirm_id).is_none()
                        && !matches!(origin.link().get(), Link::Offline(_))
                        && origin.source().remote())
            }
        };
        if !reading {
            crate::browser::remove_first_paint();
        }
    });
    (move || match entry.get() {
        Some(entry) => match entry.review().cloned() {
            Some(review) => view! { <ReviewBody review /> }.into_any(),
            // Listed from the inbox index a moment ago: read very soon.
            None => view! { <Reading /> }.into_any(),
        },
        None if reviews.reading() => view! { <Reading /> }.into_any(),
        None => match (reviews.unfound(confirm_id), origin.link().get()) {
            (Some(Unfound::Failed(why)), _) => {
                view! { <NotOpened id=confirm_id why=why.to_string() /> }.into_any()
            }
            (None, Link::Offline(why)) => view! { <NotOpened id=confirm_id why /> }.into_any(),
            (None, _) if origin.source().remote() => {
                view! { <p class="subtle" role="status">"Loading the review from the server…"</p> }
                    .into_any()
            }
            _ => view! { <NoSuchReview id=id.clone() /> }.into_any(),
        },
    })
    .into_any()
}

/// Said when the server could not give a review (it is asked again on request).
#[component]
fn NotOpened(id: MplpId, why: String) -> impl IntoView {
    let desk = Desk::from_context();
    view! {
        <section class="not-found" role="alert">
            <h1>"This review could not be loaded"</h1>
            <p>{why}</p>
            <p>
                <button type="button" on:click=move |_| desk.open(id)>"Try again"</button>
                " or " <a href=href("/settings")>"check the connection in Settings"</a>
            </p>
        </section>
    }
}

/// Said when nothing here has the id in the URL.
#[component]
fn NoSuchReview(id: String) -> impl IntoView {
    view! {
        <section class="not-found">
            <h1>"No such review"</h1>
            <p>{format!("Nothing here has the confirm id “{id}”. It may have been decided elsewhere or removed, or the link is mistyped.")}</p>
            <p><a href=href("/")>"Back to the inbox"</a></p>
        </section>
    }
}

/// Which LangGraph agent asks, and what its thread is doing (an errored
/// thread says why; its interrupt still waits for an answer).
#[component]
fn InterruptNote(facts: crate::desk::InterruptFacts) -> impl IntoView {
    use countersign_domain::langgraph::ThreadStatus;
    let agent = match &facts.agent {
        Some(agent) => view! {
            <p class="interrupt-agent">
                "LangGraph agent " <code>{reveal::label(agent.name())}</code>
                <span class="subtle">{format!(" (assistant {}); your decision resumes its thread with this assistant.", agent.assistant_id)}</span>
            </p>
        }
        .into_any(),
        None => view! {
            <p class="notice notice-danger" role="alert">"This thread does not say which assistant runs it, so it cannot be resumed from here: Countersign will not guess."</p>
        }
        .into_any(),
    };
    let status = match facts.status {
        ThreadStatus::Error => Some(format!(
            "Its thread’s last run failed{}. The interrupt still waits for an answer.",
            facts.error.map(|e| format!(": {e}")).unwrap_or_default()
        )),
        ThreadStatus::Busy => {
            Some("Its thread is running now; a decision is sent once the run ends.".to_owned())
        }
        _ => None,
    };
    view! {
        {agent}
        {status.map(|text| view! { <p class=format!("notice thread-{}", facts.status.as_str()) role="status">{text}</p> })}
    }
}

/// Where a request stands under a server rule that asks several approvals
/// (the server's policy; nothing without one).
#[component]
fn Quorum(review: Review) -> impl IntoView {
    let decisions = Decisions::from_context();
    move || {
        decisions.standing(&review).map(|(rule, standing)| {
            let risk = review.tool_call().map(|c| c.request.risk_tier);
            view! {
                <section class="card quorum" aria-labelledby="quorum-title">
                    <h2 id="quorum-title">"Approvals"</h2>
                    <p class="standing" role="status">{standing.to_string()}</p>
                    <p class="subtle">{rule_terms(&rule, risk)}</p>
                </section>
            }
        })
    }
}

/// What a rule asks, in a sentence.
fn rule_terms(rule: &Rule, risk: Option<RiskTier>) -> String {
    let mut terms = format!(
        "Rule “{}”: {} approvals from different people",
        rule.name, rule.approvals
    );
    if !rule.required_roles.is_empty() {
        terms.push_str(&format!(
            ", including {}",
            rule.required_roles.join(" and ")
        ));
    }
    terms.push_str(if rule.veto {
        "; one rejection rejects it"
    } else {
        "; a rejection does not end it"
    });
    if rule.forbids_self_approval(risk) {
        terms.push_str("; the owner of the asking agent may not approve");
    }
    terms.push('.');
    terms
}

/// Said while the stored reviews are read (a moment after the app starts).
#[component]
fn Reading() -> impl IntoView {
    view! { <p class="subtle" role="status">"Reading the stored reviews…"</p> }
}

/// Whether the page was opened from a Countersign e-mail's link.
fn from_mail() -> bool {
    crate::router::use_location().param("mail").is_some()
}

/// What an e-mail's link did (nothing) and what deciding here does.
#[component]
fn FromMail(pending: bool) -> impl IntoView {
    view! { <p class="notice" role="note">{countersign_markup::mail_notice(pending)}</p> }
}

/// An opened review: what was asked, the plan or the call, its problems and
/// history, the decision (or how it was decided), and the raw documents.
#[component]
fn ReviewBody(review: Review) -> impl IntoView {
    let confirm = review.confirm.clone();
    let issues = review.validate();
    let problems = issues.len();
    let plan = review.plan().cloned().map(Arc::new);
    // The problems and the history are the markup the server's drawing of
    // this review shows too (countersign-markup), so the two say the same.
    let now = crate::browser::now();
    let history = countersign_markup::history(&review, now);
    let origin = Origin::from_context();
    let facts = Desk::from_context().interrupt_facts(confirm.confirm_id);
    let answers = facts.as_ref().map(|f| f.allowed.clone());
    let pending = confirm.status == ConfirmStatus::Pending;
    let interrupt = origin.source() == Source::Graph;
    view! {
        <article class="review" aria-labelledby="review-title">
            <p class="breadcrumb"><a href=href("/") aria-keyshortcuts="Escape">"← Inbox"</a></p>
            <header class="review-head" inner_html=countersign_markup::review_head(&review, now)></header>
            {facts.map(|facts| view! { <div class="review-head-notes"><InterruptNote facts /></div> })}
            {from_mail().then(|| view! { <FromMail pending /> })}
            <div class="review-grid">
                <div class="review-main-col">
                    {review.tool_call().cloned().map(|call| view! { <ToolCallPanel call pending interrupt /> })}
                    {plan.map(|plan| view! { <PlanCard plan /> })}
                    {(problems > 0).then(|| view! {
                        <section aria-labelledby="problems-title" class="card" inner_html=countersign_markup::problems(&issues)></section>
                    })}
                    <section aria-labelledby="history-title" class="card" inner_html=history></section>
                </div>
                <aside class="review-side-col" aria-label="Decision and details">
                    <Quorum review=review.clone() />
                    {if pending {
                        view! { <Deciding review=review.clone() problems answers /> }.into_any()
                    } else {
                        view! { <Decided review=review.clone() /> }.into_any()
                    }}
                    <RequestDetails confirm checked=problems == 0 />
                </aside>
            </div>
            <RawDocuments review />
        </article>
    }
}

/// The plan: its title, status, objective and graph.
#[component]
fn PlanCard(plan: Arc<Plan>) -> impl IntoView {
    view! {
        <section aria-labelledby="plan-title" class="card">
            <div class="plan-head" inner_html=countersign_markup::plan_head(&plan)></div>
            <PlanGraph plan=plan.clone() />
        </section>
    }
}

/// A pending review's decision form, or the decision queued on this device
/// while the server cannot be reached.
#[component]
fn Deciding(review: Review, problems: usize, answers: Option<Vec<Answer>>) -> impl IntoView {
    let decisions = Decisions::from_context();
    let id = review.confirm.confirm_id;
    let call = review.tool_call().cloned();
    move || {
        match decisions.queued(id) {
        Some(queued) => view! {
            <section class="card queued" role="status">
                <h2>"Queued on this device"</h2>
                <p>
                    <strong>{queued.input.status.as_str()}</strong>
                    {format!(" as {}", reveal::label(&queued.input.decided_by_role))}
                    {queued.input.reason.clone().filter(|r| !r.trim().is_empty()).map(|r| format!(": “{}”", reveal::prose(&r)))}
                </p>
                <p class="subtle">"The server cannot be reached. This decision is kept in this browser and sent as soon as the server is back (never twice)."</p>
            </section>
        }
        .into_any(),
        None => match (call.clone(), answers.clone()) {
            (Some(call), Some(answers)) => view! { <DecisionForm id problems call answers /> }.into_any(),
            (Some(call), None) => view! { <DecisionForm id problems call /> }.into_any(),
            (None, _) => view! { <DecisionForm id problems /> }.into_any(),
        },
    }
    }
}

/// How a decided review was decided, and (on this browser's storage) the
/// token's redemption, as an agent would do it.
#[component]
fn Decided(review: Review) -> impl IntoView {
    let confirm = &review.confirm;
    let local = Origin::from_context().source() == Source::Local;
    let redeem = review
        .tool_call()
        .filter(|_| local)
        .cloned()
        .map(|call| view! { <RedeemForm id=confirm.confirm_id call /> });
    let resubmittable = confirm.status == ConfirmStatus::Rejected && review.tool_call().is_none();
    view! {
        <section class="card decided" role="status">
            <h2>"Decided"</h2>
            <p inner_html=countersign_markup::decided(confirm)></p>
            {resubmittable.then(|| view! {
                <p class="subtle">"The requester can resubmit a revised request; it will appear as pending again."</p>
            })}
        </section>
        {redeem}
    }
}

/// The request's ids, protocol, checks and trace: one click away, for who
/// needs them (an auditor, a developer), out of the reviewer's way.
#[component]
fn RequestDetails(confirm: Confirm, checked: bool) -> impl IntoView {
    let trace = match confirm.trace.clone() {
        Some(t) => view! {
            <dt>"Trace id"</dt><dd><code>{t.trace_id.to_string()}</code></dd>
            <dt>"Span id"</dt><dd><code>{t.span_id.to_string()}</code></dd>
        }
        .into_any(),
        None => view! { <dt>"Trace"</dt><dd>"none"</dd> }.into_any(),
    };
    view! {
        <details class="card request-details">
            <summary>"Technical details"</summary>
            <dl class="fields">
                <dt>"Confirm id"</dt><dd><code>{confirm.confirm_id.to_string()}</code></dd>
                <dt>"Target"</dt><dd>{confirm.target_type.as_str()} " " <code>{confirm.target_id.to_string()}</code></dd>
                <dt>"Requested at"</dt><dd>{confirm.requested_at.exact()}</dd>
                <dt>"Protocol"</dt><dd>{format!("MPLP {} (schema {})", confirm.meta.protocol_version, confirm.meta.schema_version)}</dd>
                {checked.then(|| view! { <dt>"Checks"</dt><dd>"passes every MPLP check"</dd> })}
                {trace}
            </dl>
        </details>
    }
}

/// The review's MPLP documents as JSON, to copy or download.
#[component]
fn RawDocuments(review: Review) -> impl IntoView {
    let raw = serde_json::to_string_pretty(&exchange::documents(&review)).unwrap_or_default();
    let said = RwSignal::new(None::<String>);
    let raw_for_copy = raw.clone();
    let copy = move |_| {
        let clipboard = web_sys::window().map(|w| w.navigator().clipboard());
        match clipboard {
            Some(c) => {
                let _ = c.write_text(&raw_for_copy);
                said.set(Some("Copied to the clipboard.".to_owned()));
            }
            None => said.set(Some(
                "The clipboard is not available; select the text instead.".to_owned(),
            )),
        }
    };
    let raw_for_download = raw.clone();
    let file_name = format!("review-{}.json", review.confirm.confirm_id);
    let export = move |_| {
        if let Err(e) = download(&file_name, "application/json", &raw_for_download) {
            said.set(Some(e));
        }
    };
    view! {
        <details class="card raw">
            <summary>"Raw JSON (MPLP documents)"</summary>
            <div class="actions">
                <button type="button" on:click=copy>"Copy JSON"</button>
                <button type="button" on:click=export>"Download JSON"</button>
                <span role="status" class="subtle">{move || said.get()}</span>
            </div>
            <pre><code>{raw}</code></pre>
        </details>
    }
}
