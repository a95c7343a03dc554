//! Lifecycles as data: which status may follow which, from the Confirm and Plan
//! module specs, plus the guards and the blocked-step propagation.

use crate::graph::StepGraph;
use crate::model::{ConfirmStatus, DecisionStatus, Plan, PlanStatus, StepStatus};

/// One allowed move from `from` to `to`, and what causes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transition<S: 'static> {
    /// Status before.
    pub from: S,
    /// Status after.
    pub to: S,
    /// What causes the move.
    pub trigger: &'static str,
}

const fn t<S>(from: S, to: S, trigger: &'static str) -> Transition<S> {
    Transition { from, to, trigger }
}

/// Confirm lifecycle. A rejected request is re-opened only by its requester's
/// resubmission (golden flow-05: rejected, resubmitted, then approved).
pub const CONFIRM_TRANSITIONS: &[Transition<ConfirmStatus>] = &[
    t(
        ConfirmStatus::Pending,
        ConfirmStatus::Approved,
        "a reviewer approves",
    ),
    t(
        ConfirmStatus::Pending,
        ConfirmStatus::Rejected,
        "a reviewer rejects, with a reason",
    ),
    t(
        ConfirmStatus::Pending,
        ConfirmStatus::Cancelled,
        "the request is cancelled",
    ),
    t(
        ConfirmStatus::Rejected,
        ConfirmStatus::Pending,
        "the requester resubmits",
    ),
];

/// Plan lifecycle (Plan module spec, section 3.3).
pub const PLAN_TRANSITIONS: &[Transition<PlanStatus>] = &[
    t(
        PlanStatus::Draft,
        PlanStatus::Proposed,
        "the agent submits it for approval",
    ),
    t(
        PlanStatus::Draft,
        PlanStatus::Cancelled,
        "the user abandons it",
    ),
    t(
        PlanStatus::Proposed,
        PlanStatus::Approved,
        "its Confirm is approved",
    ),
    t(
        PlanStatus::Proposed,
        PlanStatus::Draft,
        "its Confirm is rejected",
    ),
    t(
        PlanStatus::Approved,
        PlanStatus::InProgress,
        "the runtime starts it",
    ),
    t(
        PlanStatus::InProgress,
        PlanStatus::Completed,
        "all steps are completed or skipped",
    ),
    t(
        PlanStatus::InProgress,
        PlanStatus::Failed,
        "a critical step failed",
    ),
    t(
        PlanStatus::InProgress,
        PlanStatus::Cancelled,
        "the user cancels it",
    ),
];

/// Step lifecycle (Plan module spec, section 3.3).
pub const STEP_TRANSITIONS: &[Transition<StepStatus>] = &[
    t(
        StepStatus::Pending,
        StepStatus::InProgress,
        "all dependencies completed",
    ),
    t(
        StepStatus::Pending,
        StepStatus::Blocked,
        "a dependency failed",
    ),
    t(
        StepStatus::Pending,
        StepStatus::Skipped,
        "conditional logic",
    ),
    t(
        StepStatus::InProgress,
        StepStatus::Completed,
        "execution succeeded",
    ),
    t(
        StepStatus::InProgress,
        StepStatus::Failed,
        "execution failed",
    ),
    t(
        StepStatus::Blocked,
        StepStatus::Pending,
        "the dependency was retried successfully",
    ),
];

/// Whether `table` allows `from -> to`.
pub fn allows<S: PartialEq + Copy>(table: &[Transition<S>], from: S, to: S) -> bool {
    table.iter().any(|tr| tr.from == from && tr.to == to)
}

/// Why a plan cannot move to a status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PlanTransitionError {
    /// The table has no such move.
    #[error("a plan cannot go from {from} to {to}")]
    NotAllowed { from: PlanStatus, to: PlanStatus },
    /// `completed` needs every step completed or skipped.
    #[error(
        "the plan cannot be completed: {unfinished} step(s) are neither completed nor skipped"
    )]
    StepsUnfinished { unfinished: usize },
}

/// Checks moving `plan` to `to`, guards included.
pub fn check_plan_transition(plan: &Plan, to: PlanStatus) -> Result<(), PlanTransitionError> {
    if !allows(PLAN_TRANSITIONS, plan.status, to) {
        return Err(PlanTransitionError::NotAllowed {
            from: plan.status,
            to,
        });
    }
    if to == PlanStatus::Completed {
        let unfinished = plan
            .steps
            .iter()
            .filter(|s| !matches!(s.status, StepStatus::Completed | StepStatus::Skipped))
            .count();
        if unfinished > 0 {
            return Err(PlanTransitionError::StepsUnfinished { unfinished });
        }
    }
    Ok(())
}

/// The plan status a Confirm decision leads to, or `None` when the plan stays as it
/// is. A `draft` plan counts as submitted: the Confirm request is its submission.
/// Approval needs a plan that awaits approval; a rejection or cancellation is
/// always recorded, and only moves a plan that awaits approval.
pub fn plan_status_after(
    current: PlanStatus,
    decision: DecisionStatus,
) -> Result<Option<PlanStatus>, PlanTransitionError> {
    let awaiting = matches!(current, PlanStatus::Draft | PlanStatus::Proposed);
    match decision {
        DecisionStatus::Approved if awaiting => Ok(Some(PlanStatus::Approved)),
        DecisionStatus::Approved => Err(PlanTransitionError::NotAllowed {
            from: current,
            to: PlanStatus::Approved,
        }),
        DecisionStatus::Rejected if awaiting => {
            Ok(Some(PlanStatus::Draft).filter(|s| *s != current))
        }
        DecisionStatus::Rejected | DecisionStatus::Cancelled => Ok(None),
    }
}

/// Positions of the steps that are blocked by a failure: pending or blocked steps
/// with a dependency that failed or is itself blocked by a failure (transitively).
/// Steps on a dependency cycle are judged by their other dependencies only. O(n + e).
pub fn steps_blocked_by_failure(plan: &Plan, graph: &StepGraph) -> Vec<bool> {
    let n = plan.steps.len().min(graph.len());
    let mut blocked = vec![false; n];
    let dependents = graph.dependents();
    let mut queue: Vec<usize> = (0..n)
        .filter(|&i| plan.steps[i].status == StepStatus::Failed)
        .collect();
    while let Some(failed_or_blocked) = queue.pop() {
        for &d in &dependents[failed_or_blocked] {
            let waiting = matches!(
                plan.steps[d].status,
                StepStatus::Pending | StepStatus::Blocked
            );
            if d < n && waiting && !blocked[d] {
                blocked[d] = true;
                queue.push(d);
            }
        }
    }
    blocked
}

/// Marks every step blocked by a failure as `blocked` (`pending -> blocked`).
/// Returns how many steps changed.
pub fn propagate_blocked(plan: &mut Plan, graph: &StepGraph) -> usize {
    let blocked = steps_blocked_by_failure(plan, graph);
    let mut changed = 0;
    for (step, is_blocked) in plan.steps.iter_mut().zip(blocked) {
        if is_blocked && step.status == StepStatus::Pending {
            step.status = StepStatus::Blocked;
            changed += 1;
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confirm_table() {
        assert!(allows(
            CONFIRM_TRANSITIONS,
            ConfirmStatus::Rejected,
            ConfirmStatus::Pending
        ));
        assert!(!allows(
            CONFIRM_TRANSITIONS,
            ConfirmStatus::Approved,
            ConfirmStatus::Pending
        ));
        assert!(!allows(
            CONFIRM_TRANSITIONS,
            ConfirmStatus::Cancelled,
            ConfirmStatus::Approved
        ));
    }

    #[test]
    fn decisions_move_plans() {
        use DecisionStatus as D;
        use PlanStatus as P;
        assert_eq!(
            plan_status_after(P::Proposed, D::Approved),
            Ok(Some(P::Approved))
        );
        assert_eq!(
            plan_status_after(P::Draft, D::Approved),
            Ok(Some(P::Approved))
        );
        assert_eq!(
            plan_status_after(P::Proposed, D::Rejected),
            Ok(Some(P::Draft))
        );
        assert_eq!(plan_status_after(P::Draft, D::Rejected), Ok(None));
        assert_eq!(plan_status_after(P::Proposed, D::Cancelled), Ok(None));
        assert!(plan_status_after(P::InProgress, D::Approved).is_err());
        assert_eq!(plan_status_after(P::InProgress, D::Rejected), Ok(None));
    }

    fn plan(statuses: &[StepStatus], deps: &[&[usize]]) -> (Plan, StepGraph) {
        let id = |i: usize| format!("00000000-0000-4000-8000-{i:012x}");
        let steps: Vec<serde_json::Value> = statuses
            .iter()
            .zip(deps)
            .enumerate()
            .map(|(i, (status, d))| {
                serde_json::json!({
                    "step_id": id(i),
                    "description": format!("step {i}"),
                    "status": status.as_str(),
                    "dependencies": d.iter().map(|&j| id(j)).collect::<Vec<_>>(),
                })
            })
            .collect();
        let plan: Plan = serde_json::from_value(serde_json::json!({
            "meta": {"protocol_version": "1.0.0", "schema_version": "1.0.0"},
            "plan_id": id(100), "context_id": id(101), "title": "t", "objective": "o",
            "status": "in_progress", "steps": steps,
        }))
        .unwrap();
        let graph = StepGraph::of_plan(&plan);
        (plan, graph)
    }

    #[test]
    fn failure_blocks_dependents_transitively() {
        use StepStatus as S;
        // 0 failed -> 1 pending -> 2 pending; 3 pending depends on 4 completed only;
        // 5 in progress depends on 0 (already running, not blocked).
        let (mut p, g) = plan(
            &[
                S::Failed,
                S::Pending,
                S::Pending,
                S::Pending,
                S::Completed,
                S::InProgress,
            ],
            &[&[], &[0], &[1], &[4], &[], &[0]],
        );
        assert_eq!(
            steps_blocked_by_failure(&p, &g),
            vec![false, true, true, false, false, false]
        );
        assert_eq!(propagate_blocked(&mut p, &g), 2);
        assert_eq!(p.steps[2].status, S::Blocked);
        assert!(allows(STEP_TRANSITIONS, S::Pending, S::Blocked));
        assert!(allows(STEP_TRANSITIONS, S::Blocked, S::Pending));
        assert_eq!(propagate_blocked(&mut p, &g), 0, "idempotent");
    }

    #[test]
    fn completion_needs_every_step_done_or_skipped() {
        use StepStatus as S;
        let (p, _) = plan(&[S::Completed, S::Pending], &[&[], &[0]]);
        assert_eq!(
            check_plan_transition(&p, PlanStatus::Completed),
            Err(PlanTransitionError::StepsUnfinished { unfinished: 1 })
        );
        let (p, _) = plan(&[S::Completed, S::Skipped], &[&[], &[0]]);
        assert_eq!(check_plan_transition(&p, PlanStatus::Completed), Ok(()));
        assert!(matches!(
            check_plan_transition(&p, PlanStatus::Draft),
            Err(PlanTransitionError::NotAllowed { .. })
        ));
    }
}
