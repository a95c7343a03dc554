//! The server's integration tests, one binary: each module drives the real
//! `countersign` binary (or its library) through one part of the contract,
//! sharing the harness in `support` (a server on a fresh SQLite file or
//! PostgreSQL database, an HTTP client that checks answers against the
//! OpenAPI document, fixtures).

mod support;

mod audit;
mod cli;
mod contract;
mod devices;
mod events;
mod hook;
mod hostile;
mod instances;
mod mcp_gate;
mod policy;
mod postgres;
mod process;
mod queries;
mod receipts;
mod router;
mod security;
mod soak;
mod store;
mod tool_calls;
mod webhooks;
