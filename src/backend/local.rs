//! Local storage with versioned keys: one key per review, so a decision rewrites
//! one small value. A value that does not parse or validate is moved aside under
//! `countersign.quarantine.*` (never deleted) and reported; the app still starts.

use super::js_text::TextReader;
use super::{SetAside, StoreError};
use countersign_domain::{MplpId, Review};
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};

#[wasm_bindgen]
extern "C" {
    /// Web Storage, read with the values left in JavaScript.
    #[wasm_bindgen(js_name = Storage)]
    type RawStorage;
    /// `getItem`: a string, or `null`. `TextReader` copies strings into Rust
    /// much faster than web-sys' `String` result does.
    #[wasm_bindgen(method, js_name = getItem)]
    fn get_value(this: &RawStorage, key: &str) -> JsValue;
}

const REVIEW_PREFIX: &str = "countersign.v1.review.";
/// Decided LangGraph interrupts: their history, kept apart from this device's own reviews.
const LANGGRAPH_PREFIX: &str = "countersign.v1.langgraph.review.";
/// Decisions on LangGraph actions waiting for the other actions of their interrupt.
const LANGGRAPH_HELD_PREFIX: &str = "countersign.v1.langgraph.held.";
/// The inbox index: a summary of every review under `REVIEW_PREFIX`, kept by
/// the desk so the inbox can be drawn before the reviews are read.
const INDEX_KEY: &str = "countersign.v1.inbox-index";
const HEAD_KEY: &str = "countersign.v1.inbox-head";
/// The head as the boot script draws it with no code to fetch (HTML, the
/// build and base it was written for, and until when its times hold).
const DRAWING_KEY: &str = "countersign.v1.inbox-drawing";
const SETTINGS_KEY: &str = "countersign.v1.settings";
const SEEDED_KEY: &str = "countersign.v1.seeded";
const QUARANTINE_PREFIX: &str = "countersign.quarantine.";

/// What loading found: the usable reviews and what had to be set aside.
#[derive(Debug, Default)]
pub struct LoadOutcome {
    /// Every review that parsed.
    pub reviews: Vec<Review>,
    /// Values that could not be used.
    pub set_aside: Vec<SetAside>,
}

/// The browser's local storage.
#[derive(Clone)]
pub struct LocalStore {
    storage: web_sys::Storage,
    /// The key prefix of the reviews this store holds.
    prefix: &'static str,
}

impl LocalStore {
    /// Opens the origin's local storage.
    pub fn open() -> Result<Self, StoreError> {
        let window =
            web_sys::window().ok_or_else(|| StoreError::Unavailable("no window".into()))?;
        match window.local_storage() {
            Ok(Some(storage)) => Ok(LocalStore {
                storage,
                prefix: REVIEW_PREFIX,
            }),
            Ok(None) => Err(StoreError::Unavailable(
                "local storage is turned off".into(),
            )),
            Err(e) => Err(StoreError::Unavailable(describe(&e))),
        }
    }

    /// The same storage, holding the decided reviews of LangGraph interrupts
    /// (under their own prefix, so they never mix with this device's reviews).
    pub fn langgraph_history(&self) -> Self {
        LocalStore {
            storage: self.storage.clone(),
            prefix: LANGGRAPH_PREFIX,
        }
    }

    /// The same storage, holding decisions not sent to LangGraph yet because
    /// their interrupt waits for decisions on its other actions.
    pub fn langgraph_held(&self) -> Self {
        LocalStore {
            storage: self.storage.clone(),
            prefix: LANGGRAPH_HELD_PREFIX,
        }
    }

    /// The id of the review a storage key holds, if it is one of this store's.
    pub fn review_at(&self, key: &str) -> Option<MplpId> {
        MplpId::parse(key.strip_prefix(self.prefix)?).ok()
    }

    /// Removes one review.
    pub fn remove(&self, id: &MplpId) {
        let _ = self.storage.remove_item(&review_key(self.prefix, id));
    }

    /// Every stored review; unusable values are moved aside and listed. O(keys).
    pub fn load(&self) -> LoadOutcome {
        self.read(&self.review_keys())
    }

    /// The keys of every stored review, in storage order.
    pub fn review_keys(&self) -> Vec<String> {
        js_sys::Object::keys(self.storage.as_ref())
            .iter()
            .filter_map(|key| key.as_string())
            .filter(|key| key.starts_with(self.prefix))
            .collect()
    }

    /// The reviews stored under `keys` (a key removed meanwhile is skipped);
    /// unusable values are moved aside and listed.
    pub fn read(&self, keys: &[String]) -> LoadOutcome {
        let mut outcome = LoadOutcome::default();
        // Values are copied into Rust by the browser's encoder, all at once.
        let raw: &RawStorage = self.storage.unchecked_ref();
        let values: Vec<JsValue> = keys.iter().map(|key| raw.get_value(key)).collect();
        let (texts, ranges) = TextReader::new().read_all(&values);
        outcome.reviews.reserve_exact(keys.len());
        for (key, range) in keys.iter().zip(ranges) {
            let Some(text) = range.map(|r| &texts[r]) else {
                continue;
            };
            match parse_review(self.prefix, key, text) {
                Ok(review) => outcome.reviews.push(review),
                Err(reason) => outcome.set_aside.push(self.set_aside(key, text, reason)),
            }
        }
        outcome
    }

    /// The stored inbox index, if any.
    pub fn index_text(&self) -> Option<String> {
        self.text_at(INDEX_KEY)
    }

    /// The stored head of the inbox index (its first page), if any.
    pub fn head_text(&self) -> Option<String> {
        self.text_at(HEAD_KEY)
    }

    fn text_at(&self, key: &str) -> Option<String> {
        let raw: &RawStorage = self.storage.unchecked_ref();
        let (text, ranges) = TextReader::new().read_all(&[raw.get_value(key)]);
        ranges.first()?.as_ref()?;
        Some(text)
    }

    /// Stores the inbox index and its head, and the head's drawing when there
    /// is one; when either of the first two does not fit, removes all three,
    /// so a stale index, head or drawing is never used.
    pub fn save_index_text(&self, index: &str, head: &str, drawing: Option<&str>) {
        if self.write(INDEX_KEY, index).is_err() || self.write(HEAD_KEY, head).is_err() {
            return self.remove_index();
        }
        self.save_drawing_text(drawing);
    }

    /// The stored drawing of the head, if any.
    pub fn drawing_text(&self) -> Option<String> {
        self.text_at(DRAWING_KEY)
    }

    /// Stores the head's drawing (`None`: there is none), or removes it when
    /// it does not fit (the boot script then draws the head itself).
    fn save_drawing_text(&self, drawing: Option<&str>) {
        if drawing.is_none_or(|drawing| self.write(DRAWING_KEY, drawing).is_err()) {
            let _ = self.storage.remove_item(DRAWING_KEY);
        }
    }

    /// Removes the inbox index, its head and the head's drawing (the next
    /// start reads every review first).
    pub fn remove_index(&self) {
        let _ = self.storage.remove_item(INDEX_KEY);
        let _ = self.storage.remove_item(HEAD_KEY);
        let _ = self.storage.remove_item(DRAWING_KEY);
    }

    /// Saves one review (a new one or a new version of one).
    pub fn save(&self, review: &Review) -> Result<(), StoreError> {
        let text = serde_json::to_value(review)
            .map_err(|e| StoreError::WriteFailed(e.to_string()))?
            .to_string();
        let key = review_key(self.prefix, &review.confirm.confirm_id);
        match self.write(&key, &text) {
            // The index is only a shortcut: a review comes first.
            Err(StoreError::QuotaExceeded) if self.index_text().is_some() => {
                self.remove_index();
                self.write(&key, &text)
            }
            result => result,
        }
    }

    /// Saves many reviews; stops at the first failure and says how many were saved.
    pub fn save_all(&self, reviews: &[Review]) -> Result<(), (usize, StoreError)> {
        for (i, review) in reviews.iter().enumerate() {
            self.save(review).map_err(|e| (i, e))?;
        }
        Ok(())
    }

    /// Removes every review and the inbox index (settings and set-aside values stay).
    pub fn clear_reviews(&self) {
        if self.prefix == REVIEW_PREFIX {
            self.remove_index();
        }
        let keys: Vec<String> = (0..self.storage.length().unwrap_or(0))
            .filter_map(|i| self.storage.key(i).ok().flatten())
            .filter(|k| k.starts_with(self.prefix))
            .collect();
        for key in keys {
            let _ = self.storage.remove_item(&key);
        }
    }

    /// Whether the demo data was seeded once already.
    pub fn seeded(&self) -> bool {
        matches!(self.storage.get_item(SEEDED_KEY), Ok(Some(_)))
    }

    /// Records that the demo data was seeded.
    pub fn mark_seeded(&self) -> Result<(), StoreError> {
        self.write(SEEDED_KEY, "1")
    }

    /// The stored settings text, if any.
    pub fn settings_text(&self) -> Option<String> {
        self.storage.get_item(SETTINGS_KEY).ok().flatten()
    }

    /// Stores the settings text.
    pub fn save_settings_text(&self, text: &str) -> Result<(), StoreError> {
        self.write(SETTINGS_KEY, text)
    }

    /// Moves unusable settings aside.
    pub fn set_aside_settings(&self, text: &str, reason: String) -> SetAside {
        self.set_aside(SETTINGS_KEY, text, reason)
    }

    /// How many values were set aside so far.
    pub fn set_aside_count(&self) -> usize {
        (0..self.storage.length().unwrap_or(0))
            .filter_map(|i| self.storage.key(i).ok().flatten())
            .filter(|k| k.starts_with(QUARANTINE_PREFIX))
            .count()
    }

    fn set_aside(&self, key: &str, text: &str, reason: String) -> SetAside {
        let moved_to = format!("{QUARANTINE_PREFIX}{}.{key}", js_sys::Date::now() as u64);
        // Keep the original where it is if it cannot be copied: never lose it.
        if self.storage.set_item(&moved_to, text).is_ok() {
            let _ = self.storage.remove_item(key);
            SetAside {
                key: key.to_owned(),
                moved_to,
                reason,
            }
        } else {
            SetAside {
                key: key.to_owned(),
                moved_to: key.to_owned(),
                reason,
            }
        }
    }

    fn write(&self, key: &str, value: &str) -> Result<(), StoreError> {
        self.storage.set_item(key, value).map_err(|e| {
            let quota = e
                .dyn_ref::<web_sys::DomException>()
                .is_some_and(|d| d.name() == "QuotaExceededError" || d.code() == 22);
            if quota {
                StoreError::QuotaExceeded
            } else {
                StoreError::WriteFailed(describe(&e))
            }
        })
    }
}

fn review_key(prefix: &str, id: &MplpId) -> String {
    format!("{prefix}{id}")
}

/// Parses a stored review and checks it is stored under its own id.
fn parse_review(prefix: &str, key: &str, text: &str) -> Result<Review, String> {
    let not_review = |e: serde_json::Error| format!("not a Countersign review: {e}");
    let review: Review = serde_json::from_str(text).map_err(not_review)?;
    if review_key(prefix, &review.confirm.confirm_id) != key {
        return Err(format!(
            "stored under {key} but its confirm_id is {}",
            review.confirm.confirm_id
        ));
    }
    if !review.confirm.status_recorded() {
        return Err(format!(
            "edited outside Countersign: its status says {} but its history does not record that decision",
            review.confirm.status
        ));
    }
    Ok(review)
}

fn describe(e: &JsValue) -> String {
    e.dyn_ref::<web_sys::DomException>()
        .map(|d| format!("{}: {}", d.name(), d.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| "unknown error".into())
}
