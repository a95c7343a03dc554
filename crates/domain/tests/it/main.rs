//! The domain crate's integration tests, one binary: a module per part of
//! the domain (MPLP conformance, decisions, the demo, LangGraph, policies,
//! tool calls, property tests) over the helpers in `common`.

mod common;

mod conformance;
mod decide;
mod demo;
mod langgraph;
mod policy;
mod properties;
mod toolcall;
