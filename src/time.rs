//! Human-friendly times: "3 hours ago", with the exact time for hovering.

use chrono::{DateTime, Datelike, Timelike, Utc};
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

/// The exact time, in UTC, for a tooltip: `2026-11-22 20:57:30 UTC`.
/// (Written from the date's parts: chrono's `format` brings a whole strftime
/// interpreter into the wasm for this one pattern.)
pub fn exact(at: &Timestamp) -> String {
    let t = at.to_utc();
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02} UTC",
        t.year(),
        t.month(),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::*;

    #[wasm_bindgen_test]
    fn exact_is_utc_to_the_second() {
        let at = Timestamp::parse("2026-11-22T21:57:30.589+01:00").unwrap();
        assert_eq!(exact(&at), "2026-11-22 20:57:30 UTC");
    }

    #[wasm_bindgen_test]
    fn ago_rounds_to_the_nearest_unit() {
        let at = Timestamp::parse("2026-11-22T20:00:00Z").unwrap();
        let now = at.to_utc() + chrono::Duration::minutes(90);
        assert_eq!(ago(&at, now), "2 hours ago");
        assert_eq!(ago(&at, at.to_utc()), "just now");
    }
}
