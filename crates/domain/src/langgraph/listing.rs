//! Reading the pending interrupts of a thread, in every shape in use.

use super::{Agent, Answer, PendingInterrupt, Shape, ThreadStatus, RAW_INTERRUPT};
use serde_json::{Map, Value};

/// Every pending interrupt of one thread, in order, with the thread's status,
/// error and owner. `interrupts` is read as LangGraph gives it: a map from task
/// ids to lists of `{id, value, response_schema?}`, or one list (a thread's
/// state). O(size of the thread).
pub fn pending_interrupts(thread: &Value) -> Vec<PendingInterrupt> {
    let entries: Vec<&Value> = match &thread["interrupts"] {
        Value::Object(tasks) => tasks.values().flat_map(list).collect(),
        Value::Array(items) => items.iter().collect(),
        _ => Vec::new(),
    };
    let base = PendingInterrupt {
        thread_id: thread["thread_id"].as_str().unwrap_or_default().to_owned(),
        thread_status: ThreadStatus::parse(thread["status"].as_str().unwrap_or_default()),
        thread_error: super::resume::error_text(&thread["error"]),
        agent: Agent::of_thread(thread),
        interrupt_id: String::new(),
        index: 0,
        shape: Shape::HumanInterrupt { list: false },
        name: String::new(),
        args: Map::new(),
        description: None,
        allowed: Vec::new(),
        updated_at: thread["updated_at"].as_str().map(str::to_owned),
    };
    let mut found = Vec::new();
    for entry in entries {
        let interrupt_id = entry["id"]
            .as_str()
            .or(entry["interrupt_id"].as_str())
            .unwrap_or_default()
            .to_owned();
        let base = PendingInterrupt {
            interrupt_id,
            ..base.clone()
        };
        found.extend(understand(entry, base));
    }
    found
}

fn list(value: &Value) -> Vec<&Value> {
    value
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

/// The actions of one interrupt (`{id, value, response_schema?}`).
fn understand(entry: &Value, base: PendingInterrupt) -> Vec<PendingInterrupt> {
    let value = &entry["value"];
    if value["type"] == "tool_approval" {
        return tool_approval(value, entry.get("response_schema"), base);
    }
    if let Some(requests) = value.get("action_requests").and_then(Value::as_array) {
        return middleware(value, requests, base);
    }
    human_interrupts(value, base)
}

/// The middleware's `per_call` shape: one call, the answers its schema allows.
fn tool_approval(
    value: &Value,
    schema: Option<&Value>,
    base: PendingInterrupt,
) -> Vec<PendingInterrupt> {
    let (Some(name), Some(tool_call_id)) = (value["name"].as_str(), value["tool_call_id"].as_str())
    else {
        return vec![raw(
            value,
            base,
            "a `tool_approval` without a tool `name` or `tool_call_id`",
        )];
    };
    let schema = schema.filter(|s| s.is_object()).cloned();
    // Without a schema the allowed answers are unknown: offer the two that
    // every configuration of the middleware takes, never more.
    let allowed = match &schema {
        Some(schema) => allowed_by_schema(schema),
        None => vec![Answer::Approve, Answer::Reject],
    };
    vec![PendingInterrupt {
        shape: Shape::ToolApproval {
            tool_call_id: tool_call_id.to_owned(),
            response_schema: schema,
        },
        name: name.to_owned(),
        args: value["args"].as_object().cloned().unwrap_or_default(),
        description: value["description"].as_str().map(str::to_owned),
        allowed,
        ..base
    }]
}

/// The decision types a `response_schema` allows: the keys of its
/// discriminator's mapping, else the `type` constant of each branch (or of the
/// schema itself, when one decision is allowed), in the schema's order.
fn allowed_by_schema(schema: &Value) -> Vec<Answer> {
    let mut verbs: Vec<&str> = Vec::new();
    if let Some(mapping) = schema["discriminator"]["mapping"].as_object() {
        verbs.extend(mapping.keys().map(String::as_str));
    } else if let Some(branches) = schema["oneOf"].as_array() {
        for branch in branches {
            let resolved = super::resume::resolve(schema, branch);
            verbs.extend(resolved["properties"]["type"]["const"].as_str());
        }
    } else {
        verbs.extend(schema["properties"]["type"]["const"].as_str());
    }
    let mut allowed: Vec<Answer> = verbs
        .into_iter()
        .filter_map(Answer::of_middleware)
        .collect();
    allowed.dedup();
    allowed
}

/// The middleware's `batched` shape: every action, answered together.
fn middleware(value: &Value, requests: &[Value], base: PendingInterrupt) -> Vec<PendingInterrupt> {
    let configs = list(&value["review_configs"]);
    let count = requests.len();
    let parsed: Option<Vec<PendingInterrupt>> = requests
        .iter()
        .enumerate()
        .map(|(index, request)| {
            let name = request["name"].as_str()?.to_owned();
            let allowed = configs
                .iter()
                .find(|c| c["action_name"].as_str() == Some(name.as_str()))
                .map(|c| list(&c["allowed_decisions"]))
                .unwrap_or_default()
                .iter()
                .filter_map(|d| Answer::of_middleware(d.as_str()?))
                .collect();
            Some(PendingInterrupt {
                index,
                shape: Shape::Middleware { count },
                args: request["args"].as_object().cloned().unwrap_or_default(),
                description: request["description"].as_str().map(str::to_owned),
                name,
                allowed,
                ..base.clone()
            })
        })
        .collect();
    match parsed.filter(|p| !p.is_empty()) {
        Some(parsed) => parsed,
        None => vec![raw(
            value,
            base,
            "an `action_requests` list whose items lack a `name`",
        )],
    }
}

/// The human-interrupt shape, alone or in a list.
fn human_interrupts(value: &Value, base: PendingInterrupt) -> Vec<PendingInterrupt> {
    let (items, is_list) = match value {
        Value::Array(items) if !items.is_empty() => (items.iter().collect::<Vec<_>>(), true),
        other => (vec![other], false),
    };
    let parsed: Option<Vec<PendingInterrupt>> = items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let request = item.get("action_request")?;
            let name = request["action"].as_str()?.to_owned();
            let config = &item["config"];
            let allowed = [
                ("allow_accept", Answer::Accept),
                ("allow_edit", Answer::Edit),
                ("allow_respond", Answer::Respond),
                ("allow_ignore", Answer::Ignore),
            ]
            .into_iter()
            .filter(|(flag, _)| config[*flag].as_bool() == Some(true))
            .map(|(_, answer)| answer)
            .collect();
            Some(PendingInterrupt {
                index,
                shape: Shape::HumanInterrupt { list: is_list },
                args: request["args"].as_object().cloned().unwrap_or_default(),
                description: item["description"].as_str().map(str::to_owned),
                name,
                allowed,
                ..base.clone()
            })
        })
        .collect();
    match parsed {
        Some(parsed) => parsed,
        None => vec![raw(
            value,
            base,
            "none of the human-interrupt shape ({action_request, config}), the middleware's batched shape ({action_requests, review_configs}) and its per-call shape ({type: \"tool_approval\", name, args})",
        )],
    }
}

fn raw(value: &Value, base: PendingInterrupt, why: &str) -> PendingInterrupt {
    let mut args = Map::new();
    args.insert("value".into(), value.clone());
    PendingInterrupt {
        shape: Shape::Unrecognized {
            note: format!(
                "This interrupt is in an unknown shape ({why}); its value is shown as raw JSON."
            ),
        },
        name: RAW_INTERRUPT.into(),
        args,
        allowed: vec![Answer::Respond],
        ..base
    }
}
