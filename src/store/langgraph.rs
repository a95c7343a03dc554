//! A LangGraph server (its Agent Protocol API) as a source of reviews: the
//! threads waiting on a human (`POST /threads/search`, paged) and the run that
//! resumes one (`POST /threads/{thread_id}/runs` with `command.resume`).

use super::connection::Connection;
use super::fetch::fetch_json;
use super::HttpError;
use serde_json::{json, Value};

/// Threads asked for per page.
const PAGE: usize = 100;
/// At most this many interrupted threads are listed (100 pages).
const MAX_THREADS: usize = 10_000;

/// A connected LangGraph server.
#[derive(Debug, Clone)]
pub struct LangGraphStore {
    connection: Connection,
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

    /// The assistant or graph id that resumes threads.
    pub fn assistant(&self) -> &str {
        &self.connection.assistant
    }

    async fn post(&self, path: &str, body: &Value) -> Result<Value, HttpError> {
        let url = format!("{}{path}", self.connection.base());
        let mut headers = Vec::new();
        if !self.connection.key.is_empty() {
            headers.push(("x-api-key", self.connection.key.as_str()));
        }
        let (status, value) =
            fetch_json("POST", &url, &headers, Some(body), self.connection.base()).await?;
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
            code: format!("http_{status}"),
            message: format!("LangGraph refused ({status}): {message}"),
            details: Vec::new(),
        })
    }

    /// Checks the address and the key, and that the assistant or graph exists.
    pub async fn check(&self) -> Result<(), HttpError> {
        let assistants = self
            .post("/assistants/search", &json!({"limit": 1000}))
            .await?;
        let wanted = self.assistant();
        let items = assistants.as_array().cloned().unwrap_or_default();
        let known = items.iter().any(|a| {
            a["assistant_id"].as_str() == Some(wanted) || a["graph_id"].as_str() == Some(wanted)
        });
        if known {
            return Ok(());
        }
        let mut graphs: Vec<&str> = items
            .iter()
            .filter_map(|a| a["graph_id"].as_str())
            .collect();
        graphs.dedup();
        Err(HttpError::Refused {
            status: 404,
            code: "unknown_assistant".into(),
            message: format!(
                "this server has no assistant or graph “{wanted}”; its graphs: {}",
                if graphs.is_empty() {
                    "none".into()
                } else {
                    graphs.join(", ")
                }
            ),
            details: Vec::new(),
        })
    }

    /// Every thread waiting on a human, oldest change first, page by page.
    pub async fn interrupted_threads(&self) -> Result<Vec<Value>, HttpError> {
        let mut threads = Vec::new();
        loop {
            let body = json!({
                "status": "interrupted",
                "limit": PAGE,
                "offset": threads.len(),
                "sort_by": "updated_at",
                "sort_order": "asc",
                "select": ["thread_id", "status", "interrupts", "updated_at"],
            });
            let page = self.post("/threads/search", &body).await?;
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

    /// Starts the run that resumes a thread (`body` from the domain's
    /// `resume_run`); `Ok` only once the server accepted it.
    pub async fn resume(&self, thread_id: &str, body: &Value) -> Result<(), HttpError> {
        let path = format!(
            "/threads/{}/runs",
            js_sys::encode_uri_component(thread_id)
                .as_string()
                .unwrap_or_default()
        );
        self.post(&path, body).await.map(drop)
    }
}
