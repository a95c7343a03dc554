//! Settings (`/settings`): reviewer role, theme, storage in use (this
//! browser, a Countersign server with a reviewer key, or a LangGraph server
//! whose interrupts are reviewed here), demo data.

use crate::backend::{Connection, HttpStore, LangGraphStore, ServerKind};
use crate::components::loaded::Loaded;
use crate::desk::{Desk, Link, Origin, Preferences};
use crate::router::{after_connect, href, Location};
use crate::settings::{Settings, Theme};
use leptos::prelude::*;

fn reload() {
    if let Some(window) = web_sys::window() {
        let _ = window.location().reload();
    }
}

/// Loads the app's `path` afresh (a new connection starts the desk again).
fn go(path: &str) {
    if let Some(window) = web_sys::window() {
        let _ = window.location().assign(&href(path));
    }
}

/// The settings page.
#[component]
pub fn SettingsPage() -> impl IntoView {
    let origin = Origin::from_context();
    let message = RwSignal::new(None::<String>);
    let awaiting = origin.awaiting_server();
    // Where the server turned reviewer keys off, its desk offers sign-in only.
    let keys_off = RwSignal::new(false);
    // On a first visit to a server's desk, signing in or connecting comes
    // first, and this browser's own storage is not offered.
    let connection = move || {
        view! { <Show when=move || !(awaiting && keys_off.get())><ConnectionForm awaiting /></Show> }
    };
    let sign_in = crate::browser::served_by_server()
        .then(|| view! { <super::signin::SignInCard keys_off /> });
    view! {
        <section class="settings" aria-labelledby="settings-title">
            <div class="page-head"><h1 id="settings-title">"Settings"</h1></div>
            {sign_in}
            {awaiting.then(connection)}
            <RoleCard message />
            <ThemeCard message />
            {(!awaiting).then(|| view! { <StorageCard message /> })}
            <super::notifications::NotificationChoice />
            {Desk::from_context().access().map(|access| {
                // A signed-in person adds a device by signing in on it.
                let keyed = !origin.connection().is_some_and(|c| c.signed_in);
                view! { {keyed.then(|| view! { <super::devices::Devices access=access.clone() /> })} <super::deliveries::WebhookDeliveries access /> }
            })}
            {(!awaiting).then(connection)}
            <p role="status" class="subtle">{move || message.get()}</p>
        </section>
    }
}

/// Saves the settings, saying whether that worked in `message`.
fn save(settings: Settings, message: RwSignal<Option<String>>) {
    let preferences = Preferences::from_context();
    message.set(Some(match preferences.save(settings) {
        Ok(()) => "Saved.".to_owned(),
        Err(e) => e.to_string(),
    }));
}

/// The role decisions are signed with (never empty).
#[component]
fn RoleCard(message: RwSignal<Option<String>>) -> impl IntoView {
    let preferences = Preferences::from_context();
    let role = RwSignal::new(preferences.get().get_untracked().reviewer_role);
    let on_save = move || {
        let value = role.get_untracked().trim().to_owned();
        if value.is_empty() {
            message.set(Some(
                "The reviewer role cannot be empty: decisions are signed with it.".into(),
            ));
            return;
        }
        let settings = Settings {
            reviewer_role: value,
            ..preferences.get().get_untracked()
        };
        save(settings, message);
    };
    view! {
        <form class="card" on:submit=move |ev| { ev.prevent_default(); on_save(); }>
            <div class="field">
                <label for="reviewer-role">"Reviewer role"</label>
                <p class="subtle">"Your decisions are signed with this role unless you change it on the form."</p>
                <input id="reviewer-role" type="text" prop:value=move || role.get() on:input=move |ev| role.set(event_target_value(&ev)) />
            </div>
            <div class="actions"><button type="submit" class="button-primary">"Save role"</button></div>
        </form>
    }
}

/// Light, dark, or as the system says.
#[component]
fn ThemeCard(message: RwSignal<Option<String>>) -> impl IntoView {
    let preferences = Preferences::from_context();
    let on_theme = move |ev| {
        let theme = match event_target_value(&ev).as_str() {
            "light" => Theme::Light,
            "dark" => Theme::Dark,
            _ => Theme::System,
        };
        let settings = Settings {
            theme,
            ..preferences.get().get_untracked()
        };
        save(settings, message);
    };
    view! {
        <div class="card">
            <div class="field">
                <label for="theme">"Theme"</label>
                <select id="theme" on:change=on_theme prop:value=move || preferences.get().with(|s| s.theme.attribute())>
                    {Theme::CHOICES.iter().map(|(t, label)| view! { <option value=t.attribute()>{*label}</option> }).collect_view()}
                </select>
            </div>
        </div>
    }
}

/// Where the reviews are kept, and the way back: disconnect from a server,
/// or put the demo reviews back in this browser.
#[component]
fn StorageCard(message: RwSignal<Option<String>>) -> impl IntoView {
    let (desk, origin) = (Desk::from_context(), Origin::from_context());
    let connected = origin.source().remote();
    let signed_in = origin.connection().is_some_and(|c| c.signed_in);
    let resetting = Action::new_unsync(move |(): &()| async move {
        message.set(Some(match desk.reset_demo().await {
            Ok(()) => "The demo reviews are back.".to_owned(),
            Err(e) => e.to_string(),
        }));
    });
    let reset = move |_| {
        let confirmed = web_sys::window()
            .and_then(|w| {
                w.confirm_with_message("Replace every review on this device with the demo reviews?")
                    .ok()
            })
            .unwrap_or(false);
        if confirmed {
            resetting.dispatch(());
        }
    };
    let disconnect = move |_| {
        let connection = origin.connection();
        Connection::forget();
        leptos::task::spawn_local(async move {
            // The server stops drawing this page, if it answers soon; a drawing it
            // still sends is not this tab's connection's, and the boot script drops it.
            if let Some(connection) = connection {
                let forgotten = async move { HttpStore::new(connection).keep_page(false).await };
                crate::browser::at_most(std::time::Duration::from_secs(2), forgotten).await;
            }
            reload();
        });
    };
    let link_detail = move || match origin.link().get() {
        Link::Offline(why) => format!("Offline: {why}"),
        other => other.label().to_owned(),
    };
    view! {
        <div class="card">
            <h2>"Storage"</h2>
            <p>{desk.storage_description()}</p>
            {connected.then(|| view! { <p>"Connection: " <strong role="status">{link_detail}</strong></p> })}
            {origin.connection().filter(|c| c.backend == ServerKind::LangGraph).map(|connection| view! { <LangGraphGraphs connection /> })}
            {if signed_in {
                // The session is this server's: leaving it is signing out (above).
                ().into_any()
            } else if connected {
                view! { <button type="button" class="button-quiet" on:click=disconnect>"Disconnect: use this browser's storage"</button> }.into_any()
            } else {
                view! { <button type="button" class="button-quiet" on:click=reset disabled=move || resetting.pending().get()>"Reset demo data"</button> }.into_any()
            }}
        </div>
    }
}

/// The form that connects to a Countersign or LangGraph server; on a first
/// visit to a server's desk (`awaiting`), to that server only.
#[component]
fn ConnectionForm(awaiting: bool) -> impl IntoView {
    let current = Origin::from_context();
    let origin = web_sys::window()
        .and_then(|w| w.location().origin().ok())
        .unwrap_or_default();
    let backend = RwSignal::new(current.connection().map(|c| c.backend).unwrap_or_default());
    let server_url = RwSignal::new(current.remote_url().unwrap_or(origin));
    let server_key = RwSignal::new(String::new());
    let graphs = RwSignal::new(
        current
            .connection()
            .map(|c| LangGraphStore::new(c).graphs().join(", "))
            .unwrap_or_default(),
    );
    let remember = RwSignal::new(false);
    let missing = RwSignal::new(None::<&'static str>);
    let location = use_context::<Location>();
    let connecting = Action::new_unsync(
        move |(connection, remember, next): &(Connection, bool, Option<String>)| {
            connect(connection.clone(), *remember, next.clone())
        },
    );
    let on_connect = move || {
        let connection = Connection {
            url: server_url.get_untracked().trim().to_owned(),
            key: server_key.get_untracked().trim().to_owned(),
            backend: backend.get_untracked(),
            graphs: graphs.get_untracked().trim().to_owned(),
            signed_in: false,
        };
        missing.set(lacks(&connection));
        if missing.get_untracked().is_none() {
            let next = location.and_then(|l| l.param("next"));
            connecting.dispatch((connection, remember.get_untracked(), next));
        }
    };
    // Connected: the app is starting again, so the form stays busy.
    let busy = move || {
        connecting.pending().get() || connecting.value().with(|v| matches!(v, Some(Ok(()))))
    };
    let status = move || match (missing.get(), connecting.value().get()) {
        (Some(missing), _) => Some(missing.to_owned()),
        _ if busy() => Some("Checking the server…".to_owned()),
        (None, Some(Err(e))) => Some(e),
        (None, _) => None,
    };
    let title = if awaiting {
        "Connect to this desk's server"
    } else if current.source().remote() {
        "Change server"
    } else {
        "Connect to a server"
    };
    let langgraph = move || backend.get() == ServerKind::LangGraph;
    view! {
        <form class="card" aria-labelledby="server-title" on:submit=move |ev| { ev.prevent_default(); on_connect(); }>
            <h2 id="server-title">{title}</h2>
            {awaiting.then(|| view! { <ServerWelcome /> })}
            <p class="subtle">"Review the requests agents send to a shared server. Your key is kept for this tab only unless you ask to remember it."</p>
            {(!awaiting).then(|| view! { <div class="field">
                <label for="server-kind">"Kind of server"</label>
                <select id="server-kind" prop:value=move || if langgraph() { "langgraph" } else { "countersign" }
                    on:change=move |ev| backend.set(if event_target_value(&ev) == "langgraph" { ServerKind::LangGraph } else { ServerKind::Countersign })>
                    <option value="countersign">"Countersign server"</option>
                    <option value="langgraph">"LangGraph server (its agents’ interrupts)"</option>
                </select>
            </div> })}
            <div class="field">
                <label for="server-url">"Server address"</label>
                <input id="server-url" type="url" autocomplete="url" prop:value=move || server_url.get() on:input=move |ev| server_url.set(event_target_value(&ev)) />
            </div>
            <div class="field">
                <label for="server-key">{move || if langgraph() { "API key (x-api-key, optional)" } else { "Reviewer key" }}</label>
                <input id="server-key" type="password" autocomplete="off" prop:value=move || server_key.get() on:input=move |ev| server_key.set(event_target_value(&ev)) />
            </div>
            <Show when=langgraph>
                <div class="field">
                    <label for="graphs">"Only these graphs (optional)"</label>
                    <p class="subtle">"Graph or assistant ids, separated by commas. Empty: every graph on the server. Each thread is resumed by the assistant that owns it, whatever you list here."</p>
                    <input id="graphs" type="text" autocomplete="off" placeholder="every graph" prop:value=move || graphs.get() on:input=move |ev| graphs.set(event_target_value(&ev)) />
                </div>
            </Show>
            <div class="field field-inline">
                <input id="remember" type="checkbox" prop:checked=move || remember.get() on:change=move |ev| remember.set(event_target_checked(&ev)) />
                <label for="remember">"Remember on this device"</label>
            </div>
            <div class="actions"><button type="submit" class="button-primary" disabled=busy>"Connect"</button></div>
            <p role="status" class="subtle">{status}</p>
        </form>
    }
}

/// What a connection lacks before its server can be checked, if anything.
fn lacks(connection: &Connection) -> Option<&'static str> {
    match connection.backend {
        ServerKind::Countersign if connection.url.is_empty() || connection.key.is_empty() => {
            Some("Give the server's address and your reviewer key.")
        }
        ServerKind::LangGraph if connection.url.is_empty() => {
            Some("Give the LangGraph server's address.")
        }
        _ => None,
    }
}

/// Checks the server, then keeps the connection (for this tab, or on this
/// device with `remember`) and starts again on it, at the inbox or at `next`
/// (the link that brought the reviewer); the error says why it did not connect.
async fn connect(
    connection: Connection,
    remember: bool,
    next: Option<String>,
) -> Result<(), String> {
    let checked = match connection.backend {
        ServerKind::Countersign => HttpStore::new(connection.clone()).check().await,
        ServerKind::LangGraph => LangGraphStore::new(connection.clone())
            .check()
            .await
            .map(drop),
    };
    checked.map_err(|e| format!("Not connected: {e}"))?;
    connection.save(remember)?;
    HttpStore::new(connection).keep_page(remember).await;
    // Loaded again on the new connection, where the link pointed.
    go(&after_connect(next.as_deref()));
    Ok(())
}

/// What the connection form says on a first visit to a server's desk.
#[component]
fn ServerWelcome() -> impl IntoView {
    let origin = web_sys::window()
        .and_then(|w| w.location().origin().ok())
        .unwrap_or_default();
    view! {
        <p>"This desk is served by the Countersign server at " <strong>{origin}</strong> ". Paste your reviewer key below to see the requests waiting for you."</p>
        <p class="subtle">"No key yet? Whoever runs the server mints one with " <code>"countersign keys add --kind reviewer"</code> ", or open a pairing link from a device that is connected (Settings → Devices there)."</p>
    }
}

/// The graphs of the connected LangGraph server, asked for when shown.
#[component]
fn LangGraphGraphs(connection: Connection) -> impl IntoView {
    let store = LangGraphStore::new(connection);
    let found = LocalResource::new(move || {
        let store = store.clone();
        async move { store.check().await }
    });
    let listed = |graphs: Vec<String>| {
        if graphs.is_empty() {
            return view! { <p>"This server has no graphs."</p> }.into_any();
        }
        view! {
            <p>"Graphs on this server: "
                {graphs.into_iter().map(|g| view! { <code class="graph-id">{g}</code>" " }).collect_view()}
            </p>
        }
        .into_any()
    };
    view! { <Loaded resource=found what="Its graphs" shown=listed /> }
}
