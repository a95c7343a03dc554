//! Reviewers' Slack accounts, as the desk links and lists them
//! (`/api/v1/slack/…`).

use serde::{Deserialize, Serialize};

/// A Slack user, as Slack names them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlackUser {
    /// The workspace (`T…`).
    pub team_id: String,
    /// The user (`U…`).
    pub user_id: String,
    /// Their handle, as it was when they clicked.
    pub user_name: String,
}

impl SlackUser {
    /// How people read it: `@dana (U024BE7LH in T9TK3CUKW)`.
    pub fn label(&self) -> String {
        format!("@{} ({} in {})", self.user_name, self.user_id, self.team_id)
    }
}

/// A Slack account linked to a person: their clicks in Slack decide as them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlackLink {
    /// The Slack user.
    #[serde(flatten)]
    pub user: SlackUser,
    /// When it was linked.
    pub linked_at: String,
}
