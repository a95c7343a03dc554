//! One review as the desk holds it: what the inbox lists of it (its summary)
//! and, once read from storage, the review itself.

use countersign_domain::model::{ConfirmStatus, TargetType};
use countersign_domain::{MplpId, Review, Timestamp};
use serde::{Deserialize, Serialize};
use std::hash::{Hash, Hasher};
use std::sync::OnceLock;

/// What the inbox lists of a review. Local storage keeps one for every review
/// in a single small value (the inbox index), so the inbox's first page is
/// drawn before the reviews themselves are read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The confirm's id.
    pub id: MplpId,
    /// The confirm's status.
    pub status: ConfirmStatus,
    /// What the confirm is about.
    #[serde(rename = "type")]
    pub target_type: TargetType,
    /// The role that asked.
    pub by: String,
    /// When it was asked.
    pub at: Timestamp,
    /// How many decisions its history holds.
    pub decisions: usize,
    /// What is asked, in a few words.
    pub title: String,
    /// Its tag: `tool call R3`, or the target type.
    pub kind: String,
    /// A plan's step count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<usize>,
    /// A tool call's exact name and session (similar calls are grouped by them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<(String, String)>,
}

impl Summary {
    /// The summary of a review.
    pub fn of(review: &Review) -> Self {
        let confirm = &review.confirm;
        Summary {
            id: confirm.confirm_id,
            status: confirm.status,
            target_type: confirm.target_type,
            by: confirm.requested_by_role.clone(),
            at: confirm.requested_at.clone(),
            decisions: confirm.decisions().len(),
            title: title(review),
            kind: match review.tool_call() {
                Some(call) => format!("tool call {}", call.request.risk_tier),
                None => confirm.target_type.to_string(),
            },
            steps: review.plan().map(|p| p.steps.len()),
            call: call_of(review),
        }
    }

    /// A number that changes when anything the inbox shows of it changes.
    pub fn fingerprint(&self) -> u64 {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        (self.id, self.status.as_str(), self.target_type.as_str()).hash(&mut hasher);
        (&self.by, self.at.as_str(), self.decisions, &self.title).hash(&mut hasher);
        (&self.kind, self.steps, &self.call).hash(&mut hasher);
        hasher.finish()
    }
}

/// A tool call's exact name and session.
fn call_of(review: &Review) -> Option<(String, String)> {
    review.tool_call().map(|call| {
        let name = call.request.tool_call().map(|c| c.name).unwrap_or_default();
        (name, call.request.session_id.clone())
    })
}

/// What is asked, in a few words: a tool call's exact name and then the
/// agent's summary, a plan's title, or the confirm's reason or target.
fn title(review: &Review) -> String {
    if let Some(call) = review.tool_call() {
        let name = call.request.tool_call().map(|c| c.name).unwrap_or_default();
        let summary = crate::markdown::plain_text(&call.request.human_summary);
        let summary = summary.trim();
        let summary = summary
            .strip_prefix(name.as_str())
            .map(|rest| rest.trim_start_matches([':', ' ']))
            .unwrap_or(summary);
        return format!("{}: {summary}", crate::reveal::label(&name));
    }
    match (review.plan(), review.confirm.target_type) {
        (Some(plan), _) => plan.title.clone(),
        (None, TargetType::Other) => review
            .confirm
            .reason
            .clone()
            .unwrap_or_else(|| "Request".into()),
        (None, kind) => format!("{kind} {}", review.confirm.target_id),
    }
}

/// A review on the desk: listed from the inbox index until it is read, then
/// with the review (which every check and decision uses).
#[derive(Debug)]
pub struct Entry {
    content: Content,
    /// How many validation problems it has, counted the first time a view asks
    /// (the inbox shows 50 rows, so loading 1,000 reviews validates 50).
    problems: OnceLock<usize>,
    /// Lowercased text the search box matches against, made at the first search.
    haystack: OnceLock<String>,
}

#[derive(Debug)]
enum Content {
    /// Read from storage; the summary is made when first asked for.
    Read(Box<Review>, OnceLock<Summary>),
    /// Known only from the inbox index.
    Listed(Summary),
}

impl Entry {
    /// Wraps a review (its summary, validation and search text wait until asked for).
    pub fn new(review: Review) -> Self {
        Entry::with(Content::Read(Box::new(review), OnceLock::new()))
    }

    /// A review known only from the inbox index, not read yet.
    pub fn listed(summary: Summary) -> Self {
        Entry::with(Content::Listed(summary))
    }

    fn with(content: Content) -> Self {
        Entry {
            content,
            problems: OnceLock::new(),
            haystack: OnceLock::new(),
        }
    }

    /// What the inbox lists of it.
    pub fn summary(&self) -> &Summary {
        match &self.content {
            Content::Read(review, summary) => summary.get_or_init(|| Summary::of(review)),
            Content::Listed(summary) => summary,
        }
    }

    /// The review, once read from storage (`None` while the inbox index
    /// stands in for it, for a moment after the app starts).
    pub fn review(&self) -> Option<&Review> {
        match &self.content {
            Content::Read(review, _) => Some(review),
            Content::Listed(_) => None,
        }
    }

    /// The lowercased text the search box matches against: titles, reason,
    /// the tool call, the requester and the id.
    pub fn haystack(&self) -> &str {
        self.haystack.get_or_init(|| {
            let Some(review) = self.review() else {
                let summary = self.summary();
                return [summary.title.as_str(), &summary.by, &summary.id.to_string()]
                    .join(" ")
                    .to_lowercase();
            };
            [
                review.plan().map(|p| p.title.as_str()).unwrap_or_default(),
                review
                    .plan()
                    .map(|p| p.objective.as_str())
                    .unwrap_or_default(),
                review.confirm.reason.as_deref().unwrap_or_default(),
                review
                    .tool_call()
                    .map(|c| c.request.tool_call_canonical.as_str())
                    .unwrap_or_default(),
                review.confirm.requested_by_role.as_str(),
                &review.confirm.confirm_id.to_string(),
            ]
            .join(" ")
            .to_lowercase()
        })
    }

    /// How many validation problems the review has (0 = valid); `None` until
    /// it is read.
    pub fn problems(&self) -> Option<usize> {
        let review = self.review()?;
        Some(*self.problems.get_or_init(|| review.validate().len()))
    }

    /// What is asked, in a few words.
    pub fn title(&self) -> &str {
        &self.summary().title
    }

    /// What kind of request, for its tag: `tool call R3`, or the target type.
    pub fn kind_label(&self) -> &str {
        &self.summary().kind
    }

    /// The confirm's id.
    pub fn id(&self) -> MplpId {
        match self.review() {
            Some(review) => review.confirm.confirm_id,
            None => self.summary().id,
        }
    }

    /// The confirm's status.
    pub fn status(&self) -> ConfirmStatus {
        match self.review() {
            Some(review) => review.confirm.status,
            None => self.summary().status,
        }
    }

    /// What the confirm is about.
    pub fn target_type(&self) -> TargetType {
        match self.review() {
            Some(review) => review.confirm.target_type,
            None => self.summary().target_type,
        }
    }

    /// The role that asked.
    pub fn requested_by(&self) -> &str {
        match self.review() {
            Some(review) => &review.confirm.requested_by_role,
            None => &self.summary().by,
        }
    }

    /// A tool call's exact name and session.
    pub fn call(&self) -> Option<(String, String)> {
        match self.review() {
            Some(review) => call_of(review),
            None => self.summary().call.clone(),
        }
    }

    /// When it was asked.
    pub fn requested_at(&self) -> &Timestamp {
        match self.review() {
            Some(review) => &review.confirm.requested_at,
            None => &self.summary().at,
        }
    }
}

/// Entries are immutable and replaced whole when their review changes, so two
/// entries are the same when they are the same object (cheap for `Memo`).
impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::*;

    fn demo() -> Vec<Review> {
        countersign_domain::demo::reviews(crate::browser::now()).unwrap()
    }

    #[wasm_bindgen_test]
    fn a_summary_says_what_the_inbox_row_shows() {
        let reviews = demo();
        let plan = reviews
            .iter()
            .find(|r| {
                r.plan()
                    .is_some_and(|p| p.title == "Database Migration Plan")
            })
            .unwrap();
        let summary = Summary::of(plan);
        assert_eq!(summary.title, "Database Migration Plan");
        assert_eq!(summary.kind, "plan");
        assert_eq!(summary.steps, Some(3));
        assert_eq!(summary.call, None);
        assert_eq!(summary.decisions, plan.confirm.decisions().len());

        let call = reviews.iter().find(|r| r.tool_call().is_some()).unwrap();
        let summary = Summary::of(call);
        let request = &call.tool_call().unwrap().request;
        let name = request.tool_call().unwrap().name;
        assert!(
            summary.title.starts_with(&format!("{name}: ")),
            "{}",
            summary.title
        );
        assert_eq!(summary.kind, format!("tool call {}", request.risk_tier));
        assert_eq!(summary.call, Some((name, request.session_id.clone())));
    }

    #[wasm_bindgen_test]
    fn a_listed_entry_answers_from_its_summary_until_it_is_read() {
        let review = demo().remove(0);
        let read = Entry::new(review.clone());
        let listed = Entry::listed(read.summary().clone());
        assert!(listed.review().is_none());
        assert_eq!(listed.problems(), None);
        assert_eq!(
            (
                listed.id(),
                listed.status(),
                listed.title(),
                listed.requested_at()
            ),
            (read.id(), read.status(), read.title(), read.requested_at())
        );
        assert_eq!(read.review(), Some(&review));
        assert!(read.problems().is_some());
    }

    #[wasm_bindgen_test]
    fn the_fingerprint_follows_what_the_row_shows() {
        let summary = Summary::of(&demo()[0]);
        let mut edited = summary.clone();
        assert_eq!(summary.fingerprint(), edited.fingerprint());
        edited.title.push('!');
        assert_ne!(summary.fingerprint(), edited.fingerprint());
    }
}
