//! Signing in with the organisation's identity provider, on a desk its own
//! Countersign server serves: the sign-in buttons and who is signed in
//! (Settings), the person's sessions (Settings › Your sessions), and the
//! check behind the page a signed-in person without a role sees instead of
//! the inbox (the page itself is the shell's).

use crate::backend::{Connection, HttpError, HttpStore, SessionList, SessionState};
use crate::components::loaded::Loaded;
use leptos::prelude::*;

/// This page's own server, through its session cookie: where sign-in happens
/// (a desk on another origin connects with a key). Called outside the
/// component tree too (after sign-out), so it reads no context.
pub(super) fn own_server() -> HttpStore {
    let origin = web_sys::window()
        .and_then(|w| w.location().origin().ok())
        .unwrap_or_default();
    HttpStore::new(Connection {
        url: origin,
        key: String::new(),
        backend: crate::backend::ServerKind::Countersign,
        graphs: String::new(),
        signed_in: true,
    })
}

/// Reloads the app at its start (a session began or ended).
fn restart() {
    if let Some(window) = web_sys::window() {
        let _ = window.location().assign(&crate::router::href("/"));
    }
}

/// Who is signed in, or the buttons to sign in; nothing where this desk's
/// server has no sign-in. `keys_off` learns whether reviewer keys still work.
#[component]
pub fn SignInCard(keys_off: RwSignal<bool>) -> impl IntoView {
    let server = own_server();
    let state = LocalResource::new(move || {
        let server = server.clone();
        async move { server.session().await }
    });
    // Read only inside a boundary of its own: the rest of Settings never
    // waits for this answer.
    let shown = move || {
        let answer = state.get();
        if answer
            .as_ref()
            .is_some_and(|a| a.as_ref().is_ok_and(|s| !s.reviewer_keys))
        {
            keys_off.set(true);
        }
        match answer {
            Some(Ok(state)) if state.signed_in => view! { <SignedIn state /> }.into_any(),
            Some(Ok(state)) if !state.providers.is_empty() => {
                view! { <SignInButtons state /> }.into_any()
            }
            _ => ().into_any(),
        }
    };
    view! { <Suspense fallback=|| ()>{shown}</Suspense> }
}

/// The provider's sign-in link, coming back where the reviewer was going
/// once signed in (so `/settings?slack=…` survives signing in).
fn login_here(login_url: &str) -> String {
    let location = crate::router::use_location();
    let back = crate::router::after_sign_in(
        &location.path.get_untracked(),
        &location.query.get_untracked(),
    );
    if back == "/" {
        return login_url.to_owned();
    }
    let joiner = if login_url.contains('?') { '&' } else { '?' };
    let back: String = js_sys::encode_uri_component(&crate::router::href(&back)).into();
    format!("{login_url}{joiner}return_to={back}")
}

/// One button per identity provider.
#[component]
fn SignInButtons(state: SessionState) -> impl IntoView {
    view! {
        <section class="card sign-in" aria-labelledby="sign-in-title">
            <h2 id="sign-in-title">"Sign in"</h2>
            <p>"Sign in with your organisation's account to review the requests waiting for you. Your roles come from your groups there."</p>
            <div class="actions">
                {state.providers.into_iter().map(|p| view! {
                    <a class="button button-primary" rel="external" href=login_here(&p.login_url)>{format!("Sign in with {}", p.name)}</a>
                }).collect_view()}
            </div>
            {(!state.reviewer_keys).then(|| view! { <p class="subtle">"Reviewer keys are turned off on this server: reviewers sign in."</p> })}
        </section>
    }
}

/// The signed-in person, their roles, sign-out, and their sessions.
#[component]
fn SignedIn(state: SessionState) -> impl IntoView {
    let Some(session) = state.session else {
        return ().into_any();
    };
    let person = session.person.clone();
    let email = person.email.clone().map(|e| format!(" ({e})"));
    let roles = if session.roles.is_empty() {
        "none: you may not review here".to_owned()
    } else {
        session.roles.join(", ")
    };
    let signing_out = Action::new_unsync(|_: &()| async { own_server().sign_out().await });
    Effect::new(move |_| {
        if let Some(Ok(())) = signing_out.value().get() {
            restart();
        }
    });
    let status = move || match signing_out.value().get() {
        Some(Err(e)) => Some(format!("Not signed out: {e}")),
        _ if signing_out.pending().get() => Some("Signing out…".to_owned()),
        _ => None,
    };
    view! {
        <section class="card sign-in" aria-labelledby="signed-in-title">
            <h2 id="signed-in-title">"Signed in"</h2>
            <p>"You are signed in as " <strong>{person.label().to_owned()}</strong> {email} "."</p>
            <dl class="fields">
                <dt>"Roles"</dt><dd>{roles}</dd>
                <dt>"Identity provider"</dt><dd>{person.issuer.clone()}</dd>
                <dt>"Session ends"</dt><dd>{until(&session.expires_at, crate::browser::now())}</dd>
            </dl>
            <div class="actions">
                <button type="button" disabled=move || signing_out.pending().get() on:click=move |_| { signing_out.dispatch(()); }>"Sign out"</button>
            </div>
            <p role="status" class="subtle">{status}</p>
        </section>
        <SessionsCard />
        <super::slack::SlackCard />
    }
    .into_any()
}

/// The person's sessions, each with where and when it began; any but this
/// one can be ended here.
#[component]
fn SessionsCard() -> impl IntoView {
    let listed = LocalResource::new(|| async { own_server().sessions().await });
    let revoking = Action::new_unsync(move |id: &String| {
        let id = id.clone();
        async move {
            let ended = own_server().revoke_session(&id).await;
            listed.refetch();
            ended
        }
    });
    let shown = move |list: SessionList| view! { <SessionRows list revoking /> };
    view! {
        <section class="card sessions" id="sessions" aria-labelledby="sessions-title">
            <h2 id="sessions-title">"Your sessions"</h2>
            <p class="subtle">"Every browser you signed in with. End one you do not recognise, or one on a device you no longer use."</p>
            <Loaded resource=listed what="Your sessions" shown />
            <p role="status" class="subtle">{move || match revoking.value().get() {
                Some(Err(e)) => Some(format!("Not ended: {e}")),
                Some(Ok(())) => Some("Session ended.".to_owned()),
                None => None,
            }}</p>
        </section>
    }
}

/// The sessions as a list.
#[component]
fn SessionRows(
    list: SessionList,
    revoking: Action<String, Result<(), HttpError>>,
) -> impl IntoView {
    let current = list.current.clone();
    let now = crate::browser::now();
    view! {
        <ul class="session-list" aria-label="Sessions">
            {list.sessions.into_iter().map(|s| {
                let this = current.as_deref() == Some(s.id.as_str());
                let live = s.ended_at.is_none();
                let id = s.id.clone();
                let title = match (this, live) {
                    (true, _) => "This browser",
                    (false, true) => "Another browser",
                    (false, false) => "Ended",
                };
                let state = match (&s.ended_at, &s.ended_why) {
                    (Some(at), why) => format!("Ended {}: {}", when(at, now), why.as_deref().unwrap_or("ended")),
                    (None, _) => format!("Signed in {}; ends {}", when(&s.created_at, now), until(&s.expires_at, now)),
                };
                view! {
                    <li class="session" data-live=live.to_string()>
                        <div>
                            <strong>{title}</strong>
                            <p>{state}</p>
                            <p class="subtle session-agent">{s.user_agent.clone().unwrap_or_else(|| "(the browser did not say what it is)".into())}</p>
                        </div>
                        {(live && !this).then(|| view! {
                            <button type="button" disabled=move || revoking.pending().get() on:click=move |_| { revoking.dispatch(id.clone()); }>"End this session"</button>
                        })}
                    </li>
                }
            }).collect_view()}
        </ul>
    }
}

/// For a desk open on a session: asks once who is signed in; a person whose
/// groups give no role is named in `no_role` (the shell shows why instead of
/// the inbox), and an ended session goes back to the sign-in buttons.
pub fn watch_session(no_role: RwSignal<Option<String>>) {
    leptos::task::spawn_local(async move {
        match own_server().session().await {
            Ok(state) if !state.signed_in => {
                Connection::forget_session();
                restart();
            }
            Ok(SessionState {
                session: Some(session),
                ..
            }) if session.roles.is_empty() => {
                no_role.set(Some(session.person.label().to_owned()));
            }
            // Unreachable or refused: the desk's own requests say so.
            _ => {}
        }
    });
}

/// Signs out, then starts the app again at the sign-in buttons.
pub fn sign_out_and_restart() {
    leptos::task::spawn_local(async {
        let _ = own_server().sign_out().await;
        restart();
    });
}

/// A stored time as people read it: "3 hours ago".
fn when(stored: &str, now: chrono::DateTime<chrono::Utc>) -> String {
    countersign_domain::Timestamp::parse(stored).map_or_else(|_| stored.to_owned(), |t| t.ago(now))
}

/// A stored deadline as people read it: "in 12 hours".
fn until(stored: &str, now: chrono::DateTime<chrono::Utc>) -> String {
    countersign_domain::Timestamp::parse(stored)
        .ok()
        .and_then(|t| t.until(now))
        .unwrap_or_else(|| stored.to_owned())
}
