//! The change feed's vocabulary: what happened to a review (the event names
//! of `GET /api/v1/events`).

/// What happened to a review.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChangeKind {
    /// An agent created it.
    Created,
    /// A reviewer decided it (or it expired, denied by default).
    Decided,
    /// Its requester re-opened it after a rejection.
    Resubmitted,
    /// Its agent redeemed the approval token (tool calls).
    Redeemed,
}

impl ChangeKind {
    /// Every kind.
    pub const ALL: [ChangeKind; 4] = [
        ChangeKind::Created,
        ChangeKind::Decided,
        ChangeKind::Resubmitted,
        ChangeKind::Redeemed,
    ];

    /// The event name on the live stream.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Created => "review.created",
            ChangeKind::Decided => "review.decided",
            ChangeKind::Resubmitted => "review.resubmitted",
            ChangeKind::Redeemed => "review.redeemed",
        }
    }

    /// The kind an event name stands for.
    pub fn parse(name: &str) -> Option<ChangeKind> {
        ChangeKind::ALL.into_iter().find(|k| k.as_str() == name)
    }
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
}
