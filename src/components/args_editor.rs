//! The modified-arguments editor: as the reviewer types, the arguments are
//! parsed, re-canonicalized and re-hashed with the domain's code, and the
//! difference from the original is shown line by line. Invalid JSON is an
//! inline error with its line and column.

use countersign_domain::toolcall::{CallHash, ToolCall};
use leptos::prelude::*;
use serde_json::{Map, Value};

/// One line of a diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffLine {
    /// In both.
    Same(String),
    /// Only in the original.
    Removed(String),
    /// Only in the edit.
    Added(String),
}

/// What the current text means.
#[derive(Debug, Clone, PartialEq)]
pub struct Preview {
    /// The edited call, canonical.
    pub canonical: String,
    /// Its hash.
    pub hash: CallHash,
    /// Pretty original vs pretty edit.
    pub diff: Vec<DiffLine>,
}

/// Parses and canonicalizes edited arguments of tool `name` and diffs them
/// against `original` (pretty-printed). O(n) plus the diff, which is
/// O(changed lines²) after common leading and trailing lines.
pub fn preview(name: &str, original: &str, text: &str) -> Result<Preview, String> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| format!("Line {}, column {}: {e}", e.line(), e.column()))?;
    let Value::Object(args) = value else {
        return Err("The arguments must be a JSON object: { \"name\": value, … }".into());
    };
    let call = ToolCall {
        name: name.to_owned(),
        args,
    };
    let (canonical, hash) = crate::browser::timed("countersign:canonical-hash", || {
        let canonical = crate::browser::timed("countersign:canonical", || call.canonical())
            .map_err(|e| e.to_string())?;
        let hash = CallHash::of_canonical(&canonical);
        Ok::<_, String>((canonical, hash))
    })?;
    let edited = serde_json::to_string_pretty(&call.args).unwrap_or_default();
    Ok(Preview {
        diff: diff_lines(original, &edited),
        canonical,
        hash,
    })
}

/// A line diff: common prefix and suffix, then a longest-common-subsequence
/// alignment of the middle (all removed then all added when it is too large).
pub fn diff_lines(before: &str, after: &str) -> Vec<DiffLine> {
    let a: Vec<&str> = before.lines().collect();
    let b: Vec<&str> = after.lines().collect();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (mid_a, mid_b) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let same = |l: &&str| DiffLine::Same((*l).to_owned());
    let mut out: Vec<DiffLine> = a[..prefix].iter().map(same).collect();
    if mid_a.len() * mid_b.len() > 1_000_000 {
        out.extend(mid_a.iter().map(|l| DiffLine::Removed((*l).to_owned())));
        out.extend(mid_b.iter().map(|l| DiffLine::Added((*l).to_owned())));
    } else {
        out.extend(lcs_diff(mid_a, mid_b));
    }
    out.extend(a[a.len() - suffix..].iter().map(same));
    out
}

fn lcs_diff(a: &[&str], b: &[&str]) -> Vec<DiffLine> {
    let (n, m) = (a.len(), b.len());
    // lengths[i][j]: LCS of a[i..] and b[j..], row-major.
    let mut lengths = vec![0u32; (n + 1) * (m + 1)];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lengths[i * (m + 1) + j] = if a[i] == b[j] {
                lengths[(i + 1) * (m + 1) + j + 1] + 1
            } else {
                lengths[(i + 1) * (m + 1) + j].max(lengths[i * (m + 1) + j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::with_capacity(n + m));
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            out.push(DiffLine::Same(a[i].to_owned()));
            (i, j) = (i + 1, j + 1);
        } else if j < m && (i == n || lengths[i * (m + 1) + j + 1] > lengths[(i + 1) * (m + 1) + j])
        {
            out.push(DiffLine::Added(b[j].to_owned()));
            j += 1;
        } else {
            out.push(DiffLine::Removed(a[i].to_owned()));
            i += 1;
        }
    }
    out
}

/// Lines to show: every change with three lines of context around it, and
/// one line saying how many unchanged lines are left out between. O(lines).
fn hunks(diff: &[DiffLine]) -> Vec<(&'static str, String)> {
    const CONTEXT: usize = 3;
    let changed: Vec<usize> = (0..diff.len())
        .filter(|&i| !matches!(diff[i], DiffLine::Same(_)))
        .collect();
    let near = |i: usize| {
        let at = changed.partition_point(|&c| c + CONTEXT < i);
        changed.get(at).is_some_and(|&c| c <= i + CONTEXT)
    };
    let mut out = Vec::new();
    let mut skipped = 0;
    for (i, line) in diff.iter().enumerate() {
        let shown = match line {
            DiffLine::Same(l) if near(i) => ("diff-same", format!("  {l}\n")),
            DiffLine::Same(_) => {
                skipped += 1;
                continue;
            }
            DiffLine::Removed(l) => ("diff-removed", format!("- {l}\n")),
            DiffLine::Added(l) => ("diff-added", format!("+ {l}\n")),
        };
        if skipped > 0 {
            out.push(("diff-skip", format!("  … {skipped} unchanged line(s)\n")));
            skipped = 0;
        }
        out.push(shown);
    }
    if skipped > 0 {
        out.push(("diff-skip", format!("  … {skipped} unchanged line(s)\n")));
    }
    out
}

/// The editor: a textarea with the preview under it. `text` holds what the
/// reviewer typed; the preview is recomputed on every keystroke.
#[component]
pub fn ArgsEditor(
    name: String,
    original: Map<String, Value>,
    text: RwSignal<String>,
) -> impl IntoView {
    let original = serde_json::to_string_pretty(&original).unwrap_or_default();
    let result = Memo::new(move |_| {
        crate::browser::timed("countersign:args-preview", || {
            text.with(|t| preview(&name, &original, t))
        })
    });
    view! {
        <div class="field">
            <label for="edited-args">"Arguments to approve " <span class="subtle">"(JSON; re-canonicalized and re-hashed as you type)"</span></label>
            <textarea
                id="edited-args"
                class="code"
                rows="10"
                spellcheck="false"
                prop:value=text.get_untracked()
                on:input=move |ev| text.set(event_target_value(&ev))
                aria-invalid=move || result.with(Result::is_err).to_string()
                aria-describedby="args-error args-hash"
            ></textarea>
            <p id="args-error" class="field-error" role="alert">{move || result.with(|r| r.as_ref().err().cloned())}</p>
            <p id="args-hash" class="subtle call-hash">
                {move || result.with(|r| r.as_ref().ok().map(|p| view! { "New SHA-256 " <code>{p.hash.to_string()}</code> }))}
            </p>
            {move || result.with(|r| r.as_ref().ok().map(|p| {
                let changed = p.diff.iter().filter(|l| !matches!(l, DiffLine::Same(_))).count();
                view! {
                    <p class="subtle">{if changed == 0 { "No change from the call as asked.".to_owned() } else { format!("{changed} line(s) differ from the call as asked:") }}</p>
                    <pre class="diff" aria-label="Changes from the call as asked"><code>
                        {hunks(&p.diff).into_iter().map(|(class, text)| view! { <span class=class>{text}</span> }).collect_view()}
                    </code></pre>
                }
            }))}
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use wasm_bindgen_test::*;

    #[wasm_bindgen_test]
    fn a_changed_value_is_one_removed_and_one_added_line() {
        let original =
            serde_json::to_string_pretty(&json!({"amount": 5000, "to": "ACME"})).unwrap();
        let p = preview("pay", &original, r#"{"to": "ACME", "amount": 500}"#).unwrap();
        assert_eq!(
            p.canonical,
            r#"{"args":{"amount":500,"to":"ACME"},"name":"pay"}"#
        );
        assert_eq!(p.hash, CallHash::of_canonical(&p.canonical));
        let changed: Vec<&DiffLine> = p
            .diff
            .iter()
            .filter(|l| !matches!(l, DiffLine::Same(_)))
            .collect();
        assert_eq!(
            changed,
            vec![
                &DiffLine::Removed("  \"amount\": 5000,".into()),
                &DiffLine::Added("  \"amount\": 500,".into())
            ]
        );
    }

    #[wasm_bindgen_test]
    fn invalid_json_says_where() {
        let err = preview("pay", "{}", "{\n  \"a\": }").unwrap_err();
        assert!(err.starts_with("Line 2, column"), "{err}");
        assert!(preview("pay", "{}", "[1]").unwrap_err().contains("object"));
    }

    #[wasm_bindgen_test]
    fn long_unchanged_runs_are_left_out() {
        let before: String = (0..20).map(|i| format!("line {i}\n")).collect();
        let after = before.replace("line 10\n", "line ten\n");
        let shown = hunks(&diff_lines(&before, &after));
        let texts: Vec<&str> = shown.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(texts.first(), Some(&"  … 7 unchanged line(s)\n"));
        assert!(texts.contains(&"- line 10\n") && texts.contains(&"+ line ten\n"));
        assert_eq!(texts.last(), Some(&"  … 6 unchanged line(s)\n"));
        assert_eq!(shown.len(), 1 + 3 + 2 + 3 + 1);
    }
}
