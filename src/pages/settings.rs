//! Settings (`/settings`): reviewer role, theme, storage in use, demo data.

use crate::desk::Desk;
use crate::settings::{Settings, Theme};
use leptos::prelude::*;

/// The settings page.
#[component]
pub fn SettingsPage() -> impl IntoView {
    let desk = expect_context::<Desk>();
    let role = RwSignal::new(desk.settings.get_untracked().reviewer_role);
    let message = RwSignal::new(None::<String>);
    let save = move |settings: Settings| {
        message.set(Some(match desk.save_settings(settings) {
            Ok(()) => "Saved.".to_owned(),
            Err(e) => e.to_string(),
        }));
    };
    let on_role = move |_| {
        let value = role.get_untracked().trim().to_owned();
        if value.is_empty() {
            message.set(Some(
                "The reviewer role cannot be empty: decisions are signed with it.".into(),
            ));
            return;
        }
        save(Settings {
            reviewer_role: value,
            ..desk.settings.get_untracked()
        });
    };
    let on_theme = move |ev| {
        let theme = match event_target_value(&ev).as_str() {
            "light" => Theme::Light,
            "dark" => Theme::Dark,
            _ => Theme::System,
        };
        save(Settings {
            theme,
            ..desk.settings.get_untracked()
        });
    };
    let reset = move |_| {
        let confirmed = web_sys::window()
            .and_then(|w| {
                w.confirm_with_message("Replace every review on this device with the demo reviews?")
                    .ok()
            })
            .unwrap_or(false);
        if confirmed {
            message.set(Some(match desk.reset_demo() {
                Ok(()) => "The demo reviews are back.".to_owned(),
                Err(e) => e.to_string(),
            }));
        }
    };
    view! {
        <section class="settings" aria-labelledby="settings-title">
            <div class="page-head"><h1 id="settings-title">"Settings"</h1></div>
            <form class="card" on:submit=move |ev| { ev.prevent_default(); on_role(()); }>
                <div class="field">
                    <label for="reviewer-role">"Reviewer role"</label>
                    <p class="subtle">"Your decisions are signed with this role unless you change it on the form."</p>
                    <input id="reviewer-role" type="text" prop:value=move || role.get() on:input=move |ev| role.set(event_target_value(&ev)) />
                </div>
                <div class="actions"><button type="submit" class="button-primary">"Save role"</button></div>
            </form>
            <div class="card">
                <div class="field">
                    <label for="theme">"Theme"</label>
                    <select id="theme" on:change=on_theme prop:value=move || desk.settings.with(|s| s.theme.attribute())>
                        {Theme::CHOICES.iter().map(|(t, label)| view! { <option value=t.attribute()>{*label}</option> }).collect_view()}
                    </select>
                </div>
            </div>
            <div class="card">
                <h2>"Storage"</h2>
                <p>{desk.storage_description()}</p>
                <button type="button" class="button-quiet" on:click=reset>"Reset demo data"</button>
            </div>
            <p role="status" class="subtle">{move || message.get()}</p>
        </section>
    }
}
