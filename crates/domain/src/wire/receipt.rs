//! Receipts: what a server signs when a review is decided, so an executor or
//! an auditor can check offline, without trusting the database or the
//! network, who decided what about exactly which target, under which rule,
//! and which token that allowed. The signature (made by the server) covers
//! the RFC 8785 canonical form of [`ReceiptBody`].

use crate::model::{ConfirmStatus, Decision, DecisionStatus};
use crate::toolcall::{canonicalize, CallHash, CanonicalError, Scope};
use crate::{MplpId, Review, Timestamp};
use serde::{Deserialize, Serialize};

/// The receipt format this crate writes and reads.
pub const RECEIPT_VERSION: u32 = 1;

/// The rule a decision was made under when no policy file names one: one
/// approval from any reviewer key allowed to sign as the role.
pub const DEFAULT_RULE: &str = "default";

/// What a receipt states: the signed part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReceiptBody {
    /// [`RECEIPT_VERSION`].
    pub version: u32,
    /// The review.
    pub confirm_id: MplpId,
    /// Its status once decided.
    pub status: ConfirmStatus,
    /// Exactly what was decided about.
    pub target: ReceiptTarget,
    /// The decisions that made this status, oldest first.
    pub decisions: Vec<ReceiptDecision>,
    /// The policy rule that applied ([`DEFAULT_RULE`] without a policy).
    pub rule: String,
    /// The standing grant that approved a tool call without asking, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_by_grant: Option<MplpId>,
    /// The scope a tool-call approval granted, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
    /// The token a tool-call approval minted, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<ReceiptToken>,
}

/// The object decided about, by hash.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReceiptTarget {
    /// `tool_call`, `plan`, `context`, `trace`, or `none` (a confirm without its object).
    pub kind: String,
    /// The object's id (the confirm's `target_id`).
    pub id: MplpId,
    /// SHA-256 (hex) of the object's canonical JSON as asked (a plan before
    /// the decision moved its status; [`Review::target_sha256`]); for a tool
    /// call its `toolCallHash` as asked. Absent when the server does not hold
    /// the object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<CallHash>,
}

/// One decision, with the key that made it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReceiptDecision {
    /// The decision record's id.
    pub decision_id: MplpId,
    /// Approved, rejected or cancelled.
    pub status: DecisionStatus,
    /// The role it was made as.
    pub decided_by_role: String,
    /// The reviewer key that made it (absent for the server's own: an expiry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by_key: Option<String>,
    /// The key's owner, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by_owner: Option<String>,
    /// The signed-in person who made it, as their identity provider names them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by_person: Option<crate::Person>,
    /// Where it was made: the desk, the API, Slack or e-mail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<crate::review::Channel>,
    /// When.
    pub decided_at: Timestamp,
}

/// The token an approval minted: what an executor checks before redeeming it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReceiptToken {
    /// The token's id.
    pub token_id: MplpId,
    /// The hash of the one call it allows (the reviewer's edit, when edited).
    pub tool_call_hash: CallHash,
    /// After this it is refused.
    pub expires_at: Timestamp,
    /// The device that may redeem it, when bound to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_device_id: Option<String>,
}

/// A signed receipt as served: the body, the server's Ed25519 signature over
/// the body's canonical form, and the public key that made it (to say which
/// key; a verifier trusts only the key it was given, never this one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Receipt {
    /// What is stated.
    pub body: ReceiptBody,
    /// Standard base64 of the 64-byte Ed25519 signature.
    pub signature: String,
    /// Standard base64 of the signer's 32-byte public key.
    pub public_key: String,
}

impl ReceiptDecision {
    /// `decision` of `review`, with the key, owner and person that made it.
    pub fn of(review: &Review, decision: &Decision) -> ReceiptDecision {
        let key = review.decider_of(decision.decision_id);
        ReceiptDecision {
            decision_id: decision.decision_id,
            status: decision.status,
            decided_by_role: decision.decided_by_role.clone(),
            decided_by_key: key.map(|k| k.key_id.clone()),
            decided_by_owner: key.and_then(|k| k.owner.clone()),
            decided_by_person: key.and_then(|k| k.person.clone()),
            channel: key.and_then(|k| k.channel),
            decided_at: decision.decided_at.clone(),
        }
    }

    /// The review's latest decision, if it has one.
    pub fn latest(review: &Review) -> Option<ReceiptDecision> {
        let decision = review.confirm.decisions.as_ref()?.last()?;
        Some(ReceiptDecision::of(review, decision))
    }

    /// Who made it, as people read it: the person, else the key's owner,
    /// else the key; the server itself for an expiry.
    pub fn who(&self) -> &str {
        match (
            &self.decided_by_person,
            &self.decided_by_owner,
            &self.decided_by_key,
        ) {
            (Some(person), _, _) => person.label(),
            (None, Some(owner), _) => owner,
            (None, None, Some(key)) => key,
            (None, None, None) => "the server",
        }
    }
}

impl ReceiptBody {
    /// What a decided review states (its current round's decisions, the rule
    /// its last decision was checked against); `None` while it is pending.
    /// Cost: none beyond copying, unless the review was stored before it kept
    /// its target's hash: then one canonical serialization of the target.
    pub fn of(review: &Review) -> Result<Option<ReceiptBody>, CanonicalError> {
        let confirm = &review.confirm;
        let Some(last) = confirm.last_decision() else {
            return Ok(None);
        };
        if confirm.status == ConfirmStatus::Pending {
            return Ok(None);
        }
        let tool = review.tool_call();
        let sha256 = match (&review.target, tool) {
            (_, Some(call)) => Some(call.request.tool_call_hash.clone()),
            (Some(_), None) if review.target_sha256.is_some() => review.target_sha256.clone(),
            (Some(target), None) => {
                Some(CallHash::of_canonical(&canonicalize(&target.to_value())?))
            }
            (None, None) => None,
        };
        let outcome = tool.and_then(|c| c.outcome.as_ref());
        Ok(Some(ReceiptBody {
            version: RECEIPT_VERSION,
            confirm_id: confirm.confirm_id,
            status: confirm.status,
            target: ReceiptTarget {
                kind: review
                    .target
                    .as_ref()
                    .map_or("none", |t| t.key())
                    .to_owned(),
                id: confirm.target_id,
                sha256,
            },
            decisions: review
                .current_round()
                .iter()
                .map(|d| ReceiptDecision::of(review, d))
                .collect(),
            rule: review
                .decider_of(last.decision_id)
                .and_then(|k| k.rule.clone())
                .unwrap_or_else(|| DEFAULT_RULE.to_owned()),
            approved_by_grant: outcome.and_then(|o| o.approved_by_grant),
            scope: outcome.and_then(|o| o.grant.as_ref()).map(|g| g.scope),
            token: outcome
                .and_then(|o| o.token.as_ref())
                .map(|t| ReceiptToken {
                    token_id: t.token_id,
                    tool_call_hash: t.tool_call_hash.clone(),
                    expires_at: t.expires_at.clone(),
                    client_device_id: t.issued_to_client_device_id.clone(),
                }),
        }))
    }

    /// The bytes a signature covers: RFC 8785 canonical JSON of the body.
    /// Written straight from the body: its one number is a `u32`, which every
    /// reader keeps exactly, so no integer needs the check [`canonicalize`]
    /// makes of arbitrary JSON.
    pub fn signed_bytes(&self) -> Result<Vec<u8>, CanonicalError> {
        serde_json_canonicalizer::to_vec(self)
            .map_err(|e| CanonicalError::InvalidJson(e.to_string()))
    }
}
