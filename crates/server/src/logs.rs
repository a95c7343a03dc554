//! The server's log: `tracing` events on standard error, as text for people
//! or as one JSON object per line for log collectors, filtered as `RUST_LOG`
//! filters (`info` by default); and one line per HTTP request, with the id
//! it is answered under (`X-Request-Id`).
//!
//! What is logged never holds a secret: requests are logged by their route
//! (`/api/v1/reviews/{id}`), never by their query string (event tickets
//! travel there) or their headers (keys).

use axum::extract::{MatchedPath, Request};
use axum::http::{HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use std::time::Instant;
use tracing_subscriber::EnvFilter;

/// The header a request's id travels in, both ways.
pub static REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// How log lines are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// One line of text per event, for people.
    #[default]
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

/// Sends every `tracing` event (and the `log` records of libraries) to
/// standard error. `filter` is a `RUST_LOG`-style filter such as `info` or
/// `warn,countersign_server=debug`.
pub fn init(format: LogFormat, filter: &str) -> Result<(), LogError> {
    let filter = EnvFilter::try_new(filter).map_err(|source| LogError::Filter {
        filter: filter.to_owned(),
        source,
    })?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(true);
    let installed = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .with_span_list(false)
            .try_init(),
    };
    installed.map_err(LogError::Install)
}

/// Why the log could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// The filter (`--log-filter`, `RUST_LOG`) does not parse.
    #[error("invalid log filter `{filter}`: {source}")]
    Filter {
        /// The filter given.
        filter: String,
        /// Why it does not parse.
        source: tracing_subscriber::filter::ParseError,
    },
    /// A log was set up already, or could not be.
    #[error("cannot set up the log: {0}")]
    Install(Box<dyn std::error::Error + Send + Sync>),
}

/// Middleware: gives the request an id (the caller's `X-Request-Id` when it
/// is a short plain token, a new one otherwise), echoes it on the answer,
/// and logs one line when the answer's head is ready.
pub async fn requests(mut request: Request, next: Next) -> Response {
    let started = Instant::now();
    let id = request
        .headers()
        .get(&REQUEST_ID)
        .filter(|value| is_plain_id(value.as_bytes()))
        .cloned()
        .unwrap_or_else(new_id);
    request.headers_mut().insert(REQUEST_ID.clone(), id.clone());
    let method = request.method().clone();
    // The route's pattern, never the URI: no ids of people's reviews, no query.
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|path| path.as_str().to_owned());
    let mut response = next.run(request).await;
    let status = response.status().as_u16();
    let request_id = id.to_str().unwrap_or_default();
    let route = route
        .as_deref()
        .unwrap_or(if method == "GET" || method == "HEAD" {
            "(app)"
        } else {
            "(none)"
        });
    let latency = started.elapsed();
    crate::metrics::request(method.as_str(), route, status, latency);
    let latency_ms = latency.as_secs_f64() * 1000.0;
    tracing::info!(
        target: "countersign::request",
        method = %method,
        route,
        status,
        latency_ms = (latency_ms * 1000.0).round() / 1000.0,
        request_id,
        "request"
    );
    response.headers_mut().insert(REQUEST_ID.clone(), id);
    response
}

/// Up to 64 letters, digits, `-`, `_` or `.`: what proxies send (nginx's
/// `$request_id`, UUIDs); anything else is replaced, so no caller writes
/// arbitrary text into the log.
fn is_plain_id(id: &[u8]) -> bool {
    (1..=64).contains(&id.len())
        && id
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// 128 random bits in hex; a process id and a counter when the system has no randomness.
fn new_id() -> HeaderValue {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut bytes = [0u8; 16];
    let id = match getrandom::fill(&mut bytes) {
        Ok(()) => bytes.iter().map(|b| format!("{b:02x}")).collect::<String>(),
        Err(_) => format!(
            "{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ),
    };
    HeaderValue::from_str(&id).unwrap_or(HeaderValue::from_static("unknown"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_short_plain_request_ids_are_kept() {
        assert!(is_plain_id(b"0f3c9a2e-7b1d-4c5e-9a8f-2d6b1e4c7a90"));
        assert!(is_plain_id(b"a1b2c3d4e5f60718293a4b5c6d7e8f90"));
        assert!(!is_plain_id(b""));
        assert!(!is_plain_id(&[b'a'; 65]));
        assert!(!is_plain_id(b"id with spaces"));
        assert!(!is_plain_id(b"x\"}{\"level\":\"ERROR"));
    }
}
