//! `countersign mcp-gate`: a stdio proxy between an MCP client and an MCP
//! server (newline-delimited JSON-RPC, as MCP's stdio transport sends it).
//! Every message passes through untouched, but a `tools/call` request for a
//! gated tool: it becomes a tool-call review with the exact arguments, and is
//! forwarded only once a reviewer approved it and its single-use token was
//! redeemed, with exactly the approved (possibly edited) arguments. A denial,
//! no decision in time, or an unreachable Countersign answers the client with
//! a tool result marked as an error that says why; the call never reaches the
//! server. A client's `notifications/cancelled` for a waiting call, or the
//! client going away, withdraws its review (MCP then expects no answer).

use crate::client::{ask_tool_call, call, Connection, Ruling};
use crate::hook::matches;
use countersign_domain::toolcall::RiskTier;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// Where MCP 2026 requests carry their protocol version, and results the server's name.
const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// A `--gate PATTERN[=TIER]` rule: the tools it names (`*` stands for any
/// text) are asked at `TIER` (R2 when not given).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gated {
    pattern: String,
    tier: RiskTier,
}

impl std::str::FromStr for Gated {
    type Err = String;

    fn from_str(text: &str) -> Result<Gated, String> {
        let (pattern, tier) = match text.split_once('=') {
            Some((pattern, tier)) => {
                let tier = serde_json::from_value(json!(tier)).map_err(|_| {
                    format!("`{text}`: `{tier}` is not a risk tier (R0, R1, R2, R3 or R4)")
                })?;
                (pattern, tier)
            }
            None => (text, RiskTier::R2),
        };
        if pattern.is_empty() {
            return Err(format!("`{text}`: the tool name is empty"));
        }
        Ok(Gated {
            pattern: pattern.to_owned(),
            tier,
        })
    }
}

/// How the gate runs (`countersign mcp-gate`'s flags, beside the connection's).
#[derive(Debug, clap::Args)]
pub struct Options {
    /// A tool to gate, `NAME[=TIER]` (`*` stands for any text; tier R2
    /// unless given). Repeatable.
    #[arg(long = "gate")]
    pub gated: Vec<Gated>,
    /// How long a call waits for a decision, in seconds.
    #[arg(long, default_value_t = 300)]
    pub timeout: u64,
    /// The MCP server to start, after `--`.
    #[arg(last = true, required = true)]
    pub command: Vec<String>,
}

/// A JSON-RPC message, as far as the gate looks into it.
#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    params: Option<Value>,
}

/// What the gate shares between the client's side and its waiting calls.
struct Gate {
    connection: Connection,
    options: Options,
    /// The session of every review this gate asks for (one per gate run,
    /// so a reviewer's session grant lasts as long as the client's session).
    session: String,
    /// The server's name, from its answer to `initialize`.
    server_name: OnceLock<String>,
    to_client: Mutex<std::io::Stdout>,
    /// The server's stdin, closed once the client closed its side.
    to_server: Mutex<Option<std::process::ChildStdin>>,
    /// The calls waiting for a reviewer, by JSON-RPC id.
    waiting: Mutex<HashMap<String, Arc<Waiting>>>,
}

/// A call waiting for a reviewer.
#[derive(Default)]
struct Waiting {
    /// The client cancelled it: it gets no answer, and its review is withdrawn.
    cancelled: AtomicBool,
    /// Its review, once asked for.
    review: Mutex<Option<String>>,
}

/// Starts the server, relays both ways until the client closes its side,
/// then waits for the server to end. Exit 0, or 2 when the server cannot be
/// started; the server's own exit code otherwise.
pub fn run(connection: Connection, options: Options) -> ExitCode {
    let Some((program, args)) = options.command.split_first() else {
        eprintln!("countersign mcp-gate: name the MCP server to start after `--`");
        return ExitCode::from(2);
    };
    let mut child = match Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            eprintln!("countersign mcp-gate: cannot start `{program}`: {e}");
            return ExitCode::from(2);
        }
    };
    let (Some(server_in), Some(server_out)) = (child.stdin.take(), child.stdout.take()) else {
        eprintln!("countersign mcp-gate: `{program}` has no stdin/stdout to talk to");
        return ExitCode::from(2);
    };
    let gate = Arc::new(Gate {
        session: format!("mcp-gate-{}", uuid_like()),
        connection,
        options,
        server_name: OnceLock::new(),
        to_client: Mutex::new(std::io::stdout()),
        to_server: Mutex::new(Some(server_in)),
        waiting: Mutex::new(HashMap::new()),
    });
    let from_server = {
        let gate = Arc::clone(&gate);
        std::thread::spawn(move || gate.relay_server(server_out))
    };
    gate.relay_client();
    // The client closed its side: so does the gate, and the server ends.
    if let Ok(mut server_in) = gate.to_server.lock() {
        server_in.take();
    }
    let _ = from_server.join();
    match child.wait() {
        Ok(status) => ExitCode::from(status.code().unwrap_or(1).clamp(0, 255) as u8),
        Err(_) => ExitCode::from(1),
    }
}

impl Gate {
    /// Sends the server's lines to the client as they are, noting its name.
    fn relay_server(&self, out: std::process::ChildStdout) {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if self.server_name.get().is_none() {
                if let Ok(value) = serde_json::from_str::<Value>(&line) {
                    // `initialize` names it (MCP 2025), or every result's `_meta` (2026).
                    let result = &value["result"];
                    let name = result["serverInfo"]["name"]
                        .as_str()
                        .or(result["_meta"][SERVER_INFO]["name"].as_str());
                    if let Some(name) = name {
                        let _ = self.server_name.set(name.to_owned());
                    }
                }
            }
            if self.send_client(&line).is_err() {
                break;
            }
        }
    }

    /// Reads the client's lines: gated calls wait for a reviewer on a thread
    /// of their own, everything else goes to the server as it is.
    fn relay_client(self: &Arc<Self>) {
        let stdin = std::io::stdin();
        for line in stdin.lock().lines() {
            let Ok(line) = line else { break };
            let message = serde_json::from_str::<Message>(&line).ok();
            match message.as_ref().and_then(|m| self.gated_call(m)) {
                Some((id, name, args, tier)) => {
                    let gate = Arc::clone(self);
                    let waiting = Arc::new(Waiting::default());
                    if let Ok(mut calls) = self.waiting.lock() {
                        calls.insert(id.to_string(), Arc::clone(&waiting));
                    }
                    let params = message.and_then(|m| m.params).unwrap_or(Value::Null);
                    let call = (name, args, tier);
                    std::thread::spawn(move || gate.ask(id, call, params, &waiting));
                }
                None => {
                    if let Some(m) = &message {
                        self.note_cancelled(m);
                    }
                    // A gated call the gate could not take (in a batch, or
                    // without an id to answer) never reaches the server.
                    if let Some(value) = serde_json::from_str::<Value>(&line)
                        .ok()
                        .filter(|v| self.holds_gated_call(v))
                    {
                        self.refuse_unaskable(&value);
                        continue;
                    }
                    if self.send_server(&line).is_err() {
                        break;
                    }
                }
            }
        }
        // The client is gone: nobody runs what still waits.
        let waiting: Vec<Arc<Waiting>> = self
            .waiting
            .lock()
            .map(|calls| calls.values().cloned().collect())
            .unwrap_or_default();
        for call in waiting {
            self.cancel(&call);
        }
    }

    /// Whether a message, or any message of a batch, calls a gated tool.
    fn holds_gated_call(&self, value: &Value) -> bool {
        match value {
            Value::Array(batch) => batch.iter().any(|m| self.holds_gated_call(m)),
            Value::Object(_) => {
                value["method"] == "tools/call"
                    && value["params"]["name"].as_str().is_some_and(|name| {
                        self.options.gated.iter().any(|g| matches(&g.pattern, name))
                    })
            }
            _ => false,
        }
    }

    /// Answers each request of a message the gate cannot ask about with a
    /// JSON-RPC error saying why (a notification gets no answer).
    fn refuse_unaskable(&self, value: &Value) {
        let error = |id: &Value| {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32600,
                "message": "Countersign: a gated tool is called one request at a time, with an id, so a reviewer can be asked; nothing was run"}})
        };
        let answer = match value {
            Value::Array(batch) => {
                let answers: Vec<Value> = batch
                    .iter()
                    .filter_map(|m| m.get("id").filter(|id| !id.is_null()).map(error))
                    .collect();
                (!answers.is_empty()).then_some(Value::Array(answers))
            }
            _ => value.get("id").filter(|id| !id.is_null()).map(error),
        };
        match answer {
            Some(answer) => {
                let _ = self.send_client(&answer.to_string());
            }
            None => {
                eprintln!("countersign mcp-gate: dropped a call of a gated tool sent without an id")
            }
        }
    }

    /// A `tools/call` request for a gated tool: its id, tool, arguments and risk.
    fn gated_call(
        &self,
        message: &Message,
    ) -> Option<(Value, String, Map<String, Value>, RiskTier)> {
        if message.method.as_deref() != Some("tools/call") {
            return None;
        }
        let id = message.id.clone()?;
        let params = message.params.as_ref()?;
        let name = params["name"].as_str()?;
        let rule = self
            .options
            .gated
            .iter()
            .find(|g| matches(&g.pattern, name))?;
        let args = match &params["arguments"] {
            Value::Object(args) => args.clone(),
            _ => Map::new(),
        };
        Some((id, name.to_owned(), args, rule.tier))
    }

    /// A client's cancellation of a waiting call cancels it; a cancellation
    /// of anything else goes on to the server.
    fn note_cancelled(&self, message: &Message) {
        if message.method.as_deref() != Some("notifications/cancelled") {
            return;
        }
        let Some(id) = message.params.as_ref().map(|p| p["requestId"].to_string()) else {
            return;
        };
        if let Some(call) = self.waiting.lock().ok().and_then(|w| w.get(&id).cloned()) {
            self.cancel(&call);
        }
    }

    /// Cancels a waiting call: it gets no answer, and its review (once
    /// asked for) is withdrawn, so no reviewer approves what will not run.
    fn cancel(&self, call: &Waiting) {
        call.cancelled.store(true, Ordering::SeqCst);
        let review = call.review.lock().ok().and_then(|r| r.clone());
        if let Some(review) = review {
            self.withdraw(&review);
        }
    }

    fn withdraw(&self, review: &str) {
        let body = json!({"reason": "the MCP client cancelled the call"});
        // Not withdrawn (unreachable, decided meanwhile): it expires unanswered.
        let _ = call(
            &self.connection,
            "POST",
            &format!("/reviews/{review}/withdraw"),
            Some(&body),
        );
    }

    /// Asks a reviewer about one call, then forwards it as approved or
    /// answers the client with why it did not run.
    fn ask(
        &self,
        id: Value,
        (name, args, tier): (String, Map<String, Value>, RiskTier),
        params: Value,
        waiting: &Waiting,
    ) {
        let decided = self.decide(&name, &args, tier, waiting);
        if let Ok(mut calls) = self.waiting.lock() {
            calls.remove(&id.to_string());
        }
        if waiting.cancelled.load(Ordering::SeqCst) {
            return;
        }
        let line = match decided {
            Ok(approved) => {
                let mut forwarded = params.clone();
                forwarded["arguments"] = Value::Object(approved);
                json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": forwarded})
            }
            Err(why) => return self.refuse(&id, &params, &format!("Countersign: {why}")),
        };
        if self.send_server(&line.to_string()).is_err() {
            let why = "Countersign: the call was approved, but the MCP server is gone";
            self.refuse(&id, &params, why);
        }
    }

    /// Answers a call with a tool result marked as an error, so the model
    /// reads why it did not run. A request that names its protocol version
    /// in `_meta` (MCP 2026) is answered with that version's `resultType`.
    fn refuse(&self, id: &Value, params: &Value, why: &str) {
        let mut result = json!({"content": [{"type": "text", "text": why}], "isError": true});
        if !params["_meta"][PROTOCOL_VERSION].is_null() {
            result["resultType"] = json!("complete");
        }
        let _ =
            self.send_client(&json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string());
    }

    /// The arguments a reviewer approved (token redeemed), or why the call
    /// may not run.
    fn decide(
        &self,
        name: &str,
        args: &Map<String, Value>,
        tier: RiskTier,
        waiting: &Waiting,
    ) -> Result<Map<String, Value>, String> {
        let connection = &self.connection;
        let server = self
            .server_name
            .get()
            .map_or("an MCP server", String::as_str);
        let request = json!({
            "requestedByRole": format!("mcp:{server}"),
            "sessionId": self.session,
            "runId": self.session,
            "workspace": std::env::current_dir().ok().map(|d| d.display().to_string()),
            "toolCall": {"name": name, "args": args},
            "humanSummary": format!("MCP server {server}"),
            "riskTier": tier,
        });
        let asked = |review: &str| {
            if let Ok(mut asked) = waiting.review.lock() {
                *asked = Some(review.to_owned());
            }
            // Cancelled while it was being asked for.
            if waiting.cancelled.load(Ordering::SeqCst) {
                self.withdraw(review);
                return Err("the client cancelled the call".to_owned());
            }
            Ok(())
        };
        let timeout = Duration::from_secs(self.options.timeout);
        match ask_tool_call(connection, request, timeout, asked)? {
            Ruling::Approved { args, .. } => Ok(args),
            Ruling::Denied { by, reason } => Err(match reason {
                Some(reason) => format!("denied by {by}: {reason}"),
                None => format!("denied by {by}"),
            }),
        }
    }

    fn send_client(&self, line: &str) -> std::io::Result<()> {
        let mut out = self
            .to_client
            .lock()
            .map_err(|_| std::io::ErrorKind::Other)?;
        writeln!(out, "{line}")?;
        out.flush()
    }

    fn send_server(&self, line: &str) -> std::io::Result<()> {
        let mut server_in = self
            .to_server
            .lock()
            .map_err(|_| std::io::ErrorKind::Other)?;
        let out = server_in.as_mut().ok_or(std::io::ErrorKind::BrokenPipe)?;
        writeln!(out, "{line}")?;
        out.flush()
    }
}

/// A random id for this gate's session.
fn uuid_like() -> String {
    let mut bytes = [0u8; 16];
    // Without randomness the session is still this process's own.
    if getrandom::fill(&mut bytes).is_err() {
        return std::process::id().to_string();
    }
    countersign_domain::MplpId::from_random_bytes(bytes).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gate_rule_names_tools_and_an_optional_tier() {
        let plain: Gated = "write_*".parse().unwrap();
        assert_eq!(plain.tier, RiskTier::R2);
        let tiered: Gated = "delete_file=R4".parse().unwrap();
        assert_eq!(
            (tiered.pattern.as_str(), tiered.tier),
            ("delete_file", RiskTier::R4)
        );
        assert!("x=R7"
            .parse::<Gated>()
            .unwrap_err()
            .contains("`R7` is not a risk tier"));
        assert!("=R1".parse::<Gated>().unwrap_err().contains("empty"));
    }
}
