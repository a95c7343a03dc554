//! Reviewers signing in with their organisation's identity provider (OpenID
//! Connect): the configuration (`config`), each provider's flow
//! (`provider`), and here what joins them to the sessions the store keeps:
//! starting and finishing a sign-in, and a session checked with its provider
//! again once its word on the person's groups is older than the bound.

pub mod config;
pub mod provider;

use crate::store::sessions::{Attempt, NewSession, Opened, Session};
use crate::store::{Db, DbError};
use config::SignInConfig;
use provider::{Provider, ProviderError};
use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;
use tokio::sync::Mutex;

/// How long a sign-in may take at the provider.
const ATTEMPT_TTL: chrono::Duration = chrono::Duration::minutes(10);

/// How many sessions' checks with their provider may run at once.
const CHECK_LANES: usize = 64;

/// Sign-in as this server runs it.
#[derive(Clone)]
pub struct SignIn {
    /// As configured.
    pub config: Arc<SignInConfig>,
    providers: Arc<Vec<Provider>>,
    /// One check with the provider at a time per session: a page's requests
    /// that all find the word too old wait for one answer instead of
    /// spending the same (rotating) refresh token together.
    checks: Arc<(RandomState, Vec<Mutex<()>>)>,
}

/// Why a sign-in or a session was refused.
#[derive(Debug, thiserror::Error)]
pub enum SignInError {
    /// No provider has this id.
    #[error("no identity provider `{0}` is configured here")]
    UnknownProvider(String),
    /// The callback's `state` names no sign-in under way: used already,
    /// too old, or never started here.
    #[error("this sign-in is unknown or was used already: start again")]
    UnknownState,
    /// The sign-in was started in another browser (or its cookie is gone).
    #[error("this sign-in was started in another browser: start again in this one")]
    OtherBrowser,
    /// The sign-in took longer than allowed.
    #[error("this sign-in took more than 10 minutes: start again")]
    TooSlow,
    /// The provider said no, or could not be asked.
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbError),
}

impl SignIn {
    /// Sign-in with these providers (nothing is fetched until a sign-in).
    pub fn new(config: SignInConfig) -> SignIn {
        let providers = config
            .providers
            .iter()
            .cloned()
            .map(Provider::new)
            .collect();
        SignIn {
            config: Arc::new(config),
            providers: Arc::new(providers),
            checks: Arc::new((
                RandomState::new(),
                (0..CHECK_LANES).map(|_| Mutex::new(())).collect(),
            )),
        }
    }

    fn provider(&self, id: &str) -> Result<&Provider, SignInError> {
        self.providers
            .iter()
            .find(|p| p.config.id == id)
            .ok_or_else(|| SignInError::UnknownProvider(id.to_owned()))
    }

    /// Starts a sign-in at provider `id` (the only one, when `None`) for the
    /// browser holding `browser`: the URL to send it to.
    pub async fn begin(
        &self,
        db: &Db,
        id: Option<&str>,
        browser: &str,
    ) -> Result<String, SignInError> {
        let provider = match id {
            Some(id) => self.provider(id)?,
            None => self
                .providers
                .first()
                .ok_or_else(|| SignInError::UnknownProvider(String::new()))?,
        };
        let begun = provider.begin().await?;
        db.add_sign_in(&Attempt {
            state: begun.state,
            browser: browser.to_owned(),
            provider: provider.config.id.clone(),
            nonce: begun.nonce,
            verifier: begun.verifier,
            expires_at: chrono::Utc::now() + ATTEMPT_TTL,
        })
        .await?;
        Ok(begun.url)
    }

    /// Finishes the sign-in with this `state` (once) in the browser holding
    /// `browser`, and opens its session.
    pub async fn finish(
        &self,
        db: &Db,
        answer: Answer<'_>,
        browser: Option<&str>,
    ) -> Result<Opened, SignInError> {
        let taken = db
            .take_sign_in(answer.state)
            .await?
            .ok_or(SignInError::UnknownState)?;
        let bound = browser.map(crate::store::keys::hash);
        if bound.as_deref() != Some(taken.browser_hash.as_str()) {
            return Err(SignInError::OtherBrowser);
        }
        if !taken.in_time {
            return Err(SignInError::TooSlow);
        }
        let provider = self.provider(&taken.provider)?;
        let vouched = provider
            .finish(answer.code, answer.iss, &taken.nonce, &taken.verifier)
            .await?;
        let roles = provider.config.roles_of(&vouched.groups);
        tracing::info!(
            person = %vouched.person.id(),
            provider = %provider.config.id,
            roles = ?roles,
            "signed in"
        );
        Ok(db
            .open_session(NewSession {
                person: &vouched.person,
                provider: &provider.config.id,
                roles: &roles,
                refresh_token: vouched.refresh_token.as_deref(),
                user_agent: answer.user_agent,
                length: self.config.session_length,
            })
            .await?)
    }

    /// The session as it stands now: as stored while the provider's word is
    /// younger than the bound; else asked again (new roles, or the session
    /// ended when the provider no longer vouches for the person). When the
    /// provider cannot be asked, the session may not act: an error.
    pub async fn fresh(&self, db: &Db, session: Session) -> Result<Session, SignInError> {
        if self.vouched_lately(&session) {
            return Ok(session);
        }
        let (hasher, lanes) = &*self.checks;
        let lane = hasher.hash_one(&session.id) as usize % lanes.len();
        let _turn = lanes[lane].lock().await;
        // Another request of this session may have asked while this one waited.
        let provider = self.provider(&session.provider)?;
        let session = match db.session(&session.id).await? {
            Some(now) if now.ended_at.is_none() => now,
            ended => {
                return Err(ProviderError::Ended {
                    provider: provider.config.name.clone(),
                    reason: ended
                        .and_then(|s| s.ended_why)
                        .unwrap_or_else(|| "the session is gone".into()),
                }
                .into())
            }
        };
        if self.vouched_lately(&session) {
            return Ok(session);
        }
        let Some(refresh_token) = session.refresh_token.clone() else {
            db.end_session(
                &session.id,
                "the provider gave no refresh token to check the person's groups again",
            )
            .await?;
            return Err(ProviderError::Ended {
                provider: provider.config.name.clone(),
                reason: "it gave no way to check your groups again; sign in again".into(),
            }
            .into());
        };
        match provider
            .revalidate(&refresh_token, &session.person.subject)
            .await
        {
            Ok(vouched) => {
                let roles = provider.config.roles_of(&vouched.groups);
                let at = db
                    .revalidate_session(
                        &session.id,
                        &vouched.person,
                        &roles,
                        vouched.refresh_token.as_deref(),
                    )
                    .await?;
                Ok(Session {
                    person: vouched.person,
                    roles,
                    refresh_token: vouched.refresh_token,
                    validated_at: at,
                    ..session
                })
            }
            Err(ended @ ProviderError::Ended { .. }) => {
                // Another request may have rotated the refresh token a moment ago.
                if let Some(now) = db.session(&session.id).await? {
                    if now.ended_at.is_none() && now.validated_at != session.validated_at {
                        return Ok(now);
                    }
                }
                db.end_session(&session.id, &ended.to_string()).await?;
                Err(ended.into())
            }
            Err(other) => Err(other.into()),
        }
    }

    /// Whether the provider's word on the session is younger than the bound.
    fn vouched_lately(&self, session: &Session) -> bool {
        let validated = chrono::DateTime::parse_from_rfc3339(&session.validated_at)
            .map(|t| t.with_timezone(&chrono::Utc))
            .unwrap_or_default();
        chrono::Utc::now() - validated < self.config.revalidate_after
    }

    /// The providers a person may sign in with: id and name.
    pub fn providers(&self) -> impl Iterator<Item = (&str, &str)> {
        self.providers
            .iter()
            .map(|p| (p.config.id.as_str(), p.config.name.as_str()))
    }
}

/// What the provider sent the browser back with.
pub struct Answer<'a> {
    /// The authorization code.
    pub code: &'a str,
    /// The state sent.
    pub state: &'a str,
    /// The issuer it names (RFC 9207), if any.
    pub iss: Option<&'a str>,
    /// The browser's `User-Agent`, to list the session by.
    pub user_agent: Option<&'a str>,
}
