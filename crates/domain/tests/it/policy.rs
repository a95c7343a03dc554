//! Policies: which rule governs a review, quorums of distinct reviewers with
//! required roles, vetoes, separation of duties, and the policy's own checks.

use chrono::{DateTime, TimeZone, Utc};
use countersign_domain::model::{ConfirmStatus, DecisionStatus};
use countersign_domain::policy::{Policy, PolicyRefusal, Rule, SelfApproval, Standing};
use countersign_domain::toolcall::{new_tool_call_review, ToolChoice, ToolMode};
use countersign_domain::wire::ReceiptBody;
use countersign_domain::{
    decide_under, Channel, DecideError, DecisionInput, Judge, KeyRef, MplpId, Person, Review,
};
use serde_json::json;
use std::sync::atomic::{AtomicU64, Ordering};
use DecisionStatus::{Approved, Rejected};

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 25, 12, 0, 0).unwrap()
}

fn call(tool: &str, tier: &str) -> Review {
    let submission = serde_json::from_value(json!({
        "requestedByRole": "deploy-agent",
        "sessionId": "s1",
        "runId": "r1",
        "toolCall": {"name": tool, "args": {"amount": 10}},
        "humanSummary": "Do it",
        "riskTier": tier,
    }))
    .unwrap();
    let mut review = new_tool_call_review(submission, now(), &mut ids()).unwrap();
    review.requester = Some(key("key_agent", "alice"));
    review
}

/// Fresh ids across the whole run (decisions are told apart by id).
fn ids() -> impl FnMut() -> MplpId {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    || {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        MplpId::parse(&format!("00000000-0000-4000-8000-{n:012x}")).unwrap()
    }
}

fn key(id: &str, owner: &str) -> KeyRef {
    KeyRef {
        owner: Some(owner.into()),
        ..KeyRef::key(id)
    }
}

fn parse(toml_like: serde_json::Value) -> Policy {
    serde_json::from_value(toml_like).unwrap()
}

fn payments() -> Policy {
    parse(json!({"rules": [
        {"name": "payments", "tool": "payments.*", "risk": ["R3", "R4"],
         "approvals": 2, "required_roles": ["release_manager"]},
        {"name": "no veto", "tool": "tickets.*", "approvals": 2, "veto": false},
    ]}))
}

fn input(status: DecisionStatus, role: &str) -> DecisionInput {
    DecisionInput {
        status,
        decided_by_role: role.into(),
        reason: (status == DecisionStatus::Rejected).then(|| "too risky".into()),
        tool_call: None,
    }
}

fn as_key(
    review: &Review,
    policy: &Policy,
    reviewer: &KeyRef,
    status: DecisionStatus,
    role: &str,
) -> Result<Review, DecideError> {
    let rule = policy.rule_for(review);
    let judge = Judge {
        rule: &rule,
        reviewer,
        channel: Some(Channel::Slack),
    };
    decide_under(review, &input(status, role), judge, now(), &mut ids())
}

/// `owner` decides with their own key (`key_<owner>`).
fn by(
    owner: &str,
    status: DecisionStatus,
    role: &str,
    review: &Review,
    policy: &Policy,
) -> Result<Review, DecideError> {
    as_key(
        review,
        policy,
        &key(&format!("key_{owner}"), owner),
        status,
        role,
    )
}

#[test]
fn rules_match_in_order_by_tool_risk_and_role() {
    let policy = payments();
    assert_eq!(
        policy.rule_for(&call("payments.refund", "R4")).name,
        "payments"
    );
    assert_eq!(
        policy.rule_for(&call("payments.refund", "R1")).name,
        "default"
    );
    assert_eq!(
        policy.rule_for(&call("tickets.close", "R0")).name,
        "no veto"
    );
    let by_role = parse(json!({"rules": [{"name": "ci", "requester_role": ["ci-agent"]}]}));
    assert_eq!(by_role.rule_for(&call("x", "R0")).name, "default");
}

#[test]
fn two_approvals_with_a_required_role_keep_the_request_pending_until_met() {
    let policy = payments();
    let review = call("payments.refund", "R4");
    let once = by("bob", Approved, "security_officer", &review, &policy).unwrap();
    assert_eq!(once.confirm.status, ConfirmStatus::Pending);
    assert!(
        once.tool_call().unwrap().outcome.is_none(),
        "no token before the quorum"
    );
    let rule = policy.rule_for(&once);
    let standing = Standing::of(&once, &rule);
    assert_eq!(
        standing.to_string(),
        "1 of 2 approvals — approved by `bob` as security_officer; needs one more from release_manager"
    );
    let twice = by("carol", Approved, "release_manager", &once, &policy).unwrap();
    assert_eq!(twice.confirm.status, ConfirmStatus::Approved);
    assert!(twice
        .tool_call()
        .unwrap()
        .outcome
        .as_ref()
        .unwrap()
        .token
        .is_some());
    assert!(Standing::of(&twice, &rule).is_met());
    let receipt = ReceiptBody::of(&twice).unwrap().unwrap();
    assert_eq!(receipt.rule, "payments");
    let owners: Vec<_> = receipt
        .decisions
        .iter()
        .map(|d| d.decided_by_owner.clone().unwrap())
        .collect();
    assert_eq!(owners, ["bob", "carol"]);
}

#[test]
fn the_same_reviewer_twice_is_refused_even_with_another_key() {
    let policy = payments();
    let once = by(
        "bob",
        Approved,
        "security_officer",
        &call("payments.refund", "R4"),
        &policy,
    )
    .unwrap();
    let again = as_key(
        &once,
        &policy,
        &key("k9", "bob"),
        DecisionStatus::Approved,
        "release_manager",
    );
    assert!(
        matches!(again, Err(DecideError::Policy(PolicyRefusal::SameReviewer { ref person, .. })) if person == "bob"),
        "{again:?}"
    );
}

fn signed_in(key_id: &str, subject: &str) -> KeyRef {
    KeyRef {
        person: Some(Person {
            issuer: "https://idp.example".into(),
            subject: subject.into(),
            name: Some(format!("Person {subject}")),
            email: Some(format!("{subject}@example.com")),
        }),
        ..KeyRef::key(key_id)
    }
}

#[test]
fn one_person_with_a_key_and_two_sessions_gives_one_vote() {
    let policy = parse(json!({"rules": [{"name": "two", "approvals": 2}]}));
    let review = call("deploy", "R1");
    let once = as_key(
        &review,
        &policy,
        &signed_in("ses_1", "dana"),
        Approved,
        "sre",
    )
    .unwrap();
    for other in [
        signed_in("ses_2", "dana"),
        signed_in("ses_3", "dana"),
        key("key_ops", "DANA@example.com"),
    ] {
        let again = as_key(&once, &policy, &other, Approved, "sre");
        assert!(
            matches!(
                again,
                Err(DecideError::Policy(PolicyRefusal::SameReviewer { .. }))
            ),
            "{other:?}: {again:?}"
        );
    }
    let twice = as_key(&once, &policy, &signed_in("ses_2", "erin"), Approved, "sre").unwrap();
    assert_eq!(twice.confirm.status, ConfirmStatus::Approved);
    let receipt = ReceiptBody::of(&twice).unwrap().unwrap();
    let people: Vec<_> = receipt
        .decisions
        .iter()
        .map(|d| d.decided_by_person.as_ref().unwrap().id())
        .collect();
    assert_eq!(
        people,
        ["dana at https://idp.example", "erin at https://idp.example"]
    );
    assert!(
        receipt
            .decisions
            .iter()
            .all(|d| d.channel == Some(Channel::Slack)),
        "each decision names where it was made"
    );
}

#[test]
fn a_signed_in_person_may_not_approve_what_their_own_agent_asked() {
    let policy = parse(json!({"rules": [{"name": "strict", "self_approval": "forbid"}]}));
    let mut review = call("deploy", "R0");
    review.requester = Some(key("key_agent", "dana@example.com"));
    let err = as_key(
        &review,
        &policy,
        &signed_in("ses_1", "dana"),
        Approved,
        "sre",
    )
    .unwrap_err();
    assert!(
        matches!(err, DecideError::Policy(PolicyRefusal::SelfApproval { .. })),
        "{err:?}"
    );
}

#[test]
fn a_role_that_would_crowd_out_a_required_one_is_refused() {
    let policy = payments();
    let once = by(
        "bob",
        Approved,
        "security_officer",
        &call("payments.refund", "R4"),
        &policy,
    )
    .unwrap();
    let err = by("carol", Approved, "security_officer", &once, &policy).unwrap_err();
    assert_eq!(
        err.to_string(),
        "rule `payments` still needs an approval from release_manager: approve as release_manager, or leave this approval to someone who can"
    );
}

#[test]
fn the_requesters_owner_may_not_approve_high_risk_calls_by_default() {
    let policy = parse(json!({"rules": [{"name": "ops", "tool": "deploy*"}]}));
    let high = by("alice", Approved, "sre", &call("deploy", "R3"), &policy);
    assert!(
        matches!(
            high,
            Err(DecideError::Policy(PolicyRefusal::SelfApproval { .. }))
        ),
        "{high:?}"
    );
    let low = by("alice", Approved, "sre", &call("deploy", "R2"), &policy);
    assert_eq!(low.unwrap().confirm.status, ConfirmStatus::Approved);
    let forbid = parse(json!({"rules": [{"name": "strict", "self_approval": "forbid"}]}));
    let err = by("alice", Approved, "sre", &call("deploy", "R0"), &forbid).unwrap_err();
    assert!(
        err.to_string()
            .contains("rule `strict` forbids approving your own request"),
        "{err}"
    );
    let rejected = by("alice", Rejected, "sre", &call("deploy", "R4"), &forbid);
    assert_eq!(
        rejected.unwrap().confirm.status,
        ConfirmStatus::Rejected,
        "saying no to your own request is fine"
    );
}

#[test]
fn without_a_policy_one_approval_decides_as_before() {
    let none = Policy::default();
    let review = call("payments.refund", "R4");
    assert_eq!(
        none.rule_for(&review).self_approval,
        Some(SelfApproval::Allow)
    );
    let done = by("alice", Approved, "sre", &review, &none).unwrap();
    assert_eq!(done.confirm.status, ConfirmStatus::Approved);
}

#[test]
fn a_rejection_vetoes_unless_the_rule_says_otherwise() {
    let policy = payments();
    let vetoed = by(
        "bob",
        Rejected,
        "x",
        &call("payments.refund", "R4"),
        &policy,
    )
    .unwrap();
    assert_eq!(vetoed.confirm.status, ConfirmStatus::Rejected);
    let kept = by("bob", Rejected, "x", &call("tickets.close", "R1"), &policy).unwrap();
    assert_eq!(kept.confirm.status, ConfirmStatus::Pending);
    let one = by("carol", Approved, "x", &kept, &policy).unwrap();
    let two = by("dave", Approved, "x", &one, &policy).unwrap();
    assert_eq!(two.confirm.status, ConfirmStatus::Approved);
}

#[test]
fn edits_and_standing_grants_are_refused_under_a_quorum() {
    let policy = payments();
    let rule = policy.rule_for(&call("payments.refund", "R4")).into_owned();
    let mut approve = input(DecisionStatus::Approved, "release_manager");
    approve.tool_call = Some(ToolChoice {
        mode: Some(ToolMode::Edit),
        args: Some(r#"{"amount": 1}"#.into()),
        ..ToolChoice::default()
    });
    let reviewer = key("k1", "bob");
    let judge = Judge {
        rule: &rule,
        reviewer: &reviewer,
        channel: None,
    };
    let err = decide_under(
        &call("payments.refund", "R4"),
        &approve,
        judge,
        now(),
        &mut ids(),
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            DecideError::Policy(PolicyRefusal::OnlyOnce { needed: 2, .. })
        ),
        "{err:?}"
    );
}

#[test]
fn policy_problems_name_the_rule_and_field() {
    let cases = [
        (
            json!([{"name": "all"}, {"name": "late", "tool": "x"}]),
            "late",
            "can never match: every request it matches is taken by the earlier rule `all`",
        ),
        (
            json!([{"name": "p", "tool": "pay*"}, {"name": "q", "tool": "payments"}]),
            "q",
            "taken by the earlier rule `p`",
        ),
        (
            json!([{"name": "r", "required_roles": ["a", "b"], "approvals": 1}]),
            "required_roles",
            "2 roles are required but only 1 approval(s)",
        ),
        (
            json!([{"name": "z", "approvals": 0}]),
            "approvals",
            "at least 1 approval",
        ),
        (
            json!([{"name": "t", "target": ["plan"], "tool": "x"}]),
            "tool",
            "can never match",
        ),
        (
            json!([{"name": "e", "risk": []}]),
            "risk",
            "an empty list matches nothing",
        ),
        (
            json!([{"name": "d"}, {"name": "d", "tool": "y"}]),
            "name",
            "already used",
        ),
        (
            json!([{"name": "w", "expires_after": "10m", "escalate_after": "1h"}]),
            "escalate_after",
            "never happens",
        ),
    ];
    for (rules, field_or_rule, message) in cases {
        let policy = parse(json!({ "rules": rules }));
        let problems = policy.problems();
        assert!(
            problems.iter().any(|p| p.message.contains(message)
                && (p.field == field_or_rule || policy.rules[p.rule].name == field_or_rule)),
            "{rules}: {problems:?}"
        );
    }
    let fine = parse(json!({"rules": [
        {"name": "a", "tool": "payments.*", "risk": ["R4"]},
        {"name": "b", "tool": "payments.*"},
        {"name": "c", "target": ["plan"]},
        {"name": "d"},
    ]}));
    assert_eq!(fine.problems(), []);
    let rule: Rule = serde_json::from_value(json!({"name": "x"})).unwrap();
    assert!(rule.veto && rule.approvals == 1);
}

#[test]
fn a_resubmitted_request_starts_a_new_round_of_approvals() {
    let plans = parse(json!({"rules": [{"name": "plans", "target": ["plan"], "approvals": 2}]}));
    let review = countersign_domain::demo::reviews(now())
        .unwrap()
        .into_iter()
        .find(|r| {
            r.plan().is_some()
                && r.validate().is_empty()
                && r.confirm.status == ConfirmStatus::Pending
        })
        .unwrap();
    let once = by("bob", Approved, "x", &review, &plans).unwrap();
    let vetoed = by("carol", Rejected, "x", &once, &plans).unwrap();
    assert_eq!(vetoed.confirm.status, ConfirmStatus::Rejected);
    let again = countersign_domain::resubmit(
        &vetoed,
        countersign_domain::review::Resubmission {
            by_role: vetoed.confirm.requested_by_role.clone(),
            revised_plan: None,
            reason: Some("smaller batch".into()),
        },
        now(),
        &mut ids(),
    )
    .unwrap();
    let rule = plans.rule_for(&again);
    assert_eq!(Standing::of(&again, &rule).approvals, []);
    let bob_again = by("bob", Approved, "x", &again, &plans).unwrap();
    assert_eq!(
        bob_again.confirm.status,
        ConfirmStatus::Pending,
        "bob's earlier approval does not count twice"
    );
    let met = by("dave", Approved, "x", &bob_again, &plans).unwrap();
    assert_eq!(met.confirm.status, ConfirmStatus::Approved);
    assert_eq!(
        ReceiptBody::of(&met).unwrap().unwrap().decisions.len(),
        2,
        "only this round's decisions"
    );
}

fn escalating() -> Policy {
    parse(json!({"rules": [
        {"name": "payments", "tool": "payments.*", "escalate_after": "15m", "expires_after": "1h"},
    ]}))
}

#[test]
fn a_review_escalates_once_at_its_rules_time() {
    let policy = escalating();
    let mut review = call("payments.refund", "R2");
    policy.schedule_escalation(&mut review, now());
    let due = now() + chrono::TimeDelta::minutes(15);
    assert_eq!(review.escalation_due().map(|t| t.to_utc()), Some(due));
    let early = due - chrono::TimeDelta::seconds(1);
    assert!(countersign_domain::escalate_if_due(&review, early, &mut ids()).is_none());
    let escalated = countersign_domain::escalate_if_due(&review, due, &mut ids()).unwrap();
    assert!(escalated.escalated());
    assert_eq!(escalated.confirm.status, ConfirmStatus::Pending);
    assert!(
        escalated.validate().is_empty(),
        "{:?}",
        escalated.validate()
    );
    assert!(countersign_domain::wire::ReviewSummary::of(&escalated).escalated);
    let later = due + chrono::TimeDelta::hours(1);
    assert!(countersign_domain::escalate_if_due(&escalated, later, &mut ids()).is_none());
}

#[test]
fn only_a_rule_with_a_delay_escalates_and_a_decision_stops_it() {
    let policy = escalating();
    let mut other = call("tickets.create", "R2");
    policy.schedule_escalation(&mut other, now());
    assert_eq!(other.escalation_due(), None);
    let mut review = call("payments.refund", "R2");
    policy.schedule_escalation(&mut review, now());
    let input = DecisionInput {
        status: Approved,
        decided_by_role: "reviewer".into(),
        reason: None,
        tool_call: None,
    };
    let decided = countersign_domain::decide(&review, &input, now(), &mut ids()).unwrap();
    assert_eq!(decided.escalation_due(), None);
    let later = now() + chrono::TimeDelta::days(1);
    assert!(countersign_domain::escalate_if_due(&decided, later, &mut ids()).is_none());
}
