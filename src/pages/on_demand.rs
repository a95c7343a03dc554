//! Screens loaded on demand (see `crate::split`): the first load holds the shell
//! and the inbox; each other screen's code comes the first time it opens.

use crate::split::{on_demand, LoadFailed};
use leptos::prelude::*;

on_demand! {
    /// The review page of one confirm.
    in review fn review_screen / preload_review_screen (id: String) -> AnyView {
        view! { <super::review::ReviewPage id /> }.into_any()
    }
}

on_demand! {
    /// Import and export.
    in import fn import_screen / preload_import_screen () -> AnyView {
        view! { <super::import::ImportPage /> }.into_any()
    }
}

on_demand! {
    /// The grants ledger.
    in grants fn grants_screen / preload_grants_screen () -> AnyView {
        view! { <super::grants::GrantsPage /> }.into_any()
    }
}

on_demand! {
    /// Settings.
    in settings fn settings_screen / preload_settings_screen () -> AnyView {
        view! { <super::settings::SettingsPage /> }.into_any()
    }
}

on_demand! {
    /// Pairing this device from a link.
    in pair fn pair_screen / preload_pair_screen () -> AnyView {
        view! { <super::pair::PairPage /> }.into_any()
    }
}

on_demand! {
    /// On a session: who is signed in (a person without a role is named in `no_role`).
    in settings fn watch_session (no_role: RwSignal<Option<String>>) -> () {
        super::signin::watch_session(no_role)
    }
}

on_demand! {
    /// Signs out, then starts again at the sign-in buttons.
    in settings fn sign_out () -> () {
        super::signin::sign_out_and_restart()
    }
}

/// Fetches every screen's code ahead of need, so that opening one is
/// instant and still works if the network goes away later. A failure here is
/// silent: opening the screen tries again and says so if it fails.
pub fn preload_all() {
    leptos::task::spawn_local(async {
        let _ = preload_review_screen().await;
        let _ = preload_import_screen().await;
        let _ = preload_settings_screen().await;
        let _ = preload_grants_screen().await;
        let _ = preload_pair_screen().await;
    });
}

/// Shows a screen whose code may still be loading; if it cannot be fetched, says
/// so and offers to try again (nothing typed elsewhere is lost).
#[component]
pub fn OnDemand<F, Fut>(load: F) -> impl IntoView
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<AnyView, LoadFailed>> + 'static,
{
    let attempt = RwSignal::new(0u32);
    move || {
        attempt.track();
        let screen = leptos::__reexports::send_wrapper::SendWrapper::new(load());
        let shown = async move {
            match screen.await {
                Ok(view) => view,
                Err(LoadFailed) => view! {
                    <div class="notice notice-danger" role="alert">
                        <p>"This screen could not be loaded: the app's server did not answer. Check the connection, then try again."</p>
                        <button type="button" on:click=move |_| attempt.update(|a| *a += 1)>"Try again"</button>
                    </div>
                }
                .into_any(),
            }
        };
        view! {
            <Suspense fallback=|| view! { <p class="subtle loading" role="status">"Loading…"</p> }>
                {Suspend::new(shown)}
            </Suspense>
        }
    }
}
