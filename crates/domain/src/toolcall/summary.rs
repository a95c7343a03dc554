//! Checking the agent's human summary against the exact call: the summary is
//! generated text and may leave out or misstate what matters, so the reviewer
//! is told which of the call's values it does not mention.

use super::canonical::ToolCall;
use serde_json::Value;

/// A value of the call that the summary does not mention.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmentioned {
    /// Where in the arguments (`amount`, `recipients/0`).
    pub path: String,
    /// The value as the summary should show it.
    pub value: String,
}

/// What the check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryCheck {
    /// Whether the tool's name (or its words) appears.
    pub names_tool: bool,
    /// Scalar argument values that the summary does not mention.
    pub unmentioned: Vec<Unmentioned>,
}

impl SummaryCheck {
    /// Whether the summary mentions the tool and every value.
    pub fn matches(&self) -> bool {
        self.names_tool && self.unmentioned.is_empty()
    }
}

/// Compares a summary with the call, case-insensitively: the tool's name (as
/// written, or with `_`/`-` read as spaces) and every string, number and boolean
/// argument value (walking nested objects and arrays; `null`s and values
/// longer than 200 characters are skipped, a summary cannot quote them). O(summary × values).
pub fn check_summary(summary: &str, call: &ToolCall) -> SummaryCheck {
    let haystack = normalize(summary);
    let name = call.name.to_lowercase();
    let names_tool = haystack.contains(&name)
        || haystack.contains(&name.replace(['_', '-'], " "))
        || haystack.contains(&normalize(&name));
    let mut unmentioned = Vec::new();
    for (key, value) in &call.args {
        collect(key.clone(), value, &haystack, &mut unmentioned);
    }
    SummaryCheck {
        names_tool,
        unmentioned,
    }
}

fn collect(path: String, value: &Value, haystack: &str, out: &mut Vec<Unmentioned>) {
    let shown = match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => return,
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                collect(format!("{path}/{i}"), item, haystack, out);
            }
            return;
        }
        Value::Object(map) => {
            for (key, item) in map {
                collect(format!("{path}/{key}"), item, haystack, out);
            }
            return;
        }
    };
    if shown.chars().count() > 200 || mentions(haystack, &shown, value) {
        return;
    }
    out.push(Unmentioned { path, value: shown });
}

fn mentions(haystack: &str, shown: &str, value: &Value) -> bool {
    let needle = normalize(shown);
    if needle.is_empty() || haystack.contains(&needle) {
        return true;
    }
    // Numbers may be written with thousands separators: "5,000" for 5000.
    if let Value::Number(_) = value {
        let digits_only: String = haystack
            .chars()
            .filter(|c| *c != ',' && *c != '_')
            .collect();
        return digits_only.contains(&needle);
    }
    // A boolean is mentioned by its key's sense, which text cannot check.
    matches!(value, Value::Bool(_))
}

/// Lowercase with runs of whitespace collapsed to one space.
fn normalize(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(name: &str, args: Value) -> ToolCall {
        ToolCall {
            name: name.into(),
            args: args.as_object().unwrap().clone(),
        }
    }

    #[test]
    fn a_faithful_summary_matches() {
        let c = call(
            "wire_transfer",
            json!({"amount": 5000, "to": "ACME GmbH", "urgent": true}),
        );
        let check = check_summary("Wire transfer of 5,000 to acme gmbh", &c);
        assert!(check.matches(), "{check:?}");
    }

    #[test]
    fn a_summary_that_hides_a_value_does_not_match() {
        let c = call(
            "delete_files",
            json!({"paths": ["/tmp/a", "/etc/passwd"], "recursive": false}),
        );
        let check = check_summary("delete_files: clean up /tmp/a", &c);
        assert!(!check.matches());
        assert_eq!(
            check.unmentioned,
            vec![Unmentioned {
                path: "paths/1".into(),
                value: "/etc/passwd".into()
            }]
        );
    }

    #[test]
    fn a_summary_naming_another_tool_does_not_match() {
        let c = call("drop_table", json!({}));
        assert!(!check_summary("Read the users table", &c).names_tool);
        assert!(check_summary("Drop table users", &c).names_tool);
    }
}
