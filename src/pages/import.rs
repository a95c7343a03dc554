//! Import (`/import`): MPLP JSON by file picker, drag and drop, or paste. Each
//! file's problems are listed with their paths; valid reviews are added, invalid
//! ones refused, and nothing stored is touched by a refused file.

use crate::desk::Desk;
use crate::download::download;
use crate::exchange::{self, ImportReport};
use countersign_domain::Issue;
use leptos::prelude::*;
use wasm_bindgen_futures::JsFuture;

/// What happened to one imported source.
#[derive(Clone)]
struct Outcome {
    /// Order of arrival, newest highest (the list's key).
    number: usize,
    source: String,
    imported: usize,
    checked_only: usize,
    refused: Vec<Issue>,
    error: Option<String>,
}

impl Outcome {
    /// A source that gave nothing, and why.
    fn failed(number: usize, source: String, refused: Vec<Issue>, error: String) -> Self {
        Outcome {
            number,
            source,
            imported: 0,
            checked_only: 0,
            refused,
            error: Some(error),
        }
    }
}

/// The number of the next outcome shown. Imports finish after awaits, when the
/// page may have been left (then the import is still stored, and not shown).
fn next_number(outcomes: RwSignal<Vec<Outcome>>) -> usize {
    outcomes.try_with_untracked(Vec::len).unwrap_or_default() + 1
}

/// The import and export page.
#[component]
pub fn ImportPage() -> impl IntoView {
    let desk = expect_context::<Desk>();
    let pasted = RwSignal::new(String::new());
    let outcomes = RwSignal::new(Vec::<Outcome>::new());
    let dragging = RwSignal::new(false);
    let export_message = RwSignal::new(None::<String>);

    let refuse = move |source: String, error: String| {
        let number = next_number(outcomes);
        outcomes.update(|o| o.insert(0, Outcome::failed(number, source, vec![], error)));
    };
    let import_now = move |source: String, text: String| {
        let known = desk.held_ids();
        let number = next_number(outcomes);
        let outcome = match exchange::import(&text, &known) {
            Err(error) => Outcome::failed(number, source, vec![], error),
            Ok(ImportReport {
                accepted,
                refused,
                checked_only,
            }) => {
                let count = accepted.len();
                match desk.add(accepted) {
                    Ok(_) => Outcome {
                        number,
                        source,
                        imported: count,
                        checked_only: checked_only.len(),
                        refused,
                        error: None,
                    },
                    Err(e) => Outcome::failed(number, source, refused, e.to_string()),
                }
            }
        };
        outcomes.update(|o| o.insert(0, outcome));
    };
    // An import is checked against every stored review, so it waits until they are read.
    let run = move |source: String, text: String| {
        leptos::task::spawn_local(async move {
            desk.read_all().await;
            import_now(source, text);
        });
    };

    let read_files = move |files: Option<web_sys::FileList>| {
        let Some(files) = files else { return };
        for i in 0..files.length() {
            let Some(file) = files.item(i) else { continue };
            let name = file.name();
            leptos::task::spawn_local(async move {
                match JsFuture::from(file.text()).await {
                    Ok(text) => run(name, text.as_string().unwrap_or_default()),
                    Err(_) => refuse(name, "the file could not be read".into()),
                }
            });
        }
    };

    // Exports hold every review (they wait until the stored ones are read).
    let export_all = move |_| {
        leptos::task::spawn_local(async move {
            let message = match desk.every_review().await {
                Ok(reviews) => {
                    let text = exchange::export_all(&reviews.iter().collect::<Vec<_>>());
                    download("countersign-reviews.json", "application/json", &text).err()
                }
                Err(e) => Some(format!("The reviews could not be read: {e}")),
            };
            export_message.set(message);
        });
    };
    let export_samples = move |_| {
        leptos::task::spawn_local(async move {
            let message = match desk.every_review().await {
                Ok(reviews) => {
                    let text =
                        exchange::learning_samples_ndjson(&reviews.iter().collect::<Vec<_>>());
                    if text.is_empty() {
                        Some(
                            "No review is decided yet, so there is no learning sample to export."
                                .to_owned(),
                        )
                    } else {
                        download(
                            "countersign-learning-samples.ndjson",
                            "application/x-ndjson",
                            &text,
                        )
                        .err()
                    }
                }
                Err(e) => Some(format!("The reviews could not be read: {e}")),
            };
            export_message.set(message);
        });
    };

    view! {
        <section class="import" aria-labelledby="import-title">
            <div class="page-head">
                <h1 id="import-title">"Import and export"</h1>
                <p class="subtle">"MPLP v1.0 JSON: a Confirm with its Plan, an array of documents, or files exported by Countersign."</p>
            </div>
            <div
                class="dropzone"
                class:dragging=move || dragging.get()
                on:dragover=move |ev| { ev.prevent_default(); dragging.set(true); }
                on:dragleave=move |_| dragging.set(false)
                on:drop=move |ev| {
                    ev.prevent_default();
                    dragging.set(false);
                    read_files(ev.data_transfer().and_then(|d| d.files()));
                }
            >
                <label for="import-files">"Drop JSON files here, or choose them"</label>
                <input
                    id="import-files"
                    type="file"
                    accept="application/json,.json"
                    multiple
                    on:change=move |ev| {
                        use wasm_bindgen::JsCast;
                        let input = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok());
                        read_files(input.and_then(|i| i.files()));
                    }
                />
            </div>
            <div class="field">
                <label for="import-text">"Or paste JSON"</label>
                <textarea id="import-text" rows="8" spellcheck="false" prop:value=move || pasted.get() on:input=move |ev| pasted.set(event_target_value(&ev))></textarea>
            </div>
            <div class="actions">
                <button type="button" class="button-primary" on:click=move |_| run("Pasted JSON".into(), pasted.get_untracked())>"Check and import"</button>
            </div>
            <div aria-live="polite">
                <For each=move || outcomes.get() key=|o| o.number let:outcome>
                    <ImportOutcome outcome />
                </For>
            </div>
            <h2>"Export"</h2>
            <p class="subtle">"Every review as MPLP JSON (readable by any MPLP tool), or the learning samples of decided reviews as NDJSON."</p>
            <div class="actions">
                <button type="button" on:click=export_all>"Export all reviews"</button>
                <button type="button" on:click=export_samples>"Export learning samples"</button>
                <span role="status" class="subtle">{move || export_message.get()}</span>
            </div>
        </section>
    }
}

#[component]
fn ImportOutcome(outcome: Outcome) -> impl IntoView {
    let refused = !outcome.refused.is_empty() || outcome.error.is_some();
    let summary = match (&outcome.error, outcome.imported, outcome.refused.len()) {
        (Some(e), _, _) => format!("Nothing imported: {e}"),
        (None, 0, 0) if outcome.checked_only > 0 => format!(
            "{} document(s) checked and valid; nothing to review in them.",
            outcome.checked_only
        ),
        (None, n, 0) => format!("Imported {n} review{}.", if n == 1 { "" } else { "s" }),
        (None, n, p) => format!(
            "Imported {n} review{}; refused because of {p} problem{}:",
            if n == 1 { "" } else { "s" },
            if p == 1 { "" } else { "s" }
        ),
    };
    view! {
        <section class="card import-outcome" class:refused=refused aria-label=format!("Import of {}", outcome.source)>
            <h3>{outcome.source.clone()}</h3>
            <p role="status">{summary}</p>
            {(!outcome.refused.is_empty()).then(|| view! {
                <ul class="issues" aria-label="Import problems">
                    {outcome.refused.into_iter().map(|i| view! {
                        <li>
                            <code class="issue-path">{if i.path.is_empty() { "(document)".to_owned() } else { i.path.clone() }}</code>
                            <span class="issue-message">{i.message.clone()}</span>
                            <span class="issue-code subtle">{i.code.as_str()}</span>
                        </li>
                    }).collect_view()}
                </ul>
            })}
        </section>
    }
}
