//! Deciding from Slack. A Countersign message in Slack carries Approve and
//! Deny buttons; Slack posts each click to `POST /slack/actions`, which
//! checks that Slack sent it (`verify`), reads what it asks (`payload`) and
//! answers Slack at once; then [`Slack::answer`] decides through the one
//! decide use case, as the person the clicking Slack user is linked to (with
//! their signed-in session's roles, checked with their provider as any
//! request of that session is), and the message is replaced with what was
//! decided, or the user alone is told why not.

pub mod bot;
pub mod payload;
pub mod verify;

use crate::signin::SignIn;
use crate::store::keys::ApiKey;
use crate::usecases::{self, Decided, DecisionRequest, NotDecided, Service};
use countersign_domain::model::DecisionStatus;
use countersign_domain::wire::{ReceiptDecision, SlackUser};
use countersign_domain::{Channel, DecideError, DecisionInput, Review};
use payload::{Choice, Click};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// How long a link code sent to a Slack user works.
const LINK_CODE_TTL: chrono::Duration = chrono::Duration::minutes(10);

/// Deciding from Slack, as this server runs it.
#[derive(Clone)]
pub struct Slack {
    shared: Arc<Shared>,
}

struct Shared {
    secret: Vec<u8>,
    desk: String,
    client: ureq::Agent,
}

/// What a click gets: the message replaced for everyone, or a word to the
/// clicking user alone.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// The message, replaced (it says what was decided, without buttons).
    Replace(serde_json::Value),
    /// Only the user who clicked sees this.
    Ephemeral(String),
}

impl Slack {
    /// Slack with the app's signing secret read from `secret_file`; `desk`
    /// is the address reviewers open the desk at.
    pub fn load(secret_file: &Path, desk: &str) -> Result<Slack, String> {
        let secret = std::fs::read_to_string(secret_file)
            .map_err(|e| format!("--slack-signing-secret-file {}: {e}", secret_file.display()))?;
        let secret = secret.trim();
        if secret.is_empty() {
            return Err(format!(
                "--slack-signing-secret-file {}: the file is empty (paste the Signing Secret from the Slack app's Basic Information page)",
                secret_file.display()
            ));
        }
        let client = crate::webhooks::outbound(Duration::from_secs(10));
        Ok(Slack {
            shared: Arc::new(Shared {
                secret: secret.as_bytes().to_vec(),
                desk: desk.trim_end_matches('/').to_owned(),
                client,
            }),
        })
    }

    /// Whether Slack sent this body with these headers (now).
    pub fn verify(
        &self,
        timestamp: Option<&str>,
        signature: Option<&str>,
        body: &[u8],
    ) -> Result<(), verify::NotSlack> {
        let now = chrono::Utc::now().timestamp();
        verify::verify(&self.shared.secret, timestamp, signature, body, now)
    }

    /// What `click` gets: a decision made as the person its Slack user is
    /// linked to, or why not. One click decides once, however often Slack
    /// (or anyone replaying it) sends it: its `action_ts` is the decision's
    /// idempotency key.
    pub async fn answer(&self, service: Service<'_>, sign_in: &SignIn, click: &Click) -> Reply {
        match self.decide(service, sign_in, click).await {
            Ok(reply) => reply,
            Err(said) => Reply::Ephemeral(said),
        }
    }

    async fn decide(
        &self,
        service: Service<'_>,
        sign_in: &SignIn,
        click: &Click,
    ) -> Result<Reply, String> {
        let failed = |e: &dyn std::fmt::Display| format!("Countersign could not act on this: {e}");
        let desk = &self.shared.desk;
        let session = match service.db.slack_session(&click.team, &click.user).await {
            Err(e) => return Err(failed(&e)),
            Ok(None) => return self.link_first(service, click).await,
            Ok(Some(None)) => {
                return Err(format!(
                    "You are not signed in to the desk: sign in at {desk}, then click again (a click in Slack decides as the person signed in there)."
                ))
            }
            Ok(Some(Some(session))) => session,
        };
        let session = sign_in
            .fresh(service.db, session)
            .await
            .map_err(|e| format!("{e}. Nothing was decided."))?;
        let review = match service.db.review(click.review).await {
            Ok(Some(stored)) => stored.review,
            Ok(None) => return Err(format!("This request is no longer at {desk}.")),
            Err(e) => return Err(failed(&e)),
        };
        let role = choose_role(service, &review, &session.roles).ok_or_else(|| {
            format!(
                "You are signed in as {}, but none of your groups gives a role that may decide here. Nothing was decided.",
                session.person.label()
            )
        })?;
        let status = match click.choice {
            Choice::Approve => DecisionStatus::Approved,
            Choice::Deny => DecisionStatus::Rejected,
        };
        if status == DecisionStatus::Rejected && click.reason.is_none() {
            return Err("Write why in the Reason box above the buttons, then click Deny again. Nothing was decided.".into());
        }
        let key = ApiKey::of_session(&session);
        let request = DecisionRequest {
            review: click.review,
            input: DecisionInput {
                status,
                decided_by_role: role,
                reason: click.reason.clone(),
                tool_call: None,
            },
            idempotency_key: format!("slack:{}:{}:{}", click.team, click.user, click.action_ts),
            channel: Channel::Slack,
        };
        match usecases::decide(service, &key, request).await {
            Ok(Decided(answer)) => {
                let decided: serde_json::Value =
                    serde_json::from_str(&answer).map_err(|e| failed(&e))?;
                let review: Review =
                    serde_json::from_value(decided["review"].clone()).map_err(|e| failed(&e))?;
                Ok(Reply::Replace(decided_message(&review, desk)))
            }
            // Another click, or the desk, decided first: the message says what stands.
            Err(NotDecided::Refused(DecideError::NotPending { .. })) => Ok(Reply::Replace(
                decided_message(&review_now(service, click.review).await?, desk),
            )),
            Err(NotDecided::Refused(refused)) => Err(format!("{refused}. Nothing was decided.")),
            Err(e) => Err(failed(&e)),
        }
    }

    /// An unlinked Slack user is sent, alone, a code to link their account
    /// from the desk while signed in there: both sides, or no link.
    async fn link_first(&self, service: Service<'_>, click: &Click) -> Result<Reply, String> {
        let user = SlackUser {
            team_id: click.team.clone(),
            user_id: click.user.clone(),
            user_name: click.user_name.clone(),
        };
        let expires = chrono::Utc::now() + LINK_CODE_TTL;
        let code = service
            .db
            .new_slack_link_code(&user, expires)
            .await
            .map_err(|e| format!("Countersign could not act on this: {e}"))?;
        Ok(Reply::Ephemeral(format!(
            "Your Slack account is not linked to a reviewer yet, so nothing was decided. Link it: open {}/settings?slack={code} while signed in to the desk (the link works once, for 10 minutes, and only for you), then click again.",
            self.shared.desk
        )))
    }

    /// Sends `reply` to the message's `response_url` (Slack's, from the
    /// signed click).
    pub fn send(&self, response_url: &str, reply: &Reply) -> Result<(), String> {
        let body = match reply {
            Reply::Replace(message) => {
                let mut message = message.clone();
                message["replace_original"] = json!(true);
                message
            }
            Reply::Ephemeral(text) => json!({
                "response_type": "ephemeral",
                "replace_original": false,
                "text": text,
            }),
        };
        let answer = self
            .shared
            .client
            .post(response_url)
            .header("content-type", "application/json")
            .send(body.to_string().as_bytes())
            .map_err(|e| format!("cannot reach Slack's response_url: {e}"))?;
        match answer.status() {
            status if status.is_success() => Ok(()),
            status => Err(format!("Slack's response_url answered {status}")),
        }
    }
}

/// The review as stored now (after another decision won).
async fn review_now(
    service: Service<'_>,
    id: countersign_domain::MplpId,
) -> Result<Review, String> {
    match service.db.review(id).await {
        Ok(Some(stored)) => Ok(stored.review),
        Ok(None) => Err("This request is no longer here.".into()),
        Err(e) => Err(format!("Countersign could not act on this: {e}")),
    }
}

/// The role a click decides as: one the review's rule still needs, else the
/// person's first.
fn choose_role(service: Service<'_>, review: &Review, roles: &[String]) -> Option<String> {
    let rule = service.changes.policy().rule_for(review);
    roles
        .iter()
        .find(|r| rule.required_roles.contains(r))
        .or_else(|| roles.first())
        .cloned()
}

/// The blocks that let a reviewer decide from the message: a reason (needed
/// to deny), Approve, Deny, and a link to the desk (where calls are edited
/// and scopes granted).
pub fn decision_blocks(review: &str, link: &str) -> Vec<serde_json::Value> {
    let text = |t: &str| json!({"type": "plain_text", "text": t});
    vec![
        json!({
            "type": "input",
            "block_id": "countersign_why",
            "optional": true,
            "label": text("Reason (needed to deny)"),
            "element": {"type": "plain_text_input", "action_id": payload::REASON},
        }),
        json!({
            "type": "actions",
            "block_id": "countersign_decide",
            "elements": [
                {"type": "button", "action_id": payload::APPROVE, "style": "primary", "text": text("Approve"), "value": review},
                {"type": "button", "action_id": payload::DENY, "style": "danger", "text": text("Deny"), "value": review},
                {"type": "button", "action_id": payload::OPEN, "text": text("Open in the desk"), "url": link},
            ],
        }),
    ]
}

/// The message once decided: what, by whom, as what; the buttons again
/// while more approvals are needed.
fn decided_message(review: &Review, desk: &str) -> serde_json::Value {
    let title =
        crate::webhooks::slack_text(&countersign_domain::wire::ReviewSummary::of(review).title);
    let link = crate::webhooks::review_link(desk, &review.confirm.confirm_id.to_string());
    let pending = review.confirm.status == countersign_domain::model::ConfirmStatus::Pending;
    let by = ReceiptDecision::latest(review).map(|d| crate::webhooks::by_whom(&d));
    let mut what = format!("{}{}", status_word(review), by.unwrap_or_default());
    if pending {
        what.push_str("; more approvals are needed");
    }
    let mrkdwn = |text: String| json!({"type": "mrkdwn", "text": text, "verbatim": true});
    let mut blocks =
        vec![json!({"type": "section", "text": mrkdwn(format!("*{what}*\n<{link}|{title}>"))})];
    if pending {
        blocks.extend(decision_blocks(
            &review.confirm.confirm_id.to_string(),
            &link,
        ));
    }
    json!({"text": format!("{what}: {title}"), "blocks": blocks})
}

/// The review's status as a message says it.
fn status_word(review: &Review) -> &'static str {
    use countersign_domain::model::ConfirmStatus;
    match review.confirm.status {
        ConfirmStatus::Approved => "Approved",
        ConfirmStatus::Rejected => "Denied",
        ConfirmStatus::Cancelled => "Cancelled",
        // An approval a quorum still waits on.
        ConfirmStatus::Pending => "Approved",
    }
}
