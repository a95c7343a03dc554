//! Conformance with the official MPLP v1.0 data: golden flows, negative fixtures,
//! the spec texts' (invalid) examples, and round trips.

use crate::common::{fixtures, read_json};
use countersign_domain::{validate_bundle, validate_document, Document, DocumentKind, IssueCode};
use serde_json::Value;
use std::path::PathBuf;

const MPLP_MODULES: [&str; 4] = ["confirm", "plan", "context", "trace"];

/// An official example without its generator's `$comment` annotation (the closed
/// schemas would reject it as a field; it is not part of the document).
fn example(path: &std::path::Path) -> Value {
    let mut value = read_json(path);
    if let Some(map) = value.as_object_mut() {
        map.remove("$comment");
    }
    value
}

/// Every Confirm/Plan/Context/Trace file of the golden flows, grouped by folder.
fn golden_groups() -> Vec<(PathBuf, Vec<PathBuf>)> {
    let flows = fixtures().join("mplp/golden/flows");
    let mut groups = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&flows)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    for flow in dirs {
        // Only inputs and expected outputs: `tool-call-flow/pack/artifacts` holds
        // evidence-pack records (no `meta`, UUID v5 ids), not MPLP documents.
        for sub in ["input", "expected"] {
            let dir = flow.join(sub);
            if !dir.is_dir() {
                continue;
            }
            let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| MPLP_MODULES.iter().any(|m| p.file_stem().unwrap() == *m))
                .collect();
            files.sort();
            groups.push((dir, files));
        }
    }
    groups
}

#[test]
fn every_golden_flow_file_validates_alone_and_together() {
    let groups = golden_groups();
    let mut files = 0;
    for (dir, paths) in &groups {
        let values: Vec<Value> = paths.iter().map(|p| read_json(p)).collect();
        for (path, value) in paths.iter().zip(&values) {
            let report = validate_document(value);
            let expected_kind = path.file_stem().unwrap().to_str().unwrap();
            assert_eq!(report.kind.as_str(), expected_kind, "{}", path.display());
            assert!(
                report.is_valid(),
                "{}: {:#?}",
                path.display(),
                report.issues
            );
            files += 1;
        }
        for (path, report) in paths.iter().zip(validate_bundle(&values)) {
            assert!(
                report.is_valid(),
                "{} with its flow: {:#?}",
                path.display(),
                report.issues
            );
        }
        assert!(!paths.is_empty(), "{} has no MPLP files", dir.display());
    }
    assert!(files >= 30, "only {files} golden files found");
}

#[test]
fn golden_and_example_documents_round_trip_exactly() {
    let mut paths: Vec<PathBuf> = golden_groups().into_iter().flat_map(|(_, p)| p).collect();
    let examples = fixtures().join("mplp/examples");
    for entry in std::fs::read_dir(&examples).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        if MPLP_MODULES
            .iter()
            .any(|m| name.starts_with(&format!("{m}.")))
        {
            paths.push(path);
        }
    }
    for path in paths {
        let value = example(&path);
        let document = Document::from_value(&value)
            .unwrap_or_else(|r| panic!("{}: {:#?}", path.display(), r.issues));
        assert_eq!(
            document.to_value(),
            value,
            "{} changed in a round trip",
            path.display()
        );
    }
}

#[test]
fn official_schema_examples_validate() {
    for entry in std::fs::read_dir(fixtures().join("mplp/examples")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap();
        if name.starts_with("flow-05") {
            continue;
        }
        let report = validate_document(&example(&path));
        assert!(report.is_valid(), "{name}: {:#?}", report.issues);
    }
}

#[test]
fn every_negative_fixture_is_rejected_at_the_right_path() {
    let cases = [
        (
            "confirm_invalid_enum.json",
            DocumentKind::Confirm,
            "/status",
            IssueCode::InvalidEnum,
        ),
        (
            "context_extra_forbidden.json",
            DocumentKind::Context,
            "/meta/extra_field",
            IssueCode::UnknownField,
        ),
        (
            "context_invalid_datetime.json",
            DocumentKind::Context,
            "/meta/created_at",
            IssueCode::InvalidTimestamp,
        ),
        (
            "context_invalid_uuid.json",
            DocumentKind::Context,
            "/context_id",
            IssueCode::InvalidId,
        ),
        (
            "context_missing_required.json",
            DocumentKind::Context,
            "/context_id",
            IssueCode::MissingField,
        ),
        (
            "plan_step_missing_id.json",
            DocumentKind::Plan,
            "/steps/0/step_id",
            IssueCode::MissingField,
        ),
    ];
    let dir = fixtures().join("mplp/negative");
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        cases.len(),
        "a negative fixture has no case"
    );
    for (file, kind, path, code) in cases {
        let report = validate_document(&read_json(&dir.join(file)));
        assert_eq!(report.kind, kind, "{file}");
        assert!(
            report
                .issues
                .iter()
                .any(|i| i.path == path && i.code == code),
            "{file}: expected {code} at {path}, got {:#?}",
            report.issues
        );
        assert!(
            Document::from_value(&read_json(&dir.join(file))).is_err(),
            "{file} was typed"
        );
    }
}

#[test]
fn negative_fixture_messages_name_the_problem() {
    let report = validate_document(&read_json(
        &fixtures().join("mplp/negative/confirm_invalid_enum.json"),
    ));
    let status = report.issues.iter().find(|i| i.path == "/status").unwrap();
    assert_eq!(
        status.message,
        "`status` must be one of pending, approved, rejected, cancelled: found \"WRONG_STATUS\""
    );
    // The fixture's ids are version-1 UUIDs; the schema's pattern wants version 4.
    let id = report
        .issues
        .iter()
        .find(|i| i.path == "/confirm_id")
        .unwrap();
    assert_eq!(id.code, IssueCode::InvalidId);
    assert!(id.message.contains("not version 4"), "{}", id.message);
}

#[test]
fn spec_prose_examples_are_rejected_clearly() {
    let dir = fixtures().join("spec-examples");
    let risk = validate_document(&read_json(&dir.join("risk-flow-confirm.json")));
    assert_eq!(risk.kind, DocumentKind::Confirm);
    let find = |path: &str| {
        risk.issues
            .iter()
            .find(|i| i.path == path)
            .unwrap_or_else(|| panic!("no issue at {path}: {:#?}", risk.issues))
    };
    let camel = find("/meta/protocolVersion");
    assert_eq!(camel.code, IssueCode::UnknownField);
    assert!(
        camel.message.contains("MPLP spells it `protocol_version`"),
        "{}",
        camel.message
    );
    assert_eq!(find("/meta/protocol_version").code, IssueCode::MissingField);
    assert_eq!(find("/meta/source").code, IssueCode::UnknownField);
    let id = find("/confirm_id");
    assert_eq!(id.code, IssueCode::InvalidId);
    assert!(id.message.contains("\"conf-8829-x1\""), "{}", id.message);
    assert_eq!(find("/target_id").code, IssueCode::InvalidId);
    assert_eq!(find("/trace/trace_id").code, IssueCode::InvalidId);
    assert_eq!(find("/trace/span_id").code, IssueCode::InvalidId);

    let plan = validate_document(&read_json(&dir.join("plan-module-example.json")));
    assert_eq!(plan.kind, DocumentKind::Plan);
    for path in [
        "/plan_id",
        "/context_id",
        "/steps/0/step_id",
        "/steps/4/dependencies/1",
        "/trace/trace_id",
    ] {
        assert!(
            plan.issues
                .iter()
                .any(|i| i.path == path && i.code == IssueCode::InvalidId),
            "{path}: {:#?}",
            plan.issues
        );
    }
    assert!(plan
        .issues
        .iter()
        .any(|i| i.path == "/trace/span_id" && i.code == IssueCode::MissingField));

    let confirm = validate_document(&read_json(&dir.join("confirm-module-example.json")));
    assert!(confirm
        .issues
        .iter()
        .any(|i| i.path == "/decisions/0/decision_id" && i.code == IssueCode::InvalidId));
    assert!(Document::from_value(&read_json(&dir.join("confirm-module-example.json"))).is_err());
}

#[test]
fn invariants_across_documents() {
    let flow = fixtures().join("mplp/golden/flows/flow-05-single-agent-confirm-required/input");
    let confirm = read_json(&flow.join("confirm.json"));
    let plan = read_json(&flow.join("plan.json"));
    let context = read_json(&flow.join("context.json"));
    let mut other_plan = plan.clone();
    other_plan["plan_id"] = Value::from("550e8400-e29b-41d4-a716-446655449999");
    other_plan["context_id"] = Value::from("550e8400-e29b-41d4-a716-446655448888");
    let reports = validate_bundle(&[confirm, other_plan, context]);
    assert_eq!(reports[0].issues[0].code, IssueCode::TargetMismatch);
    assert_eq!(reports[0].issues[0].path, "/target_id");
    assert_eq!(reports[1].issues[0].code, IssueCode::ContextMismatch);
    assert!(reports[2].is_valid());
}

#[test]
fn protocol_version_must_be_1_0_0() {
    let mut plan = example(&fixtures().join("mplp/examples/plan.minimal.json"));
    plan["meta"]["protocol_version"] = Value::from("2.0.0");
    let report = validate_document(&plan);
    assert_eq!(report.issues.len(), 1);
    assert_eq!(report.issues[0].code, IssueCode::UnsupportedProtocolVersion);
    assert_eq!(report.issues[0].path, "/meta/protocol_version");
}

#[test]
fn a_given_agent_role_must_name_a_role() {
    let mut plan = example(&fixtures().join("mplp/examples/plan.minimal.json"));
    plan["steps"][0]["agent_role"] = Value::from("  ");
    let report = validate_document(&plan);
    assert_eq!(report.issues.len(), 1, "{:#?}", report.issues);
    assert_eq!(report.issues[0].path, "/steps/0/agent_role");
    assert_eq!(report.issues[0].code, IssueCode::EmptyString);
}

#[test]
fn a_decided_status_must_be_recorded_by_the_last_decision() {
    let flow = fixtures().join("mplp/golden/flows/flow-05-single-agent-confirm-required/input");
    let pending = read_json(&flow.join("confirm.json"));
    assert!(
        validate_document(&pending).is_valid(),
        "pending with a decision not yet applied"
    );
    let mut approved = pending.clone();
    approved["status"] = Value::from("approved");
    assert!(
        validate_document(&approved).is_valid(),
        "approved by its last decision"
    );

    let mut forged = pending.clone();
    forged["status"] = Value::from("approved");
    forged["decisions"] = Value::Array(vec![]);
    let report = validate_document(&forged);
    assert_eq!(report.issues.len(), 1, "{:#?}", report.issues);
    assert_eq!(report.issues[0].path, "/status");
    assert_eq!(report.issues[0].code, IssueCode::StatusWithoutDecision);
    assert_eq!(
        report.issues[0].message,
        "the status says approved but the history holds no decision"
    );

    let mut overwritten = pending;
    overwritten["status"] = Value::from("cancelled");
    let report = validate_document(&overwritten);
    assert_eq!(
        report.issues[0].message,
        "the status says cancelled but the last decision in the history is approved"
    );
}
