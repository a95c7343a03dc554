//! Any decision input on a pending plan review and a pending tool call:
//! `decide` answers with an error or a decided review holding one more
//! decision, never panics.
#![no_main]

mod fixed;

use countersign_domain::model::ConfirmStatus;
use countersign_domain::{decide, demo, DecisionInput, Review};
use fixed::{ids, now, wire_transfer};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

/// The demo's pending reviews (plans, and others) and a pending tool call.
fn pending() -> &'static [Review] {
    static REVIEWS: OnceLock<Vec<Review>> = OnceLock::new();
    REVIEWS.get_or_init(|| {
        let mut reviews: Vec<Review> = demo::reviews(now())
            .unwrap()
            .into_iter()
            .filter(|r| r.confirm.status == ConfirmStatus::Pending)
            .collect();
        reviews.push(wire_transfer("R3", &mut ids()));
        reviews
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = serde_json::from_slice::<DecisionInput>(data) else {
        return;
    };
    for review in pending() {
        if let Ok(next) = decide(review, &input, now(), &mut ids()) {
            assert_ne!(next.confirm.status, ConfirmStatus::Pending);
            assert_eq!(
                next.confirm.decisions().len(),
                review.confirm.decisions().len() + 1
            );
        }
    }
});
