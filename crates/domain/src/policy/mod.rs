//! Approval policies: the rule that governs a review (rules are matched in
//! order by target, tool name, risk tier and requester role), how many
//! distinct reviewers must approve and as which roles, whether one rejection
//! vetoes, and whether the people behind the asking agent may approve it.
//!
//! Shared by the server (which enforces it) and the browser (which shows the
//! standing and refuses locally what the server would refuse).
//!
//! - this module: the rules, which one applies, and the file's consistency
//!   checks ([`Policy::problems`]);
//! - [`quorum`]: a review's standing under its rule and the policy checks of
//!   one approval.

mod delay;
pub mod quorum;

pub use delay::{Delay, DelayError};
pub use quorum::{Approval, PolicyRefusal, Standing};

use crate::model::DecisionStatus;
use crate::toolcall::RiskTier;
use crate::{Review, Target, Timestamp};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::fmt;
use wildmatch::WildMatch;

/// The name of the rule that applies when no rule of the policy matches.
pub const FALLBACK_RULE: &str = "default";

/// An ordered list of rules; the first that matches a review governs it.
/// Without rules, every review needs one approval (Countersign's default).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// The rules, in the order they are tried (`[[rule]]` in the file).
    #[serde(default, alias = "rule")]
    pub rules: Vec<Rule>,
}

/// What a rule matches and what it requires.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// How reviewers, receipts and refusals name it.
    pub name: String,
    /// Which kinds of target it covers; absent: every kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Vec<TargetKind>>,
    /// A glob (`*`, `?`) on the tool's name; only tool calls have one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The risk tiers it covers; only tool calls have one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub risk: Option<Vec<RiskTier>>,
    /// The requesting roles (`requested_by_role`) it covers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requester_role: Option<Vec<String>>,
    /// How many approvals from distinct reviewers it takes.
    #[serde(default = "one")]
    pub approvals: u32,
    /// Roles that must each be among the approvals.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required_roles: Vec<String>,
    /// Whether one rejection rejects the request (else it waits for the quorum
    /// or its expiry).
    #[serde(default = "yes")]
    pub veto: bool,
    /// At most how long a tool call waits before it is denied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_after: Option<Delay>,
    /// How a request that expired is closed (never approved).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_expiry: Option<ExpiryDecision>,
    /// How long a request waits before its reviewers are reminded and it is
    /// escalated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalate_after: Option<Delay>,
    /// Whether the owner of the asking agent's key may approve; absent:
    /// forbidden for R3 and R4 tool calls, allowed otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_approval: Option<SelfApproval>,
    /// The Slack channel (its ID, `C…`) Countersign's bot tells of the
    /// requests it governs; absent: the server's `--slack-channel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slack_channel: Option<String>,
    /// The addresses told by e-mail of the requests it governs; absent: the
    /// server's `--mail-to`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<Vec<String>>,
}

fn one() -> u32 {
    1
}

fn yes() -> bool {
    true
}

/// The kinds of target a rule can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// A plan.
    Plan,
    /// A context.
    Context,
    /// A trace.
    Trace,
    /// A tool call.
    ToolCall,
}

impl TargetKind {
    const ALL: [TargetKind; 4] = [Self::Plan, Self::Context, Self::Trace, Self::ToolCall];
}

/// Whether the people behind the asking agent may approve its request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SelfApproval {
    /// They may.
    Allow,
    /// They may not: someone else must approve.
    Forbid,
}

/// How an expired request closes: denied either way, never approved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExpiryDecision {
    /// Rejected: its requester may resubmit it.
    Rejected,
    /// Cancelled (the default).
    Cancelled,
}

impl From<ExpiryDecision> for DecisionStatus {
    fn from(decision: ExpiryDecision) -> Self {
        match decision {
            ExpiryDecision::Rejected => DecisionStatus::Rejected,
            ExpiryDecision::Cancelled => DecisionStatus::Cancelled,
        }
    }
}

/// What a rule is matched against, read from a review.
#[derive(Debug, Clone, PartialEq)]
pub struct Subject<'a> {
    /// The kind of target (`None` for a confirm without one).
    pub target: Option<TargetKind>,
    /// The tool's name, for tool calls.
    pub tool: Option<String>,
    /// The risk tier, for tool calls.
    pub risk: Option<RiskTier>,
    /// The role that asked.
    pub requester_role: &'a str,
}

impl<'a> Subject<'a> {
    /// What `review` is, as rules see it.
    pub fn of(review: &'a Review) -> Self {
        let (target, tool, risk) = match &review.target {
            Some(Target::Plan(_)) => (Some(TargetKind::Plan), None, None),
            Some(Target::Context(_)) => (Some(TargetKind::Context), None, None),
            Some(Target::Trace(_)) => (Some(TargetKind::Trace), None, None),
            Some(Target::ToolCall(call)) => (
                Some(TargetKind::ToolCall),
                call.request.tool_call().ok().map(|c| c.name),
                Some(call.request.risk_tier),
            ),
            None => (None, None, None),
        };
        Subject {
            target,
            tool,
            risk,
            requester_role: &review.confirm.requested_by_role,
        }
    }
}

impl Policy {
    /// Fixes when `review`, asked at `now`, is escalated if still pending:
    /// its rule's `escalate_after` from now, or never.
    pub fn schedule_escalation(&self, review: &mut Review, now: chrono::DateTime<chrono::Utc>) {
        let delay = self.rule_for(review).escalate_after;
        review.escalate_at = delay.map(|d| Timestamp::from_utc(now + d.duration()));
    }

    /// The rule that governs `review`: the first that matches, else the
    /// fallback (one approval; self-approval as the tier's default when the
    /// policy has rules, allowed when it has none, as without a policy).
    pub fn rule_for(&self, review: &Review) -> Cow<'_, Rule> {
        // (Reading the subject parses a tool call: not needed without rules.)
        let matched = if self.rules.is_empty() {
            None
        } else {
            let subject = Subject::of(review);
            self.rules.iter().find(|rule| rule.matches(&subject))
        };
        match matched {
            Some(rule) => Cow::Borrowed(rule),
            None => Cow::Owned(Rule {
                self_approval: self.rules.is_empty().then_some(SelfApproval::Allow),
                ..Rule::new(FALLBACK_RULE)
            }),
        }
    }

    /// Every inconsistency of the policy: a rule that can never match, a
    /// quorum that can never be met, a name used twice… A server refuses to
    /// start with any of them.
    pub fn problems(&self) -> Vec<PolicyProblem> {
        let mut problems = Vec::new();
        for (index, rule) in self.rules.iter().enumerate() {
            let mut problem = |field: &'static str, message: String| {
                problems.push(PolicyProblem {
                    rule: index,
                    field,
                    message,
                })
            };
            rule.check(&mut problem);
            if let Some(earlier) = self.rules[..index].iter().find(|e| e.name == rule.name) {
                problem(
                    "name",
                    format!(
                        "the name `{}` is already used by an earlier rule",
                        earlier.name
                    ),
                );
            }
            if let Some(earlier) = self.rules[..index].iter().find(|e| e.covers(rule)) {
                problem(
                    "name",
                    format!(
                        "this rule can never match: every request it matches is taken by the earlier rule `{}`",
                        earlier.name
                    ),
                );
            }
        }
        problems
    }
}

/// Whether `id` is written as Slack writes a channel's ID: `C` or `G` and
/// then capital letters and digits.
pub fn is_slack_channel_id(id: &str) -> bool {
    id.len() >= 9
        && id.starts_with(['C', 'G'])
        && id
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}

/// Whether `address` is written as a plain e-mail address: one `@` with
/// something on each side, no spaces, no display name. (The server's mail
/// library checks it fully before anything is sent.)
pub fn is_mail_address(address: &str) -> bool {
    match address.split_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && domain.contains('.')
                && !domain.contains('@')
                && !address
                    .chars()
                    .any(|c| c.is_whitespace() || c.is_control() || "<>,;\"".contains(c))
        }
        None => false,
    }
}

/// One inconsistency of a policy: which rule (0-based), which of its fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyProblem {
    /// The rule's position in the policy.
    pub rule: usize,
    /// The field at fault (`name` for the rule as a whole).
    pub field: &'static str,
    /// What is wrong, for the person who wrote it.
    pub message: String,
}

impl fmt::Display for PolicyProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "rule {} `{}`: {}",
            self.rule + 1,
            self.field,
            self.message
        )
    }
}

impl Rule {
    /// A rule matching everything that asks for one approval.
    pub fn new(name: &str) -> Rule {
        Rule {
            name: name.to_owned(),
            target: None,
            tool: None,
            risk: None,
            requester_role: None,
            approvals: 1,
            required_roles: Vec::new(),
            veto: true,
            expires_after: None,
            on_expiry: None,
            escalate_after: None,
            self_approval: None,
            slack_channel: None,
            email: None,
        }
    }

    /// Whether the rule covers `subject`.
    pub fn matches(&self, subject: &Subject<'_>) -> bool {
        let target_ok = match (&self.target, subject.target) {
            (None, _) => true,
            (Some(kinds), Some(kind)) => kinds.contains(&kind),
            (Some(_), None) => false,
        };
        let tool_ok = match (&self.tool, &subject.tool) {
            (None, _) => true,
            (Some(glob), Some(tool)) => WildMatch::new(glob).matches(tool),
            (Some(_), None) => false,
        };
        let risk_ok = match (&self.risk, subject.risk) {
            (None, _) => true,
            (Some(tiers), Some(tier)) => tiers.contains(&tier),
            (Some(_), None) => false,
        };
        let role_ok = self
            .requester_role
            .as_ref()
            .is_none_or(|roles| roles.iter().any(|r| r == subject.requester_role));
        target_ok && tool_ok && risk_ok && role_ok
    }

    /// Whether the people behind the asking agent are refused for `risk`.
    pub fn forbids_self_approval(&self, risk: Option<RiskTier>) -> bool {
        match self.self_approval {
            Some(SelfApproval::Forbid) => true,
            Some(SelfApproval::Allow) => false,
            None => risk.is_some_and(|tier| tier >= RiskTier::R3),
        }
    }

    /// How an expired request it governs is closed.
    pub fn expiry_decision(&self) -> ExpiryDecision {
        self.on_expiry.unwrap_or(ExpiryDecision::Cancelled)
    }

    /// Whether it takes more than one plain approval.
    pub fn needs_quorum(&self) -> bool {
        self.approvals > 1 || !self.required_roles.is_empty()
    }

    /// The target kinds it can match at all (a tool or risk condition only
    /// ever matches tool calls).
    fn reachable_kinds(&self) -> Vec<TargetKind> {
        let kinds = self
            .target
            .clone()
            .unwrap_or_else(|| TargetKind::ALL.to_vec());
        if self.tool.is_some() || self.risk.is_some() {
            kinds
                .into_iter()
                .filter(|k| *k == TargetKind::ToolCall)
                .collect()
        } else {
            kinds
        }
    }

    fn check(&self, problem: &mut impl FnMut(&'static str, String)) {
        if self.name.trim().is_empty() {
            problem(
                "name",
                "give the rule a name: it is what reviewers and receipts see".into(),
            );
        }
        for (field, empty) in [
            ("target", self.target.as_ref().is_some_and(Vec::is_empty)),
            ("risk", self.risk.as_ref().is_some_and(Vec::is_empty)),
            (
                "requester_role",
                self.requester_role.as_ref().is_some_and(Vec::is_empty),
            ),
        ] {
            if empty {
                problem(
                    field,
                    "an empty list matches nothing: leave the key out to match any".into(),
                );
            }
        }
        if self.tool.as_deref().is_some_and(|t| t.trim().is_empty()) {
            problem(
                "tool",
                "an empty tool name matches nothing: leave the key out to match any tool".into(),
            );
        }
        if self.target.as_ref().is_some_and(|k| !k.is_empty()) && self.reachable_kinds().is_empty()
        {
            let field = if self.tool.is_some() { "tool" } else { "risk" };
            problem(
                field,
                format!("only tool calls have a {field}, and this rule's target leaves them out: it can never match"),
            );
        }
        if let Some(channel) = self.slack_channel.as_deref() {
            if !is_slack_channel_id(channel) {
                problem(
                    "slack_channel",
                    format!("`{channel}` is not a Slack channel ID: write the ID (C…, or G… for an older private channel) that the channel's details show at their end, not its name"),
                );
            }
        }
        if self.email.as_ref().is_some_and(Vec::is_empty) {
            problem(
                "email",
                "an empty list tells nobody: leave the key out to use --mail-to".into(),
            );
        }
        for address in self.email.iter().flatten() {
            if !is_mail_address(address) {
                problem(
                    "email",
                    format!("`{address}` is not an e-mail address (name@example.com)"),
                );
            }
        }
        if self.approvals == 0 {
            problem("approvals", "a request needs at least 1 approval".into());
        }
        if self.approvals > MAX_APPROVALS {
            problem(
                "approvals",
                format!(
                    "{} approvals is more than the {MAX_APPROVALS} a rule may ask",
                    self.approvals
                ),
            );
        }
        if self.required_roles.iter().any(|r| r.trim().is_empty()) {
            problem("required_roles", "a required role cannot be empty".into());
        }
        let mut roles = self.required_roles.clone();
        roles.sort();
        roles.dedup();
        if roles.len() != self.required_roles.len() {
            problem(
                "required_roles",
                "a role is listed twice: one approval covers one role".into(),
            );
        }
        if self.required_roles.len() > self.approvals as usize {
            problem(
                "required_roles",
                format!(
                    "{} roles are required but only {} approval(s) are asked: each approval covers one role; raise `approvals`",
                    self.required_roles.len(),
                    self.approvals
                ),
            );
        }
        if !self.reachable_kinds().contains(&TargetKind::ToolCall) {
            for (field, given) in [
                ("expires_after", self.expires_after.is_some()),
                ("on_expiry", self.on_expiry.is_some()),
            ] {
                if given {
                    problem(
                        field,
                        "only tool calls expire, and this rule's target leaves them out".into(),
                    );
                }
            }
        }
        if let (Some(escalate), Some(expiry)) = (self.escalate_after, self.expires_after) {
            if escalate >= expiry {
                problem(
                    "escalate_after",
                    format!(
                        "escalating after {escalate} never happens: requests expire after {expiry}"
                    ),
                );
            }
        }
    }

    /// Whether every request `later` matches is matched by `self` first. Only
    /// claims what is certain, so a policy is never refused by mistake.
    fn covers(&self, later: &Rule) -> bool {
        let mine = self.reachable_kinds();
        let target = later.reachable_kinds().iter().all(|k| mine.contains(k));
        let tool = match (&self.tool, &later.tool) {
            (None, _) => true,
            (Some(mine), _) if mine.chars().all(|c| c == '*') => true,
            (Some(mine), Some(theirs)) => {
                mine == theirs
                    || (!theirs.contains(['*', '?']) && WildMatch::new(mine).matches(theirs))
            }
            (Some(_), None) => false,
        };
        target
            && tool
            && subset(&self.risk, &later.risk)
            && subset(&self.requester_role, &later.requester_role)
    }
}

/// The most approvals a rule may ask.
pub const MAX_APPROVALS: u32 = 20;

/// Whether condition `wide` (absent: anything) admits all `narrow` admits.
fn subset<T: PartialEq>(wide: &Option<Vec<T>>, narrow: &Option<Vec<T>>) -> bool {
    match (wide, narrow) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(wide), Some(narrow)) => narrow.iter().all(|n| wide.contains(n)),
    }
}
