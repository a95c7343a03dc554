//! Helpers shared by the domain's integration tests.

use countersign_domain::MplpId;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The vendored fixtures folder.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Reads a JSON fixture.
pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A deterministic id source: 00000000-0000-4000-8000-000000000001, ...
pub fn counter_ids() -> impl FnMut() -> MplpId {
    let mut n: u128 = 0;
    move || {
        n += 1;
        let bytes = n.to_be_bytes();
        MplpId::from_random_bytes(bytes)
    }
}
