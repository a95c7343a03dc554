//! Any decision input on a pending plan review and a pending tool call:
//! `decide` answers with an error or a decided review holding one more
//! decision, never panics.
#![no_main]

use chrono::{DateTime, TimeZone, Utc};
use countersign_domain::model::ConfirmStatus;
use countersign_domain::toolcall::{new_tool_call_review, ToolCallSubmission};
use countersign_domain::{decide, demo, DecisionInput, MplpId, Review};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap()
}

fn ids() -> impl FnMut() -> MplpId {
    let mut n = 0u64;
    move || {
        n += 1;
        MplpId::parse(&format!("00000000-0000-4000-8000-{n:012x}")).unwrap()
    }
}

/// The demo's pending reviews (plans, and others) and a pending tool call.
fn pending() -> &'static [Review] {
    static REVIEWS: OnceLock<Vec<Review>> = OnceLock::new();
    REVIEWS.get_or_init(|| {
        let mut reviews: Vec<Review> = demo::reviews(now())
            .unwrap()
            .into_iter()
            .filter(|r| r.confirm.status == ConfirmStatus::Pending)
            .collect();
        let submission: ToolCallSubmission = serde_json::from_str(
            r#"{"requestedByRole":"payments-agent","sessionId":"s","runId":"r","clientDeviceId":"d",
                "toolCall":{"name":"wire_transfer","args":{"amount":5000,"to":"ACME GmbH"}},
                "humanSummary":"Wire 5,000 EUR to ACME GmbH","riskTier":"R3"}"#,
        )
        .unwrap();
        reviews.push(new_tool_call_review(submission, now(), &mut ids()).unwrap());
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
