//! A server's answer on a screen, read when the screen is shown: "Loading…"
//! until it answers, then the screen's view of it, or why it cannot be read
//! with a way to ask again. (Reloading keeps what is shown until the new
//! answer arrives.)

use leptos::prelude::*;

/// `shown` of what `resource` answered; `what` names it in a failure
/// ("The paired devices" cannot be read: …).
#[component]
pub fn Loaded<T, E, V>(
    resource: LocalResource<Result<T, E>>,
    what: &'static str,
    shown: impl Fn(T) -> V + Send + Sync + 'static,
) -> impl IntoView
where
    T: Clone + 'static,
    E: std::fmt::Display + Clone + 'static,
    V: IntoView + 'static,
{
    move || match resource.get() {
        None => view! { <p role="status" class="subtle">"Loading…"</p> }.into_any(),
        Some(Err(e)) => view! {
            <div class="notice notice-danger" role="alert">
                <p>{format!("{what} cannot be read: {e}")}</p>
                <button type="button" on:click=move |_| resource.refetch()>"Try again"</button>
            </div>
        }
        .into_any(),
        Some(Ok(value)) => shown(value).into_any(),
    }
}
