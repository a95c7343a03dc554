//! Whether a request came from Slack: its `X-Slack-Signature` is `v0=` and
//! the hex HMAC-SHA256, keyed with the app's signing secret, of
//! `v0:{X-Slack-Request-Timestamp}:{raw body}`, and its timestamp is within
//! five minutes of now (older ones may be replays).

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// How far a request's timestamp may be from now, in seconds.
pub const WINDOW_SECONDS: i64 = 300;

/// Why a request is not taken as Slack's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotSlack {
    /// A header is missing.
    #[error("the request has no {0} header: it did not come from Slack")]
    Missing(&'static str),
    /// The timestamp is not a number of seconds.
    #[error("X-Slack-Request-Timestamp `{0}` is not a Unix time")]
    BadTimestamp(String),
    /// The timestamp is too far from now.
    #[error("the request's timestamp is {} s off the server's clock, more than the {WINDOW_SECONDS} s allowed: a replay, or a clock that is off", .0.abs())]
    Stale(i64),
    /// The signature is not a `v0=` hex string.
    #[error("X-Slack-Signature is not `v0=` and a hex HMAC-SHA256")]
    BadSignature,
    /// The signature does not match the body.
    #[error("the request's signature does not match its body and the signing secret")]
    Forged,
}

/// Checks that `body`, with these headers' values, was signed with `secret`
/// within [`WINDOW_SECONDS`] of `now` (Unix seconds). The comparison takes
/// the same time wherever the signatures differ.
pub fn verify(
    secret: &[u8],
    timestamp: Option<&str>,
    signature: Option<&str>,
    body: &[u8],
    now: i64,
) -> Result<(), NotSlack> {
    let timestamp = timestamp.ok_or(NotSlack::Missing("X-Slack-Request-Timestamp"))?;
    let signature = signature.ok_or(NotSlack::Missing("X-Slack-Signature"))?;
    let at: i64 = timestamp
        .trim()
        .parse()
        .map_err(|_| NotSlack::BadTimestamp(timestamp.chars().take(20).collect()))?;
    let off = now.saturating_sub(at);
    if off.abs() > WINDOW_SECONDS {
        return Err(NotSlack::Stale(off));
    }
    let given = signature
        .strip_prefix("v0=")
        .and_then(|h| hex::decode(h).ok())
        .ok_or(NotSlack::BadSignature)?;
    // HMAC takes a key of any length.
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).map_err(|_| NotSlack::Forged)?;
    mac.update(b"v0:");
    mac.update(timestamp.as_bytes());
    mac.update(b":");
    mac.update(body);
    mac.verify_slice(&given).map_err(|_| NotSlack::Forged)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Slack's own worked example ("Verifying requests from Slack").
    const SECRET: &[u8] = b"8f742231b10e8888abcd99yyyzzz85a5";
    const BODY: &[u8] = b"token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
    const TIMESTAMP: &str = "1531420618";
    const SIGNATURE: &str = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503";

    #[test]
    fn slacks_published_example_verifies() {
        assert_eq!(
            verify(
                SECRET,
                Some(TIMESTAMP),
                Some(SIGNATURE),
                BODY,
                1531420618 + 10
            ),
            Ok(())
        );
    }

    #[test]
    fn a_changed_byte_an_old_timestamp_or_another_secret_is_refused() {
        let mut changed = BODY.to_vec();
        changed[10] ^= 1;
        let at = 1531420618;
        assert_eq!(
            verify(SECRET, Some(TIMESTAMP), Some(SIGNATURE), &changed, at),
            Err(NotSlack::Forged)
        );
        assert_eq!(
            verify(b"another", Some(TIMESTAMP), Some(SIGNATURE), BODY, at),
            Err(NotSlack::Forged)
        );
        assert_eq!(
            verify(SECRET, Some(TIMESTAMP), Some(SIGNATURE), BODY, at + 301),
            Err(NotSlack::Stale(301))
        );
        assert_eq!(
            verify(SECRET, Some(TIMESTAMP), Some(SIGNATURE), BODY, at - 301),
            Err(NotSlack::Stale(-301))
        );
        assert_eq!(
            verify(SECRET, Some(TIMESTAMP), Some("v1=ab"), BODY, at),
            Err(NotSlack::BadSignature)
        );
        assert_eq!(
            verify(SECRET, Some(TIMESTAMP), Some("v0=zz"), BODY, at),
            Err(NotSlack::BadSignature)
        );
        assert_eq!(
            verify(SECRET, None, Some(SIGNATURE), BODY, at),
            Err(NotSlack::Missing("X-Slack-Request-Timestamp"))
        );
        assert_eq!(
            verify(SECRET, Some("soon"), Some(SIGNATURE), BODY, at),
            Err(NotSlack::BadTimestamp("soon".into()))
        );
    }
}
