//! Any thread a LangGraph server may return: its pending interrupts are read,
//! each becomes a review that passes MPLP validation, and every answer it
//! allows is built and checked against its response schema, without a panic.
//! Each review's summary is checked against its call too.
#![no_main]

mod fixed;

use countersign_domain::langgraph::pending_interrupts;
use countersign_domain::toolcall::check_summary;
use fixed::now;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(thread) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    for pending in pending_interrupts(&thread) {
        if let Ok(review) = pending.to_review(now()) {
            assert!(review.validate().is_empty(), "{:?}", review.validate());
            let request = &review.tool_call().unwrap().request;
            if let Ok(call) = request.tool_call() {
                let _ = check_summary(&request.human_summary, &call);
            }
        }
        for answer in pending.allowed.clone() {
            if let Some(value) = pending.answer(answer, Some(&pending.args), Some("fuzz")) {
                let _ = pending.check_answer(&value);
            }
        }
    }
});
