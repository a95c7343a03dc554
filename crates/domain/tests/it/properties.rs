//! Property tests: DAG checks against a reference, round trips, no panics on any
//! JSON, `decide` consistency, layout invariants.

use crate::common::counter_ids;
use chrono::{DateTime, TimeZone, Utc};
use countersign_domain::graph::StepGraph;
use countersign_domain::layout::{layout_plan, LayoutOptions};
use countersign_domain::model::{ConfirmStatus, DecisionStatus};
use countersign_domain::toolcall::canonicalize;
use countersign_domain::wire::ReceiptBody;
use countersign_domain::{
    decide, validate_document, DecisionInput, Document, IssueCode, MplpId, Review,
};
use proptest::prelude::*;
use serde_json::{json, Value};

fn id(n: usize) -> String {
    format!("00000000-0000-4000-8000-{n:012x}")
}

/// A plan whose step i depends on the listed earlier-or-later steps.
fn plan_json(deps: &[Vec<usize>]) -> Value {
    let steps: Vec<Value> = deps
        .iter()
        .enumerate()
        .map(|(i, d)| {
            json!({
                "step_id": id(i + 1),
                "description": format!("step {i}"),
                "status": "pending",
                "dependencies": d.iter().map(|&j| id(j + 1)).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "meta": {"protocol_version": "1.0.0", "schema_version": "1.0.0"},
        "plan_id": id(0xAAAA),
        "context_id": id(0xBBBB),
        "title": "Generated",
        "objective": "Property test",
        "status": "proposed",
        "steps": steps,
    })
}

/// Reference cycle check: repeatedly remove steps with no remaining dependencies.
fn has_cycle_reference(deps: &[Vec<usize>]) -> bool {
    let n = deps.len();
    let mut removed = vec![false; n];
    loop {
        let next = (0..n).find(|&i| !removed[i] && deps[i].iter().all(|&d| removed[d]));
        match next {
            Some(i) => removed[i] = true,
            None => return removed.iter().any(|r| !r),
        }
    }
}

/// Random DAG: step i depends only on earlier steps (so acyclic), then with
/// `inject` a back edge from an earlier step to a later one is added.
fn dag_strategy() -> impl Strategy<Value = (Vec<Vec<usize>>, Option<(usize, usize)>)> {
    (2usize..40).prop_flat_map(|n| {
        let deps = (0..n)
            .map(|i| {
                if i == 0 {
                    Just(vec![]).boxed()
                } else {
                    prop::collection::vec(0..i, 0..3).boxed()
                }
            })
            .collect::<Vec<_>>();
        (deps, prop::option::of((0..n, 0..n)))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn cycle_detection_matches_reference((mut deps, inject) in dag_strategy()) {
        if let Some((a, b)) = inject {
            if a != b {
                let (early, late) = (a.min(b), a.max(b));
                deps[early].push(late);
            }
        }
        for d in &mut deps { d.sort(); d.dedup(); }
        let expected = has_cycle_reference(&deps);
        let report = validate_document(&plan_json(&deps));
        let cycles: Vec<_> = report.issues.iter().filter(|i| i.code == IssueCode::DependencyCycle).collect();
        prop_assert_eq!(!cycles.is_empty(), expected, "{:?}", deps);
        prop_assert!(report.issues.iter().all(|i| i.code == IssueCode::DependencyCycle), "{:?}", report.issues);

        let (graph, problems) = StepGraph::build(deps.iter().enumerate().map(|(i, d)| (Some(i), d.iter().map(|&x| Some(x)).collect::<Vec<_>>())));
        prop_assert!(problems.is_empty());
        match graph.topological_order() {
            Ok(order) => {
                prop_assert!(!expected);
                let mut at = vec![0; deps.len()];
                for (k, &s) in order.iter().enumerate() { at[s] = k; }
                for (s, d) in deps.iter().enumerate() {
                    for &x in d { prop_assert!(at[x] < at[s]); }
                }
            }
            Err(found) => {
                prop_assert!(expected);
                for cycle in found {
                    let c = &cycle.0;
                    for k in 0..c.len() {
                        let (from, to) = (c[k], c[(k + 1) % c.len()]);
                        prop_assert!(deps[from].contains(&to), "{} does not depend on {}", from, to);
                    }
                }
            }
        }
    }

    #[test]
    fn valid_plans_round_trip((deps, _) in dag_strategy(), order in prop::option::of(0u64..1000), role in "[a-z_]{1,12}") {
        let mut plan = plan_json(&deps);
        plan["steps"][0]["order_index"] = order.map_or(Value::Null, Value::from);
        if order.is_none() { plan["steps"][0].as_object_mut().unwrap().remove("order_index"); }
        plan["steps"][0]["agent_role"] = Value::from(role);
        let document = Document::from_value(&plan).unwrap();
        prop_assert_eq!(document.to_value(), plan);
    }

    #[test]
    fn no_json_panics_validation(value in arbitrary_json()) {
        let report = validate_document(&value);
        let _ = Document::from_value(&value);
        for issue in report.issues {
            prop_assert!(issue.path.is_empty() || issue.path.starts_with('/'));
            prop_assert!(!issue.message.is_empty());
        }
    }

    #[test]
    fn mutated_confirms_never_panic(field in "[a-z_]{1,20}", value in arbitrary_json()) {
        let mut confirm = sample_confirm();
        confirm[field.as_str()] = value;
        let _ = validate_document(&confirm);
        let _ = Document::from_value(&confirm);
    }

    #[test]
    fn decide_keeps_confirms_consistent(steps in prop::collection::vec(decision_input(), 1..6)) {
        let mut ids = counter_ids();
        let mut review: Review = serde_json::from_value(json!({"confirm": sample_confirm(), "target": {"plan": plan_json(&[vec![], vec![0]])}})).unwrap();
        review.confirm.target_id = MplpId::parse(&id(0xAAAA)).unwrap();
        let mut t: DateTime<Utc> = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        for input in steps {
            t += chrono::Duration::seconds(30);
            let before = review.clone();
            match decide(&review, &input, t, &mut ids) {
                Ok(next) => {
                    prop_assert_eq!(before.confirm.status, ConfirmStatus::Pending);
                    prop_assert_eq!(next.confirm.decisions().len(), before.confirm.decisions().len() + 1);
                    let last = next.confirm.last_decision().unwrap();
                    prop_assert_eq!(ConfirmStatus::from(last.status), next.confirm.status);
                    prop_assert!(!last.decided_by_role.trim().is_empty());
                    if last.status == DecisionStatus::Rejected {
                        prop_assert!(last.reason.as_deref().is_some_and(|r| !r.trim().is_empty()));
                    }
                    prop_assert!(next.validate().is_empty(), "{:?}", next.validate());
                    review = next;
                }
                Err(_) => prop_assert_eq!(&review, &before),
            }
        }
    }

    #[test]
    fn layouts_are_deterministic_and_layered((mut deps, inject) in dag_strategy()) {
        if let Some((a, b)) = inject { if a < b { deps[a].push(b); } }
        let document = Document::from_value(&plan_json(&deps)).unwrap();
        let Document::Plan(plan) = document else { unreachable!() };
        let options = LayoutOptions::default();
        let layout = layout_plan(&plan, &options);
        prop_assert_eq!(&layout, &layout_plan(&plan, &options));
        prop_assert_eq!(layout.nodes.len(), deps.len());
        for edge in &layout.edges {
            let (from, to) = (layout.nodes[edge.from].layer, layout.nodes[edge.to].layer);
            prop_assert!(edge.on_cycle || from < to, "edge {:?} goes up", (edge.from, edge.to));
        }
        for a in 0..layout.nodes.len() {
            for b in a + 1..layout.nodes.len() {
                let (na, nb) = (layout.nodes[a], layout.nodes[b]);
                if na.layer == nb.layer {
                    prop_assert!((na.x - nb.x).abs() >= options.node_width + options.node_gap - 1e-6);
                }
            }
            prop_assert!(layout.nodes[a].x >= -1e-6 && layout.nodes[a].x + options.node_width <= layout.width + 1e-6);
        }
        for pair in layout.critical_path.windows(2) {
            prop_assert!(deps[pair[1]].contains(&pair[0]));
        }
    }
}

fn sample_confirm() -> Value {
    json!({
        "meta": {"protocol_version": "1.0.0", "schema_version": "1.0.0"},
        "confirm_id": id(0xCCCC),
        "target_type": "plan",
        "target_id": id(0xAAAA),
        "status": "pending",
        "requested_by_role": "planner",
        "requested_at": "2026-01-01T00:00:00Z",
    })
}

fn decision_input() -> impl Strategy<Value = DecisionInput> {
    (
        prop::sample::select(DecisionStatus::ALL.to_vec()),
        prop::sample::select(vec!["dba", "", "  ", "security_officer"]),
        prop::option::of(prop::sample::select(vec![
            "",
            "  ",
            "looks fine",
            "missing rollback",
        ])),
    )
        .prop_map(|(s, r, reason)| DecisionInput {
            status: s,
            decided_by_role: r.into(),
            reason: reason.map(Into::into),
            tool_call: None,
        })
}

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::from),
        prop::sample::select(vec![
            "pending",
            "plan",
            "1.0.0",
            "2025-01-01T00:00:00Z",
            "550e8400-e29b-41d4-a716-446655440000"
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            prop::collection::btree_map(
                prop::sample::select(vec![
                    "meta",
                    "steps",
                    "plan_id",
                    "confirm_id",
                    "trace_id",
                    "root",
                    "step_id",
                    "dependencies",
                    "status",
                    "x"
                ])
                .prop_map(String::from),
                inner,
                0..6
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A receipt's signed bytes, written straight from the body, are the RFC
    /// 8785 form of its JSON, whatever the strings in it hold.
    #[test]
    fn receipt_signed_bytes_are_the_canonical_form_of_its_json(
        rule in any::<String>(),
        role in any::<String>(),
        owner in any::<String>(),
        name in any::<String>(),
        email in any::<String>(),
        device in any::<String>(),
    ) {
        let hash = "a".repeat(64);
        let body: ReceiptBody = serde_json::from_value(json!({
            "version": 1,
            "confirm_id": id(1),
            "status": "approved",
            "target": {"kind": "tool_call", "id": id(2), "sha256": hash},
            "decisions": [{
                "decision_id": id(3),
                "status": "approved",
                "decided_by_role": role,
                "decided_by_key": "key_1",
                "decided_by_owner": owner,
                "decided_by_person": {"issuer": "https://idp.example", "subject": "s", "name": name, "email": email},
                "channel": "slack",
                "decided_at": "2026-12-07T10:00:00.000Z",
            }],
            "rule": rule,
            "approved_by_grant": id(4),
            "scope": "15m",
            "token": {"token_id": id(5), "tool_call_hash": hash, "expires_at": "2026-12-07T10:15:00.000Z", "client_device_id": device},
        }))
        .unwrap();
        let value = serde_json::to_value(&body).unwrap();
        let canonical = canonicalize(&value).unwrap();
        prop_assert_eq!(String::from_utf8(body.signed_bytes().unwrap()).unwrap(), canonical);
    }
}
