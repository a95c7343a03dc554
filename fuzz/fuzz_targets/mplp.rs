//! Any bytes as an MPLP document, a bundle, or a stored review: parsing and
//! validation must answer with problems, never panic or hang.
#![no_main]

use countersign_domain::{json::typed, validate_bundle, validate_document, Document, Review};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let report = validate_document(&value);
    if let Ok(document) = Document::from_value(&value) {
        // A document that reads back must survive its own round trip.
        let again = Document::from_value(&document.to_value());
        assert!(
            again.is_ok(),
            "a parsed document no longer parses: {report:?}"
        );
    }
    if let Value::Array(items) = &value {
        validate_bundle(items);
    }
    if let Ok(review) = typed::<Review>(&value) {
        review.validate();
    }
});
