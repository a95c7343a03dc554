//! Answers: what each shape takes, the check of a `per_call` answer against
//! its interrupt's `response_schema`, the body of the run that resumes a
//! thread, and how a finished run says it failed.

use super::{Agent, Answer, PendingInterrupt, Shape};
use crate::toolcall::{OutcomeKind, ToolOutcome};
use serde_json::{json, Map, Value};

/// Why an answer cannot be sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerRefused {
    /// The interrupt does not take this kind of answer.
    #[error("this interrupt does not take that answer; it allows: {allowed}")]
    NotAllowed {
        /// The answers it takes, by their protocol names.
        allowed: String,
    },
    /// The approved call could not be read back.
    #[error("the approved call is not JSON: {0}")]
    BadCall(String),
    /// The interrupt's `response_schema` refuses the answer.
    #[error("the agent would refuse this answer: {}", .0.join("; "))]
    Schema(Vec<String>),
    /// The interrupt's `response_schema` is not a usable JSON Schema.
    #[error("the agent's response schema for this call cannot be read ({0}), so no answer can be checked or sent")]
    UnreadableSchema(String),
    /// The thread names no assistant.
    #[error("this thread does not say which assistant runs it, and Countersign will not guess which agent to resume it with")]
    NoAgent,
}

impl PendingInterrupt {
    /// This action's part of the resume value for a recorded outcome: approved
    /// -> accept / approve; edited -> edit with the approved call's arguments;
    /// denied -> reject with the reason; feedback -> respond with it (the
    /// reply stands in for the tool's result); cancelled -> ignore. A `per_call`
    /// answer is checked against its interrupt's `response_schema`.
    pub fn answer_for(&self, outcome: &ToolOutcome) -> Result<Value, AnswerRefused> {
        let message = outcome.message.as_deref();
        let (answer, edited) = match outcome.kind {
            OutcomeKind::Approved => (self.first_allowed(&[Answer::Accept, Answer::Approve]), None),
            OutcomeKind::Edited => {
                let call: Value = outcome
                    .approved_call
                    .as_deref()
                    .map(serde_json::from_str)
                    .transpose()
                    .map_err(|e| AnswerRefused::BadCall(e.to_string()))?
                    .unwrap_or(Value::Null);
                let args = call["args"].as_object().cloned();
                (
                    self.first_allowed(&[Answer::Edit, Answer::EditAction]),
                    args,
                )
            }
            OutcomeKind::Denied => (self.first_allowed(&[Answer::Reject]), None),
            OutcomeKind::Feedback => (self.first_allowed(&[Answer::Respond, Answer::Reply]), None),
            OutcomeKind::Cancelled => (self.first_allowed(&[Answer::Ignore]), None),
            // Not decided by a reviewer: nothing to send LangGraph.
            OutcomeKind::Expired | OutcomeKind::Withdrawn => (None, None),
        };
        let value = answer
            .and_then(|a| self.answer(a, edited.as_ref(), message))
            .ok_or_else(|| AnswerRefused::NotAllowed {
                allowed: self
                    .allowed
                    .iter()
                    .map(|a| a.verb())
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        self.check_answer(&value)?;
        Ok(value)
    }

    fn first_allowed(&self, answers: &[Answer]) -> Option<Answer> {
        answers.iter().copied().find(|a| self.allowed.contains(a))
    }

    /// This action's part of the resume value: `edited` holds the edited
    /// arguments (the tool's name is kept), `text` the response or rejection
    /// message. `None` when the interrupt does not allow `answer`.
    pub fn answer(
        &self,
        answer: Answer,
        edited: Option<&Map<String, Value>>,
        text: Option<&str>,
    ) -> Option<Value> {
        if !self.allowed.contains(&answer) {
            return None;
        }
        let args = || Value::Object(edited.cloned().unwrap_or_else(|| self.args.clone()));
        let text = text.unwrap_or_default();
        Some(match answer {
            Answer::Accept => json!({"type": "accept", "args": null}),
            Answer::Edit => json!({"type": "edit", "args": {"action": self.name, "args": args()}}),
            // A value in no known shape gets the reviewer's text itself.
            Answer::Respond if matches!(self.shape, Shape::Unrecognized { .. }) => {
                Value::String(text.to_owned())
            }
            Answer::Respond => json!({"type": "response", "args": text}),
            Answer::Ignore => json!({"type": "ignore", "args": null}),
            Answer::Approve => json!({"type": "approve"}),
            Answer::EditAction => {
                json!({"type": "edit", "edited_action": {"name": self.name, "args": args()}})
            }
            Answer::Reject => json!({"type": "reject", "message": text}),
            Answer::Reply => json!({"type": "respond", "message": text}),
        })
    }

    /// Checks an answer against the interrupt's `response_schema` (`per_call`
    /// only; other shapes carry none), as the agent will when it resumes: the
    /// branch its `type` names, so each problem names the field it is about.
    pub fn check_answer(&self, answer: &Value) -> Result<(), AnswerRefused> {
        let Shape::ToolApproval {
            response_schema: Some(schema),
            ..
        } = &self.shape
        else {
            return Ok(());
        };
        let branch = match schema["discriminator"]["mapping"].as_object() {
            Some(mapping) => {
                let Some(target) = answer["type"].as_str().and_then(|t| mapping.get(t)) else {
                    return Err(AnswerRefused::NotAllowed {
                        allowed: mapping.keys().cloned().collect::<Vec<_>>().join(", "),
                    });
                };
                let mut branch = schema.clone();
                if let Some(root) = branch.as_object_mut() {
                    root.remove("oneOf");
                    root.remove("discriminator");
                    root.insert("$ref".into(), target.clone());
                }
                branch
            }
            None => schema.clone(),
        };
        let validator = jsonschema::draft202012::new(&branch)
            .map_err(|e| AnswerRefused::UnreadableSchema(e.to_string()))?;
        let problems: Vec<String> = validator
            .iter_errors(answer)
            .map(|e| {
                // The value itself when short ("5000 is greater than ..."), else "value".
                let full = e.to_string();
                let said = if full.len() <= 160 {
                    full
                } else {
                    e.masked().to_string()
                };
                format!("{}: {said}", field(e.instance_path().as_str()))
            })
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(AnswerRefused::Schema(problems))
        }
    }
}

/// A reviewer's name for a place in an answer (`/edited_action/args/limit`).
fn field(pointer: &str) -> String {
    match pointer {
        "" => "the answer".into(),
        "/message" => "the message".into(),
        "/edited_action/name" => "the tool's name".into(),
        "/edited_action/args" => "the arguments".into(),
        other => match other.strip_prefix("/edited_action/args/") {
            Some(arg) => format!("argument `{arg}`"),
            None => format!("`{other}`"),
        },
    }
}

/// `branch` with a local `$ref` (`#/$defs/X`) resolved within `root`.
pub(super) fn resolve<'a>(root: &'a Value, branch: &'a Value) -> &'a Value {
    match branch["$ref"].as_str().and_then(|r| r.strip_prefix('#')) {
        Some(pointer) => root.pointer(pointer).unwrap_or(&Value::Null),
        None => branch,
    }
}

/// The value resuming one interrupt from the answers of all its actions (in
/// their order): a list for the human-interrupt shape (a bare response when the
/// value was not a list), `{decisions}` for the batched middleware, the one
/// decision for a `per_call` approval.
pub fn resume_value(shape: &Shape, answers: Vec<Value>) -> Value {
    match shape {
        Shape::Middleware { .. } => json!({"decisions": answers}),
        Shape::HumanInterrupt { list: false }
        | Shape::Unrecognized { .. }
        | Shape::ToolApproval { .. } => answers.into_iter().next().unwrap_or(Value::Null),
        Shape::HumanInterrupt { list: true } => Value::Array(answers),
    }
}

/// The body of `POST /threads/{thread_id}/runs` that resumes a thread: run by
/// the assistant that owns it, each resume value keyed by its interrupt's id
/// (an unkeyed value would answer whichever interrupt waits when it arrives;
/// several interrupts of one thread are answered by one run), and refused by
/// the server while another run is going on (`multitask_strategy: reject`).
pub fn resume_run(agent: &Agent, answers: impl IntoIterator<Item = (String, Value)>) -> Value {
    let resume: Map<String, Value> = answers.into_iter().collect();
    json!({
        "assistant_id": agent.assistant_id,
        "command": {"resume": resume},
        "multitask_strategy": "reject",
    })
}

/// The failure a finished run reports in the body of its `join`
/// (`{"__error__": {"error", "message"}}`), if any.
pub fn run_failure(joined: &Value) -> Option<String> {
    joined
        .get("__error__")
        .map(|e| error_text(e).unwrap_or_else(|| "the run failed and gave no reason".into()))
}

/// LangGraph's error value as text: `Type: message`.
pub(super) fn error_text(error: &Value) -> Option<String> {
    match error {
        Value::Null => None,
        Value::String(text) => Some(text.clone()),
        Value::Object(fields) => {
            let kind = fields.get("error").and_then(Value::as_str);
            let message = fields.get("message").and_then(Value::as_str);
            Some(match (kind, message) {
                (Some(kind), Some(message)) => format!("{kind}: {message}"),
                (Some(one), None) | (None, Some(one)) => one.to_owned(),
                (None, None) => error.to_string(),
            })
        }
        other => Some(other.to_string()),
    }
}
