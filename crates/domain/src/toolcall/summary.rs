//! Checking the agent's human summary against the exact call. The summary is
//! text an agent wrote, so it may leave things out (most do: "Send the refund
//! confirmation") or, worse, contradict the call: name an amount, an address, a
//! path or a domain the call does not carry. Only a contradiction is a warning;
//! what it leaves out is listed quietly, so red keeps its meaning.

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
    /// Values the summary names that the call does not carry (an amount, an
    /// email address, a path, a domain or file name, or text in `code`), as
    /// written in the summary.
    pub contradictions: Vec<String>,
}

impl SummaryCheck {
    /// Whether the summary names something the call does not carry.
    pub fn contradicts(&self) -> bool {
        !self.contradictions.is_empty()
    }

    /// Whether the summary mentions the tool and every value.
    pub fn is_complete(&self) -> bool {
        self.names_tool && self.unmentioned.is_empty()
    }
}

/// Compares a summary with the call, case-insensitively. Omissions: the tool's
/// name (as written, or with `_`/`-` read as spaces) and every string, number
/// and boolean argument value (walking nested objects and arrays; `null`s and
/// values longer than 200 characters are skipped, a summary cannot quote them).
/// Contradictions: every value-like token of the summary (see [`claims`]) that
/// no argument value, key or the tool's name contains. O(summary × values).
pub fn check_summary(summary: &str, call: &ToolCall) -> SummaryCheck {
    let haystack = normalize(summary);
    let name = call.name.to_lowercase();
    let names_tool = haystack.contains(&name)
        || haystack.contains(&name.replace(['_', '-'], " "))
        || haystack.contains(&normalize(&name));
    let mut unmentioned = Vec::new();
    let mut carried = vec![name];
    for (key, value) in &call.args {
        carried.push(key.to_lowercase());
        collect(
            key.clone(),
            value,
            &haystack,
            &mut unmentioned,
            &mut carried,
        );
    }
    let contradictions = claims(summary)
        .into_iter()
        .filter(|claim| !claim.is_carried(&carried))
        .map(|claim| claim.text)
        .collect();
    SummaryCheck {
        names_tool,
        unmentioned,
        contradictions,
    }
}

fn collect(
    path: String,
    value: &Value,
    haystack: &str,
    out: &mut Vec<Unmentioned>,
    carried: &mut Vec<String>,
) {
    let shown = match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => return,
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                collect(format!("{path}/{i}"), item, haystack, out, carried);
            }
            return;
        }
        Value::Object(map) => {
            for (key, item) in map {
                carried.push(key.to_lowercase());
                collect(format!("{path}/{key}"), item, haystack, out, carried);
            }
            return;
        }
    };
    carried.push(shown.to_lowercase());
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

/// A value the summary states.
#[derive(Debug, Clone, PartialEq)]
struct Claim {
    /// As written.
    text: String,
    /// An amount, when it is one.
    amount: Option<f64>,
}

impl Claim {
    /// Whether one of the call's values (lowercased text) carries it.
    fn is_carried(&self, carried: &[String]) -> bool {
        let text = self.text.to_lowercase();
        carried.iter().any(|value| {
            value.contains(&text)
                || self.amount.is_some_and(|amount| {
                    value
                        .replace([',', '_'], "")
                        .parse::<f64>()
                        .is_ok_and(|v| (v - amount).abs() < 1e-9)
                })
        })
    }
}

const CURRENCIES: [&str; 10] = ["$", "€", "£", "¥", "usd", "eur", "gbp", "chf", "jpy", "cad"];

/// The values a summary states: text in `code` spans, email addresses, URLs
/// and domains, file names, paths, and amounts (a number with a currency, a
/// decimal point or thousands separators, or of three digits or more that is
/// not a year). Numbers inside identifiers (`A-1001`, `2026-114`) and plain
/// small counts ("3 files") are not claims.
fn claims(summary: &str) -> Vec<Claim> {
    let mut found = Vec::new();
    // `code` spans first; the rest is read word by word.
    let mut prose = String::new();
    for (i, part) in summary.split('`').enumerate() {
        if i % 2 == 1 && !part.trim().is_empty() && part.len() <= 200 {
            found.push(Claim {
                text: part.trim().to_owned(),
                amount: None,
            });
        } else {
            prose.push_str(part);
            prose.push(' ');
        }
    }
    let words = prose.split(|c: char| c.is_whitespace() || "()[]{}<>\"'|;*".contains(c));
    let mut previous = "";
    for raw in words {
        let word = raw
            .trim_matches(|c: char| ",:!?".contains(c))
            .trim_end_matches('.');
        if let Some(claim) = claim(word, previous) {
            found.push(claim);
        }
        if !word.is_empty() {
            previous = word;
        }
    }
    found
}

fn claim(word: &str, previous: &str) -> Option<Claim> {
    let text = |t: &str| {
        Some(Claim {
            text: t.to_owned(),
            amount: None,
        })
    };
    if word.len() < 2 {
        return None;
    }
    let lower = word.to_lowercase();
    if let Some(rest) = lower
        .strip_prefix("http://")
        .or(lower.strip_prefix("https://"))
    {
        // A URL is carried when its host is (the call may split host and path).
        let host = rest.split(['/', '?', '#']).next().unwrap_or(rest);
        return text(host);
    }
    if word.contains('@') && word.rsplit('@').next().is_some_and(|d| d.contains('.')) {
        return text(word);
    }
    if ["/", "./", "../", "~/"].iter().any(|p| word.starts_with(p)) && word.len() > 2 {
        return text(word);
    }
    if let Some(amount) = amount(word, previous) {
        return Some(Claim {
            text: word.to_owned(),
            amount: Some(amount),
        });
    }
    // Dotted names: domains and file names (`api.stripe.com`, `notes.txt`).
    let parts: Vec<&str> = word.split('.').collect();
    let dotted = parts.len() >= 2
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_alphanumeric() || c == '-' || c == '_')
        })
        && parts
            .last()
            .is_some_and(|p| p.len() >= 2 && p.chars().any(char::is_alphabetic));
    dotted.then(|| Claim {
        text: word.to_owned(),
        amount: None,
    })
}

/// The amount a word states, if it states one (`previous` may be its currency).
fn amount(word: &str, previous: &str) -> Option<f64> {
    let lower = word.to_lowercase();
    let mut digits = lower.as_str();
    let mut currency = CURRENCIES.contains(&previous.to_lowercase().as_str());
    for symbol in CURRENCIES {
        if let Some(rest) = digits.strip_prefix(symbol) {
            digits = rest;
            currency = true;
        } else if let Some(rest) = digits.strip_suffix(symbol) {
            digits = rest;
            currency = true;
        }
    }
    let first = digits.chars().next()?;
    if !first.is_ascii_digit()
        || !digits
            .chars()
            .all(|c| c.is_ascii_digit() || c == ',' || c == '.')
    {
        return None;
    }
    let separated = digits.contains([',', '.']);
    let value: f64 = digits.replace(',', "").parse().ok()?;
    let whole = digits
        .split('.')
        .next()
        .unwrap_or_default()
        .replace(',', "");
    let year = whole.len() == 4 && (1900.0..2100.0).contains(&value) && !separated;
    let claimed = currency || separated || (whole.len() >= 3 && !year);
    claimed.then_some(value)
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
    fn a_faithful_summary_is_complete_and_does_not_contradict() {
        let c = call(
            "wire_transfer",
            json!({"amount": 5000, "to": "ACME GmbH", "urgent": true}),
        );
        let check = check_summary("Wire transfer of 5,000 to acme gmbh", &c);
        assert!(check.is_complete(), "{check:?}");
        assert!(!check.contradicts(), "{check:?}");
    }

    #[test]
    fn a_summary_that_leaves_a_value_out_only_lists_it() {
        let c = call(
            "delete_files",
            json!({"paths": ["/tmp/a", "/etc/passwd"], "recursive": false}),
        );
        let check = check_summary("delete_files: clean up /tmp/a", &c);
        assert!(!check.is_complete());
        assert!(!check.contradicts(), "{check:?}");
        assert_eq!(
            check.unmentioned,
            vec![Unmentioned {
                path: "paths/1".into(),
                value: "/etc/passwd".into()
            }]
        );
    }

    #[test]
    fn langchains_default_description_does_not_contradict_its_call() {
        let c = call(
            "issue_refund",
            json!({"order_id": "A-1001", "amount": 42.5}),
        );
        let text = "Tool execution requires approval\n\nTool: issue_refund\nArgs: {'order_id': 'A-1001', 'amount': 42.5}";
        let check = check_summary(text, &c);
        assert!(!check.contradicts(), "{check:?}");
        assert!(check.is_complete(), "{check:?}");
        let c = call(
            "run_query",
            json!({"sql": "SELECT * FROM orders", "limit": 100}),
        );
        let text = "Tool execution requires approval\n\nTool: run_query\nArgs: {'sql': 'SELECT * FROM orders', 'limit': 100}";
        assert!(!check_summary(text, &c).contradicts());
    }

    #[test]
    fn a_short_human_description_is_a_quiet_omission_not_a_contradiction() {
        let c = call(
            "send_email",
            json!({"to": "ana@example.com", "subject": "Refund confirmation", "amount": 42.5}),
        );
        for text in [
            "Send the refund confirmation",
            "Email the customer about order A-1001 (3 items)",
            "Pay invoice *2026-114* to the supplier in 2026",
        ] {
            let check = check_summary(text, &c);
            assert!(!check.contradicts(), "{text}: {check:?}");
        }
        let check = check_summary("Send the refund confirmation", &c);
        assert!(!check.is_complete());
        assert_eq!(check.unmentioned.len(), 2, "{check:?}");
    }

    #[test]
    fn a_lying_summary_contradicts_the_call_and_names_what() {
        let c = call(
            "wire_transfer",
            json!({"amount": 50000, "iban": "DE89 3704 0044 0532 0130 00", "notify": "ops@acme.example"}),
        );
        let check = check_summary(
            "Wire $500.00 to the usual supplier, cc boss@acme.example",
            &c,
        );
        assert_eq!(check.contradictions, vec!["$500.00", "boss@acme.example"]);
        let c = call("write_file", json!({"path": "/etc/sudoers", "text": "x"}));
        let check = check_summary("Write `notes.txt` in /home/ana", &c);
        assert_eq!(check.contradictions, vec!["notes.txt", "/home/ana"]);
        let c = call("fetch", json!({"url": "https://evil.example/upload"}));
        let check = check_summary("Fetch the docs from https://docs.python.org/3/", &c);
        assert_eq!(check.contradictions, vec!["docs.python.org"]);
        // The same amount written another way is no contradiction.
        let c = call("refund", json!({"amount": 1200}));
        assert!(!check_summary("Refund €1,200.00", &c).contradicts());
        assert!(!check_summary("Refund 1200 EUR", &c).contradicts());
        assert!(check_summary("Refund 1,300 EUR", &c).contradicts());
    }

    #[test]
    fn a_summary_naming_another_tool_does_not_name_this_one() {
        let c = call("drop_table", json!({}));
        assert!(!check_summary("Read the users table", &c).names_tool);
        assert!(check_summary("Drop table users", &c).names_tool);
    }
}
