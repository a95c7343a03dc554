//! Countersign's own messages in Slack (`serve --slack-bot-token-file`).
//! The bot posts each new request to its rule's channel (or
//! `--slack-channel`) and keeps that message true: after any decision, from
//! the desk, the API, a click in Slack or an e-mail, `chat.update` says who
//! decided what; an expiry says so; an escalation says so and reminds the
//! channel in the message's thread.
//!
//! It is a reader of the [outbox](crate::outbox): told of each change in
//! order, by one instance at a time, so a message is posted before it is
//! updated and two instances never post the same one; a call Slack refuses
//! for good (the app is not in the channel, the token was revoked) is
//! logged with what to do and skipped.

use crate::outbox::{Failed, Reader};
use crate::store::slack_posts::Posted;
use crate::store::{Change, Db};
use countersign_domain::policy::{is_slack_channel_id, Policy};
use countersign_domain::wire::ChangeKind;
use countersign_domain::MplpId;
use serde_json::{json, Value};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// One call to Slack's Web API, connecting included.
const TIMEOUT: Duration = Duration::from_secs(10);
/// The errors of Slack's Web API that a later attempt may not get.
const PASSING: [&str; 5] = [
    "ratelimited",
    "internal_error",
    "fatal_error",
    "service_unavailable",
    "request_timeout",
];

/// The bot's settings as `serve` reads them.
pub struct BotSettings<'a> {
    /// The file holding the Bot User OAuth Token (`xoxb-…`).
    pub token_file: &'a Path,
    /// Slack's Web API (`https://slack.com/api`).
    pub api: &'a str,
    /// The channel of requests whose rule names none.
    pub channel: Option<&'a str>,
}

/// Posts and updates Countersign's messages in Slack for as long as the
/// server runs.
#[derive(Clone)]
pub struct Bot {
    shared: Arc<Shared>,
}

struct Shared {
    db: Db,
    token: String,
    api: String,
    channel: Option<String>,
    policy: Policy,
    desk: String,
    buttons: bool,
    client: ureq::Agent,
}

impl Bot {
    /// The bot, with its token read from `settings.token_file`. With
    /// `buttons`, its messages about waiting requests carry Approve and Deny.
    pub fn load(
        db: Db,
        settings: &BotSettings<'_>,
        policy: &Policy,
        desk: &str,
        buttons: bool,
    ) -> Result<Bot, String> {
        let file = settings.token_file.display();
        let token = std::fs::read_to_string(settings.token_file)
            .map_err(|e| format!("--slack-bot-token-file {file}: {e}"))?;
        let token = token.trim().to_owned();
        if !token.starts_with("xoxb-") {
            return Err(format!("--slack-bot-token-file {file}: not a bot token (xoxb-…): copy the Bot User OAuth Token from the Slack app's OAuth & Permissions page"));
        }
        if let Some(channel) = settings.channel {
            if !is_slack_channel_id(channel) {
                return Err(format!("--slack-channel {channel}: not a Slack channel ID: write the ID (C…) that the channel's details show at their end, not its name"));
            }
        }
        let ruled = policy.rules.iter().any(|r| r.slack_channel.is_some());
        if settings.channel.is_none() && !ruled {
            return Err("--slack-bot-token-file needs --slack-channel (or a policy rule's slack_channel): the channel to post requests in".into());
        }
        let api = settings.api.trim_end_matches('/');
        if !(api.starts_with("https://") || api.starts_with("http://")) {
            return Err(format!(
                "--slack-api-url {api}: not an http:// or https:// address"
            ));
        }
        let client = crate::webhooks::outbound(TIMEOUT);
        Ok(Bot {
            shared: Arc::new(Shared {
                db,
                token,
                api: api.to_owned(),
                channel: settings.channel.map(str::to_owned),
                policy: policy.clone(),
                desk: desk.trim_end_matches('/').to_owned(),
                buttons,
                client,
            }),
        })
    }

    /// Posts a new request's message in its rule's channel (or the
    /// server's), and records where it is.
    async fn post(&self, change: &Change, mut message: Value) -> Result<(), Failed> {
        let db = &self.shared.db;
        let id = MplpId::parse(&change.confirm_id)
            .map_err(|e| Failed::Lasting(format!("a change names no review: {e}")))?;
        let Some(stored) = db.review(id).await? else {
            return Ok(());
        };
        let rule = self.shared.policy.rule_for(&stored.review);
        let Some(channel) = rule.slack_channel.clone().or(self.shared.channel.clone()) else {
            return Ok(());
        };
        let known = db.slack_messages(&change.confirm_id).await?;
        if known.iter().any(|posted| posted.channel == channel) {
            // Posted before this instance stopped, not yet moved past.
            return Ok(());
        }
        message["channel"] = json!(channel);
        let answer = self.call("chat.postMessage", message).await?;
        let ts = answer["ts"].as_str().ok_or_else(|| {
            Failed::Lasting("Slack's answer to chat.postMessage has no ts".into())
        })?;
        let posted = Posted {
            channel,
            ts: ts.to_owned(),
        };
        db.slack_posted(id, &posted).await?;
        Ok(())
    }

    /// Replaces a posted message with what is true now.
    async fn update(&self, posted: &Posted, message: &Value) -> Result<(), Failed> {
        let update = json!({
            "channel": posted.channel,
            "ts": posted.ts,
            "text": message["text"],
            "blocks": message["blocks"],
            "link_names": false,
        });
        self.call("chat.update", update).await.map(drop)
    }

    /// Reminds the channel, in the message's thread, that a request still
    /// waits.
    async fn remind(&self, posted: &Posted, change: &Change) -> Result<(), Failed> {
        let link = crate::webhooks::review_link(&self.shared.desk, &change.confirm_id);
        let reply = json!({
            "channel": posted.channel,
            "thread_ts": posted.ts,
            "reply_broadcast": true,
            "link_names": false,
            "unfurl_links": false,
            "text": format!("Still waiting for a decision, and escalated: <{link}|open it in the desk>."),
        });
        self.call("chat.postMessage", reply).await.map(drop)
    }

    /// One call to Slack's Web API (`method`, a JSON body): its answer when
    /// Slack says `ok`.
    async fn call(&self, method: &'static str, body: Value) -> Result<Value, Failed> {
        let shared = self.shared.clone();
        tokio::task::spawn_blocking(move || shared.call(method, &body))
            .await
            .unwrap_or_else(|e| Err(Failed::Passing(format!("the calling task failed: {e}"))))
    }
}

impl Reader for Bot {
    const NAME: &'static str = "slack";
    const TOLD: &'static str = "Slack";

    /// Posts a new request's message, or updates the messages of one that
    /// changed.
    async fn tell(&self, change: &Change) -> Result<(), Failed> {
        let shared = &self.shared;
        let message = crate::webhooks::slack_message(change, &shared.desk, shared.buttons);
        match change.kind {
            ChangeKind::Created => self.post(change, message).await,
            ChangeKind::Decided | ChangeKind::Expired | ChangeKind::Escalated => {
                for posted in shared.db.slack_messages(&change.confirm_id).await? {
                    self.update(&posted, &message).await?;
                    if change.kind == ChangeKind::Escalated {
                        self.remind(&posted, change).await?;
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

impl Shared {
    fn call(&self, method: &str, body: &Value) -> Result<Value, Failed> {
        let answer = self
            .client
            .post(&format!("{}/{method}", self.api))
            .header("authorization", &format!("Bearer {}", self.token))
            .header("content-type", "application/json; charset=utf-8")
            .header(
                "user-agent",
                concat!("countersign/", env!("CARGO_PKG_VERSION")),
            )
            .send(body.to_string().as_bytes());
        let mut response =
            answer.map_err(|e| Failed::Passing(format!("cannot reach Slack's {method}: {e}")))?;
        let status = response.status();
        if status.as_u16() == 429 || status.is_server_error() {
            return Err(Failed::Passing(format!(
                "Slack's {method} answered {status}"
            )));
        }
        let text = response
            .body_mut()
            .with_config()
            .limit(1 << 20)
            .read_to_string()
            .map_err(|e| Failed::Passing(format!("reading Slack's answer to {method}: {e}")))?;
        let answer: Value = serde_json::from_str(&text).map_err(|_| {
            Failed::Lasting(format!("Slack's {method} answered {status}, not with JSON"))
        })?;
        if answer["ok"] == json!(true) {
            return Ok(answer);
        }
        let error = answer["error"].as_str().unwrap_or("no error named");
        if PASSING.contains(&error) {
            return Err(Failed::Passing(format!("Slack's {method}: {error}")));
        }
        Err(Failed::Lasting(format!(
            "Slack refused {method}: {error}{}",
            advice(error)
        )))
    }
}

/// What the operator can do about an error Slack gives for good.
fn advice(error: &str) -> &'static str {
    match error {
        "not_in_channel" | "channel_not_found" => {
            "; invite the app to the channel (type /invite and the app's name there)"
        }
        "invalid_auth" | "not_authed" | "token_revoked" | "account_inactive" => {
            "; the bot token no longer works: reinstall the app and put its new token in --slack-bot-token-file"
        }
        "missing_scope" => "; give the app the chat:write scope and reinstall it",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::advice;

    #[test]
    fn lasting_errors_say_what_to_do() {
        assert!(advice("not_in_channel").contains("/invite"));
        assert!(advice("token_revoked").contains("reinstall"));
        assert_eq!(advice("msg_too_long"), "");
    }
}
