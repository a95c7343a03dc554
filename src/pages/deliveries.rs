//! Settings → Webhooks: where the connected Countersign server sends its
//! events and how the latest deliveries went, so a receiver that stopped
//! answering is seen here rather than noticed by a missed approval.

use crate::components::loaded::Loaded;
use crate::desk::Access;
use crate::router::href;
use countersign_domain::wire::{Delivery, DeliveryState, WebhookList, WebhookStatus};
use leptos::prelude::*;

/// The webhooks card, read when shown.
#[component]
pub fn WebhookDeliveries(access: Access) -> impl IntoView {
    let list = LocalResource::new(move || access.clone().webhooks());
    let hooks = |list: WebhookList| {
        if list.webhooks.is_empty() {
            return view! {
                <p class="subtle">"This server sends no webhooks. Start it with "<code>"--webhook URL"</code>" to tell a chat or paging tool about each new, decided, expired or escalated request."</p>
            }
            .into_any();
        }
        view! { <Hooks list /> }.into_any()
    };
    view! {
        <section class="card webhooks" aria-labelledby="webhooks-title">
            <h2 id="webhooks-title">"Webhooks"</h2>
            <Loaded resource=list what="The webhooks" shown=hooks />
            <div class="actions"><button type="button" class="button-quiet" on:click=move |_| list.refetch()>"Refresh"</button></div>
        </section>
    }
}

/// Each webhook's totals, then the latest deliveries.
#[component]
fn Hooks(list: WebhookList) -> impl IntoView {
    view! {
        <ul class="webhook-list" aria-label="Webhooks">
            {list.webhooks.into_iter().map(|hook| view! { <Hook hook /> }).collect_view()}
        </ul>
        {(!list.deliveries.is_empty()).then(|| view! {
            <h3>"Latest deliveries"</h3>
            <ul class="delivery-list" aria-label="Latest deliveries">
                {list.deliveries.into_iter().take(10).map(|delivery| view! { <DeliveryRow delivery /> }).collect_view()}
            </ul>
        })}
    }
}

#[component]
fn Hook(hook: WebhookStatus) -> impl IntoView {
    let format = match hook.format {
        countersign_domain::wire::WebhookFormat::Json => "JSON",
        countersign_domain::wire::WebhookFormat::Slack => "Slack",
    };
    view! {
        <li>
            <code>{hook.url}</code>" · "{format}
            <p class="subtle">{format!("{} sent · {} waiting or retried · {} given up", hook.sent, hook.pending, hook.failed)}</p>
        </li>
    }
}

#[component]
fn DeliveryRow(delivery: Delivery) -> impl IntoView {
    let (label, class) = match delivery.state {
        DeliveryState::Sent => ("sent", "badge badge-ok"),
        DeliveryState::Pending if delivery.attempts > 0 => ("retrying", "badge badge-warning"),
        DeliveryState::Pending => ("waiting", "badge"),
        DeliveryState::Failed => ("given up", "badge badge-escalated"),
    };
    let attempts = match delivery.attempts {
        1 => "1 attempt".to_owned(),
        n => format!("{n} attempts"),
    };
    view! {
        <li>
            <span class=class>{label}</span>" "
            <a href=href(&format!("/reviews/{}", delivery.review_id))>{delivery.kind.as_str()}</a>
            <span class="subtle">{format!(" · {attempts} · {}", delivery.url)}</span>
            {delivery.last_error.map(|e| view! { <p class="field-error">{e}</p> })}
        </li>
    }
}
