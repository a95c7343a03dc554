//! Settings › Slack, for a signed-in person: linking the Slack account a
//! link code was sent to (the code arrives in the address, `?slack=…`,
//! from the message Slack showed that user alone), and the accounts linked,
//! each of which can be unlinked. A click in Slack decides only for a
//! person linked here.

use super::signin::own_server;
use crate::backend::HttpError;
use crate::components::loaded::Loaded;
use countersign_domain::wire::{SlackLink, SlackUser};
use leptos::prelude::*;

/// The Slack card: the link offered by `?slack=…`, and the linked accounts.
/// Shown only when there is one or the other.
#[component]
pub fn SlackCard() -> impl IntoView {
    let code = crate::router::use_location().param("slack");
    let links = LocalResource::new(|| async { own_server().slack_links().await });
    let linking = Action::new_unsync(move |code: &String| {
        let code = code.clone();
        async move {
            let linked = own_server().link_slack(&code).await;
            links.refetch();
            linked
        }
    });
    let unlinking = Action::new_unsync(move |user: &SlackUser| {
        let user = user.clone();
        async move {
            let done = own_server().unlink_slack(&user).await;
            links.refetch();
            done
        }
    });
    let has_links = move || {
        links
            .get()
            .is_some_and(|l| l.as_ref().is_ok_and(|l| !l.is_empty()))
    };
    let offered = code.clone();
    let shown = move || offered.is_some() || has_links();
    let list = move |list: Vec<SlackLink>| view! { <LinkedAccounts list unlinking /> };
    view! {
        <Show when=shown>
            <section class="card slack" aria-labelledby="slack-title">
                <h2 id="slack-title">"Slack"</h2>
                {code.clone().map(|code| view! { <LinkOffer code linking /> })}
                <Loaded resource=links what="Your Slack accounts" shown=list />
                <p role="status" class="subtle">{move || unlinking.value().get().map(|done| match done {
                    Ok(()) => "Unlinked.".to_owned(),
                    Err(e) => format!("Not unlinked: {e}"),
                })}</p>
            </section>
        </Show>
    }
}

/// "Link this Slack account to you?", for the code in the address.
#[component]
fn LinkOffer(code: String, linking: Action<String, Result<SlackLink, HttpError>>) -> impl IntoView {
    let asked = code.clone();
    let user = LocalResource::new(move || {
        let code = asked.clone();
        async move { own_server().slack_link_code(&code).await }
    });
    let offer = move |user: SlackUser| {
        let code = code.clone();
        view! {
            <p>"Link the Slack account " <strong>{user.label()}</strong> " to you? Its clicks on Approve and Deny in Slack will then decide as you, with your roles."</p>
            <div class="actions">
                <button type="button" disabled=move || linking.pending().get() on:click=move |_| { linking.dispatch(code.clone()); }>"Link"</button>
            </div>
        }
    };
    let said = move || match linking.value().get() {
        Some(Ok(link)) => Some(format!(
            "Linked {}. Click the button in Slack again.",
            link.user.label()
        )),
        Some(Err(e)) => Some(format!("Not linked: {e}")),
        None => None,
    };
    view! {
        <Show when=move || !matches!(linking.value().get(), Some(Ok(_)))>
            <Loaded resource=user what="This link" shown=offer.clone() />
        </Show>
        <p role="status">{said}</p>
    }
}

/// The person's linked Slack accounts, each with Unlink.
#[component]
fn LinkedAccounts(
    list: Vec<SlackLink>,
    unlinking: Action<SlackUser, Result<(), HttpError>>,
) -> impl IntoView {
    if list.is_empty() {
        return view! { <p class="subtle">"No Slack account is linked to you."</p> }.into_any();
    }
    view! {
        <ul class="slack-links" aria-label="Linked Slack accounts">
            {list.into_iter().map(|link| {
                let user = link.user.clone();
                view! {
                    <li>
                        <span>{link.user.label()}</span>
                        <button type="button" disabled=move || unlinking.pending().get() on:click=move |_| { unlinking.dispatch(user.clone()); }>"Unlink"</button>
                    </li>
                }
            }).collect_view()}
        </ul>
    }
    .into_any()
}
