//! The decision buttons, what each tells the agent it receives, and the
//! notices of what stands in the way of a decision or is happening to one.

use super::state::FormState;
use super::Offer;
use countersign_domain::model::DecisionStatus;
use countersign_domain::toolcall::ToolMode;
use leptos::prelude::*;

/// What stands in the way of a decision, and what is happening to one.
#[component]
pub(super) fn FormNotices(
    form: FormState,
    expired: Signal<bool>,
    problems: usize,
    answers_given: bool,
) -> impl IntoView {
    let FormState {
        form_error, held, ..
    } = form;
    view! {
        {move || expired.get().then(|| view! {
            <p class="notice notice-danger">"This request has expired: it can no longer be approved (it is denied by default)."</p>
        })}
        {(problems > 0).then(|| view! {
            <p id="approval-blocked" class="notice notice-danger">
                {format!(
                    "Approval is impossible: this request has {problems} validation problem{} (listed under Problems). You can still reject or cancel it.",
                    if problems == 1 { "" } else { "s" }
                )}
            </p>
        })}
        <p class="field-error" role="alert">{move || form_error.get()}</p>
        <p class="subtle" role="status">{move || form.busy().then_some(if answers_given {
            "Resuming the thread, and waiting for LangGraph to run it…"
        } else {
            "Saving your decision…"
        })}</p>
        <p class="notice" role="status" hidden=move || held.with(Option::is_none)>{move || held.get()}</p>
    }
}

/// The buttons the offer holds: approve (however the call is set to be
/// approved), deny, send feedback, cancel; each described by what the agent
/// receives. Cancelling asks once more, since it closes the request unread.
#[component]
pub(super) fn DecisionButtons(
    form: FormState,
    offer: Offer,
    expired: Signal<bool>,
    blocked: bool,
    answers_given: bool,
) -> impl IntoView {
    let busy = move || form.busy();
    let is_tool = form.tool.is_some();
    let effects = Effects::of(is_tool, answers_given);
    let confirming = RwSignal::new(false);
    let approve_label = move || match form.tool.map(|t| t.mode.get()) {
        Some(ToolMode::Scope) => "Approve with scope",
        Some(ToolMode::Edit) => "Approve edited call",
        Some(_) if answers_given => "Approve",
        Some(_) => "Approve once",
        None => "Approve",
    };
    let described = move |effect: &'static str| {
        if blocked && effect == "effect-approve" {
            "approval-blocked effect-approve"
        } else {
            effect
        }
    };
    view! {
        <ul class="effects" aria-label="What the agent receives">
            {offer.approves().then(|| view! { <li id="effect-approve">{effects.approve}</li> })}
            {offer.deny.map(|label| view! { <li id="effect-reject"><strong>{label}</strong>": "{effects.deny}</li> })}
            {offer.feedback.filter(|_| is_tool).map(|label| view! { <li id="effect-feedback"><strong>{label}</strong>": "{effects.feedback}</li> })}
            {offer.cancel.map(|label| view! { <li id="effect-cancel"><strong>{label}</strong>": "{effects.cancel}</li> })}
        </ul>
        <div class="actions decision-actions" hidden=move || confirming.get()>
            {offer.approves().then(|| view! {
                <button
                    id="approve"
                    type="button"
                    class="button-approve"
                    disabled=move || blocked || busy() || expired.get()
                    aria-describedby=described("effect-approve")
                    aria-keyshortcuts="a"
                    on:click=move |_| form.submit(DecisionStatus::Approved, false)
                >{approve_label}</button>
            })}
            {offer.deny.map(|label| view! {
                <button id="reject" type="button" class="button-reject" aria-keyshortcuts="r" aria-describedby="effect-reject" disabled=busy on:click=move |_| form.submit(DecisionStatus::Rejected, false)>{label}</button>
            })}
            {offer.feedback.filter(|_| is_tool).map(|label| view! {
                <button id="feedback" type="button" class="button-quiet" aria-describedby="effect-feedback" disabled=busy on:click=move |_| form.submit(DecisionStatus::Rejected, true)>{label}</button>
            })}
            {offer.cancel.map(|label| {
                // An interrupt's Ignore is an answer the graph acts on; a
                // Countersign cancel closes the request, so it asks first.
                let asks = !answers_given;
                view! {
                    <button id="cancel" type="button" class="button-quiet" aria-describedby="effect-cancel" disabled=busy
                        on:click=move |_| if asks { confirming.set(true) } else { form.submit(DecisionStatus::Cancelled, false) }
                    >{label}</button>
                }
            })}
        </div>
        {move || confirming.get().then(|| view! { <CancelConfirm form confirming effect=effects.cancel /> })}
    }
}

/// The second step of "Cancel request": says what the agent receives, and
/// either cancels or goes back to the decision buttons.
#[component]
fn CancelConfirm(
    form: FormState,
    confirming: RwSignal<bool>,
    effect: &'static str,
) -> impl IntoView {
    let busy = move || form.busy();
    view! {
        <div class="actions decision-actions cancel-confirm" role="group" aria-labelledby="cancel-question">
            <p id="cancel-question" class="cancel-question"><strong>"Cancel this request?"</strong>" "{effect}</p>
            <button id="cancel-confirm" type="button" class="button-reject" disabled=busy
                on:click=move |_| form.submit(DecisionStatus::Cancelled, false)
            >"Yes, cancel request"</button>
            <button id="cancel-keep" type="button" class="button-quiet" autofocus
                on:click=move |_| confirming.set(false)
            >"Keep it"</button>
        </div>
    }
}

/// What the agent receives for each decision, as the reviewer is told it.
#[derive(Clone, Copy)]
struct Effects {
    approve: &'static str,
    deny: &'static str,
    feedback: &'static str,
    cancel: &'static str,
}

impl Effects {
    fn of(is_tool: bool, interrupt: bool) -> Effects {
        if interrupt {
            Effects {
                approve: "The thread resumes and runs the call as approved.",
                deny: "the thread resumes with your rejection and reason; the call does not run.",
                feedback: "the thread resumes with your text as its answer; the call does not run.",
                cancel: "the thread resumes and skips the call, with no answer.",
            }
        } else if is_tool {
            Effects {
                approve: "Approving lets the agent run this call once (or as your scope or edit says).",
                deny: "the call does not run; the agent is told it was denied, with your reason.",
                feedback: "the call does not run; the agent gets your text as feedback to act on (recorded as rejected).",
                cancel: "the call does not run; the agent is told it was cancelled, with no reason unless you wrote one.",
            }
        } else {
            Effects {
                approve: "Approving lets the agent go ahead with this request.",
                deny: "the agent is told no, with your reason, and does not go ahead.",
                feedback: "",
                cancel: "the request is closed; the agent is told it was cancelled, with no reason unless you wrote one.",
            }
        }
    }
}
