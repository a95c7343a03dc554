//! The agent that asked spends its approval right before running the call
//! (once: of two redemptions at the same instant one wins), or withdraws the
//! request when the call will not run after all.

use super::{Broken, Service};
use crate::changes::new_id;
use crate::store::keys::ApiKey;
use countersign_domain::toolcall::{redeem as spend, withdraw as close, RedeemError};
use countersign_domain::toolcall::{Redemption, WithdrawError};
use countersign_domain::wire::{Answer, ChangeKind, Redeemed};

/// How many times a redemption or withdrawal reads the review again when
/// another change lands between its read and its write.
const ATTEMPTS: usize = 8;

/// Why a token was not spent, or a request not withdrawn.
#[derive(Debug, thiserror::Error)]
pub enum NotSpent<E> {
    /// No review with this id that `agent` asked for.
    #[error("review {0}")]
    NotFound(String),
    /// The domain refused it, naming the check that failed.
    #[error(transparent)]
    Refused(E),
    /// The review kept changing under it.
    #[error("the review kept changing; try again")]
    Busy,
    /// The server failed.
    #[error(transparent)]
    Broken(#[from] Broken),
}

impl<E> From<crate::store::DbError> for NotSpent<E> {
    fn from(e: crate::store::DbError) -> Self {
        NotSpent::Broken(e.into())
    }
}

/// Spends the token of review `id` for the call `presented` names.
pub async fn redeem(
    service: Service<'_>,
    agent: &ApiKey,
    id: &str,
    presented: &Redemption,
) -> Result<Redeemed, NotSpent<RedeemError>> {
    for _ in 0..ATTEMPTS {
        let stored = service
            .visible(agent, id)
            .await?
            .ok_or_else(|| NotSpent::NotFound(id.to_owned()))?;
        let next =
            spend(&stored.review, presented, chrono::Utc::now(), &mut new_id).map_err(|e| {
                crate::metrics::redemption(Some(e.code()));
                NotSpent::Refused(e)
            })?;
        let changes = service.changes;
        if changes
            .replace(stored.version, &next, ChangeKind::Redeemed)
            .await?
        {
            let token = next
                .tool_call()
                .and_then(|c| c.outcome.as_ref())
                .and_then(|o| o.token.clone());
            crate::metrics::redemption(None);
            return Ok(Redeemed {
                redeemed: true,
                token,
            });
        }
    }
    Err(NotSpent::Busy)
}

/// Closes pending tool call `id` as cancelled: its agent will not run it.
pub async fn withdraw(
    service: Service<'_>,
    agent: &ApiKey,
    id: &str,
    reason: Option<&str>,
) -> Result<Answer, NotSpent<WithdrawError>> {
    for _ in 0..ATTEMPTS {
        let stored = service
            .visible(agent, id)
            .await?
            .ok_or_else(|| NotSpent::NotFound(id.to_owned()))?;
        let next = close(&stored.review, reason, chrono::Utc::now(), &mut new_id)
            .map_err(NotSpent::Refused)?;
        let changes = service.changes;
        if changes
            .replace(stored.version, &next, ChangeKind::Decided)
            .await?
        {
            return Ok(service.answer(next)?);
        }
    }
    Err(NotSpent::Busy)
}
