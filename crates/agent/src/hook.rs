//! `countersign hook claude-code`: a Claude Code `PreToolUse` command hook.
//! Claude Code writes the call it is about to make on stdin; a gated tool
//! becomes a tool-call review (the session is Claude Code's), the hook waits
//! for the reviewer, redeems the approval's single-use token for exactly the
//! approved call, and prints Claude Code's answer: allow (with the edited
//! input when the reviewer edited it) or deny with the reason, which Claude
//! sees. Fail closed: no decision in time, an unreachable server or an answer
//! that cannot be read denies the call (or, with `--fallback ask`, leaves it
//! to Claude Code's own prompt), saying why.

use crate::client::{ask_tool_call, Connection, Ruling};
use countersign_domain::toolcall::RiskTier;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::io::Read;
use std::process::ExitCode;
use std::time::Duration;

/// The role reviews from this hook are asked by (what the desk shows).
const ROLE: &str = "claude-code";

/// The tools gated by default and their risk; any tool not named here and
/// not read-only is gated at R2.
const GATED: &[(&str, RiskTier)] = &[
    ("Bash", RiskTier::R3),
    ("Write", RiskTier::R3),
    ("Edit", RiskTier::R3),
    ("MultiEdit", RiskTier::R3),
    ("NotebookEdit", RiskTier::R3),
    ("WebFetch", RiskTier::R2),
    ("WebSearch", RiskTier::R1),
    ("mcp__*", RiskTier::R2),
];

/// Tools that only read: not gated unless a rule says otherwise.
const READ_ONLY: &[&str] = &[
    "Read",
    "Glob",
    "Grep",
    "LS",
    "NotebookRead",
    "TodoWrite",
    "Task",
    "BashOutput",
    "ExitPlanMode",
];

/// What a gated call is asked at, or that it is not gated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// Asked as a review at this risk.
    Ask(RiskTier),
    /// Left to Claude Code.
    Pass,
}

/// A `--risk PATTERN=TIER` rule: a tool name, where `*` stands for any text;
/// `TIER` is `R0`–`R4`, or `none` for a tool not gated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pattern: String,
    gate: Gate,
}

impl std::str::FromStr for Rule {
    type Err = String;

    fn from_str(text: &str) -> Result<Rule, String> {
        let (pattern, tier) = text
            .split_once('=')
            .ok_or_else(|| format!("`{text}`: a rule is TOOL=TIER, e.g. Bash=R4 or Read=none"))?;
        if pattern.is_empty() {
            return Err(format!("`{text}`: the tool name is empty"));
        }
        let gate = match tier {
            "none" => Gate::Pass,
            _ => Gate::Ask(serde_json::from_value(json!(tier)).map_err(|_| {
                format!("`{text}`: `{tier}` is not a risk tier (R0, R1, R2, R3, R4, or none)")
            })?),
        };
        Ok(Rule {
            pattern: pattern.to_owned(),
            gate,
        })
    }
}

/// Whether `tool` matches `pattern`, where each `*` stands for any text.
pub(crate) fn matches(pattern: &str, tool: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = tool.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// How `tool` is gated: the first of `rules` that names it, else the defaults.
pub fn gate(tool: &str, rules: &[Rule]) -> Gate {
    if let Some(rule) = rules.iter().find(|r| matches(&r.pattern, tool)) {
        return rule.gate;
    }
    if let Some((_, tier)) = GATED.iter().find(|(p, _)| matches(p, tool)) {
        return Gate::Ask(*tier);
    }
    if READ_ONLY.contains(&tool) {
        return Gate::Pass;
    }
    Gate::Ask(RiskTier::R2)
}

/// What to answer when no reviewer's decision can be had.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Fallback {
    /// The call does not run.
    Deny,
    /// Claude Code asks its user, as without the hook.
    Ask,
}

/// What Claude Code sends a `PreToolUse` hook (the fields used here; the
/// others are ignored).
#[derive(Debug, Deserialize)]
pub struct PreToolUse {
    /// The Claude Code session: the review's session.
    pub session_id: String,
    /// The working directory: the review's workspace.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Must be `PreToolUse`.
    pub hook_event_name: String,
    /// The tool about to run.
    pub tool_name: String,
    /// Its input.
    pub tool_input: Map<String, Value>,
    /// This call's id: the review's run.
    #[serde(default)]
    pub tool_use_id: Option<String>,
}

/// Claude Code's permission decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Permission {
    /// Run it (without Claude Code's own prompt).
    Allow,
    /// Do not run it; Claude is told why.
    Deny,
    /// Ask the user in Claude Code.
    Ask,
}

/// The hook's answer, printed on stdout.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookAnswer {
    hook_specific_output: Decision,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Decision {
    hook_event_name: &'static str,
    permission_decision: Permission,
    permission_decision_reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    updated_input: Option<Map<String, Value>>,
}

impl HookAnswer {
    fn new(permission: Permission, reason: String, updated: Option<Map<String, Value>>) -> Self {
        HookAnswer {
            hook_specific_output: Decision {
                hook_event_name: "PreToolUse",
                permission_decision: permission,
                permission_decision_reason: reason,
                updated_input: updated,
            },
        }
    }
}

/// `countersign hook ...`: the hooks an agent runs before it acts.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Claude Code's PreToolUse command hook: reads the call on stdin, asks
    /// a reviewer, prints allow (with any edit) or deny with the reason.
    ClaudeCode(Options),
}

impl Command {
    /// Runs the hook; the exit code is what the agent reads.
    pub fn run(&self, connection: &Connection) -> ExitCode {
        match self {
            Command::ClaudeCode(options) => claude_code(connection, options),
        }
    }
}

/// How the Claude Code hook runs.
#[derive(Debug, clap::Args)]
pub struct Options {
    /// How long to wait for a decision, in seconds (keep it under the
    /// hook's `timeout` in Claude Code's settings).
    #[arg(long, default_value_t = 590)]
    pub timeout: u64,
    /// The answer when no decision can be had (timeout, server unreachable).
    #[arg(long, value_enum, default_value = "deny")]
    pub fallback: Fallback,
    /// `TOOL=TIER` (`R0`–`R4`, or `none`: not gated); `TOOL` may end in
    /// `*`. Checked before the defaults. Repeatable.
    #[arg(long = "risk")]
    pub rules: Vec<Rule>,
}

/// Reads the hook's input on stdin, and prints its answer. Exit 0 with an
/// answer (or none: a tool not gated); exit 2, which Claude Code treats as a
/// denial, when the input cannot be read.
fn claude_code(connection: &Connection, options: &Options) -> ExitCode {
    let mut text = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut text) {
        eprintln!("countersign: cannot read the hook's input: {e}");
        return ExitCode::from(2);
    }
    let input: PreToolUse = match serde_json::from_str(&text) {
        Ok(input) => input,
        Err(e) => {
            eprintln!("countersign: the hook's input is not a Claude Code PreToolUse event ({e}); the call was not sent for review and does not run");
            return ExitCode::from(2);
        }
    };
    if input.hook_event_name != "PreToolUse" {
        eprintln!(
            "countersign: this hook answers PreToolUse, not `{}`; the call does not run",
            input.hook_event_name
        );
        return ExitCode::from(2);
    }
    let Gate::Ask(tier) = gate(&input.tool_name, &options.rules) else {
        return ExitCode::SUCCESS;
    };
    let answer = ask(connection, options, &input, tier).unwrap_or_else(|why| {
        let permission = match options.fallback {
            Fallback::Deny => Permission::Deny,
            Fallback::Ask => Permission::Ask,
        };
        HookAnswer::new(permission, format!("Countersign: {why}"), None)
    });
    match serde_json::to_string(&answer) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("countersign: cannot write the hook's answer ({e}); the call does not run");
            ExitCode::from(2)
        }
    }
}

/// Asks the reviewer about the call and answers with what they decided;
/// `Err` says why no decision could be had.
fn ask(
    connection: &Connection,
    options: &Options,
    input: &PreToolUse,
    tier: RiskTier,
) -> Result<HookAnswer, String> {
    let request = json!({
        "requestedByRole": ROLE,
        "sessionId": input.session_id,
        "runId": input.tool_use_id.as_deref().unwrap_or(&input.session_id),
        "workspace": input.cwd,
        "toolCall": {"name": input.tool_name, "args": input.tool_input},
        "humanSummary": summary(&input.tool_name, &input.tool_input),
        "riskTier": tier,
    });
    Ok(
        match ask_tool_call(
            connection,
            request,
            Duration::from_secs(options.timeout),
            |_| Ok(()),
        )? {
            Ruling::Denied { by, reason } => {
                let reason = match reason {
                    Some(reason) => format!("Denied in Countersign by {by}: {reason}"),
                    None => format!("Denied in Countersign by {by}"),
                };
                HookAnswer::new(Permission::Deny, reason, None)
            }
            Ruling::Approved { args, by, by_grant } => {
                // Claude Code runs the reviewer's arguments when they differ.
                let edited = args != input.tool_input;
                let reason = if edited {
                    format!("Approved with changes in Countersign by {by}")
                } else if by_grant {
                    "Approved in Countersign by a standing grant for this session".to_owned()
                } else {
                    format!("Approved in Countersign by {by}")
                };
                HookAnswer::new(Permission::Allow, reason, edited.then_some(args))
            }
        },
    )
}

/// One line saying what the call does, from the input fields Claude Code's
/// tools carry (the desk shows it after the tool's name, beside the exact call).
fn summary(tool: &str, input: &Map<String, Value>) -> String {
    let field = |name: &str| input.get(name).and_then(Value::as_str);
    let what = match tool {
        "Bash" => field("description").or(field("command")),
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => {
            field("file_path").or(field("notebook_path"))
        }
        "WebFetch" => field("url"),
        "WebSearch" => field("query"),
        _ => None,
    };
    match what {
        Some(what) => what.to_owned(),
        None => format!("Claude Code calls {tool}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_are_gated_by_rule_then_by_default_and_unknown_ones_are_asked() {
        assert_eq!(gate("Bash", &[]), Gate::Ask(RiskTier::R3));
        assert_eq!(
            gate("mcp__github__create_issue", &[]),
            Gate::Ask(RiskTier::R2)
        );
        assert_eq!(gate("Read", &[]), Gate::Pass);
        assert_eq!(gate("SomethingNew", &[]), Gate::Ask(RiskTier::R2));
        let rules: Vec<Rule> = ["Bash=R4", "mcp__docs__*=none", "Read=R1"]
            .iter()
            .map(|r| r.parse().unwrap())
            .collect();
        assert_eq!(gate("Bash", &rules), Gate::Ask(RiskTier::R4));
        assert_eq!(gate("mcp__docs__search", &rules), Gate::Pass);
        assert_eq!(gate("mcp__github__push", &rules), Gate::Ask(RiskTier::R2));
        assert_eq!(gate("Read", &rules), Gate::Ask(RiskTier::R1));
    }

    #[test]
    fn a_star_stands_for_any_text() {
        assert!(matches("mcp__*", "mcp__github__push"));
        assert!(matches("*__push", "mcp__github__push"));
        assert!(matches("mcp__*__push", "mcp__github__push"));
        assert!(matches("*", "Bash"));
        assert!(!matches("mcp__*__push", "mcp__github__pull"));
        assert!(!matches("Bash", "Bash2"));
        assert!(!matches("a*a", "a"));
    }

    #[test]
    fn a_rule_that_cannot_be_read_says_what_is_wrong() {
        let missing = "Bash".parse::<Rule>().unwrap_err();
        assert!(missing.contains("TOOL=TIER"), "{missing}");
        let tier = "Bash=R9".parse::<Rule>().unwrap_err();
        assert!(tier.contains("`R9` is not a risk tier"), "{tier}");
        assert!("=R1".parse::<Rule>().unwrap_err().contains("empty"));
    }

    #[test]
    fn the_answer_is_claude_codes_hook_output() {
        let answer = HookAnswer::new(Permission::Deny, "no".into(), None);
        assert_eq!(
            serde_json::to_value(&answer).unwrap(),
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no"}})
        );
    }
}
