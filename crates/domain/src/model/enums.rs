//! The closed string enumerations of the MPLP v1.0 schemas.

/// Defines a string enumeration: the Rust enum, its wire names (`NAMES`, in schema
/// order), `as_str`, `FromStr` and serde in one place, so the validator and the
/// types can never disagree about the allowed values.
macro_rules! string_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $wire:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
        pub enum $name {
            $($(#[$vdoc])* #[serde(rename = $wire)] $variant),+
        }

        impl $name {
            /// Every wire name, in the schema's order.
            pub const NAMES: &'static [&'static str] = &[$($wire),+];
            /// Every value, in the schema's order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The wire name.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $wire),+ }
            }
        }

        impl std::str::FromStr for $name {
            type Err = crate::model::enums::UnknownName;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($wire => Ok($name::$variant),)+
                    _ => Err(crate::model::enums::UnknownName {
                        found: s.to_owned(),
                        allowed: Self::NAMES,
                    }),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

/// A name outside an enumeration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{found}` is not one of {}", allowed.join(", "))]
pub struct UnknownName {
    /// What was given.
    pub found: String,
    /// What is allowed.
    pub allowed: &'static [&'static str],
}

string_enum! {
    /// What kind of object a Confirm asks about.
    TargetType { Context = "context", Plan = "plan", Trace = "trace", Extension = "extension", Other = "other" }
}

string_enum! {
    /// Where a Confirm request stands.
    ConfirmStatus { Pending = "pending", Approved = "approved", Rejected = "rejected", Cancelled = "cancelled" }
}

string_enum! {
    /// The outcome a reviewer chose.
    DecisionStatus { Approved = "approved", Rejected = "rejected", Cancelled = "cancelled" }
}

string_enum! {
    /// Where a Plan stands in its lifecycle.
    PlanStatus {
        Draft = "draft", Proposed = "proposed", Approved = "approved", InProgress = "in_progress",
        Completed = "completed", Cancelled = "cancelled", Failed = "failed",
    }
}

string_enum! {
    /// Where a plan step stands.
    StepStatus {
        Pending = "pending", InProgress = "in_progress", Completed = "completed",
        Blocked = "blocked", Skipped = "skipped", Failed = "failed",
    }
}

string_enum! {
    /// Where a Context stands.
    ContextStatus { Draft = "draft", Active = "active", Suspended = "suspended", Archived = "archived", Closed = "closed" }
}

string_enum! {
    /// Where a Trace stands.
    TraceStatus { Pending = "pending", Running = "running", Completed = "completed", Failed = "failed", Cancelled = "cancelled" }
}

string_enum! {
    /// Where a trace segment stands.
    SegmentStatus {
        Pending = "pending", Running = "running", Completed = "completed",
        Failed = "failed", Cancelled = "cancelled", Skipped = "skipped",
    }
}

string_enum! {
    /// The cross-cutting concerns an object may declare in its `meta`.
    CrossCutting {
        Coordination = "coordination", ErrorHandling = "error-handling", EventBus = "event-bus",
        LearningFeedback = "learning-feedback", Observability = "observability",
        Orchestration = "orchestration", Performance = "performance",
        ProtocolVersioning = "protocol-versioning", Security = "security",
        StateSync = "state-sync", Transaction = "transaction",
    }
}

string_enum! {
    /// The module a governance reference points into.
    RefModule {
        Context = "context", Plan = "plan", Confirm = "confirm", Trace = "trace", Role = "role",
        Extension = "extension", Dialog = "dialog", Collab = "collab", Core = "core", Network = "network",
    }
}

impl ConfirmStatus {
    /// The symbol shown before the status's name, so it reads without colour.
    pub fn symbol(self) -> &'static str {
        match self {
            ConfirmStatus::Pending => "◷",
            ConfirmStatus::Approved => "✓",
            ConfirmStatus::Rejected => "✕",
            ConfirmStatus::Cancelled => "⊘",
        }
    }
}

impl StepStatus {
    /// The symbol shown before the status's name, so it reads without colour.
    pub fn symbol(self) -> &'static str {
        match self {
            StepStatus::Pending => "○",
            StepStatus::InProgress => "◐",
            StepStatus::Completed => "✓",
            StepStatus::Blocked => "⊘",
            StepStatus::Skipped => "↷",
            StepStatus::Failed => "✕",
        }
    }

    /// The status in words ("in progress").
    pub fn words(self) -> String {
        self.as_str().replace('_', " ")
    }
}

impl From<DecisionStatus> for ConfirmStatus {
    fn from(d: DecisionStatus) -> Self {
        match d {
            DecisionStatus::Approved => ConfirmStatus::Approved,
            DecisionStatus::Rejected => ConfirmStatus::Rejected,
            DecisionStatus::Cancelled => ConfirmStatus::Cancelled,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for s in PlanStatus::ALL {
            assert_eq!(s.as_str().parse::<PlanStatus>(), Ok(*s));
        }
        let err = "pending_approval".parse::<PlanStatus>().unwrap_err();
        assert!(err.to_string().contains("draft, proposed"));
    }
}
