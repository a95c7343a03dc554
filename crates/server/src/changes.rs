//! Changes to stored reviews, apart from HTTP: each is stored with its feed
//! entry and then announced to this instance's feed reader (which fans it out
//! to event streams and long polls), in this one place; fresh ids for
//! decisions and events; and the sweeper that closes pending tool calls past
//! their expiry as denied and escalates reviews left waiting too long.

use crate::feed::Feed;
use crate::store::reviews::Insert;
use crate::store::{ChangeError, IdempotencyRecord, Stored};
use crate::store::{Db, DbError};
use countersign_domain::policy::Policy;
use countersign_domain::toolcall::expire_if_due;
use countersign_domain::wire::ChangeKind;
use countersign_domain::{escalate_if_due, MplpId, Review};
use std::sync::Arc;

/// Stores changes and wakes this instance's feed reader (other instances
/// sharing the database are woken by the database).
#[derive(Clone)]
pub struct Changes {
    db: Db,
    feed: Feed,
    policy: Arc<Policy>,
}

/// How storing a call approved by a grant ended.
#[derive(Debug)]
pub enum ByGrant {
    /// Stored, approved.
    Stored,
    /// Its id (or approvalId) is taken: nothing written.
    Taken,
    /// The grant was revoked meanwhile: nothing written.
    GrantGone,
}

/// How a decision's compare-and-swap write ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// Stored and announced.
    Stored,
    /// The review changed since it was read: read it again.
    Stale,
    /// A retry under the same idempotency key was stored meanwhile: its
    /// first result stands.
    KeyTaken,
}

impl Changes {
    /// Changes stored in `db`, announced to `feed`.
    pub fn new(db: Db, feed: Feed, policy: Arc<Policy>) -> Changes {
        Changes { db, feed, policy }
    }

    /// The approval policy every decision is checked against.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Stores a new review. Returns the review already stored under its id
    /// (or its tool call's approval id) instead, when there is one: nothing
    /// is written then.
    pub async fn create(
        &self,
        review: &Review,
        created_by: &str,
    ) -> Result<Option<Stored>, DbError> {
        match self.db.insert_review(review, created_by, None).await? {
            Insert::Stored(_) => {
                self.feed.wake();
                crate::metrics::created(review);
                Ok(None)
            }
            Insert::Taken(existing) => Ok(Some(*existing)),
            // No grant was named, so none can be gone.
            Insert::GrantGone => Err(DbError::Damaged(format!(
                "review {} was not stored",
                review.confirm.confirm_id
            ))),
        }
    }

    /// Stores a new call as grant `grant_id` approved it (`approved`), with
    /// the grant's use and both changes, in one transaction: nothing ever
    /// reads it pending. [`ByGrant::GrantGone`] when the grant was revoked
    /// meanwhile (nothing written: ask a reviewer).
    pub async fn create_approved_by_grant(
        &self,
        approved: &Review,
        created_by: &str,
        grant_id: &str,
    ) -> Result<ByGrant, DbError> {
        Ok(
            match self
                .db
                .insert_review(approved, created_by, Some(grant_id))
                .await?
            {
                Insert::Stored(_) => {
                    self.feed.wake();
                    crate::metrics::created(approved);
                    crate::metrics::maybe_closed(approved);
                    ByGrant::Stored
                }
                Insert::Taken(_) => ByGrant::Taken,
                Insert::GrantGone => ByGrant::GrantGone,
            },
        )
    }

    /// Replaces a review as it was `read` with `next`. Returns false, having
    /// written nothing, when the review changed since it was read.
    pub async fn replace(
        &self,
        read: &Stored,
        next: &Review,
        kind: ChangeKind,
    ) -> Result<bool, DbError> {
        match self.db.replace_review(read, next, kind, None).await {
            Ok(_) => {
                self.feed.wake();
                if matches!(kind, ChangeKind::Decided | ChangeKind::Expired) {
                    crate::metrics::maybe_closed(next);
                }
                Ok(true)
            }
            // Without an idempotency record no key can be taken: only staleness is left.
            Err(ChangeError::Stale | ChangeError::DuplicateRequest) => Ok(false),
            Err(ChangeError::Db(e)) => Err(e),
        }
    }

    /// Stores a decision: `next` (already serialized as `doc`) in place of
    /// the review as it was `read`, with its first result under the caller's
    /// idempotency key (`record`), all or nothing.
    pub async fn decide(
        &self,
        read: &Stored,
        next: &Review,
        doc: String,
        record: IdempotencyRecord,
    ) -> Result<Written, DbError> {
        let written = self
            .db
            .replace_serialized_review(read, next, doc, ChangeKind::Decided, Some(record))
            .await;
        match written {
            Ok(_) => {
                self.feed.wake();
                crate::metrics::maybe_closed(next);
                Ok(Written::Stored)
            }
            Err(ChangeError::Stale) => Ok(Written::Stale),
            Err(ChangeError::DuplicateRequest) => Ok(Written::KeyTaken),
            Err(ChangeError::Db(e)) => Err(e),
        }
    }

    /// Closes one stored review if it is a pending tool call past its expiry
    /// at `now` (denied by default: cancelled, or rejected if its rule says
    /// so). Returns whether it did; a decision that landed meanwhile stands.
    pub async fn close_if_expired(
        &self,
        stored: &Stored,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<bool, DbError> {
        let closing = self.policy.rule_for(&stored.review).expiry_decision();
        match expire_if_due(&stored.review, closing, now, &mut new_id) {
            Some(next) => self.replace(stored, &next, ChangeKind::Expired).await,
            None => Ok(false),
        }
    }

    /// Closes every pending tool call past its expiry at `now`, so waiting
    /// agents learn why at once. Returns how many it closed.
    pub async fn expire_due(&self, now: chrono::DateTime<chrono::Utc>) -> Result<usize, DbError> {
        let mut closed = 0;
        for id in self.db.expired_pending(now).await? {
            if let Some(stored) = self.db.review(id).await? {
                closed += usize::from(self.close_if_expired(&stored, now).await?);
            }
        }
        Ok(closed)
    }

    /// Escalates every pending review whose escalation time has come by
    /// `now`, once each. Returns how many it escalated.
    pub async fn escalate_due(&self, now: chrono::DateTime<chrono::Utc>) -> Result<usize, DbError> {
        let mut escalated = 0;
        for id in self.db.escalations_due(now).await? {
            let Some(stored) = self.db.review(id).await? else {
                continue;
            };
            if let Some(next) = escalate_if_due(&stored.review, now, &mut new_id) {
                // A decision that landed meanwhile stands: nothing to escalate then.
                let done = self.replace(&stored, &next, ChangeKind::Escalated).await?;
                escalated += usize::from(done);
            }
        }
        Ok(escalated)
    }
}

/// Once a second, for as long as the server runs: closes expired tool-call
/// requests and escalates reviews left waiting past their policy's delay.
pub async fn sweep(changes: Changes) {
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
    loop {
        tick.tick().await;
        let now = chrono::Utc::now();
        if let Err(e) = changes.expire_due(now).await {
            tracing::warn!("closing expired tool calls failed: {e}");
        }
        if let Err(e) = changes.escalate_due(now).await {
            tracing::warn!("escalating waiting reviews failed: {e}");
        }
    }
}

/// A fresh random id for a decision or an event.
pub fn new_id() -> MplpId {
    let mut bytes = [0u8; 16];
    // A machine without randomness cannot run the server at all (keys need it too).
    getrandom::fill(&mut bytes).expect("the operating system's random source failed");
    MplpId::from_random_bytes(bytes)
}
