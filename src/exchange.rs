//! Import and export as plain MPLP JSON: a review travels as its documents
//! (`[confirm, plan]`; a tool call's confirm alone), so any MPLP tool, `countersign validate` included, reads
//! the files Countersign writes, and Countersign reads theirs.

use countersign_domain::model::{Confirm, TargetType};
use countersign_domain::review::learning_sample;
use countersign_domain::toolcall::{new_tool_call_review, ToolCallSubmission};
use countersign_domain::{
    validate_bundle, Document, DocumentKind, Issue, IssueCode, MplpId, Pointer, Review, Target,
};
use serde_json::Value;
use std::collections::HashSet;

/// The MPLP documents of a review: the confirm, then its target.
pub fn documents(review: &Review) -> Vec<Value> {
    let mut docs = vec![serde_json::to_value(&review.confirm).unwrap_or(Value::Null)];
    let target = match &review.target {
        Some(Target::Plan(p)) => serde_json::to_value(p),
        Some(Target::Context(c)) => serde_json::to_value(c),
        Some(Target::Trace(t)) => serde_json::to_value(t),
        // A tool-call request is not an MPLP document: the confirm travels alone.
        Some(Target::ToolCall(_)) | None => return docs,
    };
    docs.push(target.unwrap_or(Value::Null));
    docs
}

/// Every review as one JSON array of MPLP documents, pretty-printed.
pub fn export_all(reviews: &[&Review]) -> String {
    let docs: Vec<Value> = reviews.iter().flat_map(|r| documents(r)).collect();
    serde_json::to_string_pretty(&docs).unwrap_or_default()
}

/// One learning sample per decided review, one JSON object per line.
pub fn learning_samples_ndjson(reviews: &[&Review]) -> String {
    let mut ids = crate::browser::new_id;
    let now = crate::browser::now();
    reviews
        .iter()
        .filter_map(|r| learning_sample(r, now, &mut ids))
        .filter_map(|s| serde_json::to_value(&s).ok())
        .map(|v| v.to_string())
        .map(|line| line + "\n")
        .collect()
}

/// What one imported file gave.
#[derive(Debug, Default)]
pub struct ImportReport {
    /// Reviews that passed every check.
    pub accepted: Vec<Review>,
    /// Documents refused, each with every problem (paths into the file).
    pub refused: Vec<Issue>,
    /// Documents checked but not stored (contexts, traces), by kind.
    pub checked_only: Vec<DocumentKind>,
}

/// Reads one file's text: a Confirm, Plan, Context or Trace, an array of them,
/// Countersign's own `{confirm, target}` envelope, or tool-call requests. Confirms are paired with
/// the plans they name; a review is accepted only when the confirm, its target
/// and the pair are all valid and it is not already stored (`known`).
pub fn import(text: &str, known: &HashSet<MplpId>) -> Result<ImportReport, String> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| format!("not JSON: {e} (line {}, column {})", e.line(), e.column()))?;
    let (docs, paths, calls) = flatten(value);
    let mut report = ImportReport::default();
    if docs.is_empty() && calls.is_empty() {
        return Err("the file holds no MPLP document and no tool-call request".to_owned());
    }
    for (call, at) in calls {
        match tool_call_review(call) {
            Ok(review) => report.accepted.push(review),
            Err(issues) => report
                .refused
                .extend(issues.into_iter().map(|issue| issue.under(&at))),
        }
    }
    let reports = validate_bundle(&docs);
    let mut paired = vec![false; docs.len()];
    for (i, (doc, r)) in docs.iter().zip(&reports).enumerate() {
        let under = |issue: Issue| issue.under(&paths[i]);
        match r.kind {
            DocumentKind::Confirm => {
                let plan_index = plan_of(doc, &docs, &reports);
                if let Some(p) = plan_index {
                    paired[p] = true;
                }
                let mut problems: Vec<Issue> = r.issues.iter().cloned().map(under).collect();
                if let Some(p) = plan_index {
                    problems.extend(
                        reports[p]
                            .issues
                            .iter()
                            .cloned()
                            .map(|issue| issue.under(&paths[p])),
                    );
                }
                if !problems.is_empty() {
                    report.refused.extend(problems);
                    continue;
                }
                let review = match build_review(doc, plan_index.map(|p| &docs[p])) {
                    Ok(review) => review,
                    Err(problems) => {
                        report.refused.extend(problems.into_iter().map(under));
                        continue;
                    }
                };
                let pair_problems = review.validate();
                if !pair_problems.is_empty() {
                    report.refused.extend(pair_problems.into_iter().map(under));
                } else if known.contains(&review.confirm.confirm_id) {
                    report.refused.push(Issue::new(
                        &paths[i].child("confirm_id"),
                        IssueCode::DuplicateItem,
                        format!(
                            "review {} is already here; importing it again would overwrite its decision history",
                            review.confirm.confirm_id
                        ),
                    ));
                } else {
                    report.accepted.push(review);
                }
            }
            DocumentKind::Plan
            | DocumentKind::Context
            | DocumentKind::Trace
            | DocumentKind::Unknown => {}
        }
    }
    for (i, r) in reports.iter().enumerate() {
        match r.kind {
            DocumentKind::Plan if !paired[i] => {
                report
                    .refused
                    .extend(r.issues.iter().cloned().map(|issue| issue.under(&paths[i])));
                report.refused.push(Issue::new(
                    &paths[i],
                    IssueCode::MissingTarget,
                    "no Confirm in this file asks about this plan, so there is nothing to review: import it together with its Confirm",
                ));
            }
            DocumentKind::Context | DocumentKind::Trace => {
                if r.is_valid() {
                    report.checked_only.push(r.kind);
                } else {
                    report
                        .refused
                        .extend(r.issues.iter().cloned().map(|issue| issue.under(&paths[i])));
                }
            }
            DocumentKind::Unknown => report
                .refused
                .extend(r.issues.iter().cloned().map(|issue| issue.under(&paths[i]))),
            _ => {}
        }
    }
    Ok(report)
}

/// A tool-call request (the protocol's approval request, as agents send it)
/// as a new pending review.
fn tool_call_review(value: Value) -> Result<Review, Vec<Issue>> {
    let submission =
        countersign_domain::json::typed::<ToolCallSubmission>(&value).map_err(|e| {
            vec![Issue::new(
                &Pointer::root(),
                IssueCode::WrongType,
                format!("not a tool-call request: {e}"),
            )]
        })?;
    new_tool_call_review(
        submission,
        crate::browser::now(),
        &mut crate::browser::new_id,
    )
}

/// The documents of a file and where each sits in it, and its tool-call
/// requests (objects with a `toolCall`) apart.
#[allow(clippy::type_complexity)]
fn flatten(value: Value) -> (Vec<Value>, Vec<Pointer>, Vec<(Value, Pointer)>) {
    let mut docs = Vec::new();
    let mut paths = Vec::new();
    let mut calls = Vec::new();
    let mut push = |v: Value, at: Pointer| match v {
        Value::Object(map) if map.contains_key("toolCall") => calls.push((Value::Object(map), at)),
        Value::Object(mut map)
            if map.contains_key("confirm") && !map.contains_key("confirm_id") =>
        {
            if let Some(confirm) = map.remove("confirm") {
                docs.push(confirm);
                paths.push(at.child("confirm"));
            }
            if let Some(Value::Object(target)) = map.remove("target") {
                for (kind, doc) in target {
                    docs.push(doc);
                    paths.push(at.child("target").child(kind));
                }
            }
        }
        other => {
            docs.push(other);
            paths.push(at);
        }
    };
    match value {
        Value::Array(items) => {
            for (i, item) in items.into_iter().enumerate() {
                push(item, Pointer::root().child(i));
            }
        }
        other => push(other, Pointer::root()),
    }
    (docs, paths, calls)
}

fn plan_of(
    confirm: &Value,
    docs: &[Value],
    reports: &[countersign_domain::Report],
) -> Option<usize> {
    if confirm.get("target_type").and_then(Value::as_str) != Some(TargetType::Plan.as_str()) {
        return None;
    }
    let target = confirm.get("target_id").and_then(Value::as_str)?;
    docs.iter().zip(reports).position(|(d, r)| {
        r.kind == DocumentKind::Plan && d.get("plan_id").and_then(Value::as_str) == Some(target)
    })
}

fn build_review(confirm: &Value, plan: Option<&Value>) -> Result<Review, Vec<Issue>> {
    let confirm: Confirm = match Document::from_value(confirm) {
        Ok(Document::Confirm(c)) => c,
        Ok(_) => return Err(vec![]),
        Err(report) => return Err(report.issues),
    };
    let target = match plan.map(Document::from_value) {
        Some(Ok(Document::Plan(p))) => Some(Target::Plan(p)),
        Some(Err(report)) => return Err(report.issues),
        _ => None,
    };
    Ok(Review {
        confirm,
        target,
        deciders: Vec::new(),
        requester: None,
        escalate_at: None,
        target_sha256: None,
    })
}
