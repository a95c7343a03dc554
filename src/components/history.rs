//! The decision history as a timeline, and the events.

use countersign_domain::model::{Confirm, Event};
use countersign_domain::text::reveal;
use countersign_domain::Decider;
use leptos::prelude::*;

/// Every decision, oldest first, with who made it and where when a server
/// recorded them (`deciders`): the signed-in person, else the key's owner,
/// else the key; the desk, the API, Slack or e-mail.
#[component]
pub fn DecisionTimeline(confirm: Confirm, deciders: Vec<Decider>) -> impl IntoView {
    let decisions = confirm.decisions().to_vec();
    let now = crate::browser::now();
    if decisions.is_empty() {
        return view! { <p class="subtle">"No decision yet."</p> }.into_any();
    }
    view! {
        <ol class="timeline" aria-label="Decision history">
            {decisions.into_iter().map(|d| {
                let decider = deciders.iter().find(|k| k.decision_id == d.decision_id);
                let who = decider.map(|k| format!(" ({})", reveal::label(k.key_ref().person())));
                // Where it was made, when the server recorded it: "in Slack".
                let channel = decider
                    .and_then(|k| k.channel)
                    .map(|c| format!(" {}", c.phrase()));
                view! {
                <li class=format!("timeline-item decision-{}", d.status.as_str())>
                    <p class="timeline-head">
                        <strong>{d.status.as_str()}</strong>
                        " by " <span class="role">{reveal::label(&d.decided_by_role)}</span>
                        {who}
                        {channel}
                        " · "
                        <time datetime=d.decided_at.to_string() title=d.decided_at.exact()>{d.decided_at.ago(now)}</time>
                    </p>
                    {d.reason.clone().map(|r| view! { <p class="timeline-reason">{reveal::prose(&r)}</p> })}
                </li>
                }
            }).collect_view()}
        </ol>
    }
    .into_any()
}

/// The events of the confirm and its target.
#[component]
pub fn EventList(events: Vec<Event>) -> impl IntoView {
    if events.is_empty() {
        return view! { <p class="subtle">"No events."</p> }.into_any();
    }
    view! {
        <table class="events">
            <thead><tr><th scope="col">"Event"</th><th scope="col">"Source"</th><th scope="col">"Time"</th></tr></thead>
            <tbody>
                {events.into_iter().map(|e| view! {
                    <tr>
                        <td><code>{e.event_type.to_string()}</code></td>
                        <td>{e.source.clone()}</td>
                        <td><time datetime=e.timestamp.to_string()>{e.timestamp.exact()}</time></td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }
    .into_any()
}
