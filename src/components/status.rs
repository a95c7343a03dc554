//! Statuses shown by icon and text as well as colour.

use countersign_domain::model::{ConfirmStatus, PlanStatus};
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
