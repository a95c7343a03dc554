//! What the server does for a request, whatever brought it: each use case
//! takes the acting key and typed input and returns a typed outcome, which
//! an entry point (the HTTP API; a chat button or an e-mail link next) maps
//! to its own answer. A review's changes go through [`Changes`], which stores
//! each with its feed and audit entries and announces it; a grant, key or
//! device is written by the store in one audited transaction.
//!
//! - [`ask`]: a review, a tool call (approved at once by a standing grant),
//!   a resubmission;
//! - [`decide`]: a reviewer's decision, idempotent under its key;
//! - [`redeem`]: spending an approval's token, or withdrawing the request;
//! - [`access`]: revoking a grant, pairing and revoking devices.

pub mod access;
pub mod ask;
pub mod decide;
pub mod redeem;

pub use access::{issue_pairing_code, pair_device, revoke_device, revoke_grant, NotRevoked};
pub use ask::{ask_review, ask_tool_call, resubmit_review, Asked, NotAsked, NotResubmitted};
pub use decide::{decide, Decided, DecisionRequest, NotDecided};
pub use redeem::{redeem, withdraw, NotSpent};

use crate::changes::Changes;
use crate::signing::Signer;
use crate::store::keys::{ApiKey, KeyKind};
use crate::store::{Db, DbError, Stored};
use countersign_domain::toolcall::CanonicalError;
use countersign_domain::wire::{Answer, Outcome};
use countersign_domain::{DecideError, MplpId, Review};

/// What the use cases work with: the database to read, the one door for
/// writes, and the key that signs receipts.
#[derive(Clone, Copy)]
pub struct Service<'a> {
    /// The database, for reading.
    pub db: &'a Db,
    /// Every write goes through here.
    pub changes: &'a Changes,
    /// Signs the receipts of decisions.
    pub signer: &'a Signer,
}

/// A use case failed for a reason of the server's own (not the caller's).
#[derive(Debug, thiserror::Error)]
pub enum Broken {
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbError),
    /// A receipt could not be made: what it signs has no canonical form.
    #[error("a receipt could not be made: {0}")]
    Receipt(#[from] CanonicalError),
    /// A review or an answer could not be written as JSON.
    #[error("a review could not be written as JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// A stored tool call no longer reads as one (it was checked when asked).
    #[error("a stored tool call does not read: {0}")]
    StoredCall(String),
    /// A standing grant matched a call but the domain refused its approval.
    #[error("a standing grant could not approve the call: {0}")]
    Grant(DecideError),
    /// The idempotency record that refused a retry was gone when read.
    #[error("the idempotency record of a stored decision vanished")]
    RecordVanished,
}

/// `From<DbError>` for the use cases' errors: the database failing is the
/// server's failure.
macro_rules! broken_by_db {
    ($($error:ty),*) => {$(
        impl From<DbError> for $error {
            fn from(e: DbError) -> Self {
                Self::Broken(Broken::Db(e))
            }
        }
    )*};
}

broken_by_db!(NotDecided, NotAsked, NotResubmitted);

impl Service<'_> {
    /// A stored review's outcome as an agent reads it, its receipt signed.
    pub fn outcome(&self, review: &Review) -> Result<Outcome, Broken> {
        let mut outcome = Outcome::of(review);
        outcome.receipt = self.signer.receipt(review)?;
        Ok(outcome)
    }

    /// Stored review `id` if `key` may see it (a reviewer key: any; an agent
    /// key: the ones it asked for), else `None`, whether or not it exists.
    pub async fn visible(&self, key: &ApiKey, id: MplpId) -> Result<Option<Stored>, DbError> {
        Ok(self
            .db
            .review(id)
            .await?
            .filter(|s| key.kind == KeyKind::Reviewer || s.created_by == key.id))
    }

    /// The answer that carries a stored review and its outcome.
    pub fn answer(&self, review: Review) -> Result<Answer, Broken> {
        Ok(Answer {
            outcome: self.outcome(&review)?,
            review,
        })
    }
}
