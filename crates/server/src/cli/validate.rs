//! `countersign validate`: every problem of each MPLP file, as text or JSON lines.

use countersign_domain::{validate_bundle, validate_document, DocumentKind, Issue, Report};
use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// Output format of `validate`.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Format {
    /// Lines for people.
    Text,
    /// One JSON object per file, each on its own line.
    Json,
}

/// What became of one file.
enum Outcome {
    /// One document.
    Single(Report),
    /// A JSON array of documents, checked together.
    Array(Vec<Report>),
    /// The file could not be read or is not JSON.
    Unreadable {
        message: String,
        line: Option<usize>,
        column: Option<usize>,
    },
}

impl Outcome {
    fn of(path: &Path) -> Outcome {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) => {
                return Outcome::Unreadable {
                    message: format!("cannot read the file: {e}"),
                    line: None,
                    column: None,
                }
            }
        };
        match serde_json::from_str::<Value>(&text) {
            Err(e) => Outcome::Unreadable {
                message: format!("not JSON: {e}"),
                line: Some(e.line()),
                column: Some(e.column()),
            },
            Ok(Value::Array(items)) => Outcome::Array(validate_bundle(&items)),
            Ok(value) => Outcome::Single(validate_document(&value)),
        }
    }

    fn issues(&self) -> Vec<Issue> {
        match self {
            Outcome::Single(report) => report.issues.clone(),
            Outcome::Array(reports) => reports
                .iter()
                .enumerate()
                .flat_map(|(i, r)| {
                    r.issues.iter().map(move |issue| {
                        issue
                            .clone()
                            .under(&countersign_domain::Pointer::root().child(i))
                    })
                })
                .collect(),
            Outcome::Unreadable { .. } => Vec::new(),
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Outcome::Single(report) => report.kind.as_str(),
            Outcome::Array(_) => "array",
            Outcome::Unreadable { .. } => DocumentKind::Unknown.as_str(),
        }
    }

    fn valid(&self) -> bool {
        match self {
            Outcome::Single(report) => report.is_valid(),
            Outcome::Array(reports) => reports.iter().all(Report::is_valid),
            Outcome::Unreadable { .. } => false,
        }
    }
}

/// Checks every file, prints the results to `out`, and returns the exit code:
/// 0 all valid, 1 some invalid, 2 some unreadable or not JSON.
pub fn run(files: &[std::path::PathBuf], format: Format, out: &mut impl Write) -> ExitCode {
    let mut worst = 0u8;
    for path in files {
        let outcome = Outcome::of(path);
        worst = worst.max(match (&outcome, outcome.valid()) {
            (Outcome::Unreadable { .. }, _) => 2,
            (_, false) => 1,
            (_, true) => 0,
        });
        let printed = match format {
            Format::Json => writeln!(out, "{}", json_line(path, &outcome)),
            Format::Text => write!(out, "{}", text_block(path, &outcome)),
        };
        if printed.is_err() {
            return ExitCode::from(2);
        }
    }
    ExitCode::from(worst)
}

fn json_line(path: &Path, outcome: &Outcome) -> Value {
    let mut line = json!({
        "file": path.display().to_string(),
        "kind": outcome.kind(),
        "valid": outcome.valid(),
        "issues": outcome.issues(),
    });
    match outcome {
        Outcome::Array(reports) => {
            line["items"] = reports
                .iter()
                .enumerate()
                .map(|(i, r)| json!({"index": i, "kind": r.kind.as_str(), "valid": r.is_valid()}))
                .collect();
        }
        Outcome::Unreadable {
            message,
            line: l,
            column,
        } => {
            line["error"] = json!({"message": message, "line": l, "column": column});
        }
        Outcome::Single(_) => {}
    }
    line
}

fn text_block(path: &Path, outcome: &Outcome) -> String {
    let name = path.display();
    let mut text = match outcome {
        Outcome::Unreadable {
            message,
            line: Some(l),
            column: Some(c),
        } => {
            return format!("{name}:{l}:{c}: {message}\n");
        }
        Outcome::Unreadable { message, .. } => return format!("{name}: {message}\n"),
        Outcome::Array(reports) => {
            let kinds: Vec<&str> = reports.iter().map(|r| r.kind.as_str()).collect();
            format!(
                "{name}: array of {} document(s) ({})",
                reports.len(),
                kinds.join(", ")
            )
        }
        Outcome::Single(report) => format!("{name}: {}", report.kind.as_str()),
    };
    let issues = outcome.issues();
    if issues.is_empty() {
        text.push_str(", valid\n");
    } else {
        text.push_str(&format!(", {} problem(s)\n", issues.len()));
        for issue in issues {
            let path = if issue.path.is_empty() {
                "(document)"
            } else {
                &issue.path
            };
            text.push_str(&format!("  {path}: {} [{}]\n", issue.message, issue.code));
        }
    }
    text
}
