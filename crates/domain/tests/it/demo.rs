//! The demo reviews a new reviewer sees: realistic, stable ids, and valid except
//! the one plan that is meant to show a dependency cycle.

use chrono::{TimeZone, Utc};
use countersign_domain::demo;
use countersign_domain::model::ConfirmStatus;

#[test]
fn the_demo_is_valid_except_the_cyclic_plan_and_keeps_its_ids() {
    let now = Utc.with_ymd_and_hms(2026, 11, 22, 21, 0, 0).unwrap();
    let reviews = demo::reviews(now).unwrap();
    let invalid: Vec<String> = reviews
        .iter()
        .filter(|r| !r.validate().is_empty())
        .map(|r| r.confirm.confirm_id.to_string())
        .collect();
    assert_eq!(invalid, ["c0ffee00-0000-4000-8000-000000000003"]);
    let calls: Vec<_> = reviews.iter().filter_map(|r| r.tool_call()).collect();
    assert_eq!(calls.len(), 4);
    assert!(calls
        .iter()
        .all(|c| c.request.expired_at(now + chrono::Duration::hours(2))));
    assert!(calls.iter().all(|c| !c.request.expired_at(now)));
    let decided = reviews
        .iter()
        .filter(|r| r.confirm.status != ConfirmStatus::Pending)
        .count();
    assert_eq!(decided, 1);
    let again = demo::reviews(now).unwrap();
    let ids = |rs: &[countersign_domain::Review]| {
        rs.iter().map(|r| r.confirm.confirm_id).collect::<Vec<_>>()
    };
    assert_eq!(ids(&reviews), ids(&again), "reseeding keeps every URL");
}
