//! How far a tool call's approval reaches: once, with a scope, or with
//! modified arguments.

use super::Offer;
use crate::components::args_editor::ArgsEditor;
use crate::components::tool_call::pretty;
use countersign_domain::toolcall::{RiskTier, Scope, ToolCallReview, ToolChoice, ToolMode};
use leptos::prelude::*;

/// How an approval of a tool call reaches, as the reviewer sets it.
#[derive(Clone, Copy)]
pub(super) struct ToolOptions {
    pub(super) mode: RwSignal<ToolMode>,
    pub(super) scope: RwSignal<Scope>,
    pub(super) whole_tool: RwSignal<bool>,
    pub(super) confirm_high_risk: RwSignal<bool>,
    pub(super) args: RwSignal<String>,
    pub(super) risk: RiskTier,
    pub(super) offer: Offer,
    pub(super) name: StoredValue<String>,
    pub(super) original: StoredValue<serde_json::Map<String, serde_json::Value>>,
}

impl ToolOptions {
    pub(super) fn new(call: &ToolCallReview, offer: Offer) -> Self {
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

    pub(super) fn choice(&self) -> ToolChoice {
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
pub(super) fn ToolChoiceFields(options: ToolOptions) -> impl IntoView {
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
