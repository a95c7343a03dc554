//! How long something waits, as a policy file writes it: `90s`, `15m`, `2h`, `1d`.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// A whole number of seconds, written with one unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Delay {
    seconds: u64,
}

/// Why a delay cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a delay: write a whole number and one unit, like 90s, 15m, 2h or 1d")]
pub struct DelayError(String);

/// The longest delay a policy may give (a year), so sums never overflow.
const MAX_SECONDS: u64 = 366 * 24 * 3600;

impl Delay {
    /// The delay in seconds.
    pub fn seconds(self) -> u64 {
        self.seconds
    }

    /// As a chrono duration.
    pub fn duration(self) -> chrono::Duration {
        // At most a year of seconds: always fits.
        chrono::Duration::seconds(self.seconds as i64)
    }
}

impl FromStr for Delay {
    type Err = DelayError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let wrong = || DelayError(text.to_owned());
        let trimmed = text.trim();
        let split = trimmed
            .find(|c: char| !c.is_ascii_digit())
            .ok_or_else(wrong)?;
        let (number, unit) = trimmed.split_at(split);
        let unit_seconds = match unit {
            "s" => 1,
            "m" => 60,
            "h" => 3600,
            "d" => 86_400,
            _ => return Err(wrong()),
        };
        let seconds = number
            .parse::<u64>()
            .ok()
            .and_then(|n| n.checked_mul(unit_seconds))
            .filter(|s| (1..=MAX_SECONDS).contains(s))
            .ok_or_else(wrong)?;
        Ok(Delay { seconds })
    }
}

impl fmt::Display for Delay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.seconds;
        match s {
            _ if s.is_multiple_of(86_400) => write!(f, "{}d", s / 86_400),
            _ if s.is_multiple_of(3600) => write!(f, "{}h", s / 3600),
            _ if s.is_multiple_of(60) => write!(f, "{}m", s / 60),
            _ => write!(f, "{s}s"),
        }
    }
}

impl Serialize for Delay {
    fn serialize<S: Serializer>(&self, to: S) -> Result<S::Ok, S::Error> {
        to.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Delay {
    fn deserialize<D: Deserializer<'de>>(from: D) -> Result<Self, D::Error> {
        let text = String::deserialize(from)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_read_with_one_unit_and_print_in_the_largest() {
        assert_eq!("90s".parse::<Delay>().unwrap().seconds(), 90);
        assert_eq!("15m".parse::<Delay>().unwrap().to_string(), "15m");
        assert_eq!("120m".parse::<Delay>().unwrap().to_string(), "2h");
        assert_eq!("1d".parse::<Delay>().unwrap().seconds(), 86_400);
    }

    #[test]
    fn malformed_delays_are_refused_with_the_text() {
        for bad in [
            "",
            "15",
            "m",
            "15 min",
            "0s",
            "-5m",
            "1.5h",
            "400d",
            "99999999999999999999d",
        ] {
            let err = bad.parse::<Delay>().unwrap_err();
            assert!(err.to_string().contains("is not a delay"), "{bad}: {err}");
        }
    }
}
