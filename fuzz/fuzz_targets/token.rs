//! Any redemption presented for an approved tool call's token: `redeem`
//! refuses it or spends the token, after which the same redemption is refused.
#![no_main]

use chrono::{DateTime, TimeZone, Utc};
use countersign_domain::toolcall::{new_tool_call_review, redeem, Redemption, ToolCallSubmission};
use countersign_domain::{decide, DecisionInput, MplpId, Review};
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

/// A tool call approved once: its token is 00000000-0000-4000-8000-00000000000a
/// or near it (ids count up), for the call's hash.
fn approved() -> &'static Review {
    static REVIEW: OnceLock<Review> = OnceLock::new();
    REVIEW.get_or_init(|| {
        let submission: ToolCallSubmission = serde_json::from_str(
            r#"{"requestedByRole":"payments-agent","sessionId":"s","runId":"r","clientDeviceId":"laptop-7",
                "toolCall":{"name":"wire_transfer","args":{"amount":5000,"to":"ACME GmbH"}},
                "humanSummary":"Wire 5,000 EUR to ACME GmbH","riskTier":"R2"}"#,
        )
        .unwrap();
        let mut counter = ids();
        let pending = new_tool_call_review(submission, now(), &mut counter).unwrap();
        let input: DecisionInput =
            serde_json::from_str(r#"{"status":"approved","decided_by_role":"finance_lead"}"#)
                .unwrap();
        decide(&pending, &input, now(), &mut counter).unwrap()
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(presented) = serde_json::from_slice::<Redemption>(data) else {
        return;
    };
    let review = approved();
    if let Ok(spent) = redeem(review, &presented, now(), &mut ids()) {
        assert!(redeem(&spent, &presented, now(), &mut ids()).is_err());
    }
});
