//! Cross-document invariants for documents that travel together:
//! `confirm_target_match`, `plan_context_id_match`, `root_span_context_id_match`
//! and the trace's plan and context bindings.

use super::{DocumentKind, Report};
use crate::issue::{Issue, IssueCode, Pointer};
use serde_json::Value;

/// Appends reference problems between `values` to their `reports`.
pub(super) fn check(values: &[Value], reports: &mut [Report]) {
    let ids_of = |kind: DocumentKind, field: &str| -> Vec<&str> {
        values
            .iter()
            .zip(reports.iter())
            .filter(|(_, r)| r.kind == kind)
            .filter_map(|(v, _)| v.get(field).and_then(Value::as_str))
            .collect()
    };
    let plans = ids_of(DocumentKind::Plan, "plan_id");
    let contexts = ids_of(DocumentKind::Context, "context_id");
    for (value, report) in values.iter().zip(reports.iter_mut()) {
        let mut expect = |pointer: &str, among: &[&str], code: IssueCode, what: &str| {
            if among.is_empty() {
                return;
            }
            if let Some(id) = value.pointer(pointer).and_then(Value::as_str) {
                if !among.contains(&id) {
                    let path = pointer
                        .split('/')
                        .skip(1)
                        .fold(Pointer::root(), |p, t| p.child(t));
                    report.issues.push(Issue::new(
                        &path,
                        code,
                        format!(
                            "{id} is not the {what} it travels with ({})",
                            among.join(", ")
                        ),
                    ));
                }
            }
        };
        match report.kind {
            DocumentKind::Confirm => {
                if value.get("target_type").and_then(Value::as_str) == Some("plan") {
                    expect("/target_id", &plans, IssueCode::TargetMismatch, "plan");
                }
            }
            DocumentKind::Plan => expect(
                "/context_id",
                &contexts,
                IssueCode::ContextMismatch,
                "context",
            ),
            DocumentKind::Trace => {
                expect(
                    "/context_id",
                    &contexts,
                    IssueCode::ContextMismatch,
                    "context",
                );
                expect(
                    "/root_span/context_id",
                    &contexts,
                    IssueCode::ContextMismatch,
                    "context",
                );
                expect("/plan_id", &plans, IssueCode::PlanMismatch, "plan");
            }
            DocumentKind::Context | DocumentKind::Unknown => {}
        }
    }
}
