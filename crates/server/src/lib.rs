//! The Countersign server as a library: the `countersign` command is built on
//! it, and so are the benchmarks.
//!
//! - [`api`]: the HTTP API under `/api/v1` (contract: `openapi.json`).
//! - [`changes`]: every write to stored reviews, announced to waiters; the expiry sweeper.
//! - [`db`]: SQLite or PostgreSQL storage.
//! - [`feed`]: the change feed fanned out to this instance's streams and waiters.
//! - [`limits`]: per-key request rates.
//! - [`logs`]: the server's log (text or JSON) and its line per request.
//! - [`metrics`]: `/metrics` for Prometheus.
//! - [`serve`]: the server with the built app, CORS and the demo data.
//! - [`signing`]: the server's Ed25519 key and the receipts it signs, checked offline.
//! - [`webhooks`]: signed, durable deliveries of review events to other systems.
//! - [`keys`], [`backup`], [`agent`], [`hook`], [`mcp_gate`], [`validate`], [`audit`]: the other commands.

pub mod agent;
pub mod api;
mod app;
pub mod audit;
pub mod backup;
pub mod changes;
pub mod db;
pub mod feed;
mod headers;
pub mod hook;
pub mod keys;
pub mod limits;
pub mod logs;
pub mod mcp_gate;
pub mod metrics;
pub mod policy;
pub mod serve;
pub mod signing;
pub mod validate;
pub mod webhooks;

/// Output format of `validate`.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Format {
    /// Lines for people.
    Text,
    /// One JSON object per file, each on its own line.
    Json,
}
