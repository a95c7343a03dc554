//! The reviewer's settings (role, theme, notifications), kept in this
//! browser's storage and applied as soon as they are saved.

use crate::backend::{LocalStore, StoreError};
use crate::settings::Settings;
use leptos::prelude::*;

/// The settings store (cheap to copy; provided as context).
#[derive(Clone, Copy)]
pub struct Preferences {
    settings: RwSignal<Settings>,
    /// Where they are saved (none: storage is unavailable, kept for this visit).
    store: StoredValue<Option<LocalStore>>,
}

impl Preferences {
    /// The stored settings; unusable ones are set aside (`set_aside`, told in
    /// `notices`) or, for a desk on a server, ignored.
    pub(super) fn load(
        store: Option<LocalStore>,
        set_aside: bool,
        notices: &mut Vec<String>,
    ) -> Self {
        let settings = store
            .as_ref()
            .map(|store| stored(store, set_aside, notices))
            .unwrap_or_default();
        Preferences {
            settings: RwSignal::new(settings),
            store: StoredValue::new(store),
        }
    }

    /// The reviewer's settings (reactive).
    pub fn get(&self) -> ReadSignal<Settings> {
        self.settings.read_only()
    }

    /// Saves the settings and applies them; nothing changes when saving fails.
    pub fn save(&self, settings: Settings) -> Result<(), StoreError> {
        if let Some(store) = self.store.get_value() {
            let text = serde_json::to_value(&settings)
                .map_err(|e| StoreError::WriteFailed(e.to_string()))?
                .to_string();
            store.save_settings_text(&text)?;
        }
        self.settings.set(settings);
        Ok(())
    }
}

fn stored(store: &LocalStore, set_aside: bool, notices: &mut Vec<String>) -> Settings {
    let Some(text) = store.settings_text() else {
        return Settings::default();
    };
    match serde_json::from_str::<Settings>(&text) {
        Ok(settings) => settings,
        Err(e) => {
            if set_aside {
                let aside = store.set_aside_settings(&text, e.to_string());
                notices.push(super::notices::describe_set_aside(&aside));
            }
            Settings::default()
        }
    }
}
