//! Settings → Notifications: the reviewer's opt-in to desktop notifications
//! of new requests and the app badge. The browser's permission prompt comes
//! only from the click on "Turn on".

use crate::desk::Preferences;
use crate::settings::Settings;
use leptos::prelude::*;

/// The notifications card.
#[component]
pub fn NotificationChoice() -> impl IntoView {
    let preferences = Preferences::from_context();
    let message = RwSignal::new(None::<String>);
    let on = move || preferences.get().with(|s| s.notify);
    let save = move |notify: bool| {
        let saved = preferences.save(Settings {
            notify,
            ..preferences.get().get_untracked()
        });
        message.set(Some(match (saved, notify) {
            (Err(e), _) => e.to_string(),
            (Ok(()), true) => {
                "On: a new request shows a notification while this tab is hidden.".to_owned()
            }
            (Ok(()), false) => "Off.".to_owned(),
        }));
    };
    let asking = Action::new_unsync(move |(): &()| async move {
        if crate::notify::ask().await {
            save(true);
        } else {
            message.set(Some("The browser did not allow notifications: allow them for this site in the browser's settings, then try again.".to_owned()));
        }
    });
    view! {
        <section class="card" aria-labelledby="notifications-title">
            <h2 id="notifications-title">"Notifications"</h2>
            <p class="subtle">"While this tab is hidden, each new request waiting for you shows a desktop notification; clicking it opens the request. An installed app also shows the number waiting on its icon. Needs this tab open and connected to a server."</p>
            {move || if !crate::notify::supported() {
                view! { <p>"This browser cannot show notifications."</p> }.into_any()
            } else if on() {
                view! { <button type="button" class="button-quiet" on:click=move |_| save(false)>"Turn off notifications"</button> }.into_any()
            } else {
                view! { <button type="button" class="button-primary" disabled=move || asking.pending().get() on:click=move |_| { asking.dispatch(()); }>"Turn on notifications"</button> }.into_any()
            }}
            <p role="status" class="subtle">{move || message.get()}</p>
        </section>
    }
}
