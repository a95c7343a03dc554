//! The agent's side of Countersign: everything that asks a reviewer before
//! an agent acts, and checks what the server answered, with no server in it
//! (no HTTP server, no database). The `countersign` command's agent-side
//! subcommands are these types, and their flags are these types' fields.
//!
//! - [`client`]: where the server is ([`Connection`]), one API request, and
//!   the round trip before a tool call runs: ask, wait, check, redeem.
//! - [`commands`]: `countersign agent`: submit, request, redeem, status, resubmit.
//! - [`hook`]: `countersign hook claude-code`, Claude Code's PreToolUse hook.
//! - [`mcp_gate`]: `countersign mcp-gate`, a stdio proxy that gates MCP tool calls.
//! - [`receipt`]: signed receipts checked offline (`countersign verify`).
//!
//! Fail closed throughout: an approval counts only once its token was
//! redeemed (and, given the server's public key, its receipt verified);
//! anything else means the call does not run, and the caller is told why.

pub mod client;
pub mod commands;
pub mod hook;
pub mod mcp_gate;
pub mod receipt;

pub use client::Connection;
