//! Demo reviews shipped inside the app, so a new reviewer sees real requests at once.

use countersign_domain::Review;

/// Golden flow-05's request as the agent submitted it: a database migration plan
/// waiting for a DBA's decision.
const REVIEWS_JSON: &str = include_str!("demo/reviews.json");

/// The demo reviews, or why they could not be read.
pub fn reviews() -> Result<Vec<Review>, String> {
    serde_json::from_str(REVIEWS_JSON).map_err(|e| format!("the demo reviews are damaged: {e}"))
}
