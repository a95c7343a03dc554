//! `serve --webhook URL`: tells other systems when a review is created,
//! decided, expired or escalated. Deliveries are durable (see
//! [`crate::store::webhooks`]), retried with exponential backoff and jitter for
//! up to a day, and signed the Standard Webhooks way: `webhook-signature:
//! v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">` with
//! the webhook's secret.
//!
//! Each attempt is a task of its own, bounded by [`TIMEOUT`], and each
//! webhook has [`IN_FLIGHT`] of them at most on one instance: a receiver that
//! hangs on some deliveries holds only their slots, and every other delivery
//! (of that webhook or another) is sent when it falls due. So deliveries are
//! not sent in order; each body carries its feed position (`seq`).

use crate::store::webhooks::{Claimed, Queued};
use crate::store::Change;
use crate::store::{Db, DbError};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use countersign_domain::model::ConfirmStatus;
use countersign_domain::wire::{
    ChangeKind, ReceiptDecision, WebhookFormat, WebhookList, WebhookStatus,
};
use hmac::{Hmac, Mac};
use serde_json::json;
use sha2::Sha256;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// The changes webhooks are told of.
const SENT: [ChangeKind; 4] = [
    ChangeKind::Created,
    ChangeKind::Decided,
    ChangeKind::Expired,
    ChangeKind::Escalated,
];
/// Feed entries turned into deliveries per query.
const PAGE: i64 = 200;
/// Attempts one webhook has in flight at once on one instance.
pub const IN_FLIGHT: usize = 16;
/// How long one attempt may take, from connecting to the end of the answer,
/// before it counts as failed (and is tried again on the schedule).
pub const TIMEOUT: Duration = Duration::from_secs(10);
/// How often new changes are turned into deliveries.
const QUEUE_EVERY: Duration = Duration::from_secs(1);
/// How long a delivery is retried before it is given up.
const GIVE_UP_AFTER: chrono::TimeDelta = chrono::TimeDelta::hours(24);
/// The longest wait between two attempts.
const MAX_BACKOFF_SECONDS: u64 = 3600;

/// One endpoint to tell.
#[derive(Debug, Clone)]
pub struct Webhook {
    /// Where to POST.
    pub url: String,
    /// The body it understands.
    pub format: WebhookFormat,
}

/// The configured webhooks and what their bodies link to.
#[derive(Clone)]
pub struct Webhooks {
    shared: Arc<Shared>,
}

struct Shared {
    db: Db,
    hooks: Vec<Hook>,
    desk: String,
    /// Whether Slack messages carry Approve and Deny (`--slack-signing-secret-file`).
    buttons: bool,
    client: ureq::Agent,
}

/// A configured webhook with its signing key and its free attempt slots.
struct Hook {
    webhook: Webhook,
    key: Vec<u8>,
    slots: Arc<Semaphore>,
}

impl Webhooks {
    /// Reads (or makes, printing it once) each webhook's secret. `desk` is
    /// the address the desk is opened at, for links in the bodies; with
    /// `buttons`, a Slack message about a pending request can decide it.
    pub async fn open(
        db: Db,
        hooks: Vec<Webhook>,
        desk: &str,
        buttons: bool,
    ) -> Result<Webhooks, String> {
        let mut keyed = Vec::new();
        for hook in hooks {
            if !(hook.url.starts_with("http://") || hook.url.starts_with("https://")) {
                return Err(format!(
                    "--webhook {}: not an http:// or https:// address",
                    hook.url
                ));
            }
            let fresh = format!("whsec_{}", STANDARD.encode(random_bytes::<32>()));
            let (secret, made) = db
                .webhook_secret(&hook.url, &fresh)
                .await
                .map_err(|e| e.to_string())?;
            if made {
                // The secret itself is never logged: `countersign webhooks` shows it.
                tracing::info!(
                    webhook = %shown(&hook.url),
                    "webhook has a new signing secret; `countersign webhooks` shows it"
                );
            }
            let key = secret_key(&secret).ok_or_else(|| {
                format!(
                    "the stored secret of webhook {} is damaged",
                    shown(&hook.url)
                )
            })?;
            keyed.push(Hook {
                webhook: hook,
                key,
                slots: Arc::new(Semaphore::new(IN_FLIGHT)),
            });
        }
        let client = crate::webhooks::outbound(TIMEOUT);
        Ok(Webhooks {
            shared: Arc::new(Shared {
                db,
                hooks: keyed,
                desk: desk.trim_end_matches('/').to_owned(),
                buttons,
                client,
            }),
        })
    }

    /// Whether any webhook is configured.
    pub fn is_empty(&self) -> bool {
        self.shared.hooks.is_empty()
    }

    /// The webhooks and their latest deliveries.
    pub async fn list(&self) -> Result<WebhookList, DbError> {
        let db = &self.shared.db;
        let mut webhooks = Vec::new();
        for Hook { webhook, .. } in &self.shared.hooks {
            let [pending, sent, failed] = db.delivery_counts(&webhook.url).await?;
            webhooks.push(WebhookStatus {
                url: shown(&webhook.url),
                format: webhook.format,
                pending,
                sent,
                failed,
            });
        }
        let deliveries = db.recent_deliveries(&self.urls(), 50, shown).await?;
        Ok(WebhookList {
            webhooks,
            deliveries,
        })
    }

    fn urls(&self) -> Vec<String> {
        self.shared
            .hooks
            .iter()
            .map(|hook| hook.webhook.url.clone())
            .collect()
    }

    /// Queues new deliveries every second and starts each attempt when it
    /// falls due and its webhook has a free slot, for as long as the server
    /// runs.
    pub async fn run(self) {
        let freed = Arc::new(Notify::new());
        let mut queued_at = Instant::now();
        if let Err(e) = self.queue_new().await {
            tracing::warn!("queueing webhook deliveries failed (trying again): {e}");
        }
        loop {
            if queued_at.elapsed() >= QUEUE_EVERY {
                queued_at = Instant::now();
                if let Err(e) = self.queue_new().await {
                    tracing::warn!("queueing webhook deliveries failed (trying again): {e}");
                }
            }
            let next_due = self.start_due(&freed).await.unwrap_or_else(|e| {
                tracing::warn!("sending webhook deliveries failed (trying again): {e}");
                None
            });
            let queue_at = queued_at + QUEUE_EVERY;
            let wake_at = next_due.map_or(queue_at, |due| due.min(queue_at));
            tokio::select! {
                () = tokio::time::sleep_until(wake_at) => {}
                () = freed.notified() => {}
            }
        }
    }

    /// Turns the changes stored since each webhook's place into deliveries.
    async fn queue_new(&self) -> Result<(), DbError> {
        let db = &self.shared.db;
        for Hook { webhook, .. } in &self.shared.hooks {
            loop {
                let from = db.webhook_position(&webhook.url).await?;
                let changes = db.changes_after(from, PAGE).await?;
                let Some(to) = changes.last().map(|c| c.seq) else {
                    break;
                };
                let queued: Vec<Queued> = changes
                    .into_iter()
                    .filter(|c| SENT.contains(&c.kind))
                    .map(|change| {
                        let id = format!("msg_{}", crate::changes::new_id());
                        let (desk, buttons) = (&self.shared.desk, self.shared.buttons);
                        let body = body(webhook.format, &id, &change, desk, buttons);
                        Queued { id, change, body }
                    })
                    .collect();
                // Another instance may have queued them first: then read again.
                db.queue_deliveries(&webhook.url, (from, to), &queued)
                    .await?;
            }
        }
        Ok(())
    }

    /// Claims as many due deliveries as each webhook has free slots and
    /// starts an attempt for each; `freed` is told when one ends. Returns
    /// when the next delivery not started falls due, if any does.
    async fn start_due(&self, freed: &Arc<Notify>) -> Result<Option<Instant>, DbError> {
        let db = &self.shared.db;
        let mut next_due: Option<Instant> = None;
        for (index, hook) in self.shared.hooks.iter().enumerate() {
            let room = hook.slots.available_permits();
            if room == 0 {
                // The slot an attempt frees wakes the loop.
                continue;
            }
            let url = std::slice::from_ref(&hook.webhook.url);
            let now = chrono::Utc::now();
            // A claim lasts longer than an attempt can: an instance that dies
            // mid-attempt leaves its claims to be taken again after it.
            let lease = now + chrono::TimeDelta::from_std(TIMEOUT * 3).unwrap_or_default();
            let limit = i64::try_from(room).unwrap_or(i64::MAX);
            let claimed = db.claim_deliveries(url, now, lease, limit).await?;
            let full = claimed.len() == room;
            for delivery in claimed {
                let Ok(slot) = hook.slots.clone().try_acquire_owned() else {
                    // Only this loop takes slots, so one is free; if not, the
                    // lease runs out and the delivery is claimed again.
                    break;
                };
                tokio::spawn(self.clone().attempt(index, delivery, slot, freed.clone()));
            }
            if !full {
                if let Some(due) = db.next_delivery_at(&hook.webhook.url).await? {
                    let wait = (due - chrono::Utc::now()).to_std().unwrap_or_default();
                    let due = Instant::now() + wait;
                    next_due = Some(next_due.map_or(due, |next| next.min(due)));
                }
            }
        }
        Ok(next_due)
    }

    /// One attempt of one delivery, recorded; then its slot is freed.
    async fn attempt(
        self,
        hook: usize,
        delivery: Claimed,
        slot: OwnedSemaphorePermit,
        freed: Arc<Notify>,
    ) {
        let shared = self.shared.clone();
        let sent = tokio::task::spawn_blocking({
            let delivery = delivery.clone();
            move || shared.send(hook, &delivery)
        })
        .await
        .unwrap_or_else(|e| Err(format!("the sending task failed: {e}")));
        let result = match &sent {
            Ok(()) => Ok(()),
            Err(error) => Err((error.as_str(), retry_at(&delivery))),
        };
        if let Err(e) = self
            .shared
            .db
            .delivery_attempted(&delivery.id, result)
            .await
        {
            // The claim's lease runs out and the delivery is tried again.
            tracing::warn!(delivery = %delivery.id, "recording a webhook delivery failed: {e}");
        }
        drop(slot);
        freed.notify_one();
    }
}

impl Shared {
    /// One attempt: signed POST, 2xx or the reason it failed.
    fn send(&self, hook: usize, delivery: &Claimed) -> Result<(), String> {
        let key = &self
            .hooks
            .get(hook)
            .ok_or("the webhook is no longer configured")?
            .key;
        let timestamp = chrono::Utc::now().timestamp().to_string();
        let signature = sign(key, &delivery.id, &timestamp, &delivery.body);
        let answer = self
            .client
            .post(&delivery.url)
            .header("content-type", "application/json")
            .header(
                "user-agent",
                concat!("countersign/", env!("CARGO_PKG_VERSION")),
            )
            .header("webhook-id", &delivery.id)
            .header("webhook-timestamp", &timestamp)
            .header("webhook-signature", &signature)
            .send(delivery.body.as_bytes());
        let mut response = answer.map_err(|e| format!("cannot reach the receiver: {e}"))?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        let text = response
            .body_mut()
            .with_config()
            .limit(2048)
            .read_to_string()
            .unwrap_or_default();
        let text: String = text.chars().take(200).collect();
        match text.trim() {
            "" => Err(format!("the receiver answered {status}")),
            said => Err(format!("the receiver answered {status}: {said}")),
        }
    }
}

/// An HTTP client for calls this server makes out (webhooks, Slack, identity
/// providers): each call bounded by `timeout`, no redirect followed (an
/// answer is taken from whom it was asked of), any status read as an answer.
/// A connection is reused only within a second: servers close idle ones
/// from 2 s (gunicorn) or 5 s (Node, uvicorn), and a call written as the
/// server closes fails with a reset.
pub(crate) fn outbound(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(timeout))
        .max_idle_age(Duration::from_secs(1))
        .build()
        .into()
}

/// When to try a failed delivery again: 1 s after the first attempt, then
/// twice as long each time up to an hour, each wait jittered by ±50 % so
/// many retries do not arrive together; none once a day has passed.
fn retry_at(delivery: &Claimed) -> Option<chrono::DateTime<chrono::Utc>> {
    let now = chrono::Utc::now();
    let exponent = u32::try_from(delivery.attempts.clamp(0, 12)).unwrap_or(12);
    let base = (1u64 << exponent).min(MAX_BACKOFF_SECONDS) * 1000;
    let jitter = u64::from(u32::from_le_bytes(random_bytes::<4>())) % (base + 1);
    let wait = chrono::TimeDelta::milliseconds(i64::try_from(base / 2 + jitter).ok()?);
    let created = chrono::DateTime::parse_from_rfc3339(&delivery.created_at).ok()?;
    let next = now + wait;
    (next < created.to_utc() + GIVE_UP_AFTER).then_some(next)
}

/// `v1,<base64 HMAC-SHA256(key, "{id}.{timestamp}.{body}")>`.
pub fn sign(key: &[u8], id: &str, timestamp: &str, body: &str) -> String {
    // HMAC takes a key of any length.
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC accepts every key length");
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(body.as_bytes());
    format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
}

/// The key bytes of a `whsec_<base64>` secret.
pub fn secret_key(secret: &str) -> Option<Vec<u8>> {
    STANDARD.decode(secret.strip_prefix("whsec_")?).ok()
}

/// An address as shown in lists and logs: scheme and host only (a Slack
/// webhook's path is its credential).
pub fn shown(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit('@').next().unwrap_or(authority);
    let hidden = if rest.len() > authority.len() {
        "/…"
    } else {
        ""
    };
    format!("{scheme}://{host}{hidden}")
}

/// The body a webhook receives for a change.
fn body(format: WebhookFormat, id: &str, change: &Change, desk: &str, buttons: bool) -> String {
    match format {
        WebhookFormat::Json => {
            let mut body = json!({
                "id": id,
                "type": change.kind.as_str(),
                "seq": change.seq,
                "at": change.at,
                "status": change.status,
                "waited_seconds": waited_seconds(change),
                "link": review_link(desk, &change.confirm_id),
                "review": change.summary,
            });
            if let Some(decision) = &change.decision {
                body["decision"] = json!(decision);
            }
            body.to_string()
        }
        WebhookFormat::Slack => slack_message(change, desk, buttons).to_string(),
    }
}

/// The desk's page of a review.
pub(crate) fn review_link(desk: &str, review: &str) -> String {
    format!("{desk}/reviews/{review}")
}

/// How long the review had waited when the change happened.
fn waited_seconds(change: &Change) -> i64 {
    chrono::DateTime::parse_from_rfc3339(&change.at)
        .map(|at| {
            (at.to_utc() - change.summary.at.to_utc())
                .num_seconds()
                .max(0)
        })
        .unwrap_or(0)
}

/// A Slack message telling of a change: what happened and who decided, the
/// request with a link to the desk, and (with `buttons`, while it waits)
/// Approve and Deny. Incoming webhooks and the bot's messages send it.
pub(crate) fn slack_message(change: &Change, desk: &str, buttons: bool) -> serde_json::Value {
    let summary = &change.summary;
    let link = review_link(desk, &change.confirm_id);
    // Who decided: a person's name is theirs to choose, so it is made inert
    // like the agent's text.
    let by = change.decision.as_ref().map_or_else(String::new, by_whom);
    let what = match change.kind {
        ChangeKind::Created => "New request waiting for approval".to_owned(),
        // An approval that a quorum still waits on leaves the request pending.
        ChangeKind::Decided if change.status == ConfirmStatus::Pending => {
            format!("Approved once{by}; more approvals are needed")
        }
        ChangeKind::Decided => format!("Decided: {}{by}", change.status),
        ChangeKind::Expired => "Expired with no decision: denied".to_owned(),
        ChangeKind::Escalated => "Escalated: still waiting for a decision".to_owned(),
        other => other.as_str().to_owned(),
    };
    let title = slack_text(&summary.title);
    let context = format!(
        "{} · asked by {} · waited {}",
        slack_text(&summary.kind.to_string()),
        slack_text(&summary.by),
        waited_text(waited_seconds(change))
    );
    // Every text the agent controls goes through `slack_text`, and no text
    // object lets Slack turn words into links or mentions (`verbatim`,
    // `link_names`): the only link is the desk's.
    let mrkdwn = |text: String| json!({"type": "mrkdwn", "text": text, "verbatim": true});
    let mut blocks = vec![
        json!({"type": "section", "text": mrkdwn(format!("*{what}*\n<{link}|{title}>"))}),
        json!({"type": "context", "elements": [mrkdwn(context)]}),
    ];
    if buttons && change.status == ConfirmStatus::Pending {
        blocks.extend(crate::slack::decision_blocks(&change.confirm_id, &link));
    }
    json!({
        "text": format!("{what}: {title}"),
        "link_names": false,
        "unfurl_links": false,
        "unfurl_media": false,
        "blocks": blocks,
    })
}

/// " by Dana Reviewer as reviewer in the desk": who made a decision, as
/// what, and where (when recorded).
pub(crate) fn by_whom(decision: &ReceiptDecision) -> String {
    let channel = decision.channel.map(|c| format!(" {}", c.phrase()));
    format!(
        " by {} as {}{}",
        slack_text(decision.who()),
        slack_text(&decision.decided_by_role),
        channel.unwrap_or_default()
    )
}

/// Agent-controlled text made inert for Slack, which reads markup in every
/// text field and in notifications: `&`, `<` and `>` escaped (so no
/// `<!channel>`, `<@U…>`, `<#C…>` or `<url|label>` survives), and line
/// breaks and other control characters turned into spaces, so a title stays
/// one line inside the desk's link.
pub(crate) fn slack_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// `45 s`, `12 min`, `3 h 5 min`.
fn waited_text(seconds: i64) -> String {
    match seconds {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} min", s / 60),
        s => format!("{} h {} min", s / 3600, s % 3600 / 60),
    }
}

fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    // A machine without randomness cannot run the server at all (keys need it too).
    getrandom::fill(&mut bytes).expect("the operating system's random source failed");
    bytes
}

#[cfg(test)]
mod tests {
    use super::body as body_of;
    use super::*;
    use countersign_domain::model::DecisionStatus;
    use countersign_domain::wire::{ReceiptDecision, ReviewSummary};

    #[test]
    fn a_signature_matches_the_standard_webhooks_test_vector() {
        // The example of the Standard Webhooks specification.
        let key = secret_key("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let signature = sign(
            &key,
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            "1614265330",
            r#"{"test": 2432232314}"#,
        );
        assert_eq!(signature, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn a_shown_address_hides_the_path_and_credentials() {
        assert_eq!(
            shown("https://hooks.slack.com/services/T0/B0/XYZ"),
            "https://hooks.slack.com/…"
        );
        assert_eq!(
            shown("http://user:pw@127.0.0.1:9000"),
            "http://127.0.0.1:9000"
        );
    }

    fn change(summary: &ReviewSummary, kind: ChangeKind, status: ConfirmStatus) -> Change {
        Change {
            seq: 7,
            kind,
            confirm_id: summary.id.to_string(),
            status,
            at: crate::store::stored_time(summary.at.to_utc() + chrono::TimeDelta::minutes(12)),
            decision: None,
            summary: summary.clone(),
        }
    }

    /// A decision by a signed-in person called `name`.
    fn decided_by(name: &str, status: DecisionStatus) -> ReceiptDecision {
        ReceiptDecision {
            decision_id: countersign_domain::MplpId::from_random_bytes([7; 16]),
            status,
            decided_by_role: "security_officer".into(),
            decided_by_key: Some("ses_1".into()),
            decided_by_owner: None,
            decided_by_person: Some(countersign_domain::Person {
                issuer: "https://id.example".into(),
                subject: "dana".into(),
                name: Some(name.into()),
                email: Some("dana@example.com".into()),
            }),
            channel: Some(countersign_domain::Channel::Slack),
            decided_at: countersign_domain::Timestamp::parse("2026-11-29T10:00:00Z").unwrap(),
        }
    }

    fn slack(change: &Change) -> serde_json::Value {
        serde_json::from_str(&body(
            WebhookFormat::Slack,
            "msg_1",
            change,
            "https://desk",
            false,
        ))
        .unwrap()
    }

    /// Every string of a Slack body, with where it is.
    fn strings(value: &serde_json::Value, at: String, out: &mut Vec<(String, String)>) {
        match value {
            serde_json::Value::String(text) => out.push((at, text.clone())),
            serde_json::Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    strings(item, format!("{at}/{i}"), out);
                }
            }
            serde_json::Value::Object(fields) => {
                for (name, field) in fields {
                    strings(field, format!("{at}/{name}"), out);
                }
            }
            _ => {}
        }
    }

    /// Fails unless the only markup Slack could read in `body` is the
    /// desk's own link, every `&` starts one of the three escapes, and no
    /// text object lets Slack find links or mentions by itself.
    fn assert_inert(body: &serde_json::Value, link: &str) {
        let mut found = Vec::new();
        strings(body, String::new(), &mut found);
        for (at, text) in &found {
            let mut rest = text.as_str();
            while let Some(open) = rest.find('<') {
                let markup = &rest[open..];
                assert!(
                    markup.starts_with(&format!("<{link}|")),
                    "markup at {at}: {text}"
                );
                let close = markup.find('>').unwrap();
                assert!(!markup[1..close].contains('<'), "{at}: {text}");
                rest = &markup[close + 1..];
            }
            let entities = text.match_indices('&').all(|(i, _)| {
                ["&amp;", "&lt;", "&gt;"]
                    .iter()
                    .any(|e| text[i..].starts_with(e))
            });
            assert!(entities, "a bare & at {at}: {text}");
            assert!(!text.contains('\n') || at.ends_with("/0/text/text"), "{at}");
        }
        assert_eq!(body["link_names"], false);
        for block in body["blocks"].as_array().unwrap() {
            let texts = block["text"].as_object().into_iter().chain(
                block["elements"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|e| e.as_object()),
            );
            // Markdown is where Slack makes links and mentions of words;
            // the buttons' plain texts are Countersign's own.
            for text in texts.filter(|t| t["type"] == "mrkdwn") {
                assert_eq!(text["verbatim"], true, "{block}");
            }
        }
    }

    #[test]
    fn a_slack_message_says_what_happened_with_a_link_and_escaped_text() {
        let review = countersign_domain::demo::reviews(chrono::Utc::now())
            .unwrap()
            .remove(0);
        let mut summary = ReviewSummary::of(&review);
        summary.title = "Drop <prod> & co".into();
        let partial = slack(&change(
            &summary,
            ChangeKind::Decided,
            ConfirmStatus::Pending,
        ));
        assert!(partial["text"]
            .as_str()
            .unwrap()
            .starts_with("Approved once; more approvals are needed"));
        let rejected = slack(&change(
            &summary,
            ChangeKind::Decided,
            ConfirmStatus::Rejected,
        ));
        assert_eq!(
            rejected["text"],
            "Decided: rejected: Drop &lt;prod&gt; &amp; co"
        );
        // The person who decided is named, in the message and in JSON.
        let mut by_person = change(&summary, ChangeKind::Decided, ConfirmStatus::Rejected);
        by_person.decision = Some(decided_by("Dana Reviewer", DecisionStatus::Rejected));
        assert_eq!(
            slack(&by_person)["text"],
            "Decided: rejected by Dana Reviewer as security_officer in Slack: Drop &lt;prod&gt; &amp; co"
        );
        let json: serde_json::Value = serde_json::from_str(&body(
            WebhookFormat::Json,
            "msg_1",
            &by_person,
            "https://desk",
            false,
        ))
        .unwrap();
        assert_eq!(
            json["decision"]["decided_by_person"]["email"],
            "dana@example.com"
        );
        assert_eq!(json["decision"]["decided_by_role"], "security_officer");
        assert!(
            serde_json::from_str::<serde_json::Value>(&body(
                WebhookFormat::Json,
                "msg_1",
                &change(&summary, ChangeKind::Decided, ConfirmStatus::Rejected),
                "https://desk",
                false,
            ))
            .unwrap()
            .get("decision")
            .is_none(),
            "a change with no decision has no decision field"
        );
        let section = rejected["blocks"][0]["text"]["text"].as_str().unwrap();
        assert!(section.starts_with("*Decided: rejected*"), "{section}");
        let link = format!(
            "<https://desk/reviews/{}|Drop &lt;prod&gt; &amp; co>",
            summary.id
        );
        assert!(section.contains(&link), "{section}");
        let context = rejected["blocks"][1]["elements"][0]["text"]
            .as_str()
            .unwrap();
        assert!(context.ends_with("waited 12 min"), "{context}");
    }

    #[test]
    fn with_slack_buttons_on_a_pending_request_can_be_decided_from_its_message() {
        let review = countersign_domain::demo::reviews(chrono::Utc::now())
            .unwrap()
            .remove(0);
        let summary = ReviewSummary::of(&review);
        let slack = |status| -> serde_json::Value {
            let change = change(&summary, ChangeKind::Created, status);
            serde_json::from_str(&body_of(
                WebhookFormat::Slack,
                "msg_1",
                &change,
                "https://desk",
                true,
            ))
            .unwrap()
        };
        let pending = slack(ConfirmStatus::Pending);
        let actions = &pending["blocks"][3]["elements"];
        assert_eq!(
            pending["blocks"][2]["element"]["action_id"],
            "countersign_reason"
        );
        assert_eq!(actions[0]["action_id"], "countersign_approve");
        assert_eq!(actions[0]["value"], summary.id.to_string());
        assert_eq!(actions[1]["action_id"], "countersign_deny");
        assert_eq!(
            actions[2]["url"],
            format!("https://desk/reviews/{}", summary.id)
        );
        let decided = slack(ConfirmStatus::Approved);
        assert_eq!(
            decided["blocks"].as_array().unwrap().len(),
            2,
            "no buttons once decided"
        );
    }

    #[test]
    fn agent_text_in_a_slack_message_is_inert_everywhere() {
        let hostile = "Pay now <https://evil.example/phish|Open the desk to approve> <!channel> <!here> <@U012AB3CD> <#C123|general> <!subteam^S1> &lt;!everyone&gt;\n*next line*";
        let submission: countersign_domain::toolcall::ToolCallSubmission =
            serde_json::from_value(serde_json::json!({
                "sessionId": "sess <!here>",
                "runId": "run-1",
                "toolCall": {"name": "pay<!channel>|now", "args": {"to": hostile}},
                "humanSummary": hostile,
                "riskTier": "R3",
                "reason": hostile,
                "requestedByRole": format!("agent {hostile}"),
            }))
            .unwrap();
        let mut ids = crate::changes::new_id;
        let review = countersign_domain::toolcall::new_tool_call_review(
            submission,
            chrono::Utc::now(),
            &mut ids,
        )
        .unwrap();
        let summary = ReviewSummary::of(&review);
        let link = format!("https://desk/reviews/{}", summary.id);
        for kind in SENT {
            let body = slack(&change(&summary, kind, ConfirmStatus::Pending));
            assert_inert(&body, &link);
            // With Slack's buttons on, the buttons add no text of the agent's.
            let pending = change(&summary, kind, ConfirmStatus::Pending);
            let with_buttons: serde_json::Value = serde_json::from_str(&body_of(
                WebhookFormat::Slack,
                "msg_1",
                &pending,
                "https://desk",
                true,
            ))
            .unwrap();
            assert_inert(&with_buttons, &link);
            let text = body["text"].as_str().unwrap();
            assert!(text.contains("&lt;!channel&gt;"), "{text}");
            assert!(!text.contains('<'), "{text}");
        }
        let mut plan = countersign_domain::demo::reviews(chrono::Utc::now())
            .unwrap()
            .into_iter()
            .find(|r| r.plan().is_some())
            .unwrap();
        plan.confirm.requested_by_role = hostile.into();
        let mut summary = ReviewSummary::of(&plan);
        summary.title = hostile.into();
        let link = format!("https://desk/reviews/{}", summary.id);
        let mut decided = change(&summary, ChangeKind::Decided, ConfirmStatus::Rejected);
        // A person's name comes from their identity provider: inert too.
        decided.decision = Some(decided_by(hostile, DecisionStatus::Rejected));
        let body = slack(&decided);
        assert_inert(&body, &link);
        assert!(body["text"]
            .as_str()
            .unwrap()
            .contains("by Pay now &lt;https"));
    }

    #[test]
    fn retries_back_off_and_stop_after_a_day() {
        let now = chrono::Utc::now();
        let claimed = |attempts, age: chrono::TimeDelta| Claimed {
            id: "msg".into(),
            url: "http://x".into(),
            body: "{}".into(),
            attempts,
            created_at: (now - age).to_rfc3339(),
        };
        let first = retry_at(&claimed(0, chrono::TimeDelta::zero())).unwrap() - now;
        assert!(first <= chrono::TimeDelta::milliseconds(1600), "{first}");
        let tenth = retry_at(&claimed(10, chrono::TimeDelta::zero())).unwrap() - now;
        assert!(tenth >= chrono::TimeDelta::seconds(500), "{tenth}");
        let late = retry_at(&claimed(30, chrono::TimeDelta::hours(1)));
        assert!(late.unwrap() - now <= chrono::TimeDelta::seconds(5400));
        assert_eq!(retry_at(&claimed(3, chrono::TimeDelta::hours(24))), None);
    }
}
