//! Rules beyond the schema: the MPLP invariants and the Plan DAG rules, checked
//! on the raw JSON so they are reported alongside schema problems.

use super::shape::quoted;
use super::DocumentKind;
use crate::graph::{GraphProblem, StepGraph};
use crate::issue::{Issue, IssueCode, Pointer};
use crate::PROTOCOL_VERSION;
use serde_json::Value;

/// Appends every rule problem of a document of `kind`.
pub(super) fn check(value: &Value, kind: DocumentKind, out: &mut Vec<Issue>) {
    protocol_version(value, out);
    match kind {
        DocumentKind::Confirm => {
            rejections_have_reasons(value, out);
            status_recorded_by_history(value, out);
        }
        DocumentKind::Plan => {
            agent_roles_named(value, out);
            plan_graph(value, out);
        }
        DocumentKind::Trace => root_span_in_trace(value, out),
        DocumentKind::Context | DocumentKind::Unknown => {}
    }
}

/// Invariant `protocol_version_must_be_1_0`.
fn protocol_version(value: &Value, out: &mut Vec<Issue>) {
    let Some(version) = value
        .pointer("/meta/protocol_version")
        .and_then(Value::as_str)
    else {
        return;
    };
    let well_formed = version.split('.').count() == 3;
    if well_formed && version != PROTOCOL_VERSION {
        out.push(Issue::new(
            &Pointer::root().child("meta").child("protocol_version"),
            IssueCode::UnsupportedProtocolVersion,
            format!(
                "Countersign speaks MPLP {PROTOCOL_VERSION}: found protocol version {}",
                quoted(version)
            ),
        ));
    }
}

/// Invariant `rejected_must_have_reason`, applied to each rejected decision.
fn rejections_have_reasons(value: &Value, out: &mut Vec<Issue>) {
    let Some(decisions) = value.get("decisions").and_then(Value::as_array) else {
        return;
    };
    for (i, decision) in decisions.iter().enumerate() {
        let rejected = decision.get("status").and_then(Value::as_str) == Some("rejected");
        let reason = decision
            .get("reason")
            .and_then(Value::as_str)
            .map(str::trim)
            .unwrap_or("");
        if rejected && reason.is_empty() {
            out.push(Issue::new(
                &Pointer::root().child("decisions").child(i).child("reason"),
                IssueCode::RejectionWithoutReason,
                "a rejected decision must say why: `reason` is missing or empty",
            ));
        }
    }
}

/// A decided confirm's status is the status of its last decision, so an
/// approval cannot be claimed (by an edited file or storage) without one in
/// the history. A pending confirm may hold decisions: a rejection before a
/// resubmission, or (as MPLP's golden flow 5 does) one not yet applied.
fn status_recorded_by_history(value: &Value, out: &mut Vec<Issue>) {
    let Some(status) = value.get("status").and_then(Value::as_str) else {
        return;
    };
    if !matches!(status, "approved" | "rejected" | "cancelled") {
        return;
    }
    let last = value
        .get("decisions")
        .and_then(Value::as_array)
        .and_then(|d| d.last())
        .and_then(|d| d.get("status"))
        .and_then(Value::as_str);
    if last != Some(status) {
        out.push(Issue::new(
            &Pointer::root().child("status"),
            IssueCode::StatusWithoutDecision,
            match last {
                None => format!("the status says {status} but the history holds no decision"),
                Some(last) => format!(
                    "the status says {status} but the last decision in the history is {last}"
                ),
            },
        ));
    }
}

/// Invariant `sa_steps_agent_role_if_present`: a given `agent_role` names a role.
fn agent_roles_named(value: &Value, out: &mut Vec<Issue>) {
    let Some(steps) = value.get("steps").and_then(Value::as_array) else {
        return;
    };
    for (i, step) in steps.iter().enumerate() {
        if step
            .get("agent_role")
            .and_then(Value::as_str)
            .is_some_and(|r| r.trim().is_empty())
        {
            out.push(Issue::new(
                &Pointer::root().child("steps").child(i).child("agent_role"),
                IssueCode::EmptyString,
                "`agent_role`, when given, must name the role responsible for the step",
            ));
        }
    }
}

fn step_id(step: &Value) -> Option<&str> {
    step.get("step_id").and_then(Value::as_str)
}

fn dependency_ids(step: &Value) -> Vec<Option<&str>> {
    step.get("dependencies")
        .and_then(Value::as_array)
        .map(|deps| deps.iter().map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Invariant `root_span_trace_id_match`.
fn root_span_in_trace(value: &Value, out: &mut Vec<Issue>) {
    let trace_id = value.get("trace_id").and_then(Value::as_str);
    let span_trace = value.pointer("/root_span/trace_id").and_then(Value::as_str);
    if let (Some(trace_id), Some(span_trace)) = (trace_id, span_trace) {
        if trace_id != span_trace {
            out.push(Issue::new(
                &Pointer::root().child("root_span").child("trace_id"),
                IssueCode::TraceMismatch,
                format!(
                    "the root span belongs to trace {span_trace}, not to this trace {trace_id}"
                ),
            ));
        }
    }
}

/// The Plan DAG rules: unique step ids, dependencies that name steps of the
/// plan, no step depending on itself, no cycles. O(n + e).
fn plan_graph(value: &Value, out: &mut Vec<Issue>) {
    let Some(steps) = value.get("steps").and_then(Value::as_array) else {
        return;
    };
    let (graph, problems) = StepGraph::build(steps.iter().map(|s| (step_id(s), dependency_ids(s))));
    let steps_path = Pointer::root().child("steps");
    let label = |i: usize| -> String {
        let description = steps[i]
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("");
        format!("step {i} {}", quoted(description))
    };
    for problem in problems {
        match problem {
            GraphProblem::DuplicateId { step, first } => out.push(Issue::new(
                &steps_path.child(step).child("step_id"),
                IssueCode::DuplicateStepId,
                format!(
                    "{} has the same step_id {} as {}: step ids must be unique",
                    label(step),
                    step_id(&steps[step]).unwrap_or_default(),
                    label(first)
                ),
            )),
            GraphProblem::UnknownDependency { step, index } => out.push(Issue::new(
                &steps_path.child(step).child("dependencies").child(index),
                IssueCode::UnknownDependency,
                format!(
                    "{} depends on {}, which is no step of this plan",
                    label(step),
                    dependency_ids(&steps[step])[index].unwrap_or_default()
                ),
            )),
            GraphProblem::SelfDependency { step, index } => out.push(Issue::new(
                &steps_path.child(step).child("dependencies").child(index),
                IssueCode::SelfDependency,
                format!("{} depends on itself", label(step)),
            )),
        }
    }
    for cycle in graph.cycles() {
        let members = &cycle.0;
        let first = members[0];
        let second = members.get(1).copied().unwrap_or(first);
        let edge = graph
            .dependencies(first)
            .iter()
            .find(|e| e.target == second)
            .map_or(0, |e| e.index);
        let mut path: Vec<String> = members.iter().map(|&i| label(i)).collect();
        path.push(label(first));
        out.push(Issue::new(
            &steps_path.child(first).child("dependencies").child(edge),
            IssueCode::DependencyCycle,
            format!(
                "steps depend on each other in a cycle, so none of them can ever start: {}",
                path.join(" → depends on ")
            ),
        ));
    }
}
