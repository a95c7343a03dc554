//! MPLP v1.0 types that match the official schemas (closed objects, snake_case).

#[macro_use]
pub(crate) mod enums;
pub mod common;
pub mod confirm;
pub mod context;
pub mod event_type;
pub mod plan;
pub mod trace;

pub use common::{Event, Governance, Meta, Ref, TraceRef};
pub use confirm::{Confirm, Decision};
pub use context::{Context, ContextRoot};
pub use enums::{
    ConfirmStatus, ContextStatus, CrossCutting, DecisionStatus, PlanStatus, RefModule,
    SegmentStatus, StepStatus, TargetType, TraceStatus, UnknownName,
};
pub use event_type::{EventType, EventTypeError};
pub use plan::{Plan, PlanStep};
pub use trace::{Trace, TraceSegment};
