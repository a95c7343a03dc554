//! RFC 3339 timestamps with an offset, kept exactly as written.

use crate::parsed_text::deserialize_parsed;
use chrono::{DateTime, Datelike, Duration, FixedOffset, SecondsFormat, Timelike, Utc};
use serde::{Deserialize, Deserializer, Serialize};
use std::cmp::Ordering;
use std::fmt;

/// Why a string is not an RFC 3339 timestamp.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("is not an RFC 3339 date-time with an offset (e.g. 2025-12-01T12:00:00.000Z): {0}")]
pub struct TimestampError(String);

/// A point in time as MPLP writes it (`2025-12-01T12:01:00.000Z`).
///
/// The original text is kept so a parsed document serializes back unchanged;
/// comparisons use the instant.
#[derive(Debug, Clone, Serialize)]
#[serde(into = "String")]
pub struct Timestamp {
    text: String,
    instant: DateTime<FixedOffset>,
}

impl Timestamp {
    /// Parses RFC 3339 text; the offset (`Z` or `±hh:mm`) is required.
    pub fn parse(text: &str) -> Result<Self, TimestampError> {
        DateTime::parse_from_rfc3339(text)
            .map(|instant| Timestamp {
                text: text.to_owned(),
                instant,
            })
            .map_err(|e| TimestampError(e.to_string()))
    }

    /// The canonical MPLP form of a UTC instant, with milliseconds.
    pub fn from_utc(at: DateTime<Utc>) -> Self {
        let text = at.to_rfc3339_opts(SecondsFormat::Millis, true);
        Timestamp {
            text,
            instant: at.fixed_offset(),
        }
    }

    /// The instant, in UTC.
    pub fn to_utc(&self) -> DateTime<Utc> {
        self.instant.with_timezone(&Utc)
    }

    /// The text as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// How long before `now` it was, in words: "3 hours ago".
    pub fn ago(&self, now: DateTime<Utc>) -> String {
        let seconds = (now - self.to_utc()).num_seconds();
        if seconds < 0 {
            return "in the future".to_owned();
        }
        span(seconds).map_or_else(|| "just now".to_owned(), |span| format!("{span} ago"))
    }

    /// How long until this deadline, as of `now`: `in 4 minutes`, `in less
    /// than a minute`; `None` once it has passed.
    pub fn until(&self, now: DateTime<Utc>) -> Option<String> {
        let seconds = (self.to_utc() - now).num_seconds();
        if seconds <= 0 {
            return None;
        }
        Some(span(seconds).map_or_else(
            || "in less than a minute".to_owned(),
            |span| format!("in {span}"),
        ))
    }

    /// Until when [`Timestamp::ago`] says what it says at `now`: it says so
    /// at every instant before the one returned (from which it may not).
    pub fn ago_holds_until(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        let at = self.to_utc();
        let seconds = (now - at).num_seconds();
        if seconds < 0 {
            // "in the future" while a whole second or more ahead.
            return at - Duration::seconds(1) + Duration::nanoseconds(1);
        }
        at + Duration::seconds(span_grows_at(seconds))
    }

    /// Until when a deadline at this time is said as it is at `now`: by
    /// [`Timestamp::until`] while it has not passed, and by
    /// [`Timestamp::ago`] once it has; as [`Timestamp::ago_holds_until`].
    pub fn deadline_holds_until(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        let at = self.to_utc();
        let seconds = (at - now).num_seconds();
        if seconds <= 0 {
            return self.ago_holds_until(now);
        }
        // Said so while whole seconds left stay at or above `span_since`.
        at - Duration::seconds(span_since(seconds)) + Duration::nanoseconds(1)
    }

    /// The exact time in UTC, to the second: `2026-11-22 20:57:30 UTC`.
    /// (Written from the date's parts: chrono's `format` brings a whole
    /// strftime interpreter into the wasm for this one pattern.)
    pub fn exact(&self) -> String {
        let t = self.to_utc();
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
}

/// How durations are said: from `from` seconds, in `unit`s of that many
/// seconds, rounded to the nearest (`half` added before dividing). Under 45
/// seconds no span is said.
struct Band {
    from: i64,
    seconds: i64,
    half: i64,
    unit: &'static str,
}

const BANDS: [Band; 5] = [
    Band {
        from: 45,
        seconds: 60,
        half: 30,
        unit: "minute",
    },
    Band {
        from: 5_400,
        seconds: 3_600,
        half: 1_800,
        unit: "hour",
    },
    Band {
        from: 129_600,
        seconds: 86_400,
        half: 43_200,
        unit: "day",
    },
    Band {
        from: 3_888_000,
        seconds: 2_592_000,
        half: 1_296_000,
        unit: "month",
    },
    Band {
        from: 47_304_000,
        seconds: 31_536_000,
        half: 15_768_000,
        unit: "year",
    },
];

/// The band `seconds` (at least 45) is said in, and the band after it.
fn band(seconds: i64) -> (&'static Band, Option<&'static Band>) {
    let at = BANDS.iter().rposition(|b| b.from <= seconds).unwrap_or(0);
    (&BANDS[at], BANDS.get(at + 1))
}

/// A duration of `seconds` rounded as people say it (`4 minutes`, `1 day`);
/// `None` under 45 seconds.
fn span(seconds: i64) -> Option<String> {
    if seconds < BANDS[0].from {
        return None;
    }
    let (band, _) = band(seconds);
    let value = ((seconds + band.half) / band.seconds).max(1);
    Some(format!(
        "{value} {}{}",
        band.unit,
        if value == 1 { "" } else { "s" }
    ))
}

/// The least number of seconds above `seconds` that [`span`] says otherwise.
fn span_grows_at(seconds: i64) -> i64 {
    if seconds < BANDS[0].from {
        return BANDS[0].from.max(seconds + 1);
    }
    let (band, next) = band(seconds);
    let value = (seconds + band.half) / band.seconds;
    let grown = (value + 1) * band.seconds - band.half;
    next.map_or(grown, |next| grown.min(next.from))
}

/// The least number of seconds, at most `seconds`, that [`span`] says as it
/// says `seconds` (for `seconds` of at least 1).
fn span_since(seconds: i64) -> i64 {
    if seconds < BANDS[0].from {
        return 1;
    }
    let (band, _) = band(seconds);
    let value = (seconds + band.half) / band.seconds;
    (value * band.seconds - band.half).max(band.from)
}

impl PartialEq for Timestamp {
    fn eq(&self, other: &Self) -> bool {
        self.instant == other.instant
    }
}

impl Eq for Timestamp {}

impl PartialOrd for Timestamp {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Timestamp {
    fn cmp(&self, other: &Self) -> Ordering {
        self.instant.cmp(&other.instant)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_parsed(
            deserializer,
            "an RFC 3339 date-time with an offset",
            Self::parse,
        )
    }
}

impl From<Timestamp> for String {
    fn from(t: Timestamp) -> String {
        t.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_text_and_compares_instants() {
        let a = Timestamp::parse("2025-12-01T12:00:00.000Z").unwrap();
        let b = Timestamp::parse("2025-12-01T13:00:00+01:00").unwrap();
        assert_eq!(a, b);
        assert_eq!(a.as_str(), "2025-12-01T12:00:00.000Z");
    }

    #[test]
    fn requires_offset_and_real_dates() {
        for s in [
            "2025-12-01T12:00:00",
            "2025-13-01T12:00:00Z",
            "not-a-datetime",
            "2025-02-30T00:00:00Z",
            "",
        ] {
            assert!(Timestamp::parse(s).is_err(), "{s}");
        }
    }

    #[test]
    fn exact_is_utc_to_the_second() {
        let at = Timestamp::parse("2026-11-22T21:57:30.589+01:00").unwrap();
        assert_eq!(at.exact(), "2026-11-22 20:57:30 UTC");
    }

    #[test]
    fn ago_rounds_to_the_nearest_unit() {
        let at = Timestamp::parse("2026-11-22T20:00:00Z").unwrap();
        assert_eq!(
            at.ago(at.to_utc() + chrono::Duration::minutes(90)),
            "2 hours ago"
        );
        assert_eq!(
            at.ago(at.to_utc() + chrono::Duration::minutes(1)),
            "1 minute ago"
        );
        assert_eq!(at.ago(at.to_utc()), "just now");
        assert_eq!(
            at.ago(at.to_utc() - chrono::Duration::minutes(1)),
            "in the future"
        );
    }

    #[test]
    fn until_says_how_long_a_deadline_has_left() {
        let at = Timestamp::parse("2026-11-22T20:00:00Z").unwrap();
        let before = |minutes| at.to_utc() - chrono::Duration::minutes(minutes);
        let until = |now| at.until(now).unwrap_or_else(|| "passed".to_owned());
        assert_eq!(until(before(5)), "in 5 minutes");
        assert_eq!(until(before(60 * 24 * 30)), "in 30 days");
        let soon = at.to_utc() - chrono::Duration::seconds(20);
        assert_eq!(until(soon), "in less than a minute");
        assert_eq!(until(at.to_utc()), "passed");
        assert_eq!(until(before(-3)), "passed");
    }

    /// Instants around every band's edges and within them, to the millisecond.
    fn offsets() -> Vec<chrono::Duration> {
        let mut seconds: Vec<i64> = vec![-90, -2, -1, 0, 1, 44, 45, 46, 89, 90, 91];
        for band in &BANDS {
            for edge in [band.from, band.from + band.seconds - band.half] {
                seconds.extend([edge - 1, edge, edge + 1]);
            }
            seconds.extend((1..7).map(|k| band.from + k * band.seconds / 3));
        }
        seconds
            .into_iter()
            .flat_map(|s| [0, 1, 500, 999].map(|ms| chrono::Duration::milliseconds(s * 1_000 + ms)))
            .collect()
    }

    #[test]
    fn what_ago_says_holds_until_the_instant_it_changes() {
        let at = Timestamp::parse("2026-11-22T20:00:00Z").unwrap();
        for offset in offsets() {
            let now = at.to_utc() + offset;
            let until = at.ago_holds_until(now);
            let said = at.ago(now);
            assert!(until > now, "{offset}: {until} is after {now}");
            assert_eq!(
                at.ago(until - chrono::Duration::nanoseconds(1)),
                said,
                "{offset}"
            );
            assert_ne!(at.ago(until), said, "{offset}: changes at {until}");
        }
    }

    #[test]
    fn what_a_deadline_says_holds_until_the_instant_it_changes() {
        let at = Timestamp::parse("2026-11-22T20:00:00Z").unwrap();
        let said = |now| {
            at.until(now)
                .unwrap_or_else(|| format!("passed {}", at.ago(now)))
        };
        for offset in offsets() {
            let now = at.to_utc() - offset;
            let until = at.deadline_holds_until(now);
            assert!(until > now, "{offset}: {until} is after {now}");
            assert_eq!(
                said(until - chrono::Duration::nanoseconds(1)),
                said(now),
                "{offset}"
            );
            assert_ne!(said(until), said(now), "{offset}: changes at {until}");
        }
    }

    #[test]
    fn from_utc_is_millisecond_z_form() {
        let t = Timestamp::parse("2025-12-01T12:00:00Z").unwrap();
        assert_eq!(
            Timestamp::from_utc(t.to_utc()).as_str(),
            "2025-12-01T12:00:00.000Z"
        );
    }
}
