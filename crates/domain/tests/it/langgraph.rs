//! LangGraph interrupts: every shape (human interrupt, LangChain's middleware
//! in batched and per-call mode), lists, several interrupts per thread, values
//! in no shape, the thread's owner and status, and the resume values. The
//! thread JSON follows what `langgraph dev` (langgraph-api 0.16) returns; the
//! files in `fixtures/langgraph/` were returned by it for the graphs in
//! `tests/langgraph/` (langchain 1.5.0).

use chrono::{TimeZone, Utc};
use countersign_domain::langgraph::{
    pending_interrupts, resume_run, resume_value, run_failure, Agent, Answer, AnswerRefused,
    PendingInterrupt, Shape, ThreadStatus, RAW_INTERRUPT,
};
use countersign_domain::model::{ConfirmStatus, DecisionStatus};
use countersign_domain::toolcall::{ToolChoice, ToolMode};
use countersign_domain::{decide, DecisionInput};
use serde_json::{json, Value};

fn thread(interrupts: Value) -> Value {
    json!({
        "thread_id": "01a2050c-b98d-7647-a20f-b172a63c47ff",
        "updated_at": "2026-11-22T20:57:30.589071+00:00",
        "status": "interrupted",
        "interrupts": interrupts,
    })
}

fn human(action: &str, edit: bool) -> Value {
    json!({
        "action_request": {"action": action, "args": {"to": "a@example.com"}},
        "config": {"allow_accept": true, "allow_edit": edit, "allow_respond": true, "allow_ignore": true},
        "description": "Send **the** email",
    })
}

#[test]
fn a_human_interrupt_becomes_one_valid_tool_call_review() {
    let t = thread(json!({"task-1": [{"id": "int-1", "value": human("send_email", true)}]}));
    let pending = pending_interrupts(&t);
    assert_eq!(pending.len(), 1);
    let p = &pending[0];
    assert_eq!((p.name.as_str(), p.index), ("send_email", 0));
    assert_eq!(p.shape, Shape::HumanInterrupt { list: false });
    assert_eq!(
        p.allowed,
        vec![
            Answer::Accept,
            Answer::Edit,
            Answer::Respond,
            Answer::Ignore
        ]
    );
    let now = Utc.with_ymd_and_hms(2026, 11, 22, 21, 0, 0).unwrap();
    let review = p.to_review(now).unwrap();
    assert!(review.validate().is_empty(), "{:?}", review.validate());
    assert_eq!(review.confirm.status, ConfirmStatus::Pending);
    let request = &review.tool_call().unwrap().request;
    assert_eq!(
        request.tool_call_canonical,
        r#"{"args":{"to":"a@example.com"},"name":"send_email"}"#
    );
    assert_eq!(request.human_summary, "Send **the** email");
    assert_eq!(request.session_id, "01a2050c-b98d-7647-a20f-b172a63c47ff");
    // The same interrupt maps to the same review on every poll.
    assert_eq!(pending_interrupts(&t)[0].approval_id(), p.approval_id());
    assert_eq!(review.confirm.target_id, p.approval_id());
    assert_eq!(p.to_review(now).unwrap(), review, "ids are stable");

    assert_eq!(
        resume_value(
            &p.shape,
            vec![p.answer(Answer::Accept, None, None).unwrap()]
        ),
        json!({"type": "accept", "args": null})
    );
    let edited = json!({"to": "b@example.com"});
    assert_eq!(
        p.answer(Answer::Edit, edited.as_object(), None).unwrap(),
        json!({"type": "edit", "args": {"action": "send_email", "args": {"to": "b@example.com"}}})
    );
    assert_eq!(
        p.answer(Answer::Respond, None, Some("use the template"))
            .unwrap(),
        json!({"type": "response", "args": "use the template"})
    );
    assert_eq!(
        p.answer(Answer::Approve, None, None),
        None,
        "not this shape's answer"
    );
}

#[test]
fn a_list_of_human_interrupts_gives_one_review_each_and_a_list_answer() {
    let t = thread(
        json!({"task-1": [{"id": "int-1", "value": [human("send_email", false), human("archive", true)]}]}),
    );
    let pending = pending_interrupts(&t);
    assert_eq!(pending.len(), 2);
    assert_eq!(pending[1].index, 1);
    assert_ne!(pending[0].approval_id(), pending[1].approval_id());
    assert_eq!(
        pending[0].answer(Answer::Edit, None, None),
        None,
        "edit not allowed"
    );
    let answers = vec![
        pending[0].answer(Answer::Ignore, None, None).unwrap(),
        pending[1].answer(Answer::Accept, None, None).unwrap(),
    ];
    assert_eq!(
        resume_value(&pending[0].shape, answers),
        json!([{"type": "ignore", "args": null}, {"type": "accept", "args": null}])
    );
}

#[test]
fn the_middleware_shape_is_answered_with_decisions_in_order() {
    let value = json!({
        "action_requests": [
            {"name": "write_file", "args": {"path": "a.txt"}, "description": "Write a.txt"},
            {"name": "run_sql", "args": {"query": "DELETE FROM t"}, "description": "Run SQL"},
        ],
        "review_configs": [
            {"action_name": "write_file", "allowed_decisions": ["approve", "edit", "reject"]},
            {"action_name": "run_sql", "allowed_decisions": ["approve", "reject"]},
        ],
    });
    let t = thread(json!({"task-1": [{"id": "int-9", "value": value}]}));
    let pending = pending_interrupts(&t);
    assert_eq!(pending.len(), 2);
    assert_eq!(pending[0].shape, Shape::Middleware { count: 2 });
    assert_eq!(pending[1].allowed, vec![Answer::Approve, Answer::Reject]);
    assert_eq!(pending[1].answer(Answer::EditAction, None, None), None);
    let edited = json!({"path": "b.txt"});
    let answers = vec![
        pending[0]
            .answer(Answer::EditAction, edited.as_object(), None)
            .unwrap(),
        pending[1]
            .answer(Answer::Reject, None, Some("never DELETE without WHERE"))
            .unwrap(),
    ];
    assert_eq!(
        resume_value(&pending[0].shape, answers),
        json!({"decisions": [
            {"type": "edit", "edited_action": {"name": "write_file", "args": {"path": "b.txt"}}},
            {"type": "reject", "message": "never DELETE without WHERE"},
        ]})
    );
}

#[test]
fn a_thread_with_two_interrupts_lists_both_and_resumes_them_by_id() {
    let t = thread(json!({
        "task-1": [{"id": "int-1", "value": human("send_email", true)}],
        "task-2": [{"id": "int-2", "value": human("archive", true)}],
    }));
    let pending = pending_interrupts(&t);
    assert_eq!(
        pending
            .iter()
            .map(|p| p.interrupt_id.as_str())
            .collect::<Vec<_>>(),
        vec!["int-1", "int-2"]
    );
    let accept = json!({"type": "accept", "args": null});
    let agent = Agent {
        assistant_id: "fe096781-5601-53d2-b2f6-0d3403f7e9ca".into(),
        graph_id: Some("agent".into()),
    };
    assert_eq!(
        resume_run(&agent, [("int-2".to_owned(), accept.clone())]),
        json!({
            "assistant_id": "fe096781-5601-53d2-b2f6-0d3403f7e9ca",
            "command": {"resume": {"int-2": accept}},
            "multitask_strategy": "reject",
        })
    );
    // Two interrupts of the thread answered by one run.
    let reject = json!({"type": "reject", "message": "no"});
    assert_eq!(
        resume_run(
            &agent,
            [
                ("int-1".to_owned(), reject.clone()),
                ("int-2".to_owned(), accept.clone())
            ]
        )["command"],
        json!({"resume": {"int-1": reject, "int-2": accept}})
    );
}

#[test]
fn a_value_in_neither_shape_is_kept_as_raw_json_with_a_note() {
    let t = thread(json!({"task-1": [
        {"id": "int-1", "value": "Should I continue?"},
        {"id": "int-2", "value": {"action_requests": [{"args": {}}]}},
    ]}));
    let pending = pending_interrupts(&t);
    assert_eq!(pending.len(), 2, "nothing is dropped");
    for p in &pending {
        assert_eq!(p.name, RAW_INTERRUPT);
        assert!(matches!(&p.shape, Shape::Unrecognized { note } if note.contains("raw JSON")));
    }
    assert_eq!(pending[0].args["value"], "Should I continue?");
    let now = Utc.with_ymd_and_hms(2026, 11, 22, 21, 0, 0).unwrap();
    let review = pending[0].to_review(now).unwrap();
    assert!(review.validate().is_empty());
    assert!(review
        .tool_call()
        .unwrap()
        .request
        .human_summary
        .contains("unknown shape"));
}

/// Decides the review of `p` through the domain and returns the answer sent to LangGraph.
fn answer_after(
    p: &PendingInterrupt,
    status: DecisionStatus,
    reason: &str,
    choice: Option<ToolChoice>,
) -> Result<Value, String> {
    let now = Utc.with_ymd_and_hms(2026, 11, 22, 21, 0, 0).unwrap();
    let review = p.to_review(now).unwrap();
    let input = DecisionInput {
        status,
        decided_by_role: "ops-lead".into(),
        reason: Some(reason.into()),
        tool_call: choice,
    };
    let mut n = 0u32;
    let mut ids = move || {
        n += 1;
        countersign_domain::MplpId::parse(&format!("00000000-0000-4000-8000-{n:012x}")).unwrap()
    };
    let decided = decide(&review, &input, now, &mut ids).map_err(|e| e.to_string())?;
    let outcome = decided.tool_call().unwrap().outcome.clone().unwrap();
    p.answer_for(&outcome).map_err(|e| e.to_string())
}

fn mode(mode: ToolMode, args: Option<&str>) -> Option<ToolChoice> {
    Some(ToolChoice {
        mode: Some(mode),
        args: args.map(str::to_owned),
        ..ToolChoice::default()
    })
}

#[test]
fn recorded_decisions_become_the_answers_each_shape_allows() {
    let t = thread(json!({
        "task-1": [{"id": "int-1", "value": [human("send_email", true)]}],
        "task-2": [{"id": "int-2", "value": {
            "action_requests": [{"name": "run_sql", "args": {"query": "SELECT 1"}}],
            "review_configs": [{"action_name": "run_sql", "allowed_decisions": ["approve", "edit", "reject"]}],
        }}],
        "task-3": [{"id": "int-3", "value": {"question": "Which region?"}}],
    }));
    let pending = pending_interrupts(&t);
    let (human, middleware, raw) = (&pending[0], &pending[1], &pending[2]);
    assert_eq!(
        answer_after(
            human,
            DecisionStatus::Approved,
            "",
            mode(ToolMode::Once, None)
        ),
        Ok(json!({"type": "accept", "args": null}))
    );
    assert_eq!(
        answer_after(
            human,
            DecisionStatus::Approved,
            "",
            mode(ToolMode::Edit, Some(r#"{"to": "b@example.com"}"#))
        ),
        Ok(
            json!({"type": "edit", "args": {"action": "send_email", "args": {"to": "b@example.com"}}})
        )
    );
    assert_eq!(
        answer_after(
            human,
            DecisionStatus::Rejected,
            "use the template",
            mode(ToolMode::Feedback, None)
        ),
        Ok(json!({"type": "response", "args": "use the template"}))
    );
    assert_eq!(
        answer_after(human, DecisionStatus::Cancelled, "", None),
        Ok(json!({"type": "ignore", "args": null}))
    );
    let denied = answer_after(human, DecisionStatus::Rejected, "no", None).unwrap_err();
    assert!(
        denied.contains("accept, edit, response, ignore"),
        "{denied}"
    );

    assert_eq!(
        answer_after(
            middleware,
            DecisionStatus::Approved,
            "",
            mode(ToolMode::Once, None)
        ),
        Ok(json!({"type": "approve"}))
    );
    assert_eq!(
        answer_after(
            middleware,
            DecisionStatus::Approved,
            "",
            mode(ToolMode::Edit, Some(r#"{"query": "SELECT 2"}"#))
        ),
        Ok(
            json!({"type": "edit", "edited_action": {"name": "run_sql", "args": {"query": "SELECT 2"}}})
        )
    );
    assert_eq!(
        answer_after(
            middleware,
            DecisionStatus::Rejected,
            "not on production",
            None
        ),
        Ok(json!({"type": "reject", "message": "not on production"}))
    );
    assert!(answer_after(middleware, DecisionStatus::Cancelled, "", None).is_err());

    assert_eq!(
        answer_after(
            raw,
            DecisionStatus::Rejected,
            "eu",
            mode(ToolMode::Feedback, None)
        ),
        Ok(json!("eu"))
    );
}

fn fixture(name: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/langgraph/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn now() -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 25, 3, 0, 0).unwrap()
}

#[test]
fn a_thread_belongs_to_the_assistant_named_in_its_metadata() {
    let t = fixture("per_call_thread.json");
    let pending = pending_interrupts(&t);
    let agent = pending[0].agent.clone().unwrap();
    assert_eq!(agent.graph_id.as_deref(), Some("per_call"));
    assert_eq!(agent.assistant_id, t["metadata"]["assistant_id"]);
    assert_eq!(pending[0].thread_status, ThreadStatus::Interrupted);
    let review = pending[0].to_review(now()).unwrap();
    assert_eq!(review.confirm.requested_by_role, "per_call");
    // A thread naming only its graph is resumed by the graph's id; naming none, by nobody.
    let only_graph = json!({"metadata": {"graph_id": "batched"}});
    assert_eq!(
        Agent::of_thread(&only_graph).unwrap().assistant_id,
        "batched"
    );
    assert_eq!(Agent::of_thread(&json!({"metadata": {}})), None);
    let mut orphan = t.clone();
    orphan["metadata"] = json!({});
    let p = &pending_interrupts(&orphan)[0];
    assert_eq!(p.agent, None);
    assert_eq!(
        p.to_review(now()).unwrap().confirm.requested_by_role,
        "langgraph-agent"
    );
}

/// The per-call thread's three interrupts, in the order the model asked for them.
fn per_call_by_tool() -> Vec<PendingInterrupt> {
    let mut pending = pending_interrupts(&fixture("per_call_thread.json"));
    let order = ["delete_file", "send_email", "run_query"];
    pending.sort_by_key(|p| order.iter().position(|n| *n == p.name));
    assert_eq!(pending.len(), 3);
    pending
}

#[test]
fn per_call_interrupts_are_one_review_per_call_with_the_answers_their_schema_allows() {
    let pending = per_call_by_tool();
    let allowed: Vec<&[Answer]> = pending.iter().map(|p| p.allowed.as_slice()).collect();
    assert_eq!(allowed[0], [Answer::Approve, Answer::Reject]);
    assert_eq!(
        allowed[1],
        [
            Answer::Approve,
            Answer::EditAction,
            Answer::Reject,
            Answer::Reply
        ]
    );
    assert_eq!(
        allowed[2],
        [Answer::Approve, Answer::EditAction, Answer::Reject]
    );
    let query = &pending[2];
    assert!(
        matches!(&query.shape, Shape::ToolApproval { tool_call_id, response_schema: Some(_) } if tool_call_id == "call_2_run_query")
    );
    let review = query.to_review(now()).unwrap();
    assert!(review.validate().is_empty(), "{:?}", review.validate());
    assert_eq!(
        review.tool_call().unwrap().request.tool_call_canonical,
        r#"{"args":{"limit":100,"sql":"SELECT * FROM orders"},"name":"run_query"}"#
    );
    // One decision, keyed by the interrupt's id, run by the thread's own assistant.
    let approve = query.answer(Answer::Approve, None, None).unwrap();
    assert_eq!(resume_value(&query.shape, vec![approve.clone()]), approve);
}

#[test]
fn a_per_call_answer_is_checked_against_its_response_schema_naming_the_field() {
    let pending = per_call_by_tool();
    let (delete, email, query) = (&pending[0], &pending[1], &pending[2]);
    let edit = |args: Value| {
        query
            .answer(Answer::EditAction, args.as_object(), None)
            .unwrap()
    };
    assert_eq!(
        query.check_answer(&edit(json!({"sql": "SELECT 1", "limit": 10}))),
        Ok(())
    );
    let too_many = query
        .check_answer(&edit(json!({"sql": "SELECT 1", "limit": 5000})))
        .unwrap_err();
    assert!(
        too_many
            .to_string()
            .contains("argument `limit`: 5000 is greater than the maximum of 1000"),
        "{too_many}"
    );
    let missing = query.check_answer(&edit(json!({"limit": 5}))).unwrap_err();
    assert!(
        missing
            .to_string()
            .contains("the arguments: \"sql\" is a required property"),
        "{missing}"
    );
    let wrong_type = email
        .check_answer(
            &email
                .answer(
                    Answer::EditAction,
                    json!({"to": 5, "subject": "x"}).as_object(),
                    None,
                )
                .unwrap(),
        )
        .unwrap_err();
    assert!(
        wrong_type.to_string().contains("argument `to`"),
        "{wrong_type}"
    );
    // The tool's name is pinned by the schema, and a type it does not list is refused.
    let renamed =
        json!({"type": "edit", "edited_action": {"name": "drop_table", "args": {"sql": "x"}}});
    assert!(query
        .check_answer(&renamed)
        .unwrap_err()
        .to_string()
        .contains("the tool's name"));
    assert_eq!(
        delete.check_answer(&json!({"type": "respond", "message": "no"})),
        Err(AnswerRefused::NotAllowed {
            allowed: "approve, reject".into()
        })
    );
    assert_eq!(
        email.check_answer(
            &email
                .answer(Answer::Reply, None, Some("Ana is on leave"))
                .unwrap()
        ),
        Ok(())
    );
}

#[test]
fn batched_middleware_offers_respond_where_allowed_and_feedback_becomes_the_reply() {
    let pending = pending_interrupts(&fixture("batched_thread.json"));
    assert_eq!(pending.len(), 2);
    assert_eq!(pending[0].shape, Shape::Middleware { count: 2 });
    assert_eq!(
        pending[0].allowed,
        vec![Answer::Approve, Answer::EditAction, Answer::Reject]
    );
    assert_eq!(
        pending[1].allowed,
        vec![Answer::Approve, Answer::Reject, Answer::Reply]
    );
    assert_eq!(
        answer_after(
            &pending[1],
            DecisionStatus::Rejected,
            "Ship it to the office",
            mode(ToolMode::Feedback, None)
        ),
        Ok(json!({"type": "respond", "message": "Ship it to the office"}))
    );
    assert_eq!(
        answer_after(&pending[1], DecisionStatus::Rejected, "Not now", None),
        Ok(json!({"type": "reject", "message": "Not now"}))
    );
    // Where respond is not allowed, feedback is refused rather than sent as a rejection.
    let refused = answer_after(
        &pending[0],
        DecisionStatus::Rejected,
        "hm",
        mode(ToolMode::Feedback, None),
    )
    .unwrap_err();
    assert!(refused.contains("approve, edit, reject"), "{refused}");
}

#[test]
fn an_errored_thread_keeps_its_pending_interrupts_and_says_why_it_failed() {
    let thread = fixture("errored_thread.json");
    assert_eq!(
        pending_interrupts(&thread).len(),
        0,
        "the thread's own list is empty after the failure"
    );
    let mut with_state = thread.clone();
    with_state["interrupts"] = fixture("errored_state.json")["interrupts"].clone();
    let pending = pending_interrupts(&with_state);
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].thread_status, ThreadStatus::Error);
    assert_eq!(
        pending[0].thread_error.as_deref(),
        Some("ValueError: payments above 1000 need the finance desk's approval")
    );
    assert_eq!(pending[0].allowed, vec![Answer::Accept, Answer::Edit]);
}

#[test]
fn a_run_that_failed_says_so_in_its_join() {
    assert_eq!(
        run_failure(
            &json!({"__error__": {"error": "ValidationError", "message": "1 validation error"}})
        ),
        Some("ValidationError: 1 validation error".into())
    );
    assert_eq!(run_failure(&json!({"messages": []})), None);
    assert_eq!(run_failure(&json!({"__interrupt__": []})), None);
}
