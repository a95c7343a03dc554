//! A reviewer decides a review: checked against the domain's rules and the
//! approval policy, stored by compare-and-swap with its idempotency record
//! (and any grant it makes) in one transaction, and answered with the
//! review and its signed outcome. A retry under the same idempotency key
//! gets the first answer again.

use super::{Broken, Service};
use crate::changes::{new_id, Written};
use crate::store::keys::ApiKey;
use crate::store::{IdempotencyRecord, IdempotentResult};
use countersign_domain::policy::PolicyRefusal;
use countersign_domain::{decide_under, Channel, DecideError, DecisionInput, Judge, MplpId};

/// How many times a decision reads the review again when another decision
/// lands between its read and its write.
const ATTEMPTS: usize = 5;

/// A decision as asked: on which review, what, under which idempotency key.
#[derive(Debug)]
pub struct DecisionRequest {
    /// The review's id.
    pub review: MplpId,
    /// The decision.
    pub input: DecisionInput,
    /// The caller's key for this decision: a retry under it is answered
    /// with the first result.
    pub idempotency_key: String,
    /// Where the reviewer is deciding (receipts and the audit chain say it).
    pub channel: Channel,
}

/// A decision that stands: the answer body (`{"review", "outcome"}`, JSON)
/// as first stored, for this request or a retry of it.
#[derive(Debug)]
pub struct Decided(pub String);

/// Why a decision was not made.
#[derive(Debug, thiserror::Error)]
pub enum NotDecided {
    /// No review has this id.
    #[error("review {0}")]
    NotFound(MplpId),
    /// The domain or the policy refused it.
    #[error(transparent)]
    Refused(DecideError),
    /// The idempotency key was used before for another decision.
    #[error("this Idempotency-Key was already used for a different decision; use a new key")]
    KeyReused,
    /// The review kept changing under it.
    #[error("the review kept changing; try again")]
    Busy,
    /// The server failed.
    #[error(transparent)]
    Broken(#[from] Broken),
}

/// The first answer to `request` if `reviewer` sent it before under its
/// idempotency key; [`NotDecided::KeyReused`] if that key was used for
/// another decision.
pub async fn answered_before(
    service: Service<'_>,
    reviewer: &ApiKey,
    request: &DecisionRequest,
) -> Result<Option<Decided>, NotDecided> {
    let first = service
        .db
        .idempotent_result(&reviewer.id, &request.idempotency_key)
        .await?;
    match first {
        Some(first) if first.request == asked(request) => Ok(Some(Decided(first.response))),
        Some(_) => Err(NotDecided::KeyReused),
        None => Ok(None),
    }
}

/// What an idempotency record keeps of a request, to know a retry from
/// another decision under the same key.
fn asked(request: &DecisionRequest) -> String {
    serde_json::json!({"confirm_id": request.review, "decision": request.input}).to_string()
}

/// Decides `request.review` as `reviewer` (a reviewer key allowed to sign
/// as the decision's role: the caller checks both).
pub async fn decide(
    service: Service<'_>,
    reviewer: &ApiKey,
    request: DecisionRequest,
) -> Result<Decided, NotDecided> {
    let first_answer = || answered_before(service, reviewer, &request);
    let asked = asked(&request);
    let (id, input, channel) = (request.review, &request.input, request.channel);
    let acting = reviewer.key_ref();
    // No lookup up front: a retry finds the review decided (then its first
    // result is read below) or its key taken at commit (nothing is written).
    for _ in 0..ATTEMPTS {
        let mut stored = service
            .db
            .review(id)
            .await?
            .ok_or(NotDecided::NotFound(id))?;
        if stored.review.requester.is_none() {
            // Stored before reviews recorded their agent key: the table still
            // says which key created it, so its owner is kept from approving.
            stored.review.requester = Some(service.db.key_ref(&stored.created_by).await?);
        }
        let rule = service.changes.policy().rule_for(&stored.review);
        let judge = Judge {
            rule: &rule,
            reviewer: &acting,
            channel: Some(channel),
        };
        let now = chrono::Utc::now();
        let next = match decide_under(&stored.review, input, judge, now, &mut new_id) {
            Ok(next) => next,
            // A retry of a decision that was stored: of the last one (the
            // review is decided now) or of a partial approval (its reviewer
            // has approved now).
            Err(
                refused @ (DecideError::NotPending { .. }
                | DecideError::Policy(PolicyRefusal::SameReviewer { .. })),
            ) => return first_answer().await?.ok_or(NotDecided::Refused(refused)),
            Err(refused) => return Err(NotDecided::Refused(refused)),
        };
        // Serialized once: stored as the review, as the first result, and sent as it is.
        let doc = serde_json::to_string(&next).map_err(Broken::from)?;
        let outcome = serde_json::to_string(&service.outcome(&next)?).map_err(Broken::from)?;
        let answer = format!(r#"{{"review":{doc},"outcome":{outcome}}}"#);
        let first = IdempotentResult {
            request: asked.clone(),
            response: answer.clone(),
        };
        let record = IdempotencyRecord {
            key_id: reviewer.id.clone(),
            key: request.idempotency_key.clone(),
            first,
        };
        match service.changes.decide(&stored, &next, doc, record).await? {
            Written::Stored => return Ok(Decided(answer)),
            Written::Stale => continue,
            Written::KeyTaken => {
                return first_answer()
                    .await?
                    .ok_or(NotDecided::Broken(Broken::RecordVanished))
            }
        }
    }
    Err(NotDecided::Busy)
}
