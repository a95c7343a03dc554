//! The HTTP contract, typed once for the server, the app and `countersign
//! agent`: each type here is what travels between them.

mod summary;

pub use summary::ReviewSummary;
