//! `countersign serve`: the API, the built app (with SPA fallback, caching and
//! compression), CORS for named origins, and the demo data on request.

use crate::http::{self, AppState};
use crate::metrics::Metrics;
use crate::options::{MetricsAt, ServeOptions};
use crate::signing::Signer;
use crate::store::keys::KeyKind;
use crate::store::{Db, DbError};
use crate::webhooks::Webhooks;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderValue, Method};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::serve::ListenerExt;
use countersign_domain::policy::Policy;
use std::net::SocketAddr;
use std::path::Path;
use tower_http::compression::CompressionLayer;
use tower_http::cors::{AllowOrigin, CorsLayer};

/// Why the server did not start, or stopped on an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A setting cannot work: the data folder, the policy file, a CORS
    /// origin, the app's folder, the metrics recorder, the webhooks, the demo.
    #[error("{0}")]
    Setting(String),
    /// The signing key could not be read or made.
    #[error(transparent)]
    SigningKey(#[from] crate::signing::KeyFileError),
    /// The database could not be opened or read.
    #[error(transparent)]
    Db(#[from] DbError),
    /// An address could not be listened on.
    #[error("cannot listen {what}on {at}: {source}")]
    Listen {
        /// What for ("" for the API, "for metrics ").
        what: &'static str,
        /// The address.
        at: SocketAddr,
        /// Why not.
        source: std::io::Error,
    },
    /// The listening socket failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl From<String> for ServeError {
    fn from(setting: String) -> Self {
        ServeError::Setting(setting)
    }
}

/// Runs the server until Ctrl-C or SIGTERM.
pub async fn run(options: ServeOptions) -> Result<(), ServeError> {
    // First: it makes the data folder owner-only before anything is written there.
    let database = options.database.address()?;
    let policy = options.policy.as_deref().map(crate::policy::load);
    let policy = policy.transpose()?.unwrap_or_default();
    let sign_in = options.sign_in.as_deref().map(crate::signin::config::load);
    let sign_in = sign_in.transpose()?.map(crate::signin::SignIn::new);
    let signing_key = options.database.signing_key();
    let signer = Signer::load_or_create(&signing_key)?;
    let metrics = match options.metrics_at() {
        MetricsAt::Off => None,
        MetricsAt::Listen | MetricsAt::Own(_) => Some(Metrics::install()?),
    };
    let db = Db::open(&database).await?;
    let demo_keys = if options.demo {
        Some(seed_demo(&db).await?)
    } else {
        None
    };
    if let Some(path) = &options.policy {
        announce_policy(&db, path, &policy).await?;
    }
    let listener = bind(options.listen, "").await?;
    let address = listener.local_addr()?;
    let desk = options.public_url.clone();
    let desk = desk.unwrap_or_else(|| format!("http://{address}"));
    let slack = match (&options.slack_signing_secret_file, &sign_in) {
        (None, _) => None,
        (Some(_), None) => return Err(ServeError::Setting(
            "--slack-signing-secret-file needs --sign-in: a click in Slack decides as a person signed in to the desk".into(),
        )),
        (Some(file), Some(_)) => Some(crate::slack::Slack::load(file, &desk)?),
    };
    let buttons = slack.is_some();
    let webhooks = Webhooks::open(db.clone(), options.webhooks(), &desk, buttons).await?;
    let bot = slack_bot(&options, &db, &policy, &desk, buttons)?;
    let mailer = mailer(&options, &db, &policy, &desk, sign_in.is_some())?;
    let limits = crate::limits::Limits::new(options.rates());
    let state = AppState::new(db.clone(), limits, signer, policy, webhooks.clone())
        .await?
        .with_sign_in(sign_in)
        .with_slack(slack);
    tokio::spawn(crate::changes::sweep(state.changes.clone()));
    if !webhooks.is_empty() {
        tokio::spawn(webhooks.run());
    }
    if let Some(bot) = bot {
        crate::outbox::start(db.clone(), bot).await?;
    }
    if let Some(mailer) = mailer {
        crate::outbox::start(db.clone(), mailer).await?;
    }
    let (beside_api, metrics_at) =
        place_metrics(metrics, options.metrics_at(), address, &state).await?;
    let surface = AppOptions {
        max_body: options.max_body,
        app_dir: options.app_dir.as_deref(),
        cors_origins: &options.cors_origins,
        desk: &desk,
    };
    let (feed, backend) = (state.feed.clone(), db.backend());
    let (app, app_from) = app(state, &surface, beside_api)?;
    let reviewing = app_from.is_some().then_some(desk.as_str());
    announce(address, reviewing, metrics_at, demo_keys);
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        address = %address,
        database = backend.name(),
        app = app_from,
        "countersign started"
    );
    serve_until_stopped(listener, app, feed).await?;
    if let Err(e) = db.close().await {
        tracing::warn!("the database's write-ahead log was not checkpointed at stop: {e}");
    }
    tracing::info!("countersign stopped");
    Ok(())
}

/// The Slack bot `--slack-bot-token-file` asks for, if it does.
fn slack_bot(
    options: &ServeOptions,
    db: &Db,
    policy: &countersign_domain::policy::Policy,
    desk: &str,
    buttons: bool,
) -> Result<Option<crate::slack::bot::Bot>, String> {
    let Some(token_file) = &options.slack_bot_token_file else {
        if policy.rules.iter().any(|rule| rule.slack_channel.is_some()) {
            tracing::warn!("the policy names Slack channels, but without --slack-bot-token-file nobody is told there");
        }
        return Ok(None);
    };
    let settings = crate::slack::bot::BotSettings {
        token_file,
        api: &options.slack_api_url,
        channel: options.slack_channel.as_deref(),
    };
    crate::slack::bot::Bot::load(db.clone(), &settings, policy, desk, buttons).map(Some)
}

/// The mailer `--smtp-url` asks for, if it does.
fn mailer(
    options: &ServeOptions,
    db: &Db,
    policy: &countersign_domain::policy::Policy,
    desk: &str,
    signing_in: bool,
) -> Result<Option<crate::mail::Mailer>, String> {
    let Some(url) = &options.smtp_url else {
        if policy.rules.iter().any(|rule| rule.email.is_some()) {
            tracing::warn!(
                "the policy names e-mail addresses, but without --smtp-url nobody is told there"
            );
        }
        return Ok(None);
    };
    if !signing_in {
        return Err("--smtp-url needs --sign-in: a reviewer decides from an e-mail signed in to the desk, so that a mail scanner opening its link decides nothing".into());
    }
    let from = options
        .mail_from
        .as_deref()
        .ok_or("--smtp-url needs --mail-from: the sender of Countersign's e-mails")?;
    let settings = crate::mail::MailSettings {
        url,
        from,
        to: &options.mail_to,
    };
    crate::mail::Mailer::new(db.clone(), &settings, policy, desk).map(Some)
}

/// Where metrics are served: beside the API (then the recorder to add to its
/// router), on their own address (served from now on), or nowhere; and the
/// address to announce.
async fn place_metrics(
    metrics: Option<Metrics>,
    at: MetricsAt,
    address: SocketAddr,
    state: &AppState,
) -> Result<(Option<Metrics>, Option<SocketAddr>), ServeError> {
    Ok(match (metrics, at) {
        (Some(metrics), MetricsAt::Own(at)) => {
            (None, Some(serve_metrics(metrics, at, state).await?))
        }
        (Some(metrics), _) => (Some(metrics), Some(address)),
        (None, _) => (None, None),
    })
}

/// Listens on `at` (`what` for: "" for the API, "for metrics ").
async fn bind(at: SocketAddr, what: &'static str) -> Result<tokio::net::TcpListener, ServeError> {
    let bound = tokio::net::TcpListener::bind(at).await;
    bound.map_err(|source| ServeError::Listen { what, at, source })
}

/// Serves `/metrics` on an address of its own until the server stops;
/// returns the address it listens on.
async fn serve_metrics(
    metrics: Metrics,
    at: SocketAddr,
    state: &AppState,
) -> Result<SocketAddr, ServeError> {
    let listener = bind(at, "for metrics ").await?;
    let address = listener.local_addr()?;
    let router = metrics.router(state.db.clone());
    let closed = state.feed.clone();
    tokio::spawn(async move {
        let served = axum::serve(listener, router)
            .with_graceful_shutdown(async move { closed.closed().await })
            .await;
        if let Err(e) = served {
            tracing::error!("the metrics listener failed: {e}");
        }
    });
    Ok(address)
}

/// Prints where the server listens (the first line is for programs: the
/// address, nothing else), where reviewers open the desk, where metrics
/// are, and the demo's keys.
fn announce(
    address: SocketAddr,
    desk: Option<&str>,
    metrics_at: Option<SocketAddr>,
    demo_keys: Option<(String, String)>,
) {
    println!("countersign: listening on http://{address}");
    if let Some(desk) = desk {
        println!("Open {}/ to review.", desk.trim_end_matches('/'));
    }
    if let Some(at) = metrics_at {
        println!("Metrics for Prometheus: http://{at}/metrics");
    }
    if let Some((reviewer, agent)) = demo_keys {
        println!(
            "Demo reviewer key (paste it where the app asks for it, Settings → Connect to this desk's server): {reviewer}"
        );
        println!("Demo agent key (for `countersign agent submit`): {agent}");
    }
    use std::io::Write;
    let _ = std::io::stdout().flush();
}

/// Serves `app` until Ctrl-C or SIGTERM, then finishes the requests in
/// flight (ending event streams) for at most [`DRAIN`].
async fn serve_until_stopped(
    listener: tokio::net::TcpListener,
    app: axum::Router,
    feed: crate::feed::Feed,
) -> Result<(), ServeError> {
    // Answers are small: without TCP_NODELAY a client that writes a request's
    // head and body apart (Node's fetch) waits out a delayed ACK per request.
    let listener = listener.tap_io(|stream| {
        if let Err(e) = stream.set_nodelay(true) {
            tracing::warn!("TCP_NODELAY could not be set on a connection: {e}");
        }
    });
    let closing = {
        let feed = feed.clone();
        async move {
            shutdown().await;
            tracing::info!(
                followers = feed.followers(),
                "shutting down: no new connections; finishing the requests in flight and ending event streams"
            );
            feed.close();
        }
    };
    // Routes made into services once, here: a bare Router given to `serve`
    // does it again for every connection, copying the whole route table
    // (most of a short-lived client's cost in the load benchmark's profile).
    let app = app.with_state::<()>(()).into_make_service();
    let server = axum::serve(listener, app).with_graceful_shutdown(closing);
    tokio::select! {
        served = server => served?,
        () = async { feed.closed().await; tokio::time::sleep(DRAIN).await } => {
            tracing::warn!("requests still running {} s after the signal: stopping without them", DRAIN.as_secs());
        }
    }
    Ok(())
}

/// What the HTTP surface serves beside the API.
pub struct AppOptions<'a> {
    /// Largest accepted request body, in bytes.
    pub max_body: usize,
    /// The built app to serve; none: the one built into the binary, if any.
    pub app_dir: Option<&'a Path>,
    /// Origins allowed to call the API from a browser.
    pub cors_origins: &'a [String],
    /// The address reviewers open the desk at.
    pub desk: &'a str,
}

/// The whole HTTP surface over `state`: the API, `/metrics` beside it when
/// `metrics` is given (else 404), the built app with its policy, security
/// and cache headers, compression, CORS for the named origins, and the
/// request log outermost. `run` serves it; the tests call it in process.
/// Also says where the app came from, if one is served.
pub fn app(
    state: AppState,
    options: &AppOptions,
    metrics: Option<Metrics>,
) -> Result<(axum::Router, Option<String>), String> {
    let mut app = http::router(state.clone(), options.max_body);
    app = match metrics {
        Some(metrics) => app.merge(metrics.router(state.db.clone())),
        None => app.merge(crate::metrics::off()),
    };
    let mut policy = None;
    let source = match options.app_dir {
        Some(dir) => Some(crate::http::app::Source::Dir(dir)),
        None => crate::http::app::embedded().then_some(crate::http::app::Source::Embedded),
    };
    let app_from = match &source {
        Some(crate::http::app::Source::Dir(dir)) => Some(dir.display().to_string()),
        Some(crate::http::app::Source::Embedded) => Some("built in".to_owned()),
        None => None,
    };
    if let Some(source) = source {
        let (files, index) = crate::http::app::router(source, state, options.desk)?;
        app = app.merge(files);
        policy = crate::http::headers::app_policy(&String::from_utf8_lossy(&index));
        if policy.is_none() {
            tracing::warn!(
                "the app has no Content-Security-Policy; build it with ./scripts/build-app.sh"
            );
        }
    } else {
        tracing::info!(
            "no app to serve (this build carries none, and no --app-dir): serving the API only"
        );
    }
    let mut app = app
        .layer(middleware::from_fn(cache_headers))
        .layer(middleware::from_fn(move |request, next| {
            crate::http::headers::add(policy.clone(), request, next)
        }))
        .layer(CompressionLayer::new());
    if !options.cors_origins.is_empty() {
        app = app.layer(cors(options.cors_origins)?);
    }
    // Outermost, so the line counts everything: CORS answers, compression.
    Ok((
        app.layer(middleware::from_fn(crate::logs::requests)),
        app_from,
    ))
}

/// How long a shutdown waits for the requests in flight (a decision being
/// committed, a file being sent) before it stops without them.
const DRAIN: std::time::Duration = std::time::Duration::from_secs(10);

/// Says which rules are enforced, and warns when separation of duties cannot
/// tell people apart (agent keys without an owner stand only for themselves).
async fn announce_policy(db: &Db, path: &Path, policy: &Policy) -> Result<(), DbError> {
    let names: Vec<&str> = policy.rules.iter().map(|r| r.name.as_str()).collect();
    tracing::info!(
        "enforcing policy {} ({} rule(s): {})",
        path.display(),
        names.len(),
        names.join(", ")
    );
    let keys = db.keys().await?;
    let unowned = keys
        .iter()
        .filter(|k| k.kind == KeyKind::Agent && k.revoked_at.is_none() && k.owner.is_none())
        .count();
    if unowned > 0 {
        tracing::warn!(
            "{unowned} agent key(s) have no owner, so nobody is kept from approving their requests; mint them with `keys add --owner`"
        );
    }
    Ok(())
}

/// Inserts the demo reviews that are not there yet; revokes the keys of the
/// previous demo start and mints new ones (secrets are never stored).
async fn seed_demo(db: &Db) -> Result<(String, String), ServeError> {
    let reviews = countersign_domain::demo::reviews(chrono::Utc::now())?;
    db.insert_reviews(&reviews, "demo").await?;
    db.revoke_keys_labelled("demo").await?;
    let roles: Vec<String> = ["reviewer", "security_officer", "release_manager"]
        .map(String::from)
        .to_vec();
    let reviewer = db
        .add_key(KeyKind::Reviewer, &roles, "demo", None, None)
        .await?;
    let agent = db.add_key(KeyKind::Agent, &[], "demo", None, None).await?;
    Ok((reviewer.secret, agent.secret))
}

/// API answers are never cached; trunk's hashed files are cached for a year;
/// everything else (index.html, the manifest, icons) is revalidated.
async fn cache_headers(request: Request<Body>, next: Next) -> Response {
    let path = request.uri().path().to_owned();
    let mut response = next.run(request).await;
    let policy = if path.starts_with("/api/") {
        "no-store"
    } else if is_hashed(&path) && response.status().is_success() {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    response
        .headers_mut()
        .entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static(policy));
    response
}

/// Trunk names built files `name-<16 hex>.ext` (or `_bg.wasm`).
fn is_hashed(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or("");
    let stem = name.split('.').next().unwrap_or("").trim_end_matches("_bg");
    stem.rsplit('-')
        .next()
        .is_some_and(|h| h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn cors(origins: &[String]) -> Result<CorsLayer, String> {
    let origins = origins
        .iter()
        .map(|o| {
            HeaderValue::from_str(o.trim_end_matches('/'))
                .map_err(|_| format!("`{o}` is not an origin"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(CorsLayer::new()
        .allow_origin(AllowOrigin::list(origins))
        .allow_methods([Method::GET, Method::POST])
        .allow_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            header::HeaderName::from_static("idempotency-key"),
            header::HeaderName::from_static("last-event-id"),
        ]))
}

async fn shutdown() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(signal) => signal,
                Err(_) => {
                    let _ = interrupt.await;
                    return;
                }
            };
        tokio::select! {
            _ = interrupt => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
}
