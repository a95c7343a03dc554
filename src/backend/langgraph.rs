//! A LangGraph server (its Agent Protocol API) as a source of reviews: the
//! threads that may hold pending interrupts (`POST /threads/search` by status,
//! paged, with each errored thread's state), and the run that resumes one
//! (`POST /threads/{thread_id}/runs`), followed to its end (`…/join`).

use super::connection::Connection;
use super::fetch::fetch_json;
use super::local::LocalStore;
use super::{HttpError, SetAside};
use countersign_domain::langgraph::{PendingInterrupt, ThreadStatus};
use countersign_domain::{MplpId, Review};
use serde_json::{json, Value};
use std::collections::HashMap;

/// Threads asked for per page.
const PAGE: usize = 100;
/// At most this many threads of one status are listed (100 pages).
const MAX_THREADS: usize = 10_000;

/// A connected LangGraph server.
#[derive(Debug, Clone)]
pub struct LangGraphStore {
    connection: Connection,
}

/// The interrupts of errored threads, as their state listed them when each
/// thread last changed (`updated_at`): an errored thread's own `interrupts`
/// field may leave out the one whose answer failed, so its state is read, once
/// per change.
#[derive(Debug, Clone, Default)]
pub struct StateCache(HashMap<String, Errored>);

/// What an errored thread's state said when the thread last changed.
#[derive(Debug, Clone)]
struct Errored {
    /// The thread's `updated_at` then.
    updated_at: Value,
    /// Its pending interrupts.
    interrupts: Value,
    /// Its last run's error.
    error: Value,
}

impl LangGraphStore {
    /// A store for this connection (nothing is sent yet).
    pub fn new(connection: Connection) -> Self {
        LangGraphStore { connection }
    }

    /// The server's address.
    pub fn url(&self) -> &str {
        self.connection.base()
    }

    /// The graphs (or assistants) whose threads are reviewed; empty: all.
    pub fn graphs(&self) -> Vec<String> {
        self.connection
            .graphs
            .split(',')
            .map(str::trim)
            .filter(|g| !g.is_empty())
            .map(str::to_owned)
            .collect()
    }

    fn path(segment: &str) -> String {
        js_sys::encode_uri_component(segment)
            .as_string()
            .unwrap_or_default()
    }

    async fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, HttpError> {
        let url = format!("{}{path}", self.connection.base());
        let mut headers = Vec::new();
        if !self.connection.key.is_empty() {
            headers.push(("x-api-key", self.connection.key.as_str()));
        }
        let (status, value) =
            fetch_json(method, &url, &headers, body, self.connection.base()).await?;
        if (200..300).contains(&status) {
            return Ok(value);
        }
        // LangGraph's errors are `{"detail": "..."}`.
        let message = match &value["detail"] {
            Value::String(text) => text.clone(),
            Value::Null => value.to_string(),
            other => other.to_string(),
        };
        Err(HttpError::Refused {
            status,
            message: format!("LangGraph refused ({status}): {message}"),
            details: Vec::new(),
            refusal: None,
        })
    }

    /// Checks the address and the key, and that every graph asked for exists;
    /// returns the server's graphs.
    pub async fn check(&self) -> Result<Vec<String>, HttpError> {
        let assistants = self
            .send("POST", "/assistants/search", Some(&json!({"limit": 1000})))
            .await?;
        let items = assistants.as_array().cloned().unwrap_or_default();
        let mut graphs: Vec<String> = items
            .iter()
            .filter_map(|a| a["graph_id"].as_str().map(str::to_owned))
            .collect();
        graphs.sort();
        graphs.dedup();
        let unknown: Vec<String> = self
            .graphs()
            .into_iter()
            .filter(|wanted| {
                !items.iter().any(|a| {
                    a["assistant_id"].as_str() == Some(wanted)
                        || a["graph_id"].as_str() == Some(wanted)
                })
            })
            .collect();
        if unknown.is_empty() {
            return Ok(graphs);
        }
        Err(HttpError::Refused {
            status: 404,
            message: format!(
                "this server has no graph or assistant “{}”; its graphs: {}",
                unknown.join("”, “"),
                if graphs.is_empty() {
                    "none".into()
                } else {
                    graphs.join(", ")
                }
            ),
            details: Vec::new(),
            refusal: None,
        })
    }

    /// Every thread that may hold pending interrupts (interrupted, errored or
    /// busy), oldest change first within each status, page by page; an errored
    /// thread comes with the interrupts and error of its state.
    pub async fn waiting_threads(&self, cache: &mut StateCache) -> Result<Vec<Value>, HttpError> {
        let filters: Vec<Value> = match self.graphs() {
            graphs if graphs.is_empty() => vec![json!({})],
            graphs => graphs
                .iter()
                .flat_map(|g| [json!({"graph_id": g}), json!({"assistant_id": g})])
                .collect(),
        };
        let mut threads = Vec::new();
        for status in ThreadStatus::WAITING {
            for metadata in &filters {
                threads.extend(self.search(status, metadata).await?);
            }
        }
        let mut seen = std::collections::HashSet::new();
        threads.retain(|t| seen.insert(t["thread_id"].as_str().unwrap_or_default().to_owned()));
        let mut kept = StateCache::default();
        for thread in threads.iter_mut() {
            if thread["status"] == "error" {
                let known = self.errored_state(thread, cache).await?;
                thread["interrupts"] = known.interrupts.clone();
                thread["error"] = known.error.clone();
                let id = thread["thread_id"].as_str().unwrap_or_default().to_owned();
                kept.0.insert(id, known);
            }
        }
        *cache = kept;
        Ok(threads)
    }

    async fn search(
        &self,
        status: ThreadStatus,
        metadata: &Value,
    ) -> Result<Vec<Value>, HttpError> {
        let mut threads = Vec::new();
        loop {
            let body = json!({
                "status": status.as_str(),
                "metadata": metadata,
                "limit": PAGE,
                "offset": threads.len(),
                "sort_by": "updated_at",
                "sort_order": "asc",
                "select": ["thread_id", "status", "interrupts", "updated_at", "metadata"],
            });
            let page = self.send("POST", "/threads/search", Some(&body)).await?;
            let items = page.as_array().cloned().ok_or_else(|| {
                HttpError::Garbled("the thread search did not answer with a list".into())
            })?;
            let full = items.len() == PAGE;
            threads.extend(items);
            if !full || threads.len() >= MAX_THREADS {
                return Ok(threads);
            }
        }
    }

    /// The pending interrupts and the error of an errored thread, from the
    /// cache when the thread has not changed since.
    async fn errored_state(
        &self,
        thread: &Value,
        cache: &StateCache,
    ) -> Result<Errored, HttpError> {
        let id = thread["thread_id"].as_str().unwrap_or_default();
        let updated_at = &thread["updated_at"];
        if let Some(known) = cache.0.get(id).filter(|k| k.updated_at == *updated_at) {
            return Ok(known.clone());
        }
        let state = self.state(id).await?;
        let full = self.thread(id).await?;
        Ok(Errored {
            updated_at: updated_at.clone(),
            interrupts: state["interrupts"].clone(),
            error: full["error"].clone(),
        })
    }

    /// A thread (`GET /threads/{id}`): its status, metadata and error.
    pub async fn thread(&self, thread_id: &str) -> Result<Value, HttpError> {
        self.send("GET", &format!("/threads/{}", Self::path(thread_id)), None)
            .await
    }

    /// A thread's current state; its `interrupts` are the ones pending now.
    pub async fn state(&self, thread_id: &str) -> Result<Value, HttpError> {
        self.send(
            "GET",
            &format!("/threads/{}/state", Self::path(thread_id)),
            None,
        )
        .await
    }

    /// Starts the run that resumes a thread (`body` from the domain's
    /// `resume_run`); returns its run id once the server accepted it.
    pub async fn start_run(&self, thread_id: &str, body: &Value) -> Result<String, HttpError> {
        let run = self
            .send(
                "POST",
                &format!("/threads/{}/runs", Self::path(thread_id)),
                Some(body),
            )
            .await?;
        run["run_id"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| HttpError::Garbled("the new run has no run_id".into()))
    }

    /// Waits for a run to end; returns what it ended with (the thread's values,
    /// its new interrupts, or `{"__error__": …}`).
    pub async fn join(&self, thread_id: &str, run_id: &str) -> Result<Value, HttpError> {
        let path = format!(
            "/threads/{}/runs/{}/join",
            Self::path(thread_id),
            Self::path(run_id)
        );
        self.send("GET", &path, None).await
    }
}

/// A LangGraph server and what was last listed from it.
#[derive(Clone)]
pub struct Interrupts {
    pub(crate) store: LangGraphStore,
    /// Decided interrupts, kept in this browser.
    pub(crate) history: Option<LocalStore>,
    /// Where held decisions are kept across reloads.
    pub(crate) held_store: Option<LocalStore>,
    /// The pending interrupt behind each review, by confirm id.
    pub(crate) pending: HashMap<MplpId, PendingInterrupt>,
    /// Decisions on actions whose interrupt still waits for its other actions
    /// (LangGraph takes the answers of one interrupt together).
    pub(crate) held: HashMap<MplpId, Review>,
    /// The errored threads' states, read once per change.
    pub(crate) states: StateCache,
}

impl Interrupts {
    /// A source for this server; `local` keeps decided interrupts and the
    /// decisions held for their interrupt's other actions (read by `read_kept`).
    pub fn new(store: LangGraphStore, local: Option<&LocalStore>) -> Self {
        Interrupts {
            store,
            history: local.map(LocalStore::langgraph_history),
            held_store: local.map(LocalStore::langgraph_held),
            pending: HashMap::new(),
            held: HashMap::new(),
            states: StateCache::default(),
        }
    }

    /// Reads what this browser keeps: the held decisions, and the decided
    /// interrupts (returned, with what could not be read).
    pub(crate) fn read_kept(&mut self) -> (Vec<Review>, Vec<SetAside>) {
        if let Some(store) = &self.held_store {
            let outcome = store.load();
            self.held = outcome
                .reviews
                .into_iter()
                .map(|r| (r.confirm.confirm_id, r))
                .collect();
        }
        match &self.history {
            Some(history) => {
                let outcome = history.load();
                (outcome.reviews, outcome.set_aside)
            }
            None => (Vec::new(), Vec::new()),
        }
    }

    /// Keeps only the held decisions whose action is still pending.
    pub(crate) fn forget_held_unless(&mut self, keep: impl Fn(&MplpId) -> bool) {
        let store = self.held_store.clone();
        self.held.retain(|id, _| {
            let kept = keep(id);
            if !kept {
                if let Some(store) = &store {
                    store.remove(id);
                }
            }
            kept
        });
    }

    /// The server's address.
    pub fn url(&self) -> &str {
        self.store.url()
    }

    /// The graphs (or assistants) reviewed; empty: every graph of the server.
    pub fn graphs(&self) -> Vec<String> {
        self.store.graphs()
    }
}
