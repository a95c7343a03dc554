//! Countersign's domain: the rules shared by the browser app and the server.
//!
//! - [`model`]: MPLP v1.0 types matching the official schemas.
//! - [`validate`]: every problem of a document, with JSON Pointer paths.
//! - [`graph`], [`layout`]: a plan's DAG, its checks and its drawing.
//! - [`lifecycle`]: which status may follow which.
//! - [`review`]: `decide`, `resubmit` and learning samples.
//! - [`policy`]: which rule governs a review, its quorum and separation of duties.
//! - [`toolcall`]: tool-call approvals: canonical JSON, hashes, grants, tokens.
//! - [`langgraph`]: LangGraph and LangChain interrupts as reviews, the answers
//!   they take (checked against a response schema) and the runs that resume them.
//! - [`text`]: Markdown read into blocks, and hidden characters made visible.
//! - [`wire`]: the HTTP contract's types (what a list row shows of a review).
//! - [`demo`]: the demo reviews the app and `countersign serve --demo` seed.
//!
//! Pure Rust: no I/O, no clock, no randomness (callers pass time and ids), no
//! `unsafe` (forbidden in every crate of the workspace, so its fuzzing needs no
//! memory sanitizer).

pub mod demo;
pub mod graph;
mod id;
mod issue;
pub mod json;
pub mod langgraph;
pub mod layout;
pub mod lifecycle;
pub mod model;
mod parsed_text;
pub mod policy;
pub mod review;
pub mod text;
mod timestamp;
pub mod toolcall;
pub mod validate;
pub mod wire;

pub use id::{IdError, IdSource, MplpId};
pub use issue::{Issue, IssueCode, Pointer};
pub use model::EventType;
pub use review::{
    decide, decide_under, escalate_if_due, resubmit, Channel, DecideError, Decider, DecisionInput,
    Judge, KeyRef, Person, Review, Target,
};
pub use timestamp::{Timestamp, TimestampError};
pub use validate::{validate_bundle, validate_document, Document, DocumentKind, Report};

/// The MPLP protocol version Countersign speaks.
pub const PROTOCOL_VERSION: &str = "1.0.0";
