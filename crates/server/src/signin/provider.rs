//! One OpenID Connect provider, through the `openidconnect` crate: its
//! discovery document and keys (fetched when first needed, then every ten
//! minutes), the authorization code flow with PKCE, state and nonce, the ID
//! token checked against the issuer's keys, and the person's groups asked for
//! again with the refresh token. HTTP goes through `ureq` with redirects off,
//! as the crate advises against server-side request forgery.

use super::config::ProviderConfig;
use countersign_domain::Person;
use openidconnect::core::{
    CoreAuthDisplay, CoreAuthPrompt, CoreAuthenticationFlow, CoreClaimName, CoreClaimType,
    CoreClientAuthMethod, CoreErrorResponseType, CoreGenderClaim, CoreGrantType, CoreJsonWebKey,
    CoreJweContentEncryptionAlgorithm, CoreJweKeyManagementAlgorithm, CoreJwsSigningAlgorithm,
    CoreResponseMode, CoreResponseType, CoreRevocableToken, CoreRevocationErrorResponse,
    CoreSubjectIdentifierType, CoreTokenIntrospectionResponse, CoreTokenType,
};
use openidconnect::{
    AdditionalClaims, AdditionalProviderMetadata, AsyncHttpClient, AuthorizationCode, Client,
    ClientId, ClientSecret, CsrfToken, EmptyExtraTokenFields, EndpointMaybeSet, EndpointNotSet,
    EndpointSet, HttpRequest, HttpResponse, IdTokenClaims, IdTokenFields, IssuerUrl, Nonce,
    OAuth2TokenResponse, PkceCodeChallenge, PkceCodeVerifier, ProviderMetadata, RedirectUrl,
    RefreshToken, RequestTokenError, Scope, StandardErrorResponse, StandardTokenResponse,
    TokenResponse, UserInfoClaims,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a discovery document and its keys are used before fetched again.
const DISCOVERY_TTL: Duration = Duration::from_secs(600);
/// The longest one request to the provider may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Every claim beyond the standard ones, so the groups claim can be any.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Claims {
    #[serde(flatten)]
    rest: Map<String, Value>,
}
impl AdditionalClaims for Claims {}

/// RFC 9207: whether the provider sends `iss` with its answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IssParameter {
    #[serde(default)]
    authorization_response_iss_parameter_supported: Option<bool>,
}
impl AdditionalProviderMetadata for IssParameter {}

type Metadata = ProviderMetadata<
    IssParameter,
    CoreAuthDisplay,
    CoreClientAuthMethod,
    CoreClaimName,
    CoreClaimType,
    CoreGrantType,
    CoreJweContentEncryptionAlgorithm,
    CoreJweKeyManagementAlgorithm,
    CoreJsonWebKey,
    CoreResponseMode,
    CoreResponseType,
    CoreSubjectIdentifierType,
>;
type Fields = IdTokenFields<
    Claims,
    EmptyExtraTokenFields,
    CoreGenderClaim,
    CoreJweContentEncryptionAlgorithm,
    CoreJwsSigningAlgorithm,
>;
type Tokens = StandardTokenResponse<Fields, CoreTokenType>;
type OidcClient = Client<
    Claims,
    CoreAuthDisplay,
    CoreGenderClaim,
    CoreJweContentEncryptionAlgorithm,
    CoreJsonWebKey,
    CoreAuthPrompt,
    StandardErrorResponse<CoreErrorResponseType>,
    Tokens,
    CoreTokenIntrospectionResponse,
    CoreRevocableToken,
    CoreRevocationErrorResponse,
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointMaybeSet,
    EndpointMaybeSet,
>;

/// Why the provider gave no person.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// The provider could not be asked: it did not answer, or not as a
    /// provider does. Nothing is decided on its behalf (fail closed).
    #[error("{provider} cannot be reached: {reason}")]
    Unreachable {
        /// The provider's name.
        provider: String,
        /// What went wrong.
        reason: String,
    },
    /// The answer does not prove who signed in (a bad token, a wrong
    /// issuer, audience or nonce, a code that was used or forged).
    #[error("{provider} did not confirm who signed in: {reason}")]
    Refused {
        /// The provider's name.
        provider: String,
        /// What was wrong.
        reason: String,
    },
    /// The provider no longer vouches for the session (the person was
    /// disabled or signed out there, or the grant was revoked).
    #[error("{provider} ended this sign-in: {reason}")]
    Ended {
        /// The provider's name.
        provider: String,
        /// What it said.
        reason: String,
    },
}

/// A sign-in sent to the provider: where the browser goes, and what the
/// callback needs to finish it.
pub struct Begun {
    /// The provider's authorization URL.
    pub url: String,
    /// The `state` the callback must bring back.
    pub state: String,
    /// The nonce the ID token must carry.
    pub nonce: String,
    /// The PKCE verifier of the challenge sent.
    pub verifier: String,
}

/// A person the provider vouched for.
#[derive(Debug)]
pub struct Vouched {
    /// Who.
    pub person: Person,
    /// Their groups, from the configured claim.
    pub groups: Vec<String>,
    /// To ask the provider again later, when it gave one.
    pub refresh_token: Option<String>,
}

/// One configured provider and what it published.
pub struct Provider {
    /// As configured.
    pub config: ProviderConfig,
    http: Http,
    discovered: Mutex<Option<(Instant, Arc<Discovered>)>>,
}

struct Discovered {
    client: OidcClient,
    sends_iss: bool,
}

impl Provider {
    /// The provider as configured; nothing is fetched yet.
    pub fn new(config: ProviderConfig) -> Provider {
        let agent = crate::webhooks::outbound(TIMEOUT);
        Provider {
            config,
            http: Http(agent),
            discovered: Mutex::new(None),
        }
    }

    fn unreachable(&self, reason: impl std::fmt::Display) -> ProviderError {
        ProviderError::Unreachable {
            provider: self.config.name.clone(),
            reason: reason.to_string(),
        }
    }

    fn refused(&self, reason: impl std::fmt::Display) -> ProviderError {
        ProviderError::Refused {
            provider: self.config.name.clone(),
            reason: reason.to_string(),
        }
    }

    async fn discovered(&self) -> Result<Arc<Discovered>, ProviderError> {
        if let Ok(cached) = self.discovered.lock() {
            if let Some((at, found)) = cached
                .as_ref()
                .filter(|(at, _)| at.elapsed() < DISCOVERY_TTL)
            {
                let _ = at;
                return Ok(found.clone());
            }
        }
        let issuer = IssuerUrl::new(self.config.issuer.clone()).map_err(|e| self.refused(e))?;
        let metadata = Metadata::discover_async(issuer, &self.http)
            .await
            .map_err(|e| self.unreachable(error_chain(&e)))?;
        let sends_iss = metadata
            .additional_metadata()
            .authorization_response_iss_parameter_supported
            .unwrap_or(false);
        let client = OidcClient::from_provider_metadata(
            metadata,
            ClientId::new(self.config.client_id.clone()),
            self.config.client_secret.clone().map(ClientSecret::new),
        )
        .set_redirect_uri(
            RedirectUrl::new(self.config.redirect_url.to_string()).map_err(|e| self.refused(e))?,
        );
        let found = Arc::new(Discovered { client, sends_iss });
        if let Ok(mut cached) = self.discovered.lock() {
            *cached = Some((Instant::now(), found.clone()));
        }
        Ok(found)
    }

    /// Starts a sign-in: the authorization URL with a fresh state, nonce
    /// and PKCE (S256) challenge.
    pub async fn begin(&self) -> Result<Begun, ProviderError> {
        let found = self.discovered().await?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request = found.client.authorize_url(
            CoreAuthenticationFlow::AuthorizationCode,
            CsrfToken::new_random,
            Nonce::new_random,
        );
        for scope in self.config.scopes.iter().filter(|s| *s != "openid") {
            request = request.add_scope(Scope::new(scope.clone()));
        }
        let (url, state, nonce) = request.set_pkce_challenge(challenge).url();
        Ok(Begun {
            url: url.to_string(),
            state: state.secret().clone(),
            nonce: nonce.secret().clone(),
            verifier: verifier.secret().clone(),
        })
    }

    /// Finishes a sign-in: the `iss` the provider sent back is checked
    /// (RFC 9207), the code traded with the PKCE verifier, and the ID token
    /// checked (signature, issuer, audience, expiry, nonce).
    pub async fn finish(
        &self,
        code: &str,
        iss: Option<&str>,
        nonce: &str,
        verifier: &str,
    ) -> Result<Vouched, ProviderError> {
        let found = self.discovered().await?;
        match iss {
            Some(iss) if iss.trim_end_matches('/') != self.config.issuer => {
                return Err(self.refused(format!(
                    "the answer came from issuer `{iss}`, not `{}`",
                    self.config.issuer
                )))
            }
            None if found.sends_iss => {
                return Err(self.refused(
                    "the answer has no `iss`, which this provider says it always sends (RFC 9207)",
                ))
            }
            _ => {}
        }
        let request = found
            .client
            .exchange_code(AuthorizationCode::new(code.to_owned()))
            .map_err(|e| self.refused(e))?
            .set_pkce_verifier(PkceCodeVerifier::new(verifier.to_owned()));
        let tokens = request
            .request_async(&self.http)
            .await
            .map_err(|e| self.token_error(e))?;
        let id_token = tokens
            .id_token()
            .ok_or_else(|| self.refused("its answer has no ID token"))?;
        let nonce = Nonce::new(nonce.to_owned());
        let claims = id_token
            .claims(&found.client.id_token_verifier(), &nonce)
            .map_err(|e| self.refused(format!("the ID token: {e}")))?;
        self.vouched(&found, claims, &tokens).await
    }

    /// Asks the provider again, with the refresh token, who the person is
    /// and which groups they are in. The new ID token (or, without one, the
    /// user info) must name the same person.
    pub async fn revalidate(
        &self,
        refresh_token: &str,
        subject: &str,
    ) -> Result<Vouched, ProviderError> {
        let found = self.discovered().await?;
        let token = RefreshToken::new(refresh_token.to_owned());
        let tokens = found
            .client
            .exchange_refresh_token(&token)
            .map_err(|e| self.refused(e))?
            .request_async(&self.http)
            .await
            .map_err(|e| self.token_error(e))?;
        let vouched = match tokens.id_token() {
            Some(id_token) => {
                let claims = id_token
                    .claims(
                        &found.client.id_token_verifier(),
                        |_: Option<&Nonce>| Ok(()),
                    )
                    .map_err(|e| self.refused(format!("the refreshed ID token: {e}")))?;
                self.vouched(&found, claims, &tokens).await?
            }
            None => self.user_info_of(&found, &tokens).await?,
        };
        if vouched.person.subject != subject {
            return Err(self.refused("the refreshed sign-in names another person"));
        }
        Ok(Vouched {
            refresh_token: vouched
                .refresh_token
                .or_else(|| Some(refresh_token.to_owned())),
            ..vouched
        })
    }

    async fn vouched(
        &self,
        found: &Discovered,
        claims: &IdTokenClaims<Claims, CoreGenderClaim>,
        tokens: &Tokens,
    ) -> Result<Vouched, ProviderError> {
        let person = Person {
            issuer: claims.issuer().as_str().trim_end_matches('/').to_owned(),
            subject: claims.subject().as_str().to_owned(),
            name: claims
                .name()
                .and_then(|n| n.get(None))
                .map(|n| n.as_str().to_owned()),
            email: claims.email().map(|e| e.as_str().to_owned()),
        };
        let groups = match claims
            .additional_claims()
            .rest
            .get(&self.config.groups_claim)
        {
            Some(value) => groups_in(value),
            // Some providers put groups in the user info only.
            None => self.user_info_of(found, tokens).await?.groups,
        };
        Ok(Vouched {
            person,
            groups,
            refresh_token: tokens.refresh_token().map(|t| t.secret().clone()),
        })
    }

    async fn user_info_of(
        &self,
        found: &Discovered,
        tokens: &Tokens,
    ) -> Result<Vouched, ProviderError> {
        let Ok(request) = found.client.user_info(tokens.access_token().clone(), None) else {
            return Err(self.refused(format!(
                "neither the ID token nor a user info endpoint gives the `{}` claim",
                self.config.groups_claim
            )));
        };
        let info: UserInfoClaims<Claims, CoreGenderClaim> = request
            .request_async(&self.http)
            .await
            .map_err(|e| self.unreachable(format!("user info: {}", error_chain(&e))))?;
        Ok(Vouched {
            person: Person {
                issuer: self.config.issuer.clone(),
                subject: info.subject().as_str().to_owned(),
                name: info
                    .name()
                    .and_then(|n| n.get(None))
                    .map(|n| n.as_str().to_owned()),
                email: info.email().map(|e| e.as_str().to_owned()),
            },
            groups: info
                .additional_claims()
                .rest
                .get(&self.config.groups_claim)
                .map(groups_in)
                .unwrap_or_default(),
            refresh_token: tokens.refresh_token().map(|t| t.secret().clone()),
        })
    }

    fn token_error(
        &self,
        e: RequestTokenError<HttpFailure, StandardErrorResponse<CoreErrorResponseType>>,
    ) -> ProviderError {
        match e {
            RequestTokenError::ServerResponse(answer) => {
                let reason = match answer.error_description() {
                    Some(text) => format!("{} ({text})", answer.error()),
                    None => answer.error().to_string(),
                };
                if *answer.error() == CoreErrorResponseType::InvalidGrant {
                    ProviderError::Ended {
                        provider: self.config.name.clone(),
                        reason,
                    }
                } else {
                    self.refused(reason)
                }
            }
            RequestTokenError::Request(e) => self.unreachable(e),
            other => self.unreachable(error_chain(&other)),
        }
    }
}

/// A claim's groups: a list of strings, or one string.
fn groups_in(value: &Value) -> Vec<String> {
    match value {
        Value::String(one) => vec![one.clone()],
        Value::Array(many) => many
            .iter()
            .filter_map(|g| g.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Why an HTTP request to the provider failed.
#[derive(Debug, thiserror::Error)]
pub enum HttpFailure {
    /// The request failed.
    #[error("{0}")]
    Ureq(#[from] ureq::Error),
    /// The request's thread stopped.
    #[error("the request was stopped")]
    Stopped,
}

/// `ureq` (blocking) on tokio's blocking threads.
struct Http(ureq::Agent);

impl<'c> AsyncHttpClient<'c> for Http {
    type Error = HttpFailure;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, HttpFailure>> + Send + 'c>>;

    fn call(&'c self, request: HttpRequest) -> Self::Future {
        let agent = self.0.clone();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                let response = agent.run(request)?;
                let (parts, mut body) = response.into_parts();
                let bytes = body.with_config().limit(1 << 20).read_to_vec()?;
                Ok(HttpResponse::from_parts(parts, bytes))
            })
            .await
            .map_err(|_| HttpFailure::Stopped)?
        })
    }
}
