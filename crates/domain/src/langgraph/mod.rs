//! LangGraph interrupts as reviews: every pending interrupt of a thread (as
//! `POST /threads/search` or the thread's state lists it) becomes one tool-call
//! review, and a reviewer's answer becomes the value that resumes the thread
//! (`command.resume`), sent with the assistant that owns the thread.
//!
//! - `listing`: the shapes in use, read from a thread: the "human interrupt"
//!   (`{action_request, config, description}`, possibly a list), LangChain's
//!   human-in-the-loop middleware in `batched` mode (`{action_requests,
//!   review_configs}`) and in `per_call` mode (`{type: "tool_approval", name,
//!   args, description}` with the interrupt's `response_schema`). A value in
//!   none of them is kept as raw JSON with a note, never dropped.
//! - `review`: an interrupt as a pending tool-call review with stable ids.
//! - `resume`: the answers each shape takes, the check of an answer against
//!   the interrupt's `response_schema`, and the body of the resuming run.

mod listing;
mod resume;
mod review;

pub use listing::pending_interrupts;
pub use resume::{resume_run, resume_value, run_failure, AnswerRefused};

use serde_json::{Map, Value};

/// The tool name given to an interrupt in none of the known shapes.
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
    /// Middleware: run with edited arguments (the tool's name is kept).
    EditAction,
    /// Middleware: do not run; the model is told it was rejected, and why.
    Reject,
    /// Middleware: do not run; the message stands in for the tool's result.
    Reply,
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
            Answer::Reply => "respond",
        }
    }

    /// The middleware's answer named `verb` in its `allowed_decisions`.
    fn of_middleware(verb: &str) -> Option<Answer> {
        match verb {
            "approve" => Some(Answer::Approve),
            "edit" => Some(Answer::EditAction),
            "reject" => Some(Answer::Reject),
            "respond" => Some(Answer::Reply),
            _ => None,
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
    /// The middleware's `batched` mode: `count` actions answered together.
    Middleware {
        /// How many action requests the interrupt holds.
        count: usize,
    },
    /// The middleware's `per_call` mode: one tool call, answered with one
    /// decision keyed by the interrupt's id.
    ToolApproval {
        /// The model's id of the tool call.
        tool_call_id: String,
        /// The JSON Schema every answer must match (`None`: the server sent none).
        response_schema: Option<Value>,
    },
    /// None of them: the raw value is shown as it is.
    Unrecognized {
        /// What is wrong with it.
        note: String,
    },
}

/// What a thread is doing, as LangGraph reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ThreadStatus {
    /// Waiting on a human.
    Interrupted,
    /// A run is going on.
    Busy,
    /// The last run failed (its interrupts may still wait for an answer).
    Error,
    /// Finished.
    Idle,
    /// A status this version does not know.
    Unknown,
}

impl ThreadStatus {
    /// The status named `text` by the server.
    pub fn parse(text: &str) -> ThreadStatus {
        match text {
            "interrupted" => ThreadStatus::Interrupted,
            "busy" => ThreadStatus::Busy,
            "error" => ThreadStatus::Error,
            "idle" => ThreadStatus::Idle,
            _ => ThreadStatus::Unknown,
        }
    }

    /// Its name on the server (and in the app's styling).
    pub fn as_str(self) -> &'static str {
        match self {
            ThreadStatus::Interrupted => "interrupted",
            ThreadStatus::Busy => "busy",
            ThreadStatus::Error => "error",
            ThreadStatus::Idle => "idle",
            ThreadStatus::Unknown => "unknown",
        }
    }

    /// The statuses in which a thread may hold pending interrupts, which the
    /// listing asks the server for (an idle thread has none).
    pub const WAITING: [ThreadStatus; 3] = [
        ThreadStatus::Interrupted,
        ThreadStatus::Error,
        ThreadStatus::Busy,
    ];
}

/// The assistant that owns a thread (the one its runs were started with), read
/// from the thread's `metadata`. Only it may resume the thread: another
/// assistant would run its own graph on the thread instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agent {
    /// The assistant's id (`metadata.assistant_id`), or the graph's id when the
    /// thread names only that (LangGraph takes a graph id for its default assistant).
    pub assistant_id: String,
    /// The graph it runs (`metadata.graph_id`), if named.
    pub graph_id: Option<String>,
}

impl Agent {
    /// The agent named by a thread's `metadata`, if any.
    pub fn of_thread(thread: &Value) -> Option<Agent> {
        let metadata = &thread["metadata"];
        let text = |key: &str| {
            metadata[key]
                .as_str()
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        let graph_id = text("graph_id");
        let assistant_id = text("assistant_id").or_else(|| graph_id.clone())?;
        Some(Agent {
            assistant_id,
            graph_id,
        })
    }

    /// How a reviewer knows it: the graph's id, else the assistant's.
    pub fn name(&self) -> &str {
        self.graph_id.as_deref().unwrap_or(&self.assistant_id)
    }
}

/// One action waiting for a human in a thread.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingInterrupt {
    /// The thread.
    pub thread_id: String,
    /// What the thread is doing now.
    pub thread_status: ThreadStatus,
    /// The error of the thread's last run, when it failed.
    pub thread_error: Option<String>,
    /// The assistant that owns the thread (`None`: the thread names none, so
    /// it cannot be resumed from here).
    pub agent: Option<Agent>,
    /// The interrupt's id (resumes are keyed by it).
    pub interrupt_id: String,
    /// The action's position within the interrupt's value.
    pub index: usize,
    /// The shape it came in.
    pub shape: Shape,
    /// The tool (or [`RAW_INTERRUPT`]).
    pub name: String,
    /// The arguments (the raw value under `value` for unrecognized shapes).
    pub args: Map<String, Value>,
    /// The agent's description (markdown), if any.
    pub description: Option<String>,
    /// The answers the interrupt allows.
    pub allowed: Vec<Answer>,
    /// When the thread last changed.
    pub updated_at: Option<String>,
}

impl PendingInterrupt {
    /// Whether the two belong to one interrupt (answered together).
    pub fn same_interrupt(&self, other: &PendingInterrupt) -> bool {
        self.thread_id == other.thread_id && self.interrupt_id == other.interrupt_id
    }
}
