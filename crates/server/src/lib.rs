//! The Countersign server as a library: the `countersign` command is built on
//! it, and so are the benchmarks. Its folders are its layers:
//!
//! - [`cli`]: the `countersign` command: its flags (clap derives on these
//!   types) and the one-shot commands (keys, backup, validate, audit,
//!   webhooks); the agent-side commands are `countersign_agent`'s.
//! - [`http`]: the HTTP API under `/api/v1` (contract: `openapi.json`), the
//!   built app, the security headers.
//! - [`store`]: SQLite or PostgreSQL storage, the one place SQL is written.
//!
//! Between them, what a running server does:
//! - [`serve`]: the server with the built app, CORS and the demo data.
//! - [`changes`]: every write to stored reviews, announced to waiters; the expiry sweeper.
//! - [`feed`]: the change feed fanned out to this instance's streams and waiters.
//! - [`limits`]: per-key request rates.
//! - [`logs`]: the server's log (text or JSON) and its line per request.
//! - [`mail`]: telling reviewers by e-mail, with links that decide nothing.
//! - [`metrics`]: `/metrics` for Prometheus.
//! - [`outbox`]: the change feed read in order, one instance at a time, by
//!   what tells the outside world (the Slack bot, the mailer).
//! - [`policy`]: the approval policy file, read strictly.
//! - [`rate`]: a key's request rate as people write it.
//! - [`signin`]: reviewers signing in with OpenID Connect; their sessions.
//! - [`slack`]: deciding from Slack: signed requests, button clicks; the bot
//!   that posts each request and keeps its message true.
//! - [`signing`]: the server's Ed25519 key and the receipts it signs.
//! - [`usecases`]: what a request does, whatever entry point brought it
//!   (decide); the HTTP handlers parse, call one and map its result.
//! - [`webhooks`]: signed, durable deliveries of review events to other systems.

pub mod changes;
pub mod cli;
pub mod feed;
pub mod http;
pub mod limits;
pub mod logs;
pub mod mail;
pub mod metrics;
pub mod options;
pub mod outbox;
pub mod policy;
pub mod rate;
pub mod serve;
pub mod signin;
pub mod signing;
pub mod slack;
pub mod store;
pub mod usecases;
pub mod webhooks;
