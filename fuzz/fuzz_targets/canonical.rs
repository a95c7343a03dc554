//! Any text through RFC 8785: an error or a canonical form that is its own
//! canonical form, and hashes.
#![no_main]

use countersign_domain::toolcall::{canonicalize_text, CallHash};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(canonical) = canonicalize_text(text) {
        assert_eq!(
            canonicalize_text(&canonical).as_deref(),
            Ok(canonical.as_str())
        );
        assert_eq!(CallHash::of_canonical(&canonical).as_str().len(), 64);
    }
});
