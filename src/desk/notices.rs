//! What the reviewer should know: problems found loading, values set aside,
//! live updates that could not be read, undeliverable decisions. Shown above
//! every screen; written only through the intents here.

use crate::backend::SetAside;
use leptos::prelude::*;

/// The notices shown above every screen (cheap to copy; provided as context).
#[derive(Clone, Copy)]
pub struct Notices {
    list: RwSignal<Vec<String>>,
}

impl Notices {
    pub(super) fn new(first: Vec<String>) -> Self {
        Notices {
            list: RwSignal::new(first),
        }
    }

    /// Every notice, oldest first (reactive).
    pub fn list(&self) -> ReadSignal<Vec<String>> {
        self.list.read_only()
    }

    /// Tells the reviewer something.
    pub fn tell(&self, notice: String) {
        self.list.update(|n| n.push(notice));
    }

    /// Tells the reviewer something unless it is said already.
    pub(super) fn tell_once(&self, notice: String) {
        if self.list.with_untracked(|n| !n.contains(&notice)) {
            self.tell(notice);
        }
    }

    /// Says where each unusable stored value was put aside.
    pub(super) fn set_aside(&self, values: &[SetAside]) {
        if !values.is_empty() {
            self.list
                .update(|n| n.extend(values.iter().map(describe_set_aside)));
        }
    }

    /// Takes back a notice that no longer holds.
    pub(super) fn withdraw(&self, notice: &str) {
        if self.list.with_untracked(|n| n.iter().any(|x| x == notice)) {
            self.list.update(|n| n.retain(|x| x != notice));
        }
    }
}

/// What the reviewer is told of a value set aside.
pub(super) fn describe_set_aside(s: &SetAside) -> String {
    format!(
        "A stored value could not be used and was kept aside as {} (not deleted): {}",
        s.moved_to, s.reason
    )
}
