//! A key's request rate as people write it (`20/s,200`, `600/min`, `none`):
//! read once where it enters (a flag, a stored key), written back the same.
//! [`crate::limits`] enforces it.

use std::fmt;
use std::num::NonZeroU32;
use std::str::FromStr;

/// How many requests a key may send: `count` per second or minute, up to
/// `burst` at once; or no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rate {
    /// Requests per period, with bursts.
    Limited {
        /// Requests per period.
        count: NonZeroU32,
        /// The period.
        per: Period,
        /// Most requests at once (a full bucket).
        burst: NonZeroU32,
    },
    /// No limit (`none`).
    Unlimited,
}

/// The period of a [`Rate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Period {
    /// `/s`
    Second,
    /// `/min`
    Minute,
}

impl Rate {
    /// The default for agent keys: far above what one agent sends, low enough
    /// that a runaway loop is stopped.
    pub const AGENT: Rate = Rate::limited(100, Period::Second, 1000);
    /// The default for reviewer keys (a person at the desk, or a script).
    pub const REVIEWER: Rate = Rate::limited(50, Period::Second, 500);

    const fn limited(count: u32, per: Period, burst: u32) -> Rate {
        match (NonZeroU32::new(count), NonZeroU32::new(burst)) {
            (Some(count), Some(burst)) => Rate::Limited { count, per, burst },
            _ => Rate::Unlimited,
        }
    }
}

/// Why a rate could not be read.
#[derive(Debug, thiserror::Error)]
#[error("`{0}` is not a rate: write it as <count>/s or <count>/min, optionally with a burst size after a comma (20/s,200), or none")]
pub struct BadRate(String);

impl FromStr for Rate {
    type Err = BadRate;

    fn from_str(text: &str) -> Result<Rate, BadRate> {
        let bad = || BadRate(text.to_owned());
        let text = text.trim();
        if text.eq_ignore_ascii_case("none") {
            return Ok(Rate::Unlimited);
        }
        let (rate, burst) = match text.split_once(',') {
            Some((rate, burst)) => (rate, Some(burst.trim())),
            None => (text, None),
        };
        let (count, per) = rate.split_once('/').ok_or_else(bad)?;
        let count: NonZeroU32 = count.trim().parse().map_err(|_| bad())?;
        let per = match per.trim() {
            "s" => Period::Second,
            "min" => Period::Minute,
            _ => return Err(bad()),
        };
        let burst = match burst {
            Some(burst) => burst.parse().map_err(|_| bad())?,
            None => count,
        };
        Ok(Rate::Limited { count, per, burst })
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rate::Limited { count, per, burst } => {
                let per = match per {
                    Period::Second => "s",
                    Period::Minute => "min",
                };
                write!(f, "{count}/{per},{burst}")
            }
            Rate::Unlimited => f.write_str("none"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_read_and_written_back_the_same() {
        for (text, written) in [
            ("20/s", "20/s,20"),
            ("20/s,200", "20/s,200"),
            (" 600/min , 50 ", "600/min,50"),
            ("none", "none"),
        ] {
            assert_eq!(text.parse::<Rate>().unwrap().to_string(), written);
        }
    }

    #[test]
    fn a_malformed_rate_is_refused_with_the_form_to_use() {
        for text in ["", "20", "0/s", "20/hour", "20/s,0", "x/s", "-1/s"] {
            let e = text.parse::<Rate>().unwrap_err().to_string();
            assert!(e.contains("<count>/s"), "{text}: {e}");
        }
    }
}
