//! What the targets share: a fixed clock, counting ids, and a pending tool
//! call to decide or approve (each target takes what it needs).
#![allow(dead_code)]

use chrono::{DateTime, TimeZone, Utc};
use countersign_domain::toolcall::{new_tool_call_review, ToolCallSubmission};
use countersign_domain::{MplpId, Review};

/// The fixed "now" of every run, so inputs replay the same way.
pub fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap()
}

/// Ids counting up from 1.
pub fn ids() -> impl FnMut() -> MplpId {
    let mut n = 0u64;
    move || {
        n += 1;
        MplpId::parse(&format!("00000000-0000-4000-8000-{n:012x}")).unwrap()
    }
}

/// A pending wire transfer of risk `tier` from device `laptop-7`, made with `ids`.
pub fn wire_transfer(tier: &str, ids: &mut impl FnMut() -> MplpId) -> Review {
    let submission: ToolCallSubmission = serde_json::from_value(serde_json::json!({
        "requestedByRole": "payments-agent", "sessionId": "s", "runId": "r", "clientDeviceId": "laptop-7",
        "toolCall": {"name": "wire_transfer", "args": {"amount": 5000, "to": "ACME GmbH"}},
        "humanSummary": "Wire 5,000 EUR to ACME GmbH", "riskTier": tier,
    }))
    .unwrap();
    new_tool_call_review(submission, now(), ids).unwrap()
}
