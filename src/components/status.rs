//! Statuses shown by icon and text as well as colour.

use countersign_domain::model::{ConfirmStatus, PlanStatus, StepStatus};
use leptos::prelude::*;

/// A confirm's status as a badge.
#[component]
pub fn StatusBadge(status: ConfirmStatus) -> impl IntoView {
    view! {
        <span class=format!("status status-{}", status.as_str())>
            <span aria-hidden="true">{status.symbol()}</span>
            " " {status.as_str()}
        </span>
    }
}

/// A plan's status as a badge.
#[component]
pub fn PlanStatusBadge(status: PlanStatus) -> impl IntoView {
    view! { <span class=format!("status plan-status-{}", status.as_str())>{status.as_str().replace('_', " ")}</span> }
}

/// The icon of a step status.
pub fn step_icon(status: StepStatus) -> &'static str {
    match status {
        StepStatus::Pending => "○",
        StepStatus::InProgress => "◐",
        StepStatus::Completed => "✓",
        StepStatus::Blocked => "⊘",
        StepStatus::Skipped => "↷",
        StepStatus::Failed => "✕",
    }
}

/// A step status in words.
pub fn step_label(status: StepStatus) -> String {
    status.as_str().replace('_', " ")
}
