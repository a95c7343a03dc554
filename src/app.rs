//! The app shell: navigation, routes, notices, theme and keyboard shortcuts.

use crate::desk::{Desk, Notices, Origin, Preferences, Reviews};
use crate::keyboard::{use_shortcuts, SHORTCUTS};
use crate::pages::inbox::Inbox;
use crate::pages::on_demand::{self, OnDemand};
use crate::router::{href, provide_location, settings_then, Route};
use leptos::prelude::*;

/// The whole app.
#[component]
pub fn App() -> impl IntoView {
    let desk = Desk::load();
    desk.provide();
    let preferences = Preferences::from_context();
    // In local storage the browser closes expired tool calls (a server closes its own).
    desk.close_expired();
    if let Ok(handle) = set_interval_with_handle(
        move || {
            desk.close_expired();
        },
        std::time::Duration::from_secs(2),
    ) {
        on_cleanup(move || handle.clear());
    }
    Effect::new(move |_| {
        let theme = preferences.get().with(|s| s.theme.attribute());
        if let Some(root) = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.document_element())
        {
            let _ = root.set_attribute("data-theme", theme);
        }
    });
    // The other screens' code is fetched while the reviewer reads the inbox, a
    // moment after it is shown (not competing with the load or a first keystroke).
    set_timeout(on_demand::preload_all, std::time::Duration::from_secs(1));
    view! { <Shell /> }
}

/// Header, notices, the current screen, and the shortcuts dialog.
#[component]
fn Shell() -> impl IntoView {
    let (reviews, origin) = (Reviews::from_context(), Origin::from_context());
    let (preferences, notices) = (Preferences::from_context(), Notices::from_context());
    let location = provide_location();
    let help = RwSignal::new(false);
    use_shortcuts(help);
    let route = Memo::new(move |_| location.path.with(|p| Route::parse(p)));
    // A row of the first paint tapped before the app started opens its screen:
    // the drawing of the inbox then gives way at once (the inbox gives way
    // itself, and so does the review page to a drawing of its own review).
    Effect::new(move |_| match route.get() {
        Route::Inbox => {}
        Route::Review(id) if crate::browser::drawn_review(&id) => {}
        _ => crate::browser::remove_first_paint(),
    });
    // On a session: a person whose groups give no role sees why, not the inbox.
    let no_role = RwSignal::new(None::<String>);
    if origin.connection().is_some_and(|c| c.signed_in) {
        leptos::task::spawn_local(async move {
            let _ = on_demand::watch_session(no_role).await;
        });
    }
    let pending = Memo::new(move |_| reviews.pending_count());
    // Served by a Countersign server, not connected yet: only Settings (to
    // connect) and a pairing link lead anywhere.
    if origin.awaiting_server() {
        Effect::new(move |_| {
            if !matches!(route.get(), Route::Settings | Route::Pair) {
                let then = settings_then(&location.path.get(), &location.query.get_untracked());
                location.navigate(&then, true);
            }
        });
    }
    // The installed app's badge follows the pending count, once opted in.
    Effect::new(move |_| {
        let shown = preferences.get().with(|s| s.notify).then(|| pending.get());
        crate::notify::show_badge(shown.unwrap_or(0));
    });
    view! {
        <a class="skip-link" href="#main">"Skip to content"</a>
        <TopBar route pending help no_role />
        <div class="notices" role="region" aria-label="Notices">
            {move || notices.list().get().into_iter().map(|n| view! { <p class="notice notice-warning" role="alert">{n}</p> }).collect_view()}
        </div>
        <main id="main" tabindex="-1">
            {move || match (no_role.get(), route.get()) {
                (Some(who), _) => view! { <NoRolePage who /> }.into_any(),
                (None, route) => match route {
                Route::Inbox => view! { <Inbox /> }.into_any(),
                Route::Review(id) => view! { <OnDemand load=move || on_demand::review_screen(id.clone()) /> }.into_any(),
                Route::Import => view! { <OnDemand load=on_demand::import_screen /> }.into_any(),
                Route::Settings => view! { <OnDemand load=on_demand::settings_screen /> }.into_any(),
                Route::Grants => view! { <OnDemand load=on_demand::grants_screen /> }.into_any(),
                Route::Pair => view! { <OnDemand load=on_demand::pair_screen /> }.into_any(),
                Route::NotFound => view! {
                    <section class="not-found">
                        <h1>"Page not found"</h1>
                        <p><a href=href("/")>"Back to the inbox"</a></p>
                    </section>
                }
                .into_any(),
                },
            }}
        </main>
        <Show when=move || help.get()>
            <ShortcutsDialog help />
        </Show>
    }
}

/// The header: the brand, the server's link state, the screens, the
/// shortcuts button.
#[component]
fn TopBar(
    route: Memo<Route>,
    pending: Memo<u64>,
    help: RwSignal<bool>,
    no_role: RwSignal<Option<String>>,
) -> impl IntoView {
    let origin = Origin::from_context();
    let current = move |r: Route| move || (route.get() == r).then_some("page");
    // A person with no role has no link to follow and no screen to open.
    let reviewing = move || no_role.with(Option::is_none);
    view! {
        <header class="topbar">
            <a class="brand" href=href("/")>
                <span class="brand-mark" aria-hidden="true">"✓"</span>
                "Countersign"
            </a>
            {origin.remote_url().map(|url| view! {
                <Show when=reviewing>
                    <span class="link-state" role="status" title=url.clone() data-state=move || origin.link().with(|l| l.state())>
                        {move || origin.link().with(|l| l.label())}
                    </span>
                </Show>
            })}
            <Show when=reviewing>
                <nav aria-label="Main">
                    <a href=href("/") aria-current=current(Route::Inbox)>"Inbox " <span class="count" aria-label=move || format!("{} pending", pending.get())>{pending}</span></a>
                    <a href=href("/grants") aria-current=current(Route::Grants)>"Grants"</a>
                    <a href=href("/import") aria-current=current(Route::Import)>"Import"</a>
                    <a href=href("/settings") aria-current=current(Route::Settings)>"Settings"</a>
                </nav>
            </Show>
            <button type="button" class="help-button" aria-label="Keyboard shortcuts" aria-keyshortcuts="?" on:click=move |_| help.update(|h| *h = !*h)>"?"</button>
        </header>
    }
}

/// What a signed-in person whose groups give no role sees instead of the inbox.
#[component]
fn NoRolePage(who: String) -> impl IntoView {
    let sign_out = |_| {
        leptos::task::spawn_local(async {
            let _ = on_demand::sign_out().await;
        })
    };
    view! {
        <section class="no-role" aria-labelledby="no-role-title">
            <h1 id="no-role-title">"You are signed in, but may not review here"</h1>
            <p>"You are signed in as " <strong>{who}</strong> ", but none of your groups gives a role on this desk, so it shows you no requests."</p>
            <p>"Ask whoever runs this desk to add you to a reviewers' group at your identity provider, then sign in again."</p>
            <div class="actions"><button type="button" on:click=sign_out>"Sign out"</button></div>
        </section>
    }
}

/// The keyboard shortcuts, listed.
#[component]
fn ShortcutsDialog(help: RwSignal<bool>) -> impl IntoView {
    view! {
        <div class="dialog-backdrop" on:click=move |_| help.set(false)>
            <div class="dialog" role="dialog" aria-modal="true" aria-labelledby="shortcuts-title" on:click=|ev| ev.stop_propagation()>
                <h2 id="shortcuts-title">"Keyboard shortcuts"</h2>
                <dl class="shortcuts">
                    {SHORTCUTS.iter().map(|(key, what)| view! { <dt><kbd>{*key}</kbd></dt><dd>{*what}</dd> }).collect_view()}
                </dl>
                <button type="button" on:click=move |_| help.set(false) autofocus>"Close"</button>
            </div>
        </div>
    }
}
