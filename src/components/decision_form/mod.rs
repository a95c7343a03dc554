//! Approve, reject (with a reason) or cancel: checked by the domain's `decide`
//! in the browser before anything is saved; errors appear next to their field,
//! and what the reviewer typed stays on screen until the decision is saved.
//! On a server, a retry of the same decision reuses its idempotency key.
//! For a tool call the reviewer also chooses how far an approval reaches (once,
//! with a scope, or with modified arguments) or answers with feedback.
//!
//! - `state`: what the form holds, and its intents (submit, show a failure);
//! - `fields`: the role to sign as and the reason;
//! - `tool_options`: how far a tool call's approval reaches;
//! - `buttons`: the decision buttons, what each tells the agent, and notices.

mod buttons;
mod fields;
mod state;
mod tool_options;

use crate::components::tool_call::seconds_left;
use buttons::{DecisionButtons, FormNotices};
use countersign_domain::langgraph::Answer;
use countersign_domain::toolcall::ToolCallReview;
use countersign_domain::MplpId;
use fields::{ReasonField, RoleField};
use leptos::prelude::*;
use state::FormState;
use tool_options::{ToolChoiceFields, ToolOptions};

/// Which decisions the form offers, and what their buttons say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Offer {
    pub(super) once: bool,
    pub(super) scope: bool,
    pub(super) edit: bool,
    /// The deny / reject button's label, if offered.
    pub(super) deny: Option<&'static str>,
    /// The feedback / respond button's label, if offered.
    pub(super) feedback: Option<&'static str>,
    /// The cancel / ignore button's label, if offered.
    pub(super) cancel: Option<&'static str>,
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

    pub(super) fn approves(&self) -> bool {
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
