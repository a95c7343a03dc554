//! Tool-call approvals: RFC 8785 vectors, canonical-form properties, every
//! decision kind, scope rules, expiry, grants and every token-redeem failure.

use chrono::{DateTime, Duration, TimeZone, Utc};
use countersign_domain::model::{ConfirmStatus, DecisionStatus};
use countersign_domain::policy::ExpiryDecision;
use countersign_domain::toolcall::{
    approve_by_grant, canonicalize, canonicalize_text, expire_if_due, grants, new_tool_call_review,
    redeem, withdraw, CallHash, OutcomeKind, RedeemError, Redemption, Scope, ToolCall,
    ToolCallSubmission, ToolChoice, ToolDecideError, ToolMode, ToolOutcome, WithdrawError,
};
use countersign_domain::wire::ErrorCode;
use countersign_domain::wire::ReviewSummary;
use countersign_domain::{decide, DecideError, DecisionInput, MplpId, Review};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap()
}

/// Fresh ids, unique across the whole test run.
fn ids() -> impl FnMut() -> MplpId {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    || {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        MplpId::parse(&format!("00000000-0000-4000-8000-{n:012x}")).unwrap()
    }
}

fn submission(args: Value, tier: &str) -> ToolCallSubmission {
    serde_json::from_value(json!({
        "requestedByRole": "payments-agent",
        "sessionId": "sess-1",
        "runId": "run-1",
        "workspace": "acme",
        "clientDeviceId": "laptop-7",
        "toolCall": {"name": "wire_transfer", "args": args},
        "humanSummary": "Wire transfer",
        "riskTier": tier,
        "riskReasons": ["moves money out of the company"],
    }))
    .unwrap()
}

fn pending(tier: &str) -> Review {
    new_tool_call_review(
        submission(json!({"amount": 5000, "to": "ACME GmbH"}), tier),
        now(),
        &mut ids(),
    )
    .unwrap()
}

fn approve(choice: Option<ToolChoice>) -> DecisionInput {
    DecisionInput {
        status: DecisionStatus::Approved,
        decided_by_role: "finance_lead".into(),
        reason: None,
        tool_call: choice,
    }
}

fn choice(mode: ToolMode) -> ToolChoice {
    ToolChoice {
        mode: Some(mode),
        ..ToolChoice::default()
    }
}

fn outcome(review: &Review) -> &ToolOutcome {
    review.tool_call().unwrap().outcome.as_ref().unwrap()
}

fn redemption(review: &Review, hash: &CallHash) -> Redemption {
    let token = outcome(review).token.as_ref().unwrap();
    Redemption {
        token_id: token.token_id,
        approval_id: Some(token.approval_id),
        tool_call_hash: hash.clone(),
        client_device_id: Some("laptop-7".into()),
    }
}

// --- RFC 8785 -------------------------------------------------------------

#[test]
fn every_rfc8785_vector_canonicalizes_byte_exact() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jcs");
    let mut checked = 0;
    for entry in std::fs::read_dir(dir.join("input")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let input = std::fs::read_to_string(&path).unwrap();
        let expected = std::fs::read(dir.join("output").join(&name)).unwrap();
        let hex = std::fs::read_to_string(dir.join("outhex").join(name.replace(".json", ".txt")))
            .unwrap();
        let from_hex: Vec<u8> = hex
            .split_whitespace()
            .map(|b| u8::from_str_radix(b, 16).unwrap())
            .collect();
        assert_eq!(expected, from_hex, "{name}: output and outhex disagree");
        let got = canonicalize_text(&input).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(got.as_bytes(), expected.as_slice(), "{name}");
        checked += 1;
    }
    assert_eq!(checked, 6, "every vector file was checked");
}

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-(1i64 << 53) + 1..(1i64 << 53)).prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(".{0,8}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Writes `value` with its object members in reverse order and extra spaces.
fn reordered_spaced(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let members: Vec<String> = map
                .iter()
                .rev()
                .map(|(k, v)| format!(" {} :\n {} ", Value::String(k.clone()), reordered_spaced(v)))
                .collect();
            format!("{{ {} }}", members.join(" ,\t"))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(reordered_spaced).collect();
            format!("[ {} ]", items.join(" , "))
        }
        other => other.to_string(),
    }
}

proptest! {
    #[test]
    fn canonicalization_is_idempotent(value in arbitrary_json()) {
        let once = canonicalize(&value).unwrap();
        prop_assert_eq!(canonicalize_text(&once).unwrap(), once);
    }

    #[test]
    fn key_order_and_whitespace_do_not_change_the_canonical_form(value in arbitrary_json()) {
        let canonical = canonicalize(&value).unwrap();
        prop_assert_eq!(canonicalize_text(&reordered_spaced(&value)).unwrap(), canonical);
    }
}

#[test]
fn integers_beyond_two_to_the_53_are_refused_with_their_path() {
    let err = new_tool_call_review(
        submission(json!({"amount": 9007199254740993u64}), "R2"),
        now(),
        &mut ids(),
    )
    .unwrap_err();
    assert_eq!(err.len(), 1);
    assert_eq!(err[0].path, "/toolCall/args/amount");
    assert_eq!(err[0].code.as_str(), "unsafe_number");
}

// --- requests -------------------------------------------------------------

#[test]
fn a_submission_becomes_a_valid_pending_review_that_expires_in_five_minutes() {
    let review = pending("R3");
    assert!(review.validate().is_empty(), "{:?}", review.validate());
    let request = &review.tool_call().unwrap().request;
    assert_eq!(
        request.tool_call_canonical,
        r#"{"args":{"amount":5000,"to":"ACME GmbH"},"name":"wire_transfer"}"#
    );
    assert_eq!(
        request.tool_call_hash,
        CallHash::of_canonical(&request.tool_call_canonical)
    );
    assert_eq!(request.expires_at.to_utc(), now() + Duration::minutes(5));
    assert_eq!(review.confirm.target_id, request.approval_id);
    assert_eq!(review.confirm.target_type.to_string(), "other");
    // It round-trips as JSON, as it is stored.
    let text = serde_json::to_string(&review).unwrap();
    assert_eq!(serde_json::from_str::<Review>(&text).unwrap(), review);
}

#[test]
fn a_tampered_request_is_invalid_at_its_paths() {
    let mut review = pending("R2");
    let call = match &mut review.target {
        Some(countersign_domain::Target::ToolCall(call)) => call,
        _ => unreachable!(),
    };
    call.request.tool_call_canonical =
        r#"{"name":"wire_transfer","args":{"amount":50000,"to":"ACME GmbH"}}"#.into();
    let codes: Vec<(String, String)> = review
        .validate()
        .into_iter()
        .map(|i| (i.path, i.code.as_str().to_owned()))
        .collect();
    assert!(codes.contains(&(
        "/target/tool_call/request/toolCallCanonical".into(),
        "not_canonical".into()
    )));
    assert!(codes.contains(&(
        "/target/tool_call/request/toolCallHash".into(),
        "hash_mismatch".into()
    )));
    let err = decide(&review, &approve(None), now(), &mut ids()).unwrap_err();
    assert!(matches!(err, DecideError::InvalidTarget(_)), "{err}");
}

// --- decisions -------------------------------------------------------------

#[test]
fn approve_once_mints_a_single_use_token_for_the_exact_call() {
    let review = pending("R3");
    let hash = review.tool_call().unwrap().request.tool_call_hash.clone();
    let next = decide(&review, &approve(None), now(), &mut ids()).unwrap();
    assert_eq!(next.confirm.status, ConfirmStatus::Approved);
    let outcome = outcome(&next);
    assert_eq!(outcome.kind, OutcomeKind::Approved);
    assert_eq!(outcome.decision_id, next.confirm.decisions()[0].decision_id);
    let token = outcome.token.as_ref().unwrap();
    assert_eq!(token.tool_call_hash, hash);
    assert!(token.single_use);
    assert_eq!(
        token.issued_to_client_device_id.as_deref(),
        Some("laptop-7")
    );
    assert!(outcome.grant.is_none());
}

#[test]
fn approve_with_modifications_records_both_hashes_and_tokens_the_edited_call() {
    let review = pending("R4");
    let original = review.tool_call().unwrap().request.tool_call_hash.clone();
    let edit = ToolChoice {
        args: Some(r#"{ "to": "ACME GmbH", "amount": 500 }"#.into()),
        ..choice(ToolMode::Edit)
    };
    let next = decide(&review, &approve(Some(edit)), now(), &mut ids()).unwrap();
    let outcome = outcome(&next);
    assert_eq!(outcome.kind, OutcomeKind::Edited);
    assert_eq!(outcome.original_hash, original);
    let edited = r#"{"args":{"amount":500,"to":"ACME GmbH"},"name":"wire_transfer"}"#;
    assert_eq!(outcome.approved_call.as_deref(), Some(edited));
    let edited_hash = CallHash::of_canonical(edited);
    assert_eq!(outcome.approved_hash.as_ref(), Some(&edited_hash));
    assert_eq!(outcome.token.as_ref().unwrap().tool_call_hash, edited_hash);
    // The token runs the edited call, not the original one.
    assert!(redeem(&next, &redemption(&next, &edited_hash), now(), &mut ids()).is_ok());
    let err = redeem(&next, &redemption(&next, &original), now(), &mut ids()).unwrap_err();
    assert_eq!(err.code().as_str(), "token_hash_mismatch");
}

#[test]
fn a_call_approved_with_changes_says_what_changed_wherever_it_is_listed() {
    let review = pending("R3");
    let asked = ReviewSummary::of(&review).title;
    assert_eq!(asked, "wire_transfer: Wire transfer");
    let edit = ToolChoice {
        args: Some(r#"{"to": "ACME GmbH", "amount": 1000, "memo": "Q3"}"#.into()),
        ..choice(ToolMode::Edit)
    };
    let next = decide(&review, &approve(Some(edit)), now(), &mut ids()).unwrap();
    assert_eq!(
        ReviewSummary::of(&next).title,
        "wire_transfer: Wire transfer — approved with changes: amount 5000 → 1000, memo — → Q3"
    );
    // Approved as asked: the title is the request's.
    let once = decide(
        &review,
        &approve(Some(choice(ToolMode::Once))),
        now(),
        &mut ids(),
    )
    .unwrap();
    assert_eq!(ReviewSummary::of(&once).title, asked);
}

#[test]
fn edits_that_are_not_an_object_are_refused() {
    let review = pending("R2");
    for (args, says) in [
        ("[1]", "object"),
        ("{oops", "not JSON"),
        ("{\"n\": 9007199254740993}", "canonical"),
    ] {
        let edit = ToolChoice {
            args: Some(args.into()),
            ..choice(ToolMode::Edit)
        };
        let err = decide(&review, &approve(Some(edit)), now(), &mut ids()).unwrap_err();
        assert!(err.to_string().contains(says), "{args}: {err}");
    }
}

#[test]
fn deny_and_feedback_reach_the_agent_and_mint_nothing() {
    let review = pending("R2");
    let deny = DecisionInput {
        status: DecisionStatus::Rejected,
        decided_by_role: "finance_lead".into(),
        reason: Some("not this month".into()),
        tool_call: None,
    };
    let denied = decide(&review, &deny, now(), &mut ids()).unwrap();
    assert_eq!(outcome(&denied).kind, OutcomeKind::Denied);
    assert_eq!(outcome(&denied).message.as_deref(), Some("not this month"));
    assert!(outcome(&denied).token.is_none());

    let feedback = DecisionInput {
        reason: Some("split it into two payments".into()),
        tool_call: Some(choice(ToolMode::Feedback)),
        ..deny.clone()
    };
    let answered = decide(&review, &feedback, now(), &mut ids()).unwrap();
    assert_eq!(outcome(&answered).kind, OutcomeKind::Feedback);
    assert_eq!(answered.confirm.status, ConfirmStatus::Rejected);
    assert!(outcome(&answered).token.is_none());

    let no_text = DecisionInput {
        reason: None,
        ..feedback
    };
    assert_eq!(
        decide(&review, &no_text, now(), &mut ids()).unwrap_err(),
        DecideError::ReasonRequired
    );
}

#[test]
fn workspace_scope_is_refused_for_r4_and_needs_a_second_confirmation_for_r3() {
    let workspace = |confirm: bool| ToolChoice {
        scope: Some(Scope::Workspace),
        confirm_high_risk: confirm,
        ..choice(ToolMode::Scope)
    };
    let r4 = pending("R4");
    assert_eq!(
        decide(&r4, &approve(Some(workspace(true))), now(), &mut ids()).unwrap_err(),
        DecideError::ToolCall(ToolDecideError::ScopeRefused)
    );
    let r3 = pending("R3");
    assert_eq!(
        decide(&r3, &approve(Some(workspace(false))), now(), &mut ids()).unwrap_err(),
        DecideError::ToolCall(ToolDecideError::NeedsConfirmation)
    );
    let granted = decide(&r3, &approve(Some(workspace(true))), now(), &mut ids()).unwrap();
    assert_eq!(
        outcome(&granted).grant.as_ref().unwrap().scope,
        Scope::Workspace
    );
    let r2 = pending("R2");
    assert!(decide(&r2, &approve(Some(workspace(false))), now(), &mut ids()).is_ok());
}

#[test]
fn expired_requests_cannot_be_approved_and_close_as_denied() {
    let review = pending("R2");
    let later = now() + Duration::minutes(5);
    let err = decide(&review, &approve(None), later, &mut ids()).unwrap_err();
    assert!(
        matches!(err, DecideError::ToolCall(ToolDecideError::Expired(_))),
        "{err}"
    );
    assert!(expire_if_due(
        &review,
        ExpiryDecision::Cancelled,
        now() + Duration::minutes(4),
        &mut ids()
    )
    .is_none());
    let closed = expire_if_due(&review, ExpiryDecision::Cancelled, later, &mut ids()).unwrap();
    assert_eq!(closed.confirm.status, ConfirmStatus::Cancelled);
    assert_eq!(outcome(&closed).kind, OutcomeKind::Expired);
    assert!(outcome(&closed)
        .message
        .as_deref()
        .unwrap()
        .contains("expired"));
}

#[test]
fn a_call_whose_agent_cannot_run_edits_refuses_an_edit_and_takes_approval_as_asked() {
    let mut sub = submission(json!({"amount": 5}), "R2");
    sub.editable = false;
    let review = new_tool_call_review(sub, now(), &mut ids()).unwrap();
    assert!(!review.tool_call().unwrap().request.editable);
    let mut edit = choice(ToolMode::Edit);
    edit.args = Some(r#"{"amount": 1}"#.into());
    let err = decide(&review, &approve(Some(edit)), now(), &mut ids()).unwrap_err();
    assert_eq!(err, DecideError::ToolCall(ToolDecideError::EditRefused));
    assert!(
        err.to_string().contains("cannot run edited arguments"),
        "{err}"
    );
    let approved = decide(
        &review,
        &approve(Some(choice(ToolMode::Once))),
        now(),
        &mut ids(),
    );
    assert_eq!(outcome(&approved.unwrap()).kind, OutcomeKind::Approved);
    // Absent, it is editable, and it is stored without the field.
    let plain = pending("R2");
    assert!(plain.tool_call().unwrap().request.editable);
    let stored = serde_json::to_value(&plain).unwrap();
    assert!(stored["target"]["tool_call"]["request"]
        .get("editable")
        .is_none());
}

#[test]
fn an_agent_withdraws_its_pending_call_which_then_cannot_be_approved() {
    let review = pending("R3");
    let withdrawn = withdraw(&review, Some("the user cancelled"), now(), &mut ids()).unwrap();
    assert_eq!(withdrawn.confirm.status, ConfirmStatus::Cancelled);
    let decision = withdrawn.confirm.last_decision().unwrap();
    assert_eq!(decision.decided_by_role, review.confirm.requested_by_role);
    assert_eq!(
        decision.reason.as_deref(),
        Some("withdrawn by the agent: the user cancelled")
    );
    assert_eq!(outcome(&withdrawn).kind, OutcomeKind::Withdrawn);
    assert!(outcome(&withdrawn).token.is_none());
    assert!(decide(&withdrawn, &approve(None), now(), &mut ids()).is_err());
    assert_eq!(
        withdraw(&withdrawn, None, now(), &mut ids()).unwrap_err(),
        WithdrawError::NotPending(ConfirmStatus::Cancelled)
    );
    // Past its expiry it closes as expired.
    let late = withdraw(&review, None, now() + Duration::minutes(6), &mut ids()).unwrap();
    assert_eq!(outcome(&late).kind, OutcomeKind::Expired);
}

// --- grants ------------------------------------------------------------------

fn later_call(args: Value, session: &str, tier: &str, minutes: i64) -> Review {
    let mut sub = submission(args, tier);
    sub.session_id = session.into();
    new_tool_call_review(sub, now() + Duration::minutes(minutes), &mut ids()).unwrap()
}

#[test]
fn a_session_grant_approves_the_same_call_again_with_its_own_token() {
    let first = pending("R3");
    let scoped = ToolChoice {
        scope: Some(Scope::Session),
        ..choice(ToolMode::Scope)
    };
    let approved = decide(&first, &approve(Some(scoped)), now(), &mut ids()).unwrap();
    let all = [approved.clone()];
    let grant = grants(&all)[0].clone();

    let same = later_call(
        json!({"amount": 5000, "to": "ACME GmbH"}),
        "sess-1",
        "R3",
        20,
    );
    let auto = approve_by_grant(&same, &grant, now() + Duration::minutes(20), &mut ids())
        .expect("covered")
        .unwrap();
    let auto_outcome = outcome(&auto);
    assert_eq!(auto_outcome.approved_by_grant, Some(grant.grant_id));
    assert_ne!(
        auto_outcome.token.as_ref().unwrap().token_id,
        outcome(&approved).token.as_ref().unwrap().token_id
    );
    let decision = &auto.confirm.decisions()[0];
    assert!(decision
        .reason
        .as_deref()
        .unwrap()
        .contains(&grant.grant_id.to_string()));
    assert_eq!(decision.decided_by_role, "finance_lead");

    // Other arguments, another session, or a riskier call are not covered.
    let other_args = later_call(
        json!({"amount": 9000, "to": "ACME GmbH"}),
        "sess-1",
        "R3",
        1,
    );
    assert!(approve_by_grant(&other_args, &grant, now(), &mut ids()).is_none());
    let other_session = later_call(
        json!({"amount": 5000, "to": "ACME GmbH"}),
        "sess-2",
        "R3",
        1,
    );
    assert!(approve_by_grant(&other_session, &grant, now(), &mut ids()).is_none());
    let riskier = later_call(
        json!({"amount": 5000, "to": "ACME GmbH"}),
        "sess-1",
        "R4",
        1,
    );
    assert!(approve_by_grant(&riskier, &grant, now(), &mut ids()).is_none());
}

#[test]
fn a_whole_tool_grant_for_fifteen_minutes_covers_other_args_until_it_ends() {
    let first = pending("R2");
    let scoped = ToolChoice {
        scope: Some(Scope::FifteenMinutes),
        whole_tool: true,
        ..choice(ToolMode::Scope)
    };
    let approved = decide(&first, &approve(Some(scoped)), now(), &mut ids()).unwrap();
    let grant = outcome(&approved).grant.clone().unwrap();
    assert!(grant.call_hash.is_none());
    let other = later_call(json!({"amount": 12, "to": "Bob"}), "sess-1", "R2", 0);
    let at = |m| now() + Duration::minutes(m);
    assert!(approve_by_grant(&other, &grant, at(14), &mut ids()).is_some());
    assert!(approve_by_grant(&other, &grant, at(15), &mut ids()).is_none());
}

// --- tokens -----------------------------------------------------------------

#[test]
fn every_redeem_failure_has_its_own_code() {
    let review = pending("R3");
    let hash = review.tool_call().unwrap().request.tool_call_hash.clone();
    let approved = decide(&review, &approve(None), now(), &mut ids()).unwrap();
    let good = redemption(&approved, &hash);

    let used = redeem(&approved, &good, now(), &mut ids()).unwrap();
    assert!(outcome(&used).token.as_ref().unwrap().used_at.is_some());
    let event = used.confirm.events.as_ref().unwrap().last().unwrap();
    assert_eq!(event.event_type.as_str(), "token.redeemed");

    let code = |r: &Review, p: &Redemption, at: DateTime<Utc>| {
        redeem(r, p, at, &mut ids()).unwrap_err().code()
    };
    // replay
    assert_eq!(code(&used, &good, now()).as_str(), "token_used");
    // expired
    assert_eq!(
        code(&approved, &good, now() + Duration::minutes(5)),
        ErrorCode::TokenExpired
    );
    // tampered args
    let tampered = ToolCall {
        name: "wire_transfer".into(),
        args: json!({"amount": 50000, "to": "ACME GmbH"})
            .as_object()
            .unwrap()
            .clone(),
    };
    let p = redemption(&approved, &tampered.hash().unwrap());
    assert_eq!(code(&approved, &p, now()).as_str(), "token_hash_mismatch");
    // another approval's token
    let other = decide(&pending("R3"), &approve(None), now(), &mut ids()).unwrap();
    let other_token = outcome(&other).token.as_ref().unwrap();
    let p = Redemption {
        approval_id: Some(other_token.approval_id),
        ..good.clone()
    };
    assert_eq!(code(&approved, &p, now()).as_str(), "token_other_approval");
    // wrong device
    let p = Redemption {
        client_device_id: Some("phone-2".into()),
        ..good.clone()
    };
    assert_eq!(code(&approved, &p, now()).as_str(), "token_device_mismatch");
    // unknown token
    let p = Redemption {
        token_id: MplpId::parse("00000000-0000-4000-8000-0000000fffff").unwrap(),
        ..good
    };
    assert!(matches!(
        redeem(&approved, &p, now(), &mut ids()),
        Err(RedeemError::Unknown(_))
    ));
    assert_eq!(code(&approved, &p, now()).as_str(), "token_unknown");
}
