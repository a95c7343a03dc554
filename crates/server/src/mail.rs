//! Telling reviewers by e-mail (`serve --smtp-url`). Each new request, and
//! each escalated one, is sent to its rule's addresses (or `--mail-to`):
//! what is asked, by whom, its risk, and a link to it in the desk.
//!
//! A link decides nothing, whoever opens it (mail scanners open every link,
//! run its page's scripts and submit its forms). It opens the request in
//! the desk, where the reviewer decides as themselves, signed in: the link
//! only says which e-mail the decision came from. It names no secret
//! beyond itself, is bound to the request, the address it was sent to and
//! an expiry, and one decision spends it (see [`crate::store::mail`]).
//!
//! The mailer is a reader of the [outbox](crate::outbox): told of each change
//! once, in order, by one instance at a time.

use crate::outbox::{Failed, Reader};
use crate::store::{Change, Db};
use countersign_domain::policy::Policy;
use countersign_domain::wire::ChangeKind;
use countersign_domain::MplpId;
use lettre::message::header::ContentType;
use lettre::message::Mailbox;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use std::time::Duration;

/// How long a link works at most (a tool call's own expiry comes first).
const LINK_TTL: chrono::TimeDelta = chrono::TimeDelta::days(7);
/// One delivery to the mail server, connecting included.
const TIMEOUT: Duration = Duration::from_secs(20);

/// The mail settings as `serve` reads them.
pub struct MailSettings<'a> {
    /// The SMTP server: `smtp://host:25`, `smtp://user:pass@host:587?tls=required`, `smtps://host:465`.
    pub url: &'a str,
    /// The sender.
    pub from: &'a str,
    /// Who is told of requests whose rule names nobody.
    pub to: &'a [String],
}

/// Sends Countersign's e-mails for as long as the server runs.
pub struct Mailer {
    db: Db,
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    to: Vec<String>,
    policy: Policy,
    desk: String,
}

impl Mailer {
    /// The mailer, with every address checked.
    pub fn new(
        db: Db,
        settings: &MailSettings<'_>,
        policy: &Policy,
        desk: &str,
    ) -> Result<Mailer, String> {
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(settings.url)
            .map_err(|e| format!("--smtp-url: {e} (smtp://host:25, smtp://user:password@host:587?tls=required, or smtps://host:465)"))?
            .timeout(Some(TIMEOUT))
            .build();
        let from: Mailbox = settings
            .from
            .parse()
            .map_err(|e| format!("--mail-from {}: {e}", settings.from))?;
        let ruled = policy.rules.iter().flat_map(|r| r.email.iter().flatten());
        for address in settings.to.iter().chain(ruled) {
            address
                .parse::<Mailbox>()
                .map_err(|e| format!("the e-mail address {address}: {e}"))?;
        }
        let named = policy.rules.iter().any(|r| r.email.is_some());
        if settings.to.is_empty() && !named {
            return Err(
                "--smtp-url needs --mail-to (or a policy rule's email): whom to tell".into(),
            );
        }
        Ok(Mailer {
            db,
            transport,
            from,
            to: settings.to.to_vec(),
            policy: policy.clone(),
            desk: desk.trim_end_matches('/').to_owned(),
        })
    }
}

impl Reader for Mailer {
    const NAME: &'static str = "mail";
    const TOLD: &'static str = "the mail server";

    /// Sends a new or escalated request to each of its addresses, each
    /// with a link of its own.
    async fn tell(&self, change: &Change) -> Result<(), Failed> {
        let reminder = match change.kind {
            ChangeKind::Created => false,
            ChangeKind::Escalated => true,
            _ => return Ok(()),
        };
        let id = MplpId::parse(&change.confirm_id)
            .map_err(|e| Failed::Lasting(format!("a change names no review: {e}")))?;
        let Some(stored) = self.db.review(id).await? else {
            return Ok(());
        };
        let review = &stored.review;
        let rule = self.policy.rule_for(review);
        let to = rule.email.clone().unwrap_or_else(|| self.to.clone());
        let call = review.tool_call();
        let mut expires = chrono::Utc::now() + LINK_TTL;
        if let Some(call) = call {
            expires = expires.min(call.request.expires_at.to_utc());
        }
        let risk = call.map(|c| format!(", risk {}", c.request.risk_tier));
        for address in to {
            let token = self.db.new_mail_link(id, &address, expires).await?;
            let link = format!(
                "{}?mail={token}",
                crate::webhooks::review_link(&self.desk, &change.confirm_id)
            );
            let summary = &change.summary;
            let subject = match reminder {
                false => format!("Approval needed: {}", one_line(&summary.title)),
                true => format!("Still waiting for approval: {}", one_line(&summary.title)),
            };
            let body = format!(
                "{} asks for approval{}:

    {}
    {}{}

Open it in Countersign to decide:
{link}

Opening the link decides nothing: you decide in the desk, signed in as yourself. This link is for {address} alone and works for one decision, until {} UTC.
",
                one_line(&summary.by),
                if reminder { " (still waiting, escalated)" } else { "" },
                one_line(&summary.title),
                summary.kind,
                risk.clone().unwrap_or_default(),
                expires.format("%Y-%m-%d %H:%M"),
            );
            let to: Mailbox = address
                .parse()
                .map_err(|e| Failed::Lasting(format!("{address}: {e}")))?;
            let message = Message::builder()
                .from(self.from.clone())
                .to(to)
                .subject(subject)
                .header(ContentType::TEXT_PLAIN)
                .body(body)
                .map_err(|e| Failed::Lasting(format!("the e-mail to {address}: {e}")))?;
            self.transport.send(message).await.map_err(|e| {
                let said = format!("sending to {address}: {e}");
                if e.is_permanent() {
                    Failed::Lasting(said)
                } else {
                    Failed::Passing(said)
                }
            })?;
        }
        Ok(())
    }
}

/// An agent's text on one line (a subject or body line cannot be broken by it).
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}
