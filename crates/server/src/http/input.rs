//! What agents and reviewers send, checked field by field before anything is
//! stored: every problem is reported with its JSON Pointer, none is guessed away.

use super::body::{check_fields, kind_of, object, optional_string};
use super::error::{ApiError, Detail};
use countersign_domain::model::{ConfirmStatus, DecisionStatus, Plan};
use countersign_domain::toolcall::ToolChoice;
use countersign_domain::{validate_bundle, validate_document, DecisionInput, DocumentKind, Review};
use serde::Deserialize;
use serde_json::Value;

const TARGET_KINDS: [&str; 3] = ["plan", "context", "trace"];

/// A new review: `{"confirm": {...}, "target": {"plan": {...}}}`, valid by every
/// MPLP rule, pending and undecided.
pub fn new_review(value: &Value) -> Result<Review, ApiError> {
    let refuse = |details: Vec<Detail>| {
        ApiError::invalid(
            format!("the review was refused: {} problem(s)", details.len()),
            details,
        )
    };
    let envelope = object(value, "").map_err(|d| refuse(vec![d]))?;
    let mut details = check_fields(envelope, "", &["confirm", "target"], &["confirm"]);
    let mut documents = Vec::new();
    if let Some(confirm) = envelope.get("confirm") {
        documents.push(("/confirm".to_owned(), confirm.clone()));
    }
    if let Some(target) = envelope.get("target") {
        match object(target, "/target") {
            Err(d) => details.push(d),
            Ok(target) => {
                details.extend(check_fields(target, "/target", &TARGET_KINDS, &[]));
                if target.len() != 1 {
                    details.push(Detail::new(
                        "/target",
                        "give exactly one of `plan`, `context` or `trace`",
                    ));
                }
                for (key, document) in target
                    .iter()
                    .filter(|(k, _)| TARGET_KINDS.contains(&k.as_str()))
                {
                    let detected = DocumentKind::detect(document);
                    if detected.as_str() != key {
                        details.push(Detail::new(
                            format!("/target/{key}"),
                            format!("this is not a {key} (it looks like: {})", detected.as_str()),
                        ));
                    }
                    documents.push((format!("/target/{key}"), document.clone()));
                }
            }
        }
    }
    let values: Vec<Value> = documents.iter().map(|(_, v)| v.clone()).collect();
    for ((prefix, _), report) in documents.iter().zip(validate_bundle(&values)) {
        details.extend(report.issues.iter().map(|issue| {
            let mut detail = Detail::from(issue);
            detail.path = format!("{prefix}{}", detail.path);
            detail
        }));
    }
    if !details.is_empty() {
        return Err(refuse(details));
    }
    let mut review =
        Review::deserialize(value).map_err(|e| refuse(vec![Detail::new("", e.to_string())]))?;
    let issues = review.validate();
    if !issues.is_empty() {
        return Err(refuse(issues.iter().map(Detail::from).collect()));
    }
    if review.confirm.status != ConfirmStatus::Pending {
        details.push(Detail::new(
            "/confirm/status",
            format!(
                "a new request must be pending, not {}",
                review.confirm.status
            ),
        ));
    }
    if !review.confirm.decisions().is_empty() {
        details.push(Detail::new(
            "/confirm/decisions",
            "a new request cannot carry decisions: reviewers add them",
        ));
    }
    if let Err(e) = review.fix_target_hash() {
        // The target is the last document read (after the confirm).
        let target = documents
            .last()
            .map(|(path, _)| path.as_str())
            .filter(|path| path.starts_with("/target"))
            .unwrap_or("/target");
        details.push(Detail::new(format!("{target}{}", e.path()), e.to_string()));
    }
    if details.is_empty() {
        Ok(review)
    } else {
        Err(refuse(details))
    }
}

/// A decision as posted: the decision, and the e-mail link the desk was
/// opened from, if it was.
pub struct DecisionBody {
    /// The decision.
    pub input: DecisionInput,
    /// The `mail` parameter of a Countersign e-mail's link.
    pub mail_link: Option<String>,
}

/// A decision: `{"status", "decided_by_role", "reason"?, "tool_call"?, "mail_link"?}`.
pub fn decision(value: &Value) -> Result<DecisionBody, ApiError> {
    let refuse = |details: Vec<Detail>| ApiError::invalid("the decision was refused", details);
    let body = object(value, "").map_err(|d| refuse(vec![d]))?;
    let mut details = check_fields(
        body,
        "",
        &[
            "status",
            "decided_by_role",
            "reason",
            "tool_call",
            "mail_link",
        ],
        &["status", "decided_by_role"],
    );
    let tool_call = match body.get("tool_call") {
        None | Some(Value::Null) => None,
        Some(choice) => match ToolChoice::deserialize(choice) {
            Ok(choice) => Some(choice),
            Err(e) => {
                details.push(Detail::new(
                    "/tool_call",
                    format!("not a tool-call choice ({{\"mode\", \"scope\"?, \"whole_tool\"?, \"confirm_high_risk\"?, \"args\"?}}): {e}"),
                ));
                None
            }
        },
    };
    // Absent: the check of the fields above said so.
    let status = body.get("status").and_then(|value| {
        DecisionStatus::deserialize(value)
            .map_err(|_| {
                details.push(Detail::new(
                    "/status",
                    format!("{value} is not a decision: choose approved, rejected or cancelled"),
                ))
            })
            .ok()
    });
    let mut text = |field: &str| match optional_string(body, "", field) {
        Ok(v) => v,
        Err(d) => {
            details.push(d);
            None
        }
    };
    let decided_by_role = text("decided_by_role").unwrap_or_default();
    let reason = text("reason");
    let mail_link = text("mail_link");
    match status {
        Some(status) if details.is_empty() => Ok(DecisionBody {
            input: DecisionInput {
                status,
                decided_by_role,
                reason,
                tool_call,
            },
            mail_link,
        }),
        _ => Err(refuse(details)),
    }
}

/// A resubmission: `{"by_role", "plan"?, "reason"?}`; a revised plan must be valid.
pub struct ResubmitInput {
    /// The requester's role.
    pub by_role: String,
    /// The revised plan.
    pub plan: Option<Plan>,
    /// A new reason.
    pub reason: Option<String>,
}

/// Reads a resubmission body.
pub fn resubmission(value: &Value) -> Result<ResubmitInput, ApiError> {
    let refuse = |details: Vec<Detail>| ApiError::invalid("the resubmission was refused", details);
    let body = object(value, "").map_err(|d| refuse(vec![d]))?;
    let mut details = check_fields(body, "", &["by_role", "plan", "reason"], &["by_role"]);
    let by_role = optional_string(body, "", "by_role").unwrap_or_else(|d| {
        details.push(d);
        None
    });
    let reason = optional_string(body, "", "reason").unwrap_or_else(|d| {
        details.push(d);
        None
    });
    let mut plan = None;
    if let Some(value) = body.get("plan") {
        if !value.is_object() {
            details.push(Detail::new(
                "/plan",
                format!("expected a plan object, found {}", kind_of(value)),
            ));
        } else {
            let report = validate_document(value);
            if report.kind != DocumentKind::Plan {
                details.push(Detail::new("/plan", "this is not a plan"));
            }
            details.extend(report.issues.iter().map(|issue| {
                let mut detail = Detail::from(issue);
                detail.path = format!("/plan{}", detail.path);
                detail
            }));
            if details.is_empty() {
                plan = Some(
                    Plan::deserialize(value)
                        .map_err(|e| refuse(vec![Detail::new("/plan", e.to_string())]))?,
                );
            }
        }
    }
    if details.is_empty() {
        Ok(ResubmitInput {
            by_role: by_role.unwrap_or_default(),
            plan,
            reason,
        })
    } else {
        Err(refuse(details))
    }
}
