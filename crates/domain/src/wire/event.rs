//! The change feed: what happened to a review (the event names of
//! `GET /api/v1/events`), and a change as the live stream and
//! `GET /api/v1/changes` give it, with the review's list row as it now stands.

use super::ReviewSummary;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What happened to a review.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChangeKind {
    /// An agent created it.
    Created,
    /// A reviewer decided it.
    Decided,
    /// Nobody decided it in time: closed, denied by default.
    Expired,
    /// Nobody decided it within its policy's escalation delay (still pending).
    Escalated,
    /// Its requester re-opened it after a rejection.
    Resubmitted,
    /// Its agent redeemed the approval token (tool calls).
    Redeemed,
}

impl ChangeKind {
    /// Every kind.
    pub const ALL: [ChangeKind; 6] = [
        ChangeKind::Created,
        ChangeKind::Decided,
        ChangeKind::Expired,
        ChangeKind::Escalated,
        ChangeKind::Resubmitted,
        ChangeKind::Redeemed,
    ];

    /// The event name on the live stream.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Created => "review.created",
            ChangeKind::Decided => "review.decided",
            ChangeKind::Expired => "review.expired",
            ChangeKind::Escalated => "review.escalated",
            ChangeKind::Resubmitted => "review.resubmitted",
            ChangeKind::Redeemed => "review.redeemed",
        }
    }

    /// The kind an event name stands for.
    pub fn parse(name: &str) -> Option<ChangeKind> {
        ChangeKind::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

impl Serialize for ChangeKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ChangeKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::parsed_text::deserialize_parsed(deserializer, "a change's name", |name| {
            ChangeKind::parse(name).ok_or_else(|| {
                let names: Vec<&str> = ChangeKind::ALL.iter().map(|k| k.as_str()).collect();
                format!("`{name}` is not a change: one of {}", names.join(", "))
            })
        })
    }
}

/// One change of the feed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// Its position in the feed: a client resumes after it.
    pub seq: i64,
    /// What happened.
    pub kind: ChangeKind,
    /// The review as its list row shows it now.
    pub summary: ReviewSummary,
}

/// The changes after a position, oldest first (`GET /api/v1/changes`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChangePage {
    /// The changes, in feed order.
    pub changes: Vec<Change>,
    /// Where the next request starts: the last change's position, or the
    /// position asked after when there is none.
    pub position: i64,
    /// Whether more changes follow (the page was full): ask again at once.
    pub more: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_reads_back_from_its_event_name() {
        for kind in ChangeKind::ALL {
            assert_eq!(ChangeKind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(ChangeKind::parse("review.deleted"), None);
    }

    #[test]
    fn a_kind_travels_as_its_event_name_and_an_unknown_one_is_named() {
        for kind in ChangeKind::ALL {
            let text = serde_json::to_string(&kind).unwrap();
            assert_eq!(text, format!("\"{}\"", kind.as_str()));
            assert_eq!(serde_json::from_str::<ChangeKind>(&text).unwrap(), kind);
        }
        let refused = serde_json::from_str::<ChangeKind>("\"review.deleted\"").unwrap_err();
        assert!(refused.to_string().contains("review.deleted"), "{refused}");
    }
}
