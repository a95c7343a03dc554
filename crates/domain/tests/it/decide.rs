//! `decide` and `resubmit` through golden flow-05 and every error case.

use crate::common::{counter_ids, fixtures, read_json};
use chrono::{DateTime, Utc};
use countersign_domain::model::{Confirm, ConfirmStatus, DecisionStatus, Plan, PlanStatus};
use countersign_domain::review::{learning_sample, Resubmission};
use countersign_domain::toolcall::{canonicalize, CallHash};
use countersign_domain::validate::validate_learning_sample;
use countersign_domain::{decide, resubmit, DecideError, DecisionInput, IssueCode, Review, Target};
use serde_json::Value;

fn flow05(file: &str) -> Value {
    read_json(
        &fixtures()
            .join("mplp/golden/flows/flow-05-single-agent-confirm-required")
            .join(file),
    )
}

fn at(text: &str) -> DateTime<Utc> {
    text.parse().unwrap()
}

/// The request as the agent submitted it: the golden input confirm, pending,
/// before any decision (the input file already carries one decision record).
fn submitted_review() -> Review {
    let mut confirm = flow05("input/confirm.json");
    confirm.as_object_mut().unwrap().remove("decisions");
    let confirm: Confirm = serde_json::from_value(confirm).unwrap();
    let mut plan: Plan = serde_json::from_value(flow05("input/plan.json")).unwrap();
    plan.status = PlanStatus::Proposed;
    Review {
        confirm,
        target: Some(Target::Plan(plan)),
        deciders: Vec::new(),
        requester: None,
        escalate_at: None,
        target_sha256: None,
    }
}

fn input(status: &str, role: &str, reason: Option<&str>) -> DecisionInput {
    DecisionInput {
        status: status.parse().expect("a decision status"),
        decided_by_role: role.into(),
        reason: reason.map(Into::into),
        tool_call: None,
    }
}

/// Masks what `decide` generates (ids, times) and drops events, which the golden
/// confirm records in the trace rather than on the confirm.
fn comparable(confirm: &Confirm) -> Value {
    let mut v = serde_json::to_value(confirm).unwrap();
    let map = v.as_object_mut().unwrap();
    map.remove("events");
    for d in map
        .get_mut("decisions")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        d["decision_id"] = Value::from("<generated>");
        d["decided_at"] = Value::from("<time>");
    }
    v
}

#[test]
fn golden_flow_05_replays_reject_resubmit_approve() {
    let mut ids = counter_ids();
    let review = submitted_review();
    let rejected = decide(
        &review,
        &input(
            "rejected",
            "dba_reviewer",
            Some("Missing rollback plan for high-risk migration"),
        ),
        at("2025-12-01T12:05:00Z"),
        &mut ids,
    )
    .unwrap();
    assert_eq!(rejected.confirm.status, ConfirmStatus::Rejected);
    assert_eq!(rejected.plan().unwrap().status, PlanStatus::Draft);

    // A rejected request cannot be decided again until its requester resubmits.
    let again = decide(
        &rejected,
        &input("approved", "dba_reviewer", None),
        at("2025-12-01T12:06:00Z"),
        &mut ids,
    );
    assert!(matches!(
        again,
        Err(DecideError::NotPending {
            status: ConfirmStatus::Rejected,
            ..
        })
    ));

    let reopened = resubmit(
        &rejected,
        Resubmission {
            by_role: "agent".into(),
            revised_plan: None,
            reason: None,
        },
        at("2025-12-01T12:10:00Z"),
        &mut ids,
    )
    .unwrap();
    assert_eq!(reopened.confirm.status, ConfirmStatus::Pending);
    assert_eq!(reopened.plan().unwrap().status, PlanStatus::Proposed);

    let approved = decide(
        &reopened,
        &input(
            "approved",
            "dba_reviewer",
            Some("Rollback addressed via manual procedure documentation"),
        ),
        at("2025-12-01T12:15:00Z"),
        &mut ids,
    )
    .unwrap();
    let expected: Confirm = serde_json::from_value(flow05("expected/confirm.json")).unwrap();
    assert_eq!(comparable(&approved.confirm), comparable(&expected));
    assert_eq!(approved.plan().unwrap().status, PlanStatus::Approved);
    assert_eq!(
        approved.confirm.decisions()[1].decided_at.as_str(),
        "2025-12-01T12:15:00.000Z"
    );

    let event_types: Vec<&str> = approved
        .confirm
        .events
        .iter()
        .flatten()
        .map(|e| e.event_type.as_str())
        .collect();
    assert_eq!(
        event_types,
        [
            "decision.rejected",
            "confirm.resubmitted",
            "decision.approved"
        ]
    );
    let plan_events: Vec<&str> = approved
        .plan()
        .unwrap()
        .events
        .iter()
        .flatten()
        .map(|e| e.event_type.as_str())
        .collect();
    assert_eq!(plan_events, ["plan.returned.to.draft", "plan.approved"]);
    assert!(approved.validate().is_empty(), "{:#?}", approved.validate());
}

#[test]
fn learning_sample_of_the_replayed_flow_is_valid() {
    let mut ids = counter_ids();
    let review = submitted_review();
    assert!(learning_sample(&review, at("2025-12-01T12:00:00Z"), &mut ids).is_none());
    let decided = decide(
        &review,
        &input("approved", "dba_reviewer", None),
        at("2025-12-01T12:05:00Z"),
        &mut ids,
    )
    .unwrap();
    let sample = learning_sample(&decided, at("2025-12-01T13:00:00Z"), &mut ids).unwrap();
    let value = serde_json::to_value(&sample).unwrap();
    assert_eq!(validate_learning_sample(&value), vec![]);
    assert_eq!(value["sample_family"], "confirm_decision");
    assert_eq!(value["output"]["final_status"], "approved");
    assert_eq!(value["output"]["decision_rounds"], 1);
    assert_eq!(value["meta"]["human_feedback_label"], "approved");
    assert_eq!(value["meta"]["decision_latency_ms"], 4 * 60 * 1000);
    // The same sections as the official flow-05 learning-sample example.
    let official = read_json(&fixtures().join("mplp/examples/flow-05-confirm-sample.json"));
    for key in [
        "sample_id",
        "sample_family",
        "created_at",
        "input",
        "output",
        "meta",
    ] {
        assert!(
            official.get(key).is_some() && value.get(key).is_some(),
            "{key}"
        );
    }
    for key in [
        "final_status",
        "decision_rounds",
        "rejection_reason",
        "decider_role",
    ] {
        assert!(
            official["output"].get(key).is_some() && value["output"].get(key).is_some(),
            "{key}"
        );
    }
}

#[test]
fn decide_errors_are_typed_with_messages() {
    let mut ids = counter_ids();
    let review = submitted_review();
    let now = at("2025-12-01T12:05:00Z");
    let cases = [
        (input("approved", "  ", None), "EmptyRole"),
        (input("rejected", "dba", None), "ReasonRequired"),
        (input("rejected", "dba", Some("   ")), "ReasonRequired"),
    ];
    for (given, expected) in cases {
        let err = decide(&review, &given, now, &mut ids).unwrap_err();
        assert!(
            format!("{err:?}").starts_with(expected),
            "{given:?}: {err:?}"
        );
        assert!(!err.to_string().is_empty());
    }
}

#[test]
fn a_decision_request_names_its_status_or_is_refused_where_it_is_read() {
    let read = |status: &str| {
        serde_json::from_value::<DecisionInput>(serde_json::json!({
            "status": status,
            "decided_by_role": "dba",
        }))
    };
    assert_eq!(read("rejected").unwrap().status, DecisionStatus::Rejected);
    let refused = read("maybe").unwrap_err().to_string();
    assert!(
        refused.contains("maybe") && refused.contains("approved"),
        "{refused}"
    );
}

#[test]
fn a_plan_with_a_cycle_can_be_rejected_but_never_approved() {
    let mut ids = counter_ids();
    let mut review = submitted_review();
    let Some(Target::Plan(plan)) = &mut review.target else {
        unreachable!()
    };
    let first = plan.steps[0].step_id;
    plan.steps[0].dependencies = Some(vec![plan.steps[2].step_id]);
    let now = at("2025-12-01T12:05:00Z");
    match decide(&review, &input("approved", "dba", None), now, &mut ids) {
        Err(DecideError::InvalidTarget(issues)) => {
            assert_eq!(issues.len(), 1);
            assert_eq!(issues[0].code, IssueCode::DependencyCycle);
            assert_eq!(issues[0].path, "/target/plan/steps/0/dependencies/0");
            assert!(
                issues[0].message.contains("Export user table"),
                "{}",
                issues[0].message
            );
        }
        other => panic!("approved a cyclic plan: {other:?}"),
    }
    let rejected = decide(
        &review,
        &input("rejected", "dba", Some("It has a cycle")),
        now,
        &mut ids,
    )
    .unwrap();
    assert_eq!(rejected.confirm.status, ConfirmStatus::Rejected);
    assert_eq!(rejected.plan().unwrap().steps[0].step_id, first);
}

#[test]
fn decided_requests_report_the_decision_that_stands() {
    let mut ids = counter_ids();
    let now = at("2025-12-01T12:05:00Z");
    let cancelled = decide(
        &submitted_review(),
        &input("cancelled", "dba", None),
        now,
        &mut ids,
    )
    .unwrap();
    assert_eq!(
        cancelled.plan().unwrap().status,
        PlanStatus::Proposed,
        "cancelling leaves the plan as it was"
    );
    match decide(&cancelled, &input("approved", "dba", None), now, &mut ids) {
        Err(DecideError::NotPending { status, last }) => {
            assert_eq!(status, ConfirmStatus::Cancelled);
            assert_eq!(last.unwrap().decided_by_role, "dba");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn approval_needs_a_plan_awaiting_approval() {
    let mut ids = counter_ids();
    let mut review = submitted_review();
    if let Some(Target::Plan(plan)) = &mut review.target {
        plan.status = PlanStatus::InProgress;
    }
    let err = decide(
        &review,
        &input("approved", "dba", None),
        at("2025-12-01T12:05:00Z"),
        &mut ids,
    )
    .unwrap_err();
    assert!(
        matches!(err, DecideError::TargetNotAwaitingApproval(_)),
        "{err:?}"
    );
}

#[test]
fn only_the_requester_resubmits_and_only_the_same_plan() {
    let mut ids = counter_ids();
    let now = at("2025-12-01T12:05:00Z");
    let rejected = decide(
        &submitted_review(),
        &input("rejected", "dba", Some("no")),
        now,
        &mut ids,
    )
    .unwrap();
    let by = |role: &str| Resubmission {
        by_role: role.into(),
        revised_plan: None,
        reason: None,
    };
    assert!(resubmit(&rejected, by("dba"), now, &mut ids).is_err());
    assert!(resubmit(&submitted_review(), by("agent"), now, &mut ids).is_err());
    let mut other: Plan = serde_json::from_value(flow05("input/plan.json")).unwrap();
    other.plan_id =
        countersign_domain::MplpId::parse("550e8400-e29b-41d4-a716-446655449999").unwrap();
    let revised = Resubmission {
        by_role: "agent".into(),
        revised_plan: Some(other),
        reason: None,
    };
    assert!(resubmit(&rejected, revised, now, &mut ids).is_err());
}

/// The hash a receipt names for a plan: SHA-256 of its canonical JSON.
fn plan_hash(review: &Review) -> CallHash {
    let plan = serde_json::to_value(review.plan().unwrap()).unwrap();
    CallHash::of_canonical(&canonicalize(&plan).unwrap())
}

#[test]
fn a_plan_keeps_the_hash_of_what_was_asked_through_decisions_and_resubmissions() {
    let mut ids = counter_ids();
    let now = at("2025-12-01T12:05:00Z");
    let mut asked = submitted_review();
    asked.fix_target_hash().unwrap();
    assert_eq!(asked.target_sha256, Some(plan_hash(&asked)));
    let rejected = decide(&asked, &input("rejected", "dba", Some("no")), now, &mut ids).unwrap();
    // The rejection moved the plan to draft; the hash is still the one asked.
    assert_ne!(plan_hash(&rejected), plan_hash(&asked));
    assert_eq!(rejected.target_sha256, asked.target_sha256);

    let mut revised: Plan = serde_json::from_value(flow05("input/plan.json")).unwrap();
    revised.title = "A smaller plan".into();
    let again = Resubmission {
        by_role: "agent".into(),
        revised_plan: Some(revised),
        reason: None,
    };
    let reopened = resubmit(&rejected, again, now, &mut ids).unwrap();
    assert_eq!(reopened.target_sha256, Some(plan_hash(&reopened)));
    assert_ne!(reopened.target_sha256, asked.target_sha256);
}

#[test]
fn a_review_without_its_plan_cannot_be_approved() {
    let mut ids = counter_ids();
    let mut review = submitted_review();
    review.target = None;
    match decide(
        &review,
        &input("approved", "dba", None),
        at("2025-12-01T12:05:00Z"),
        &mut ids,
    ) {
        Err(DecideError::InvalidTarget(issues)) => {
            assert_eq!(issues[0].code, IssueCode::MissingTarget)
        }
        other => panic!("{other:?}"),
    }
}
