//! The agent that asked spends its approval right before running the call
//! (once: of two redemptions at the same instant one wins), or withdraws the
//! request when the call will not run after all.

use super::{Broken, Service};
use crate::changes::new_id;
use crate::store::keys::ApiKey;
use countersign_domain::toolcall::{redeem as spend, withdraw as close, RedeemError};
use countersign_domain::toolcall::{Redemption, WithdrawError};
use countersign_domain::wire::{Answer, ChangeKind, Redeemed};
use countersign_domain::{MplpId, Review};

/// How many times a redemption or withdrawal reads the review again when
/// another change lands between its read and its write.
const ATTEMPTS: usize = 8;

/// Why a token was not spent, or a request not withdrawn.
#[derive(Debug, thiserror::Error)]
pub enum NotSpent<E> {
    /// No review with this id that `agent` asked for.
    #[error("review {0}")]
    NotFound(MplpId),
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
    id: MplpId,
    presented: &Redemption,
) -> Result<Redeemed, NotSpent<RedeemError>> {
    let spent = change_agents_own(service, agent, id, ChangeKind::Redeemed, |review| {
        spend(review, presented, chrono::Utc::now(), &mut new_id)
            .inspect_err(|e| crate::metrics::redemption(Some(e.code())))
    })
    .await?;
    crate::metrics::redemption(None);
    let outcome = spent.tool_call().and_then(|c| c.outcome.as_ref());
    Ok(Redeemed {
        redeemed: true,
        token: outcome.and_then(|o| o.token.clone()),
    })
}

/// Closes pending tool call `id` as cancelled: its agent will not run it.
pub async fn withdraw(
    service: Service<'_>,
    agent: &ApiKey,
    id: MplpId,
    reason: Option<&str>,
) -> Result<Answer, NotSpent<WithdrawError>> {
    let closed = change_agents_own(service, agent, id, ChangeKind::Decided, |review| {
        close(review, reason, chrono::Utc::now(), &mut new_id)
    })
    .await?;
    Ok(service.answer(closed)?)
}

/// Applies `change` to review `id` of `agent`'s and stores the result by
/// compare-and-swap, reading it again when another change landed meanwhile.
async fn change_agents_own<E>(
    service: Service<'_>,
    agent: &ApiKey,
    id: MplpId,
    kind: ChangeKind,
    change: impl Fn(&Review) -> Result<Review, E>,
) -> Result<Review, NotSpent<E>> {
    for _ in 0..ATTEMPTS {
        let stored = service
            .visible(agent, id)
            .await?
            .ok_or(NotSpent::NotFound(id))?;
        let next = change(&stored.review).map_err(NotSpent::Refused)?;
        if service.changes.replace(&stored, &next, kind).await? {
            return Ok(next);
        }
    }
    Err(NotSpent::Busy)
}
