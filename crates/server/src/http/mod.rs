//! The HTTP layer: the API under `/api/v1` (the contract:
//! `crates/server/openapi.json`), the built app (`app`) and the security
//! headers every answer carries (`headers`).

pub(crate) mod app;
mod auth;
mod body;
mod devices;
mod error;
mod events;
mod grants;
pub(crate) mod headers;
mod input;
mod page_key;
mod query;
mod reviews;
mod signin;
mod slack;
mod tool_calls;

use crate::changes::Changes;
use crate::feed::Feed;
use crate::limits::Limits;
use crate::signing::Signer;
use crate::store::{Db, DbError};
use crate::usecases::Service;
use crate::webhooks::Webhooks;
use axum::extract::DefaultBodyLimit;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::Router;
use countersign_domain::policy::Policy;
use countersign_domain::wire::ErrorCode;
use countersign_domain::wire::{Me, Outcome, WebhookList};
use countersign_domain::Review;
use error::ApiError;
use std::sync::Arc;

/// The OpenAPI 3.1 description of this API.
pub const OPENAPI: &str = include_str!("../../openapi.json");

/// What every handler shares: the database to read, the changes to store
/// through, and the feed that fans them out to streams and waiters.
#[derive(Clone)]
pub struct AppState {
    /// The database, for reading.
    pub db: Db,
    /// Every write goes through here.
    pub changes: Changes,
    /// This instance's reader of the change feed.
    pub feed: Feed,
    /// Each key's request rate.
    pub limits: Limits,
    /// Signs the receipts of decisions.
    pub signer: Signer,
    /// Where events are sent, and how each delivery went.
    pub webhooks: Webhooks,
    /// Reviewers' sign-in with OpenID Connect, when configured.
    pub sign_in: Option<crate::signin::SignIn>,
    /// Deciding from Slack's buttons, when configured (needs sign-in).
    pub slack: Option<crate::slack::Slack>,
}

impl AppState {
    /// State over an opened database; starts the feed reader.
    pub async fn new(
        db: Db,
        limits: Limits,
        signer: Signer,
        policy: Policy,
        webhooks: Webhooks,
    ) -> Result<AppState, DbError> {
        let feed = Feed::start(db.clone()).await?;
        Ok(AppState {
            changes: Changes::new(db.clone(), feed.clone(), Arc::new(policy)),
            feed,
            limits,
            signer,
            webhooks,
            db,
            sign_in: None,
            slack: None,
        })
    }

    /// The same state, with reviewers signing in through `sign_in`.
    pub fn with_sign_in(self, sign_in: Option<crate::signin::SignIn>) -> AppState {
        AppState { sign_in, ..self }
    }

    /// The state with deciding from Slack (or without).
    pub fn with_slack(self, slack: Option<crate::slack::Slack>) -> AppState {
        AppState { slack, ..self }
    }

    /// A review's outcome, with its signed receipt once decided.
    pub(crate) fn outcome(&self, review: &Review) -> Result<Outcome, ApiError> {
        self.service().outcome(review).map_err(ApiError::internal)
    }

    /// The use cases over this state.
    pub(crate) fn service(&self) -> Service<'_> {
        Service {
            db: &self.db,
            changes: &self.changes,
            signer: &self.signer,
        }
    }
}

/// The `/api/v1` routes, with JSON errors for unknown paths and methods and
/// request bodies limited to `max_body` bytes.
pub fn router(state: AppState, max_body: usize) -> Router {
    let api = Router::new()
        .route("/reviews", post(reviews::create).get(reviews::list))
        .route("/reviews/{id}", get(reviews::get))
        .route("/requesters", get(reviews::requesters))
        .route("/inbox", get(reviews::inbox))
        .route("/reviews/{id}/page", get(reviews::page))
        .route("/reviews/{id}/outcome", get(reviews::outcome))
        .route("/reviews/{id}/redeem", post(tool_calls::redeem_token))
        .route("/reviews/{id}/withdraw", post(tool_calls::withdraw_request))
        .route("/tool-calls", post(tool_calls::submit))
        .route("/reviews/{id}/decisions", post(reviews::post_decision))
        .route("/reviews/{id}/resubmit", post(reviews::resubmit_review))
        .route("/events", get(events::stream))
        .route("/events/tickets", post(events::ticket))
        .route("/changes", get(events::list))
        .route("/grants", get(grants::list))
        .route("/grants/{grant_id}/revoke", post(grants::revoke))
        .route("/health", get(health))
        .route("/signing-key", get(signing_key))
        .route("/policy", get(policy))
        .route("/me", get(me))
        .route("/webhooks", get(webhooks))
        .route("/pairings", post(devices::create))
        .route("/pairings/redeem", post(devices::redeem))
        .route("/devices", get(devices::list))
        .route("/devices/{key_id}/revoke", post(devices::revoke))
        .route("/page-key", post(page_key::remember))
        .route("/page-key/forget", post(page_key::forget))
        .route("/session", get(signin::current))
        .route("/sessions", get(signin::list))
        .route("/sessions/{id}/revoke", post(signin::revoke))
        .route("/slack/link-codes/{code}", get(slack::link_code))
        .route("/slack/links", get(slack::links).post(slack::link))
        .route(
            "/slack/links/{team_id}/{user_id}/unlink",
            post(slack::unlink),
        )
        .route("/openapi.json", get(openapi))
        .fallback(unknown_path)
        .method_not_allowed_fallback(wrong_method)
        .layer(axum::middleware::from_fn(body::read_first))
        .layer(DefaultBodyLimit::max(max_body))
        .layer(axum::Extension(body::MaxBody(max_body)))
        .with_state(state.clone());
    let auth = Router::new()
        .route("/login", get(signin::login))
        .route("/callback", get(signin::callback))
        .route("/logout", post(signin::logout))
        .with_state(state.clone());
    let slack = Router::new()
        .route("/actions", post(slack::actions))
        .layer(DefaultBodyLimit::max(max_body))
        .with_state(state);
    Router::new()
        .nest("/api/v1", api)
        .nest("/auth", auth)
        .nest("/slack", slack)
}

async fn health(axum::extract::State(state): axum::extract::State<AppState>) -> impl IntoResponse {
    axum::Json(
        serde_json::json!({"status": "ok", "database": state.db.backend().name(), "version": env!("CARGO_PKG_VERSION")}),
    )
}

/// `GET /api/v1/signing-key` (no key needed): the public key receipts are
/// signed with.
async fn signing_key(
    axum::extract::State(state): axum::extract::State<AppState>,
) -> impl IntoResponse {
    axum::Json(serde_json::json!({"algorithm": "Ed25519", "public_key": state.signer.public_key()}))
}

/// `GET /api/v1/policy` (any key): the approval policy decisions are checked
/// against (no rules: one approval), so the app shows and checks it too.
async fn policy(
    axum::extract::State(state): axum::extract::State<AppState>,
    _caller: auth::Caller,
) -> axum::Json<Policy> {
    axum::Json(state.changes.policy().clone())
}

/// `GET /api/v1/me` (any key): the calling key, its owner and its roles.
async fn me(caller: auth::Caller) -> axum::Json<Me> {
    let key = caller.0;
    axum::Json(Me {
        key: key.key_ref(),
        kind: key.kind.as_str().to_owned(),
        roles: key.roles,
    })
}

/// `GET /api/v1/webhooks` (reviewer): each webhook's deliveries by state
/// and the latest deliveries, with the last error of each.
async fn webhooks(
    axum::extract::State(state): axum::extract::State<AppState>,
    caller: auth::Caller,
) -> Result<axum::Json<WebhookList>, ApiError> {
    caller.require(crate::store::keys::KeyKind::Reviewer)?;
    Ok(axum::Json(state.webhooks.list().await?))
}

async fn openapi() -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        OPENAPI,
    )
}

async fn unknown_path(uri: axum::http::Uri) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        ErrorCode::NotFound,
        format!("there is no endpoint {}", uri.path()),
    )
}

async fn wrong_method(method: axum::http::Method, uri: axum::http::Uri) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        ErrorCode::MethodNotAllowed,
        format!("{method} is not allowed on {}", uri.path()),
    )
}
