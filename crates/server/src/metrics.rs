//! `GET /metrics`: the server's figures in Prometheus' text format, for an
//! operator's Prometheus to scrape. Off unless `serve --metrics` (on the
//! server's own address) or `--metrics-listen ADDR` (on an address of its
//! own); when off, nothing is recorded and `/metrics` answers 404.
//!
//! Counters and histograms are recorded where things happen (each function
//! below is one of them; all are no-ops while no recorder is installed);
//! what stands now (pending reviews, the oldest one's age, webhook
//! deliveries, the database pool) is read when Prometheus scrapes.

use crate::store::{Db, DbError};
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use countersign_domain::review::Review;
use countersign_domain::wire::ErrorCode;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use std::time::Duration;

/// The installed recorder, rendered on each scrape.
#[derive(Clone)]
pub struct Metrics {
    handle: PrometheusHandle,
}

/// Request latencies, seconds: from half a millisecond to ten seconds.
const REQUEST_BUCKETS: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 10.0,
];
/// From asked to decided, seconds: a second to a day.
const DECISION_BUCKETS: [f64; 11] = [
    1.0, 5.0, 15.0, 30.0, 60.0, 300.0, 900.0, 1800.0, 3600.0, 14400.0, 86400.0,
];

impl Metrics {
    /// Installs the process's recorder (once: a second call fails).
    pub fn install() -> Result<Metrics, String> {
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(
                Matcher::Full("countersign_http_request_duration_seconds".into()),
                &REQUEST_BUCKETS,
            )
            .and_then(|builder| {
                builder.set_buckets_for_metric(
                    Matcher::Full("countersign_decision_latency_seconds".into()),
                    &DECISION_BUCKETS,
                )
            })
            .map_err(|e| format!("cannot set up the metrics: {e}"))?
            .build_recorder();
        let handle = recorder.handle();
        metrics::set_global_recorder(recorder)
            .map_err(|e| format!("cannot set up the metrics: {e}"))?;
        describe();
        zeroes();
        // Histograms keep their samples until this folds them in.
        let upkeep = handle.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_secs(5)).await;
                upkeep.run_upkeep();
            }
        });
        Ok(Metrics { handle })
    }

    /// `GET /metrics`, with the standing figures read from `db`.
    pub fn router(self, db: Db) -> Router {
        Router::new()
            .route("/metrics", get(scrape))
            .with_state((db, self))
    }
}

/// `/metrics` where it is not served: a plain 404 that says where it is
/// served from, never the app's page.
pub fn off() -> Router {
    Router::new().route(
        "/metrics",
        get(|| async {
            (
                StatusCode::NOT_FOUND,
                "no metrics here: countersign serve --metrics serves them on this address, --metrics-listen ADDR on another\n",
            )
        }),
    )
}

async fn scrape(State((db, metrics)): State<(Db, Metrics)>) -> Response {
    if let Err(e) = read_standing(&db).await {
        tracing::warn!("reading the figures for /metrics failed: {e}");
        return (StatusCode::SERVICE_UNAVAILABLE, format!("{e}\n")).into_response();
    }
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        metrics.handle.render(),
    )
        .into_response()
}

/// The gauges of what stands now, read from the database and the pool.
async fn read_standing(db: &Db) -> Result<(), DbError> {
    let counts = db.status_counts().await?;
    metrics::gauge!("countersign_reviews_pending").set(counts.pending as f64);
    let oldest = db.oldest_pending().await?;
    let age = oldest.map_or(0.0, |at| {
        (chrono::Utc::now() - at).num_milliseconds().max(0) as f64 / 1000.0
    });
    metrics::gauge!("countersign_oldest_pending_review_age_seconds").set(age);
    for (state_name, n) in db.deliveries_by_state().await? {
        metrics::gauge!("countersign_webhook_deliveries", "state" => state_name).set(n as f64);
    }
    let (size, idle) = db.pool_use();
    metrics::gauge!("countersign_db_pool_connections", "state" => "idle").set(idle as f64);
    metrics::gauge!("countersign_db_pool_connections", "state" => "in_use")
        .set((size as usize).saturating_sub(idle) as f64);
    Ok(())
}

/// One HTTP request answered: its route's pattern (never its path), status
/// and latency.
pub fn request(method: &str, route: &str, status: u16, latency: Duration) {
    let (method, route) = (method.to_owned(), route.to_owned());
    metrics::counter!("countersign_http_requests_total", "method" => method.clone(), "route" => route.clone(), "status" => status.to_string())
        .increment(1);
    metrics::histogram!("countersign_http_request_duration_seconds", "method" => method, "route" => route)
        .record(latency.as_secs_f64());
}

/// A review was asked for.
pub fn created(review: &Review) {
    metrics::counter!("countersign_reviews_created_total", "kind" => kind(review)).increment(1);
}

/// A review may have been closed by a decision, a grant or its expiry:
/// counted with its final status, and its wait from asked to decided.
pub fn maybe_closed(review: &Review) {
    let status = review.confirm.status.as_str();
    if status == "pending" {
        return;
    }
    metrics::counter!("countersign_reviews_decided_total", "kind" => kind(review), "status" => status)
        .increment(1);
    let waited = chrono::Utc::now() - review.confirm.requested_at.to_utc();
    metrics::histogram!("countersign_decision_latency_seconds", "kind" => kind(review))
        .record(waited.num_milliseconds().max(0) as f64 / 1000.0);
}

/// An approval token was redeemed, or refused for `reason` (its error code).
pub fn redemption(refused: Option<ErrorCode>) {
    match refused {
        None => metrics::counter!("countersign_tokens_redeemed_total").increment(1),
        Some(reason) => {
            metrics::counter!("countersign_tokens_refused_total", "reason" => reason.as_str())
                .increment(1)
        }
    }
}

/// A request was refused for going over its key's rate.
pub fn rate_limited() {
    metrics::counter!("countersign_rate_limited_total").increment(1);
}

/// An event stream opened (+1) or closed (-1).
pub fn event_streams(change: f64) {
    metrics::gauge!("countersign_event_stream_subscribers").increment(change);
}

/// Every counter and gauge an alert may read is there from the start, at 0,
/// each label it can take included: a rule over a missing series never fires.
fn zeroes() {
    for kind in ["plan", "tool_call"] {
        metrics::counter!("countersign_reviews_created_total", "kind" => kind).increment(0);
        for status in ["approved", "rejected", "cancelled"] {
            metrics::counter!("countersign_reviews_decided_total", "kind" => kind, "status" => status)
                .increment(0);
        }
    }
    metrics::counter!("countersign_tokens_redeemed_total").increment(0);
    for reason in [
        ErrorCode::TokenUnknown,
        ErrorCode::TokenExpired,
        ErrorCode::TokenUsed,
        ErrorCode::TokenHashMismatch,
        ErrorCode::TokenDeviceMismatch,
        ErrorCode::TokenOtherApproval,
    ] {
        metrics::counter!("countersign_tokens_refused_total", "reason" => reason.as_str())
            .increment(0);
    }
    metrics::counter!("countersign_rate_limited_total").increment(0);
    metrics::gauge!("countersign_event_stream_subscribers").set(0.0);
}

fn kind(review: &Review) -> &'static str {
    if review.tool_call().is_some() {
        "tool_call"
    } else {
        "plan"
    }
}

fn describe() {
    use metrics::{describe_counter, describe_gauge, describe_histogram, Unit};
    describe_counter!(
        "countersign_http_requests_total",
        "HTTP requests answered, by method, route and status."
    );
    describe_histogram!(
        "countersign_http_request_duration_seconds",
        Unit::Seconds,
        "Time to answer an HTTP request's head, by method and route."
    );
    describe_counter!(
        "countersign_reviews_created_total",
        "Reviews asked for, by kind (plan or tool_call)."
    );
    describe_counter!(
        "countersign_reviews_decided_total",
        "Reviews closed (by a reviewer, a grant or expiry), by kind and final status."
    );
    describe_histogram!(
        "countersign_decision_latency_seconds",
        Unit::Seconds,
        "Time from asked to decided, by kind."
    );
    describe_gauge!(
        "countersign_reviews_pending",
        "Reviews waiting for a decision now."
    );
    describe_gauge!(
        "countersign_oldest_pending_review_age_seconds",
        Unit::Seconds,
        "How long the oldest pending review has waited (0 when none waits)."
    );
    describe_counter!(
        "countersign_tokens_redeemed_total",
        "Approval tokens redeemed before their call ran."
    );
    describe_counter!(
        "countersign_tokens_refused_total",
        "Token redemptions refused, by reason (the API's error code)."
    );
    describe_counter!(
        "countersign_rate_limited_total",
        "Requests refused (429) for going over their key's rate."
    );
    describe_gauge!(
        "countersign_webhook_deliveries",
        "Webhook deliveries by state (pending, sent, failed)."
    );
    describe_gauge!(
        "countersign_event_stream_subscribers",
        "Event streams open on this instance."
    );
    describe_gauge!(
        "countersign_db_pool_connections",
        "Database connections of this instance's pool, idle or in use."
    );
}
