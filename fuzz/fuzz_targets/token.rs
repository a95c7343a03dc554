//! Any redemption presented for an approved tool call's token: `redeem`
//! refuses it or spends the token, after which the same redemption is refused.
#![no_main]

mod fixed;

use countersign_domain::toolcall::{redeem, Redemption};
use countersign_domain::{decide, DecisionInput, Review};
use fixed::{ids, now, wire_transfer};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

/// A tool call approved once: its token is 00000000-0000-4000-8000-00000000000a
/// or near it (ids count up), for the call's hash.
fn approved() -> &'static Review {
    static REVIEW: OnceLock<Review> = OnceLock::new();
    REVIEW.get_or_init(|| {
        let mut counter = ids();
        let pending = wire_transfer("R2", &mut counter);
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
