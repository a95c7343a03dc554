//! Numbered reviews for tests, benchmarks and load: as many as asked, each
//! different and the same at every run (its ids, request time, requester and
//! title follow from its number).

use crate::model::DecisionStatus;
use crate::{decide, DecisionInput, MplpId, Review};
use chrono::{DateTime, Utc};
use serde_json::json;

/// The id `prefix`-…-`n` (a valid UUID v4).
fn id(prefix: u32, n: usize) -> String {
    format!("{prefix:08x}-0000-4000-8000-{n:012x}")
}

/// The confirm id of review `n`.
pub fn numbered_id(n: usize) -> String {
    id(0xaaaa0000, n)
}

/// Review `n`: a pending plan of three chained steps ("Plan n"), asked by one
/// of seven agents (`agent-0` … `agent-6`) on a day of November 2026.
pub fn numbered(n: usize) -> Result<Review, String> {
    let plan = id(0xbbbb0000, n);
    let step = |s: u32| id(0xdddd0000 + s, n);
    let value = json!({
        "confirm": {
            "meta": {"protocol_version": "1.0.0", "schema_version": "1.0.0"},
            "confirm_id": id(0xaaaa0000, n), "target_type": "plan", "target_id": plan,
            "status": "pending",
            "requested_by_role": format!("agent-{}", n % 7),
            "requested_at": format!(
                "2026-11-{:02}T{:02}:{:02}:{:02}Z",
                1 + n % 28, n / 3600 % 24, n / 60 % 60, n % 60
            ),
            "reason": format!("Request {n}: change production settings"),
        },
        "target": {"plan": {
            "meta": {"protocol_version": "1.0.0", "schema_version": "1.0.0"},
            "plan_id": plan, "context_id": id(0xcccc0000, 1), "title": format!("Plan {n}"),
            "objective": "Keep data safe", "status": "proposed",
            "steps": (0..3).map(|s| json!({
                "step_id": step(s), "description": format!("step {s}"), "status": "pending",
                "dependencies": if s == 0 { vec![] } else { vec![step(s - 1)] },
            })).collect::<Vec<_>>(),
        }},
    });
    let mut review: Review =
        serde_json::from_value(value).map_err(|e| format!("numbered review {n}: {e}"))?;
    review
        .fix_target_hash()
        .map_err(|e| format!("numbered review {n}: {e}"))?;
    Ok(review)
}

/// `review` approved at `now` by a `reviewer` (its decision ids numbered
/// 1, 2, …): the next state a test or a load run stores.
pub fn approved(review: &Review, now: DateTime<Utc>) -> Result<Review, String> {
    let input = DecisionInput {
        status: DecisionStatus::Approved,
        decided_by_role: "reviewer".into(),
        reason: None,
        tool_call: None,
    };
    let mut n = 0u8;
    let mut ids = || {
        n = n.wrapping_add(1);
        MplpId::from_random_bytes([n; 16])
    };
    decide(review, &input, now, &mut ids).map_err(|e| format!("cannot approve: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_reviews_are_valid_and_distinct() {
        let (a, b) = (numbered(1).unwrap(), numbered(100_001).unwrap());
        assert!(a.validate().is_empty(), "{:?}", a.validate());
        assert_ne!(a.confirm.confirm_id, b.confirm.confirm_id);
        assert_eq!(a.confirm.confirm_id.to_string(), numbered_id(1));
        assert_eq!(numbered(7), numbered(7));
    }
}
