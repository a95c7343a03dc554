//! Validation of MPLP documents: every problem, each with a JSON Pointer, a stable
//! code and a message. Never panics, whatever the input.

mod cross;
mod rules;
mod shape;
mod shapes;

use crate::issue::{Issue, IssueCode, Pointer};
use crate::model::{Confirm, Context, Plan, Trace};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use shape::{Path, ValueShape};

/// Which MPLP module a document belongs to, detected from its fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DocumentKind {
    /// Has `confirm_id`.
    Confirm,
    /// Has `plan_id` or `steps` (and is not a trace).
    Plan,
    /// Has `context_id` or `root` and nothing more specific.
    Context,
    /// Has `trace_id` or `root_span`.
    Trace,
    /// None of the above.
    Unknown,
}

impl DocumentKind {
    /// The lowercase name (`confirm`, `plan`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            DocumentKind::Confirm => "confirm",
            DocumentKind::Plan => "plan",
            DocumentKind::Context => "context",
            DocumentKind::Trace => "trace",
            DocumentKind::Unknown => "unknown",
        }
    }

    /// Detects the kind from the identifying fields. O(1).
    pub fn detect(value: &Value) -> DocumentKind {
        let Some(map) = value.as_object() else {
            return DocumentKind::Unknown;
        };
        let has = |k: &str| map.contains_key(k);
        if has("confirm_id") {
            DocumentKind::Confirm
        } else if has("trace_id") || has("root_span") {
            DocumentKind::Trace
        } else if has("plan_id") || has("steps") {
            DocumentKind::Plan
        } else if has("context_id") || has("root") {
            DocumentKind::Context
        } else {
            DocumentKind::Unknown
        }
    }

    fn shape(self) -> Option<&'static shape::ObjectShape> {
        match self {
            DocumentKind::Confirm => Some(&shapes::CONFIRM),
            DocumentKind::Plan => Some(&shapes::PLAN),
            DocumentKind::Context => Some(&shapes::CONTEXT),
            DocumentKind::Trace => Some(&shapes::TRACE),
            DocumentKind::Unknown => None,
        }
    }
}

/// The outcome of validating one document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// What the document is.
    pub kind: DocumentKind,
    /// Every problem found; empty when valid.
    pub issues: Vec<Issue>,
}

impl Report {
    /// Whether no problem was found.
    pub fn is_valid(&self) -> bool {
        self.issues.is_empty()
    }
}

/// A schema-valid MPLP document, typed.
#[derive(Debug, Clone, PartialEq)]
pub enum Document {
    /// A Confirm.
    Confirm(Confirm),
    /// A Plan.
    Plan(Plan),
    /// A Context.
    Context(Context),
    /// A Trace.
    Trace(Trace),
}

impl Document {
    /// Types a JSON value that passes its schema. Rule problems such as a cycle do
    /// not prevent typing (a reviewer must still see such a plan); schema problems
    /// do, and are all returned.
    pub fn from_value(value: &Value) -> Result<Document, Report> {
        let kind = DocumentKind::detect(value);
        let issues = schema_issues(value, kind);
        if !issues.is_empty() {
            return Err(Report { kind, issues });
        }
        let typed = match kind {
            DocumentKind::Confirm => crate::json::typed(value).map(Document::Confirm),
            DocumentKind::Plan => crate::json::typed(value).map(Document::Plan),
            DocumentKind::Context => crate::json::typed(value).map(Document::Context),
            DocumentKind::Trace => crate::json::typed(value).map(Document::Trace),
            DocumentKind::Unknown => unreachable_kind(),
        };
        typed.map_err(|e| Report {
            kind,
            issues: vec![Issue::new(
                &Pointer::root(),
                IssueCode::WrongType,
                e.to_string(),
            )],
        })
    }

    /// The document as JSON.
    pub fn to_value(&self) -> Value {
        let result = match self {
            Document::Confirm(d) => serde_json::to_value(d),
            Document::Plan(d) => serde_json::to_value(d),
            Document::Context(d) => serde_json::to_value(d),
            Document::Trace(d) => serde_json::to_value(d),
        };
        // Serializing these types cannot fail: every map key is a string.
        result.unwrap_or(Value::Null)
    }
}

/// Unknown documents always carry a schema issue, so typing never reaches them.
fn unreachable_kind() -> Result<Document, serde_json::Error> {
    Err(serde::de::Error::custom(
        "not an MPLP Confirm, Plan, Context or Trace",
    ))
}

/// Validates one document: its schema, then the module's rules and invariants.
pub fn validate_document(value: &Value) -> Report {
    let kind = DocumentKind::detect(value);
    let mut issues = schema_issues(value, kind);
    rules::check(value, kind, &mut issues);
    Report { kind, issues }
}

/// Validates documents that travel together (an imported array, a review bundle):
/// each one alone, then the references between them (a confirm's target is the
/// plan in the bundle, a plan's context is the context in the bundle, ...).
pub fn validate_bundle(values: &[Value]) -> Vec<Report> {
    let mut reports: Vec<Report> = values.iter().map(validate_document).collect();
    cross::check(values, &mut reports);
    reports
}

/// Validates a learning sample against the core schema and the learning invariants.
pub fn validate_learning_sample(value: &Value) -> Vec<Issue> {
    let mut issues = Vec::new();
    shape::check(
        value,
        &ValueShape::Object(&shapes::LEARNING_SAMPLE),
        &Path::Root,
        &mut issues,
    );
    issues
}

fn schema_issues(value: &Value, kind: DocumentKind) -> Vec<Issue> {
    let mut issues = Vec::new();
    match kind.shape() {
        Some(object) => shape::check(value, &ValueShape::Object(object), &Path::Root, &mut issues),
        None if value.is_object() => issues.push(Issue::new(
            &Pointer::root(),
            IssueCode::UnknownKind,
            "not an MPLP Confirm, Plan, Context or Trace: it has none of confirm_id, plan_id, trace_id, context_id",
        )),
        None => shape::check(value, &ValueShape::AnyObject, &Path::Root, &mut issues),
    }
    issues
}
