//! `GET /api/v1/webhooks`: where the server sends its events and how each
//! delivery went, so a reviewer sees a receiver that stopped answering.

use super::ChangeKind;
use serde::{Deserialize, Serialize};

/// The body a webhook receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WebhookFormat {
    /// The event as JSON (id, type, review summary, link).
    Json,
    /// A Slack incoming-webhook message.
    Slack,
}

/// Where a delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryState {
    /// Not sent yet, or refused and to be tried again.
    Pending,
    /// The receiver answered 2xx.
    Sent,
    /// Refused for a day: given up.
    Failed,
}

impl DeliveryState {
    /// As stored and sent.
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryState::Pending => "pending",
            DeliveryState::Sent => "sent",
            DeliveryState::Failed => "failed",
        }
    }

    /// The state a stored name stands for.
    pub fn parse(name: &str) -> Option<DeliveryState> {
        [Self::Pending, Self::Sent, Self::Failed]
            .into_iter()
            .find(|s| s.as_str() == name)
    }
}

/// One configured webhook and its deliveries by state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebhookStatus {
    /// Its address with the path hidden (a Slack URL's path is its secret).
    pub url: String,
    /// The body it receives.
    pub format: WebhookFormat,
    /// Deliveries waiting or being retried.
    pub pending: i64,
    /// Deliveries the receiver accepted.
    pub sent: i64,
    /// Deliveries given up after a day.
    pub failed: i64,
}

/// One event sent (or to be sent) to one webhook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delivery {
    /// The event id the receiver deduplicates on (`webhook-id` header).
    pub id: String,
    /// The webhook's address, path hidden.
    pub url: String,
    /// What happened.
    pub kind: ChangeKind,
    /// The review it happened to.
    pub review_id: String,
    /// Where it stands.
    pub state: DeliveryState,
    /// How many times it was sent.
    pub attempts: i64,
    /// When it is tried (again), while pending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_at: Option<String>,
    /// Why the last attempt failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// When the change happened.
    pub created_at: String,
    /// When the receiver accepted it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent_at: Option<String>,
}

/// The webhooks and their latest deliveries, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebhookList {
    /// Every configured webhook.
    pub webhooks: Vec<WebhookStatus>,
    /// The latest deliveries (at most 50).
    pub deliveries: Vec<Delivery>,
}
