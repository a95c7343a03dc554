//! The reviewer's settings, kept in local storage.

use serde::{Deserialize, Serialize};

/// Light, dark, or whatever the system prefers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Theme {
    /// Follow the operating system.
    #[default]
    System,
    /// Always light.
    Light,
    /// Always dark.
    Dark,
}

impl Theme {
    /// Every choice with its label.
    pub const CHOICES: [(Theme, &'static str); 3] = [
        (Theme::System, "Follow the system"),
        (Theme::Light, "Light"),
        (Theme::Dark, "Dark"),
    ];

    /// The value of `data-theme` on the document.
    pub fn attribute(self) -> &'static str {
        match self {
            Theme::System => "system",
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }
}

/// What the reviewer chose.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// The role decisions are signed as unless changed on the form.
    pub reviewer_role: String,
    /// Colour scheme.
    pub theme: Theme,
    /// Desktop notifications and the app badge, opted into in Settings.
    pub notify: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            reviewer_role: "reviewer".to_owned(),
            theme: Theme::System,
            notify: false,
        }
    }
}
