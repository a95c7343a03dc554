//! Approve, reject (with a reason) or cancel: checked by the domain's `decide`
//! in the browser before anything is saved; errors appear next to their field,
//! and what the reviewer typed stays on screen until the decision is saved.
//! On a server, a retry of the same decision reuses its idempotency key.
//! For a tool call the reviewer also chooses how far an approval reaches (once,
//! with a scope, or with modified arguments) or answers with feedback.

use crate::browser;
use crate::components::args_editor::ArgsEditor;
use crate::components::tool_call::{pretty, seconds_left};
use crate::desk::{DecisionFailure, Decisions, Desk, Notices, Origin, Preferences};
use countersign_domain::langgraph::Answer;
use countersign_domain::model::DecisionStatus;
use countersign_domain::policy::PolicyRefusal;
use countersign_domain::toolcall::{RiskTier, Scope, ToolCallReview, ToolChoice, ToolMode};
use countersign_domain::{DecideError, DecisionInput, MplpId};
use leptos::html;
use leptos::prelude::*;

/// The role to sign as: chosen from the roles the reviewer's key holds when
/// the server has said which, else typed (local storage has no keys).
#[component]
fn RoleField(
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

/// Which decisions the form offers, and what their buttons say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Offer {
    once: bool,
    scope: bool,
    edit: bool,
    /// The deny / reject button's label, if offered.
    deny: Option<&'static str>,
    /// The feedback / respond button's label, if offered.
    feedback: Option<&'static str>,
    /// The cancel / ignore button's label, if offered.
    cancel: Option<&'static str>,
}

impl Offer {
    /// Everything Countersign offers for a plan or another request.
    const REQUEST: Offer = Offer {
        once: true,
        scope: false,
        edit: false,
        deny: Some("Reject"),
        feedback: None,
        cancel: Some("Cancel request"),
    };

    /// Everything Countersign offers for a tool call.
    const TOOL_CALL: Offer = Offer {
        once: true,
        scope: true,
        edit: true,
        deny: Some("Deny"),
        feedback: Some("Send feedback"),
        cancel: Some("Cancel request"),
    };

    /// Only what a LangGraph interrupt takes.
    fn interrupt(answers: &[Answer]) -> Offer {
        let takes = |a: Answer| answers.contains(&a);
        Offer {
            once: takes(Answer::Accept) || takes(Answer::Approve),
            scope: false,
            edit: takes(Answer::Edit) || takes(Answer::EditAction),
            deny: takes(Answer::Reject).then_some("Reject"),
            feedback: (takes(Answer::Respond) || takes(Answer::Reply)).then_some("Respond"),
            cancel: takes(Answer::Ignore).then_some("Ignore"),
        }
    }

    fn approves(&self) -> bool {
        self.once || self.edit
    }
}

/// The decision form of one pending review (`call` when it is a tool call;
/// `answers` when it is a LangGraph interrupt, which takes only those).
#[component]
pub fn DecisionForm(
    id: MplpId,
    problems: usize,
    #[prop(optional)] call: Option<ToolCallReview>,
    #[prop(optional)] answers: Option<Vec<Answer>>,
) -> impl IntoView {
    let offer = match (&call, &answers) {
        (_, Some(answers)) => Offer::interrupt(answers),
        // An agent that cannot run edited arguments is not offered an edit.
        (Some(call), None) => Offer {
            edit: call.request.editable,
            ..Offer::TOOL_CALL
        },
        (None, None) => Offer::REQUEST,
    };
    let tool = call.as_ref().map(|c| ToolOptions::new(c, offer));
    let expired = match &call {
        Some(c) => {
            let left = seconds_left(&c.request);
            Signal::derive(move || left.get() <= 0)
        }
        None => Signal::derive(|| false),
    };
    let form = FormState::new(id, tool);
    let answers_given = answers.is_some();
    let blocked = problems > 0;
    view! {
        <form class="decision" aria-labelledby="decision-title" on:submit=|ev| ev.prevent_default()>
            <h2 id="decision-title">"Your decision"</h2>
            <RoleField id role=form.role role_error=form.role_error />
            <ReasonField form offer />
            {tool.map(|options| view! { <ToolChoiceFields options /> })}
            <FormNotices form expired problems answers_given />
            <DecisionButtons form offer expired blocked answers_given />
        </form>
    }
}

/// What the form holds between keystrokes and attempts. Its intents:
/// [`FormState::submit`] a decision, [`FormState::show`] why one failed.
#[derive(Clone, Copy)]
struct FormState {
    desk: Desk,
    decisions: Decisions,
    notices: Notices,
    id: MplpId,
    tool: Option<ToolOptions>,
    role: RwSignal<String>,
    reason: RwSignal<String>,
    role_error: RwSignal<Option<String>>,
    reason_error: RwSignal<Option<String>>,
    form_error: RwSignal<Option<String>>,
    reason_ref: NodeRef<html::Textarea>,
    busy: RwSignal<bool>,
    held: RwSignal<Option<String>>,
    /// The last attempt and its idempotency key: the same decision sent again
    /// (after a network failure) keeps the key, so it is never recorded twice.
    attempt: StoredValue<Option<(DecisionInput, String)>>,
}

impl FormState {
    /// The form of review `id`, with what was typed before it was drawn again.
    fn new(id: MplpId, tool: Option<ToolOptions>) -> FormState {
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
            busy: RwSignal::new(false),
            held: RwSignal::new(
                Origin::from_context()
                    .held(id)
                    .map(|waiting| DecisionFailure::Held(waiting).to_string()),
            ),
            attempt: StoredValue::new(None),
        }
    }

    /// Sends the decision (once at a time), keeping the idempotency key of
    /// an identical earlier attempt.
    fn submit(self, status: DecisionStatus, feedback: bool) {
        if self.busy.get_untracked() {
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
        self.busy.set(true);
        leptos::task::spawn_local(async move {
            let outcome = self.desk.decide(self.id, &input, &key).await;
            self.busy.set(false);
            match outcome {
                Ok(_) => self.decisions.drop_draft(self.id),
                Err(failure) => self.show(failure),
            }
        });
    }

    /// Shows why a decision was not recorded, next to what has to change.
    /// (Also called when a decision fails after the form may have gone.)
    fn show(self, failure: DecisionFailure) {
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

/// The reason (or feedback) the agent reads; Ctrl+Enter rejects.
#[component]
fn ReasonField(form: FormState, offer: Offer) -> impl IntoView {
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

/// What stands in the way of a decision, and what is happening to one.
#[component]
fn FormNotices(
    form: FormState,
    expired: Signal<bool>,
    problems: usize,
    answers_given: bool,
) -> impl IntoView {
    let FormState {
        form_error,
        busy,
        held,
        ..
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
        <p class="subtle" role="status">{move || busy.get().then_some(if answers_given {
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
fn DecisionButtons(
    form: FormState,
    offer: Offer,
    expired: Signal<bool>,
    blocked: bool,
    answers_given: bool,
) -> impl IntoView {
    let busy = form.busy;
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
                    disabled=move || blocked || busy.get() || expired.get()
                    aria-describedby=described("effect-approve")
                    aria-keyshortcuts="a"
                    on:click=move |_| form.submit(DecisionStatus::Approved, false)
                >{approve_label}</button>
            })}
            {offer.deny.map(|label| view! {
                <button id="reject" type="button" class="button-reject" aria-keyshortcuts="r" aria-describedby="effect-reject" disabled=move || busy.get() on:click=move |_| form.submit(DecisionStatus::Rejected, false)>{label}</button>
            })}
            {offer.feedback.filter(|_| is_tool).map(|label| view! {
                <button id="feedback" type="button" class="button-quiet" aria-describedby="effect-feedback" disabled=move || busy.get() on:click=move |_| form.submit(DecisionStatus::Rejected, true)>{label}</button>
            })}
            {offer.cancel.map(|label| {
                // An interrupt's Ignore is an answer the graph acts on; a
                // Countersign cancel closes the request, so it asks first.
                let asks = !answers_given;
                view! {
                    <button id="cancel" type="button" class="button-quiet" aria-describedby="effect-cancel" disabled=move || busy.get()
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
    let busy = form.busy;
    view! {
        <div class="actions decision-actions cancel-confirm" role="group" aria-labelledby="cancel-question">
            <p id="cancel-question" class="cancel-question"><strong>"Cancel this request?"</strong>" "{effect}</p>
            <button id="cancel-confirm" type="button" class="button-reject" disabled=move || busy.get()
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

/// How an approval of a tool call reaches, as the reviewer sets it.
#[derive(Clone, Copy)]
struct ToolOptions {
    mode: RwSignal<ToolMode>,
    scope: RwSignal<Scope>,
    whole_tool: RwSignal<bool>,
    confirm_high_risk: RwSignal<bool>,
    args: RwSignal<String>,
    risk: RiskTier,
    offer: Offer,
    name: StoredValue<String>,
    original: StoredValue<serde_json::Map<String, serde_json::Value>>,
}

impl ToolOptions {
    fn new(call: &ToolCallReview, offer: Offer) -> Self {
        let parsed = call.request.tool_call().ok();
        let original = parsed.as_ref().map(|c| c.args.clone()).unwrap_or_default();
        ToolOptions {
            mode: RwSignal::new(if offer.once {
                ToolMode::Once
            } else {
                ToolMode::Edit
            }),
            scope: RwSignal::new(Scope::Session),
            whole_tool: RwSignal::new(false),
            confirm_high_risk: RwSignal::new(false),
            args: RwSignal::new(pretty(
                &serde_json::Value::Object(original.clone()).to_string(),
            )),
            risk: call.request.risk_tier,
            offer,
            name: StoredValue::new(parsed.map(|c| c.name).unwrap_or_default()),
            original: StoredValue::new(original),
        }
    }

    fn choice(&self) -> ToolChoice {
        match self.mode.get_untracked() {
            ToolMode::Scope => ToolChoice {
                mode: Some(ToolMode::Scope),
                scope: Some(self.scope.get_untracked()),
                whole_tool: self.whole_tool.get_untracked(),
                confirm_high_risk: self.confirm_high_risk.get_untracked(),
                args: None,
            },
            ToolMode::Edit => ToolChoice {
                mode: Some(ToolMode::Edit),
                args: Some(self.args.get_untracked()),
                ..ToolChoice::default()
            },
            _ => ToolChoice {
                mode: Some(ToolMode::Once),
                ..ToolChoice::default()
            },
        }
    }
}

/// The approval options of a tool call.
#[component]
fn ToolChoiceFields(options: ToolOptions) -> impl IntoView {
    let mode_radio = move |value: ToolMode, label: &'static str| {
        view! {
            <label class="choice">
                <input type="radio" name="approve-mode" value=value.as_str()
                    prop:checked=move || options.mode.get() == value
                    on:change=move |_| options.mode.set(value) />
                {label}
            </label>
        }
    };
    let on_scope = move |ev| {
        if let Ok(scope) = event_target_value(&ev).parse() {
            options.scope.set(scope);
        }
    };
    let r4 = options.risk == RiskTier::R4;
    let r3_workspace =
        move || options.risk == RiskTier::R3 && options.scope.get() == Scope::Workspace;
    let offer = options.offer;
    let interrupt = !offer.scope;
    view! {
        {offer.approves().then(|| view! {
            <fieldset class="field tool-options">
                <legend>"If you approve"</legend>
                {offer.once.then(|| mode_radio(ToolMode::Once, if interrupt { "Approve as asked" } else { "Approve once: this call, this time" }))}
                {offer.scope.then(|| mode_radio(ToolMode::Scope, "Approve with scope"))}
                {offer.edit.then(|| mode_radio(ToolMode::Edit, "Approve with modifications"))}
            </fieldset>
        })}
        <Show when=move || options.mode.get() == ToolMode::Scope>
            <div class="field">
                <label for="scope">"Scope"</label>
                <select id="scope" on:change=on_scope prop:value=move || options.scope.get().as_str()>
                    {Scope::ALL.into_iter().map(|s| {
                        let refused = r4 && s == Scope::Workspace;
                        view! {
                            <option value=s.as_str() disabled=refused>
                                {if refused { format!("{} (refused for R4)", s.label()) } else { s.label().to_owned() }}
                            </option>
                        }
                    }).collect_view()}
                </select>
                <label class="choice">
                    <input type="checkbox" prop:checked=move || options.whole_tool.get()
                        on:change=move |ev| options.whole_tool.set(event_target_checked(&ev)) />
                    "Every call of this tool, whatever its arguments"
                </label>
                <Show when=r3_workspace>
                    <label class="choice notice notice-danger">
                        <input type="checkbox" prop:checked=move || options.confirm_high_risk.get()
                            on:change=move |ev| options.confirm_high_risk.set(event_target_checked(&ev)) />
                        "I confirm: always allow this R3 call in this workspace, without asking again"
                    </label>
                </Show>
                <p class="subtle">"Later calls within the scope are approved without asking, each with its own decision and token."</p>
            </div>
        </Show>
        <Show when=move || options.mode.get() == ToolMode::Edit>
            <ArgsEditor name=options.name.get_value() original=options.original.get_value() text=options.args />
        </Show>
    }
}
