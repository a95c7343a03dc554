//! LangGraph interrupts as reviews: every pending interrupt of an interrupted
//! thread (as `POST /threads/search` returns it) becomes one tool-call review,
//! in either shape in use, and a reviewer's answer becomes the value that
//! resumes the thread (`command.resume`).
//!
//! - the "human interrupt" shape: `{action_request: {action, args}, config:
//!   {allow_accept, allow_edit, allow_respond, allow_ignore}, description}`,
//!   possibly a list of them; answered with `[{type: accept|edit|response|ignore, args}]`;
//! - the human-in-the-loop middleware shape: `{action_requests: [{name, args,
//!   description}], review_configs: [{action_name, allowed_decisions}]}`;
//!   answered with `{decisions: [{type: approve} | {type: edit, edited_action} |
//!   {type: reject, message}]}`, one per action request, in order.
//!
//! A value in neither shape is kept as raw JSON with a note, never dropped.

use crate::toolcall::{
    new_tool_call_review, OutcomeKind, RiskTier, ToolCallSubmission, ToolOutcome,
};
use crate::{Issue, MplpId, Review, Timestamp};
use chrono::{DateTime, Duration, Utc};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

/// The tool name given to an interrupt in neither known shape.
pub const RAW_INTERRUPT: &str = "langgraph_interrupt";

/// How an interrupt may be answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Answer {
    /// Human interrupt: run as asked.
    Accept,
    /// Human interrupt: run with edited arguments.
    Edit,
    /// Human interrupt: reply with text instead of running.
    Respond,
    /// Human interrupt: skip it.
    Ignore,
    /// Middleware: run as asked.
    Approve,
    /// Middleware: run with edited arguments.
    EditAction,
    /// Middleware: do not run, with a message for the agent.
    Reject,
}

impl Answer {
    /// The answer's name in its protocol (`accept`, `edit`, `response`, ...).
    pub fn verb(self) -> &'static str {
        match self {
            Answer::Accept => "accept",
            Answer::Edit | Answer::EditAction => "edit",
            Answer::Respond => "response",
            Answer::Ignore => "ignore",
            Answer::Approve => "approve",
            Answer::Reject => "reject",
        }
    }
}

/// Which shape an interrupt came in.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// The human-interrupt shape; `list` when the value was a list of them.
    HumanInterrupt {
        /// Whether the value was a list (the answer is then a list too).
        list: bool,
    },
    /// The middleware shape; `count` action requests are answered together.
    Middleware {
        /// How many action requests the interrupt holds.
        count: usize,
    },
    /// Neither: the raw value is shown as it is.
    Unrecognized {
        /// What is wrong with it.
        note: String,
    },
}

/// One action waiting for a human in an interrupted thread.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingInterrupt {
    /// The thread.
    pub thread_id: String,
    /// The interrupt's id (resumes are keyed by it when a thread has several).
    pub interrupt_id: String,
    /// The action's position within the interrupt's value.
    pub index: usize,
    /// The shape it came in.
    pub shape: Shape,
    /// The tool and its arguments (the raw value for unrecognized shapes).
    pub name: String,
    /// The arguments.
    pub args: Map<String, Value>,
    /// The agent's description (markdown), if any.
    pub description: Option<String>,
    /// The answers the interrupt allows.
    pub allowed: Vec<Answer>,
    /// When the thread last changed.
    pub updated_at: Option<String>,
}

/// Every pending interrupt of one thread, in order. O(size of the thread).
pub fn pending_interrupts(thread: &Value) -> Vec<PendingInterrupt> {
    let thread_id = thread["thread_id"].as_str().unwrap_or_default().to_owned();
    let updated_at = thread["updated_at"].as_str().map(str::to_owned);
    // `interrupts` maps task ids to lists of `{id, value}`; older servers list them.
    let entries: Vec<&Value> = match &thread["interrupts"] {
        Value::Object(tasks) => tasks.values().flat_map(list).collect(),
        Value::Array(items) => items.iter().collect(),
        _ => Vec::new(),
    };
    let mut found = Vec::new();
    for entry in entries {
        let interrupt_id = entry["id"]
            .as_str()
            .or(entry["interrupt_id"].as_str())
            .unwrap_or_default()
            .to_owned();
        let base = PendingInterrupt {
            thread_id: thread_id.clone(),
            interrupt_id,
            index: 0,
            shape: Shape::HumanInterrupt { list: false },
            name: String::new(),
            args: Map::new(),
            description: None,
            allowed: Vec::new(),
            updated_at: updated_at.clone(),
        };
        found.extend(understand(&entry["value"], base));
    }
    found
}

fn list(value: &Value) -> Vec<&Value> {
    value
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

/// The actions of one interrupt value.
fn understand(value: &Value, base: PendingInterrupt) -> Vec<PendingInterrupt> {
    if let Some(requests) = value.get("action_requests").and_then(Value::as_array) {
        let configs = list(&value["review_configs"]);
        let count = requests.len();
        let parsed: Option<Vec<PendingInterrupt>> = requests
            .iter()
            .enumerate()
            .map(|(index, request)| {
                let name = request["name"].as_str()?.to_owned();
                let allowed_names = configs
                    .iter()
                    .find(|c| c["action_name"].as_str() == Some(name.as_str()))
                    .map(|c| list(&c["allowed_decisions"]))
                    .unwrap_or_default();
                let allowed = allowed_names
                    .iter()
                    .filter_map(|d| match d.as_str() {
                        Some("approve") => Some(Answer::Approve),
                        Some("edit") => Some(Answer::EditAction),
                        Some("reject") => Some(Answer::Reject),
                        _ => None,
                    })
                    .collect();
                Some(PendingInterrupt {
                    index,
                    shape: Shape::Middleware { count },
                    args: request["args"].as_object().cloned().unwrap_or_default(),
                    description: request["description"].as_str().map(str::to_owned),
                    name,
                    allowed,
                    ..base.clone()
                })
            })
            .collect();
        if let Some(parsed) = parsed.filter(|p| !p.is_empty()) {
            return parsed;
        }
        return vec![raw(
            value,
            base,
            "an `action_requests` list whose items lack a `name`",
        )];
    }
    let (items, is_list) = match value {
        Value::Array(items) if !items.is_empty() => (items.iter().collect::<Vec<_>>(), true),
        other => (vec![other], false),
    };
    let parsed: Option<Vec<PendingInterrupt>> = items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let request = item.get("action_request")?;
            let name = request["action"].as_str()?.to_owned();
            let config = &item["config"];
            let allowed = [
                ("allow_accept", Answer::Accept),
                ("allow_edit", Answer::Edit),
                ("allow_respond", Answer::Respond),
                ("allow_ignore", Answer::Ignore),
            ]
            .into_iter()
            .filter(|(flag, _)| config[*flag].as_bool() == Some(true))
            .map(|(_, answer)| answer)
            .collect();
            Some(PendingInterrupt {
                index,
                shape: Shape::HumanInterrupt { list: is_list },
                args: request["args"].as_object().cloned().unwrap_or_default(),
                description: item["description"].as_str().map(str::to_owned),
                name,
                allowed,
                ..base.clone()
            })
        })
        .collect();
    match parsed {
        Some(parsed) => parsed,
        None => vec![raw(
            value,
            base,
            "neither the human-interrupt shape ({action_request, config}) nor the middleware shape ({action_requests, review_configs})",
        )],
    }
}

fn raw(value: &Value, base: PendingInterrupt, why: &str) -> PendingInterrupt {
    let mut args = Map::new();
    args.insert("value".into(), value.clone());
    PendingInterrupt {
        shape: Shape::Unrecognized {
            note: format!(
                "This interrupt is in an unknown shape ({why}); its value is shown as raw JSON."
            ),
        },
        name: RAW_INTERRUPT.into(),
        args,
        allowed: vec![Answer::Respond],
        ..base
    }
}

impl PendingInterrupt {
    /// A stable id for this action (the same on every poll), so the review of an
    /// interrupt keeps its URL and history. A UUID v4 layout over SHA-256.
    pub fn approval_id(&self) -> MplpId {
        self.stable_id("approval")
    }

    /// An id derived from this action and `what`: the same on every poll.
    fn stable_id(&self, what: &str) -> MplpId {
        let digest = Sha256::digest(
            format!(
                "{}\n{}\n{}\n{what}",
                self.thread_id, self.interrupt_id, self.index
            )
            .as_bytes(),
        );
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(&digest[..16]);
        MplpId::from_random_bytes(bytes)
    }

    /// The interrupt as a pending tool-call review, the same on every poll (its
    /// ids derive from the thread, interrupt and position). Interrupts do not
    /// expire, so the request is open for 30 days from when the thread last
    /// changed; the risk tier is R2 (LangGraph gives none).
    pub fn to_review(&self, now: DateTime<Utc>) -> Result<Review, Vec<Issue>> {
        let requested = self
            .updated_at
            .as_deref()
            .and_then(|t| Timestamp::parse(t).ok())
            .map_or(now, |t| t.to_utc());
        let summary = match (&self.shape, &self.description) {
            (Shape::Unrecognized { note }, _) => note.clone(),
            (_, Some(d)) if !d.trim().is_empty() => d.clone(),
            _ => format!("{} {}", self.name, Value::Object(self.args.clone())),
        };
        let submission = ToolCallSubmission {
            approval_id: Some(self.approval_id()),
            session_id: self.thread_id.clone(),
            run_id: self.interrupt_id.clone(),
            workspace: None,
            client_device_id: None,
            tool_call: json!({"name": self.name, "args": self.args}),
            human_summary: summary,
            risk_tier: RiskTier::R2,
            risk_reasons: vec!["asked by a LangGraph interrupt, which gives no risk tier".into()],
            side_effects: Vec::new(),
            rollback_notes: Vec::new(),
            expires_at: Some(Timestamp::from_utc(requested + Duration::days(30))),
            diff: None,
            suggested_alternatives: Vec::new(),
            dry_run: None,
            reason: Some(format!(
                "LangGraph thread {} asks: {}",
                self.thread_id, self.name
            )),
            requested_by_role: "langgraph-agent".into(),
        };
        let mut count = 0;
        let mut ids = || {
            count += 1;
            self.stable_id(&format!("id {count}"))
        };
        new_tool_call_review(submission, requested, &mut ids)
    }

    /// This action's part of the resume value for a recorded outcome: approved
    /// -> accept / approve; edited -> edit with the approved call's arguments;
    /// denied -> reject with the reason; feedback -> respond with it;
    /// cancelled -> ignore. Says which answers the interrupt takes otherwise.
    pub fn answer_for(&self, outcome: &ToolOutcome) -> Result<Value, String> {
        let message = outcome.message.as_deref();
        let (answer, edited) = match outcome.kind {
            OutcomeKind::Approved => (self.first_allowed(&[Answer::Accept, Answer::Approve]), None),
            OutcomeKind::Edited => {
                let call: Value = outcome
                    .approved_call
                    .as_deref()
                    .map(serde_json::from_str)
                    .transpose()
                    .map_err(|e| format!("the approved call is not JSON: {e}"))?
                    .unwrap_or(Value::Null);
                let args = call["args"].as_object().cloned();
                (
                    self.first_allowed(&[Answer::Edit, Answer::EditAction]),
                    args,
                )
            }
            OutcomeKind::Denied => (self.first_allowed(&[Answer::Reject]), None),
            OutcomeKind::Feedback => (self.first_allowed(&[Answer::Respond, Answer::Reject]), None),
            OutcomeKind::Cancelled => (self.first_allowed(&[Answer::Ignore]), None),
            OutcomeKind::Expired => (None, None),
        };
        answer
            .and_then(|a| self.answer(a, edited.as_ref(), message))
            .ok_or_else(|| {
                let allowed: Vec<&str> = self.allowed.iter().map(|a| a.verb()).collect();
                format!(
                    "this interrupt does not take that answer; it allows: {}",
                    allowed.join(", ")
                )
            })
    }

    fn first_allowed(&self, answers: &[Answer]) -> Option<Answer> {
        answers.iter().copied().find(|a| self.allowed.contains(a))
    }

    /// This action's part of the resume value: `edited` holds the edited
    /// arguments, `text` the response or rejection message. `None` when the
    /// interrupt does not allow `answer`.
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
        Some(match answer {
            Answer::Accept => json!({"type": "accept", "args": null}),
            Answer::Edit => json!({"type": "edit", "args": {"action": self.name, "args": args()}}),
            // A value in neither shape gets the reviewer's text itself.
            Answer::Respond if matches!(self.shape, Shape::Unrecognized { .. }) => {
                Value::String(text.unwrap_or_default().to_owned())
            }
            Answer::Respond => json!({"type": "response", "args": text.unwrap_or_default()}),
            Answer::Ignore => json!({"type": "ignore", "args": null}),
            Answer::Approve => json!({"type": "approve"}),
            Answer::EditAction => {
                json!({"type": "edit", "edited_action": {"name": self.name, "args": args()}})
            }
            Answer::Reject => json!({"type": "reject", "message": text.unwrap_or_default()}),
        })
    }
}

/// The value resuming one interrupt from the answers of all its actions (in
/// their order): a list for the human-interrupt shape (a bare response when the
/// value was not a list), `{decisions}` for the middleware.
pub fn resume_value(shape: &Shape, answers: Vec<Value>) -> Value {
    match shape {
        Shape::Middleware { .. } => json!({"decisions": answers}),
        Shape::HumanInterrupt { list: false } | Shape::Unrecognized { .. } => {
            answers.into_iter().next().unwrap_or(Value::Null)
        }
        Shape::HumanInterrupt { list: true } => Value::Array(answers),
    }
}

/// The body of `POST /threads/{thread_id}/runs` that resumes a thread with the
/// values of the interrupts answered. `keyed` (the thread waits on several
/// interrupts): the resume maps interrupt ids to values; otherwise it is the
/// one value itself.
pub fn resume_run(assistant_id: &str, resumes: Vec<(String, Value)>, keyed: bool) -> Value {
    let resume = if keyed {
        Value::Object(resumes.into_iter().collect())
    } else {
        resumes
            .into_iter()
            .next()
            .map(|(_, v)| v)
            .unwrap_or(Value::Null)
    };
    json!({"assistant_id": assistant_id, "command": {"resume": resume}})
}
