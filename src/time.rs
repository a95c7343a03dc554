//! Human-friendly times: "3 hours ago", with the exact time for hovering.

use chrono::{DateTime, Utc};
use countersign_domain::Timestamp;

/// How long ago `then` was, relative to `now`, in words.
pub fn ago(then: &Timestamp, now: DateTime<Utc>) -> String {
    let seconds = (now - then.to_utc()).num_seconds();
    if seconds < 0 {
        return "in the future".to_owned();
    }
    let (value, unit) = match seconds {
        0..=44 => return "just now".to_owned(),
        45..=5_399 => ((seconds + 30) / 60, "minute"),
        5_400..=129_599 => ((seconds + 1_800) / 3_600, "hour"),
        129_600..=3_887_999 => ((seconds + 43_200) / 86_400, "day"),
        3_888_000..=47_303_999 => ((seconds + 1_296_000) / 2_592_000, "month"),
        _ => ((seconds + 15_768_000) / 31_536_000, "year"),
    };
    let value = value.max(1);
    format!("{value} {unit}{} ago", if value == 1 { "" } else { "s" })
}

/// The exact time, in UTC, for a tooltip.
pub fn exact(at: &Timestamp) -> String {
    at.to_utc().format("%Y-%m-%d %H:%M:%S UTC").to_string()
}
