//! A Countersign-compatible backend over HTTP (the contract:
//! `crates/server/openapi.json`): reviews are listed page by page, decisions
//! are posted with an idempotency key, and changes arrive live over
//! Server-Sent Events (or, without a stream, are asked for since the last
//! position seen).

use super::connection::Connection;
use super::fetch::fetch_text;
use countersign_domain::policy::Policy;
use countersign_domain::wire::{
    ChangePage, Detail, Device, DeviceList, ErrorBody, GrantList, GrantRecord, Me, Paired, Pairing,
    PairingRequest, Refusal, Requesters, ReviewQuery, SlackLink, SlackUser, SummaryPage,
    WebhookList,
};
use countersign_domain::{DecisionInput, MplpId, Review};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

/// Why a call to the backend failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HttpError {
    /// The server could not be reached (down, offline, blocked by CORS).
    #[error("the server at {0} could not be reached; nothing was sent or changed")]
    Unreachable(String),
    /// The server answered with an error.
    #[error("{message}")]
    Refused {
        /// HTTP status.
        status: u16,
        /// The server's message.
        message: String,
        /// Each precise problem.
        details: Vec<Detail>,
        /// A refused decision, as JSON: read as a [`Refusal`] by [`HttpError::refusal`].
        refusal: Option<Value>,
    },
    /// The answer was not what the contract promises.
    #[error("the server's answer was not understood: {0}")]
    Garbled(String),
}

impl HttpError {
    /// Why the server refused a decision, typed as the browser's own checks
    /// type it (`None`: not a refused decision, or not one this app knows).
    pub fn refusal(&self) -> Option<Refusal> {
        match self {
            HttpError::Refused {
                refusal: Some(refusal),
                ..
            } => serde_json::from_value(refusal.clone()).ok(),
            _ => None,
        }
    }
}

/// A connected backend.
#[derive(Debug, Clone)]
pub struct HttpStore {
    connection: Connection,
    /// A signed-in session's token for state-changing requests, asked for
    /// when first needed and kept in memory only.
    csrf: std::sync::Arc<std::sync::Mutex<Option<String>>>,
}

impl HttpStore {
    /// A store for this connection (nothing is sent yet).
    pub fn new(connection: Connection) -> Self {
        HttpStore {
            connection,
            csrf: Default::default(),
        }
    }

    /// Whether a signed-in session (not a key) is the credential.
    pub fn signed_in(&self) -> bool {
        self.connection.signed_in
    }

    /// Who is signed in to this desk's server, and how one signs in there.
    pub async fn session(&self) -> Result<SessionState, HttpError> {
        self.session_as().await
    }

    /// `GET /api/v1/session` read as `T`, sent as it is (`call_as` asks for
    /// the CSRF token here).
    async fn session_as<T: DeserializeOwned>(&self) -> Result<T, HttpError> {
        let base = self.connection.base();
        let url = format!("{base}/api/v1/session");
        let (status, text) = fetch_text("GET", &url, &[], None, base).await?;
        match status {
            200 => serde_json::from_str(&text)
                .map_err(|e| HttpError::Garbled(format!("{status} {url}: {e}"))),
            other => Err(HttpError::Garbled(format!(
                "{url} answered {other}: is this a Countersign server?"
            ))),
        }
    }

    /// The session's token, asked for once (only the token is read: the
    /// rest of the answer's code stays out of the first load).
    async fn csrf_token(&self) -> Result<String, HttpError> {
        #[derive(serde::Deserialize)]
        struct Token {
            csrf: String,
        }
        #[derive(serde::Deserialize)]
        struct Answer {
            session: Option<Token>,
        }
        if let Some(token) = self.csrf.lock().ok().and_then(|t| t.clone()) {
            return Ok(token);
        }
        let answer: Answer = self.session_as().await?;
        let token = answer
            .session
            .map(|s| s.csrf)
            .ok_or_else(|| HttpError::Refused {
                status: 401,
                message: "your session has ended: sign in again".into(),
                details: Vec::new(),
                refusal: None,
            })?;
        if let Ok(mut kept) = self.csrf.lock() {
            *kept = Some(token.clone());
        }
        Ok(token)
    }

    /// The person's sessions, newest first.
    pub async fn sessions(&self) -> Result<SessionList, HttpError> {
        self.call_as("GET", "/sessions", None, None).await
    }

    /// Ends one of the person's sessions.
    pub async fn revoke_session(&self, id: &str) -> Result<(), HttpError> {
        let path = format!("/sessions/{}/revoke", encode(id));
        self.call_as::<Option<Value>>("POST", &path, Some(&json!({})), None)
            .await
            .map(drop)
    }

    /// The Slack user a link code was sent to (the code is not taken).
    pub async fn slack_link_code(&self, code: &str) -> Result<SlackUser, HttpError> {
        #[derive(serde::Deserialize)]
        struct Answer {
            slack: SlackUser,
        }
        let path = format!("/slack/link-codes/{}", encode(code));
        let answer: Answer = self.call_as("GET", &path, None, None).await?;
        Ok(answer.slack)
    }

    /// Links the Slack user a code was sent to to the signed-in person.
    pub async fn link_slack(&self, code: &str) -> Result<SlackLink, HttpError> {
        #[derive(serde::Deserialize)]
        struct Answer {
            link: SlackLink,
        }
        let answer: Answer = self
            .call_as("POST", "/slack/links", Some(&json!({ "code": code })), None)
            .await?;
        Ok(answer.link)
    }

    /// The signed-in person's linked Slack accounts.
    pub async fn slack_links(&self) -> Result<Vec<SlackLink>, HttpError> {
        #[derive(serde::Deserialize)]
        struct Answer {
            links: Vec<SlackLink>,
        }
        let answer: Answer = self.call_as("GET", "/slack/links", None, None).await?;
        Ok(answer.links)
    }

    /// Unlinks one of the person's Slack accounts.
    pub async fn unlink_slack(&self, user: &SlackUser) -> Result<(), HttpError> {
        let path = format!(
            "/slack/links/{}/{}/unlink",
            encode(&user.team_id),
            encode(&user.user_id)
        );
        self.call_as::<Option<Value>>("POST", &path, Some(&json!({})), None)
            .await
            .map(drop)
    }

    /// Signs out: the server ends the session and clears its cookie.
    pub async fn sign_out(&self) -> Result<(), HttpError> {
        let token = self.csrf_token().await?;
        let url = format!("{}/auth/logout", self.connection.base());
        let headers = [("X-Countersign-CSRF", token.as_str())];
        let (status, _) = fetch_text("POST", &url, &headers, None, self.connection.base()).await?;
        Connection::forget_session();
        match status {
            204 | 401 => Ok(()),
            other => Err(HttpError::Garbled(format!("signing out answered {other}"))),
        }
    }

    /// Lets this page's server draw the key's inbox into the page from now
    /// on (a cookie only `/` reads), or with `false` stops it.
    async fn keep_page_key(&self, keep: bool) -> Result<(), HttpError> {
        let path = if keep {
            "/page-key"
        } else {
            "/page-key/forget"
        };
        self.call_as::<Option<Value>>("POST", path, Some(&json!({})), None)
            .await
            .map(drop)
    }

    /// Has this page's server draw the inbox into the page for a key
    /// remembered on this device, and stops it for one kept for a tab only
    /// (another tab would be drawn its inbox). A failure is only logged: the
    /// app then draws the page, as on any other host.
    pub async fn keep_page(&self, remembered: bool) {
        if !self.connection.is_this_pages_server() {
            return;
        }
        let keep = remembered && !self.connection.key.is_empty();
        if let Err(e) = self.keep_page_key(keep).await {
            web_sys::console::warn_1(&format!("the server will not draw this page: {e}").into());
        }
    }

    /// The server's address.
    pub fn url(&self) -> &str {
        self.connection.base()
    }

    async fn call(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        idempotency_key: Option<&str>,
    ) -> Result<Value, HttpError> {
        self.call_as(method, path, body, idempotency_key).await
    }

    /// Sends a request and reads a successful answer as `T`; an error answer
    /// is read as the API's error envelope.
    async fn call_as<T: DeserializeOwned>(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        idempotency_key: Option<&str>,
    ) -> Result<T, HttpError> {
        let url = format!("{}/api/v1{path}", self.connection.base());
        let bearer = format!("Bearer {}", self.connection.key);
        // A device being paired has no key yet: its code is its credential.
        let mut headers = Vec::new();
        if !self.connection.key.is_empty() {
            headers.push(("Authorization", bearer.as_str()));
        }
        let token = match (self.connection.signed_in, method) {
            (true, "POST") => Some(self.csrf_token().await?),
            _ => None,
        };
        if let Some(token) = &token {
            headers.push(("X-Countersign-CSRF", token.as_str()));
        }
        if let Some(key) = idempotency_key {
            headers.push(("Idempotency-Key", key));
        }
        let (status, text) =
            fetch_text(method, &url, &headers, body, self.connection.base()).await?;
        let garbled = |e: serde_json::Error| HttpError::Garbled(format!("{status} {url}: {e}"));
        if (200..300).contains(&status) {
            // 204 has no body: read as `null`.
            let body = if text.trim().is_empty() {
                "null"
            } else {
                &text
            };
            return serde_json::from_str(body).map_err(garbled);
        }
        if status == 401 && self.connection.signed_in {
            // The session ended (signed out elsewhere, revoked, expired, or
            // the provider no longer vouches): the desk asks to sign in again.
            Connection::forget_session();
        }
        let ErrorBody::<Value> { error } = serde_json::from_str(&text).map_err(garbled)?;
        Err(HttpError::Refused {
            status,
            message: error.message,
            details: error.details,
            refusal: error.refusal,
        })
    }

    /// Checks the address and the key with the smallest list request.
    pub async fn check(&self) -> Result<(), HttpError> {
        self.call("GET", "/reviews?limit=1", None, None)
            .await
            .map(drop)
    }

    /// One page of what the inbox's rows show, for `query`, with the counts per status.
    pub async fn page(&self, query: &ReviewQuery) -> Result<SummaryPage, HttpError> {
        let mut path = "/reviews?view=summary".to_owned();
        for (name, value) in query.pairs() {
            path.push_str(&format!("&{name}={}", encode(&value)));
        }
        self.call_as("GET", &path, None, None).await
    }

    /// The changes after feed position `after`, each with its review's row.
    pub async fn changes(&self, after: i64) -> Result<ChangePage, HttpError> {
        self.call_as("GET", &format!("/changes?after={after}"), None, None)
            .await
    }

    /// Every role that asked for a review, for the requester filter.
    pub async fn requesters(&self) -> Result<Requesters, HttpError> {
        self.call_as("GET", "/requesters", None, None).await
    }

    /// The grants ledger, revoked grants included.
    pub async fn grants(&self) -> Result<GrantList, HttpError> {
        self.call_as("GET", "/grants?revoked=include", None, None)
            .await
    }

    /// Revokes a grant: the next call it would have covered is asked again.
    pub async fn revoke_grant(&self, grant_id: &str) -> Result<GrantRecord, HttpError> {
        let path = format!("/grants/{}/revoke", encode(grant_id));
        self.call_as("POST", &path, Some(&json!({})), None).await
    }

    /// The approval policy the server checks decisions against.
    pub async fn policy(&self) -> Result<Policy, HttpError> {
        self.call_as("GET", "/policy", None, None).await
    }

    /// A one-time code that pairs another device with this key.
    pub async fn pairing(&self) -> Result<Pairing, HttpError> {
        self.call_as("POST", "/pairings", Some(&json!({})), None)
            .await
    }

    /// Trades a pairing code for this device's own key (a store without a
    /// key sends none).
    pub async fn redeem_pairing(&self, request: &PairingRequest) -> Result<Paired, HttpError> {
        let body = serde_json::to_value(request).map_err(|e| HttpError::Garbled(e.to_string()))?;
        self.call_as("POST", "/pairings/redeem", Some(&body), None)
            .await
    }

    /// The devices paired from this key or its owner.
    pub async fn devices(&self) -> Result<DeviceList, HttpError> {
        self.call_as("GET", "/devices", None, None).await
    }

    /// Revokes a paired device: its next request is refused.
    pub async fn revoke_device(&self, key_id: &str) -> Result<Device, HttpError> {
        let path = format!("/devices/{}/revoke", encode(key_id));
        self.call_as("POST", &path, Some(&json!({})), None).await
    }

    /// The server's webhooks and how their latest deliveries went.
    pub async fn webhooks(&self) -> Result<WebhookList, HttpError> {
        self.call_as("GET", "/webhooks", None, None).await
    }

    /// The key this store calls with, its owner and roles.
    pub async fn me(&self) -> Result<Me, HttpError> {
        self.call_as("GET", "/me", None, None).await
    }

    /// Every review, page by page (500 per request): for an export.
    pub async fn list_all(&self) -> Result<Vec<Review>, HttpError> {
        let mut reviews = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let path = match &cursor {
                Some(c) => format!("/reviews?status=all&limit=500&cursor={c}"),
                None => "/reviews?status=all&limit=500".to_owned(),
            };
            let page = self.call("GET", &path, None, None).await?;
            for item in page["items"].as_array().into_iter().flatten() {
                reviews.push(review_of(item)?);
            }
            match page["next_cursor"].as_str() {
                Some(next) => cursor = Some(next.to_owned()),
                None => return Ok(reviews),
            }
        }
    }

    /// One review as the server has it now.
    pub async fn review(&self, id: MplpId) -> Result<Review, HttpError> {
        let value = self
            .call("GET", &format!("/reviews/{id}"), None, None)
            .await?;
        review_of(&value["review"])
    }

    /// Posts a decision; the same `idempotency_key` on a retry never records
    /// it twice. Made on the page an e-mail's link opened, it carries the
    /// link (the server records it as made by e-mail).
    pub async fn decide(
        &self,
        id: MplpId,
        input: &DecisionInput,
        idempotency_key: &str,
    ) -> Result<Review, HttpError> {
        let body = json!({
            "status": input.status,
            "decided_by_role": input.decided_by_role,
            "reason": input.reason.as_deref().map(str::trim).filter(|r| !r.is_empty()),
            "tool_call": input.tool_call,
            "mail_link": mail_link_for(id),
        });
        let body = match body {
            Value::Object(mut map) => {
                map.retain(|_, v| !v.is_null());
                Value::Object(map)
            }
            other => other,
        };
        let value = self
            .call(
                "POST",
                &format!("/reviews/{id}/decisions"),
                Some(&body),
                Some(idempotency_key),
            )
            .await?;
        review_of(&value["review"])
    }

    /// A single-use ticket that opens the live event stream once (browsers'
    /// EventSource cannot send headers, and the key never goes in a URL).
    /// A signed-in session needs none (the stream sends its cookie): empty.
    pub async fn event_ticket(&self) -> Result<String, HttpError> {
        if self.connection.signed_in {
            return Ok(String::new());
        }
        let minted = self
            .call(
                "POST",
                "/events/tickets",
                Some(&serde_json::json!({})),
                None,
            )
            .await?;
        minted["ticket"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| HttpError::Garbled("the event ticket has no `ticket`".into()))
    }

    /// The live event stream's address with a ticket, resuming after the
    /// change at position `after` when given.
    pub fn events_url(&self, ticket: &str, after: Option<&str>) -> String {
        let mut query: Vec<String> = Vec::new();
        if !ticket.is_empty() {
            query.push(format!("ticket={}", encode(ticket)));
        }
        query.extend(after.map(|seq| format!("after={}", encode(seq))));
        format!(
            "{}/api/v1/events?{}",
            self.connection.base(),
            query.join("&")
        )
    }
}

/// Text as one URL query value.
fn encode(text: &str) -> String {
    js_sys::encode_uri_component(text)
        .as_string()
        .unwrap_or_default()
}

/// A review from the server (typed through its text, like every stored review).
fn review_of(value: &Value) -> Result<Review, HttpError> {
    countersign_domain::json::typed(value).map_err(|e| HttpError::Garbled(format!("a review: {e}")))
}

/// `GET /api/v1/session`: who is signed in here, and how one signs in.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct SessionState {
    /// Whether the request came with a live session.
    pub signed_in: bool,
    /// The identity providers one may sign in with (none: sign-in is off).
    #[serde(default)]
    pub providers: Vec<SignInProvider>,
    /// Whether reviewer keys are accepted here.
    #[serde(default = "yes")]
    pub reviewer_keys: bool,
    /// The session, when signed in.
    pub session: Option<SessionNow>,
}

fn yes() -> bool {
    true
}

/// A provider's sign-in button.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct SignInProvider {
    /// Its configured id.
    pub id: String,
    /// What the button says.
    pub name: String,
    /// Where the button leads (on this desk's server).
    pub login_url: String,
}

/// The signed-in session.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct SessionNow {
    /// Its public id.
    pub id: String,
    /// The person.
    pub person: countersign_domain::Person,
    /// The roles their groups give here.
    pub roles: Vec<String>,
    /// When it ends.
    pub expires_at: String,
}

/// `GET /api/v1/sessions`.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct SessionList {
    /// The session this request came with.
    pub current: Option<String>,
    /// The person's sessions, newest first.
    pub sessions: Vec<SessionRecord>,
}

/// One of the person's sessions.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct SessionRecord {
    /// Its public id.
    pub id: String,
    /// The browser that signed in, as it said.
    pub user_agent: Option<String>,
    /// When it started.
    pub created_at: String,
    /// When it ends, unless ended before.
    pub expires_at: String,
    /// When it ended.
    pub ended_at: Option<String>,
    /// Why it ended.
    pub ended_why: Option<String>,
}

/// The `mail` parameter of the e-mail link this page was opened from, when
/// the page is review `id`'s: the server then records the decision as made
/// by e-mail, for the person the e-mail was sent to.
fn mail_link_for(id: MplpId) -> Option<String> {
    let location = web_sys::window()?.location();
    let path = location.pathname().ok()?;
    if !path.ends_with(&format!("/reviews/{id}")) {
        return None;
    }
    let search = location.search().ok()?;
    search
        .trim_start_matches('?')
        .split('&')
        .find_map(|pair| pair.strip_prefix("mail="))
        .filter(|token| {
            token
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
        .map(str::to_owned)
}
