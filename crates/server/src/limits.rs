//! Per-key request rates: each API key may send so many requests per second or
//! minute, with bursts up to a size (GCRA, the `governor` crate: a token
//! bucket that refills continuously). A key over its rate is answered 429 with
//! `Retry-After`, so one flooding agent cannot slow everyone else down. Each
//! instance counts its own requests. A key's rate is the one it was minted
//! with (`countersign keys add --rate`), else its kind's default
//! (`countersign serve --agent-rate / --reviewer-rate`).

use crate::rate::{Period, Rate};
use crate::store::keys::{ApiKey, KeyKind};
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A limited rate as governor's quota; `None` for no limit.
fn quota(rate: Rate) -> Option<Quota> {
    match rate {
        Rate::Limited { count, per, burst } => Some(
            match per {
                Period::Second => Quota::per_second(count),
                Period::Minute => Quota::per_minute(count),
            }
            .allow_burst(burst),
        ),
        Rate::Unlimited => None,
    }
}

/// The default rate of each kind of key.
#[derive(Debug, Clone, Copy)]
pub struct Defaults {
    /// For agent keys.
    pub agent: Rate,
    /// For reviewer keys.
    pub reviewer: Rate,
}

impl Default for Defaults {
    fn default() -> Self {
        Defaults {
            agent: Rate::AGENT,
            reviewer: Rate::REVIEWER,
        }
    }
}

/// Every key's bucket on this instance, by the hash of the secret it is
/// presented with: once a key was seen, a request over its rate is refused
/// before the database is asked, so a flood costs a hash and a map lookup.
#[derive(Clone)]
pub struct Limits {
    defaults: Defaults,
    buckets: Arc<Mutex<HashMap<String, Bucket>>>,
}

struct Bucket {
    key_id: String,
    limiter: Option<Arc<DefaultDirectRateLimiter>>,
}

/// A request refused for its key's rate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverRate {
    /// The key's id.
    pub key_id: String,
    /// How long until its next request is accepted.
    pub wait: Duration,
}

impl Limits {
    /// Buckets filled at these default rates.
    pub fn new(defaults: Defaults) -> Limits {
        Limits {
            defaults,
            buckets: Arc::default(),
        }
    }

    /// Takes one request from the bucket of the key presented as
    /// `secret_hash`, if that key was seen before (None: not yet).
    pub fn take_known(&self, secret_hash: &str) -> Option<Result<(), OverRate>> {
        let (key_id, limiter) = {
            let buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
            let bucket = buckets.get(secret_hash)?;
            (bucket.key_id.clone(), bucket.limiter.clone())
        };
        Some(take(key_id, limiter))
    }

    /// Takes one request from the bucket of `key`, presented as `secret_hash`,
    /// making the bucket at the key's rate (its own, else its kind's default).
    pub fn take(&self, secret_hash: &str, key: &ApiKey) -> Result<(), OverRate> {
        let rate = key.rate.unwrap_or(match key.kind {
            KeyKind::Agent => self.defaults.agent,
            KeyKind::Reviewer => self.defaults.reviewer,
        });
        let limiter = {
            // A poisoned lock only means another request panicked mid-insert;
            // the map itself is still whole.
            let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
            buckets
                .entry(secret_hash.to_owned())
                .or_insert_with(|| Bucket {
                    key_id: key.id.clone(),
                    limiter: quota(rate).map(|q| Arc::new(RateLimiter::direct(q))),
                })
                .limiter
                .clone()
        };
        take(key.id.clone(), limiter)
    }
}

fn take(key_id: String, limiter: Option<Arc<DefaultDirectRateLimiter>>) -> Result<(), OverRate> {
    match limiter {
        None => Ok(()),
        Some(limiter) => limiter.check().map_err(|not_until| OverRate {
            key_id,
            wait: not_until.wait_time_from(DefaultClock::default().now()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_over_its_burst_waits_before_the_database_is_asked_and_others_do_not() {
        let limits = Limits::new(Defaults::default());
        let key = |id: &str, rate: &str| ApiKey {
            id: id.to_owned(),
            kind: KeyKind::Agent,
            roles: vec![],
            label: String::new(),
            created_at: String::new(),
            revoked_at: None,
            rate: Some(rate.parse().unwrap()),
            owner: None,
            paired_from: None,
            device: None,
            last_used_at: None,
            person: None,
        };
        let flooding = key("a", "1/min,3");
        assert_eq!(limits.take_known("hash-a"), None);
        assert_eq!(limits.take("hash-a", &flooding), Ok(()));
        for _ in 0..2 {
            assert_eq!(limits.take_known("hash-a"), Some(Ok(())));
        }
        let refused = limits.take_known("hash-a").unwrap().unwrap_err();
        assert_eq!(refused.key_id, "a");
        let wait = refused.wait;
        assert!(
            wait > Duration::from_secs(50) && wait <= Duration::from_secs(60),
            "{wait:?}"
        );
        assert_eq!(limits.take("hash-b", &key("b", "1/min,3")), Ok(()));
        for _ in 0..10 {
            assert_eq!(limits.take("hash-c", &key("c", "none")), Ok(()));
        }
    }
}
