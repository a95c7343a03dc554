//! `serve --policy FILE`: reads an approval policy strictly. An unknown key, a
//! misspelled value, a tier out of range, a rule that can never match or a
//! missing file refuses to start, naming the file and line: a gate must never
//! open because of a typo.

use countersign_domain::policy::Policy;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use toml::Spanned;

/// The policy in `path`, or every reason it cannot be used.
pub fn load(path: &Path) -> Result<Policy, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("policy {}: cannot be read: {e}", path.display()))?;
    parse(&path.display().to_string(), &text)
}

/// Where each rule and each of its keys is written.
#[derive(Deserialize)]
struct Spans {
    #[serde(default, alias = "rule")]
    rules: Vec<Spanned<BTreeMap<String, Spanned<toml::Value>>>>,
}

/// The policy written in `text` (read from `name`).
pub fn parse(name: &str, text: &str) -> Result<Policy, String> {
    let line_of = |offset: usize| {
        1 + text.as_bytes()[..offset.min(text.len())]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
    };
    let policy: Policy = toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(1, |span| line_of(span.start));
        format!("{name}:{line}: {}", e.message().trim())
    })?;
    if policy.rules.is_empty() {
        return Err(format!(
            "{name}: no `[[rule]]`: a policy without rules changes nothing; leave out --policy instead"
        ));
    }
    let spans: Spans = toml::from_str(text).map_err(|e| format!("{name}: {e}"))?;
    let problems: Vec<String> = policy
        .problems()
        .into_iter()
        .map(|problem| {
            let rule = spans.rules.get(problem.rule);
            let offset = rule
                .and_then(|r| r.get_ref().get(problem.field))
                .map(|field| field.span().start)
                .or_else(|| rule.map(|r| r.span().start))
                .unwrap_or(0);
            format!("{name}:{}: {problem}", line_of(offset))
        })
        .collect();
    if problems.is_empty() {
        Ok(policy)
    } else {
        Err(problems.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::parse;

    fn refused(text: &str) -> String {
        parse("policy.toml", text).expect_err(text)
    }

    #[test]
    fn a_valid_policy_reads_into_its_rules() {
        let policy = parse(
            "policy.toml",
            r#"
[[rule]]
name = "payments"
tool = "payments.*"
risk = ["R3", "R4"]
approvals = 2
required_roles = ["release_manager"]
expires_after = "30m"
on_expiry = "rejected"

[[rule]]
name = "everything else"
"#,
        )
        .unwrap();
        assert_eq!(policy.rules.len(), 2);
        assert_eq!(policy.rules[0].approvals, 2);
        assert_eq!(policy.rules[0].expires_after.unwrap().seconds(), 1800);
    }

    #[test]
    fn each_kind_of_mistake_names_its_line() {
        let cases = [
            (
                "[[rule]]\nname = \"a\"\naprovals = 2\n",
                "policy.toml:3: unknown field `aprovals`",
            ),
            (
                "[[rule]]\nname = \"a\"\non_expiry = \"aproved\"\n",
                "policy.toml:3: unknown variant `aproved`",
            ),
            (
                "[[rule]]\nname = \"a\"\nrisk = [\"R5\"]\n",
                "policy.toml:3: unknown variant `R5`",
            ),
            (
                "[[rule]]\nname = \"a\"\n\n[[rule]]\nname = \"b\"\ntool = \"x\"\n",
                "policy.toml:5: rule 2 `name`: this rule can never match",
            ),
            (
                "[[rule]]\nname = \"a\"\napprovals = 1\nrequired_roles = [\"x\", \"y\"]\n",
                "policy.toml:4: rule 1 `required_roles`",
            ),
            (
                "[[rule]]\nname = \"a\"\nexpires_after = \"soon\"\n",
                "policy.toml:3: `soon` is not a delay",
            ),
            (
                "[[rule]]\nname = \"a\"\nescalate_after = \"5m\"\nexpires_after = \"5m\"\n",
                "policy.toml:3: rule 1 `escalate_after`",
            ),
            (
                "[[rule]]\nname = \"a\"\nslack_channel = \"#security\"\n",
                "policy.toml:3: rule 1 `slack_channel`: `#security` is not a Slack channel ID",
            ),
            (
                "[[rule]]\nname = \"a\"\nemail = [\"Dana <dana@example.com>\"]\n",
                "policy.toml:3: rule 1 `email`: `Dana <dana@example.com>` is not an e-mail address",
            ),
            ("[rules]\n", "policy.toml:1:"),
            ("", "no `[[rule]]`"),
        ];
        for (text, expected) in cases {
            let message = refused(text);
            assert!(message.contains(expected), "{text:?}\n→ {message}");
        }
    }

    #[test]
    fn the_example_policy_in_the_repository_is_valid() {
        let text = include_str!("../../../examples/policy.toml");
        let policy = parse("examples/policy.toml", text).unwrap();
        let names: Vec<&str> = policy.rules.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["payments", "production deploys", "plans"]);
    }

    #[test]
    fn a_missing_file_is_named() {
        let message = super::load(std::path::Path::new("/nonexistent/policy.toml")).unwrap_err();
        assert!(
            message.starts_with("policy /nonexistent/policy.toml: cannot be read"),
            "{message}"
        );
    }
}
