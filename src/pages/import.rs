//! Import (`/import`): MPLP JSON by file picker, drag and drop, or paste. Each
//! file's problems are listed with their paths; valid reviews are added, invalid
//! ones refused, and nothing stored is touched by a refused file.

use crate::desk::{Desk, Reviews};
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

/// What an import reads: pasted text, or a file dropped or chosen.
#[derive(Clone)]
enum Given {
    Pasted(String),
    File(web_sys::File),
}

/// The imports of this visit: what each source came to, newest first. Its
/// intent: [`Imports::import`] what was given.
#[derive(Clone, Copy)]
struct Imports {
    desk: Desk,
    reviews: Reviews,
    outcomes: RwSignal<Vec<Outcome>>,
}

impl Imports {
    /// The number of the next outcome shown. Imports finish after awaits, when
    /// the page may have been left (then the import is still stored, and not shown).
    fn next_number(self) -> usize {
        self.outcomes
            .try_with_untracked(Vec::len)
            .unwrap_or_default()
            + 1
    }

    fn show(self, outcome: Outcome) {
        self.outcomes.update(|o| o.insert(0, outcome));
    }

    /// Reads what was given and imports it from `source` once every stored
    /// review is read (an import is checked against all of them).
    async fn import(self, source: String, given: Given) {
        let text = match given {
            Given::Pasted(text) => text,
            Given::File(file) => match JsFuture::from(file.text()).await {
                Ok(text) => text.as_string().unwrap_or_default(),
                Err(_) => {
                    let error = "the file could not be read".to_owned();
                    return self.show(Outcome::failed(self.next_number(), source, vec![], error));
                }
            },
        };
        self.reviews.read_all().await;
        self.import_now(source, text);
    }

    fn import_now(self, source: String, text: String) {
        let known = self.reviews.held_ids();
        let number = self.next_number();
        let outcome = match exchange::import(&text, &known) {
            Err(error) => Outcome::failed(number, source, vec![], error),
            Ok(ImportReport {
                accepted,
                refused,
                checked_only,
            }) => {
                let count = accepted.len();
                match self.desk.add(accepted) {
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
        self.show(outcome);
    }
}

/// Imports each file under its name.
fn import_files(importing: Action<(String, Given), ()>, files: Option<web_sys::FileList>) {
    let Some(files) = files else { return };
    for i in 0..files.length() {
        if let Some(file) = files.item(i) {
            importing.dispatch((file.name(), Given::File(file)));
        }
    }
}

/// The import and export page.
#[component]
pub fn ImportPage() -> impl IntoView {
    let imports = Imports {
        desk: Desk::from_context(),
        reviews: Reviews::from_context(),
        outcomes: RwSignal::new(Vec::new()),
    };
    let importing = Action::new_unsync(move |(source, given): &(String, Given)| {
        imports.import(source.clone(), given.clone())
    });
    let pasted = RwSignal::new(String::new());
    view! {
        <section class="import" aria-labelledby="import-title">
            <div class="page-head">
                <h1 id="import-title">"Import and export"</h1>
                <p class="subtle">"MPLP v1.0 JSON: a Confirm with its Plan, an array of documents, or files exported by Countersign."</p>
            </div>
            <DropZone importing />
            <div class="field">
                <label for="import-text">"Or paste JSON"</label>
                <textarea id="import-text" rows="8" spellcheck="false" prop:value=move || pasted.get() on:input=move |ev| pasted.set(event_target_value(&ev))></textarea>
            </div>
            <div class="actions">
                <button type="button" class="button-primary" disabled=move || importing.pending().get()
                    on:click=move |_| { importing.dispatch(("Pasted JSON".into(), Given::Pasted(pasted.get_untracked()))); }>"Check and import"</button>
            </div>
            <div aria-live="polite">
                <For each=move || imports.outcomes.get() key=|o| o.number let:outcome>
                    <ImportOutcome outcome />
                </For>
            </div>
            <Export />
        </section>
    }
}

/// Files dropped here, or chosen, are imported.
#[component]
fn DropZone(importing: Action<(String, Given), ()>) -> impl IntoView {
    let dragging = RwSignal::new(false);
    view! {
        <div
            class="dropzone"
            class:dragging=move || dragging.get()
            on:dragover=move |ev| { ev.prevent_default(); dragging.set(true); }
            on:dragleave=move |_| dragging.set(false)
            on:drop=move |ev| {
                ev.prevent_default();
                dragging.set(false);
                import_files(importing, ev.data_transfer().and_then(|d| d.files()));
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
                    import_files(importing, input.and_then(|i| i.files()));
                }
            />
        </div>
    }
}

/// Every review as MPLP JSON, or the decided ones' learning samples as NDJSON
/// (each waits until the stored reviews are read).
#[component]
fn Export() -> impl IntoView {
    let desk = Desk::from_context();
    let export = Action::new_unsync(move |samples: &bool| {
        let samples = *samples;
        async move {
            match desk.every_review().await {
                Ok(reviews) => {
                    let reviews: Vec<_> = reviews.iter().collect();
                    if !samples {
                        let text = exchange::export_all(&reviews);
                        download("countersign-reviews.json", "application/json", &text).err()
                    } else {
                        match exchange::learning_samples_ndjson(&reviews) {
                            text if text.is_empty() => Some(
                                "No review is decided yet, so there is no learning sample to export."
                                    .to_owned(),
                            ),
                            text => download(
                                "countersign-learning-samples.ndjson",
                                "application/x-ndjson",
                                &text,
                            )
                            .err(),
                        }
                    }
                }
                Err(e) => Some(format!("The reviews could not be read: {e}")),
            }
        }
    });
    let busy = move || export.pending().get();
    view! {
        <h2>"Export"</h2>
        <p class="subtle">"Every review as MPLP JSON (readable by any MPLP tool), or the learning samples of decided reviews as NDJSON."</p>
        <div class="actions">
            <button type="button" disabled=busy on:click=move |_| { export.dispatch(false); }>"Export all reviews"</button>
            <button type="button" disabled=busy on:click=move |_| { export.dispatch(true); }>"Export learning samples"</button>
            <span role="status" class="subtle">{move || export.value().get().flatten()}</span>
        </div>
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
