//! Approval tokens: minted only on approval, redeemed once, right before the
//! call runs, and only for exactly the call that was approved.

use super::canonical::CallHash;
use super::grant::Scope;
use crate::wire::ErrorCode;
use crate::{MplpId, Timestamp};
use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

/// How long a token stays redeemable after it is minted.
pub const TOKEN_LIFETIME: Duration = Duration::minutes(5);

/// The right to run one approved call once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Token {
    /// The token's id, what the agent presents.
    pub token_id: MplpId,
    /// The request it was minted for.
    pub approval_id: MplpId,
    /// The hash of the call it allows (the edited call, after modifications).
    pub tool_call_hash: CallHash,
    /// After this it is refused.
    pub expires_at: Timestamp,
    /// Always true: a token runs one call.
    pub single_use: bool,
    /// The scope the approval granted, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
    /// The device that may redeem it, when the request named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issued_to_client_device_id: Option<String>,
    /// When it was redeemed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used_at: Option<Timestamp>,
}

/// What an agent presents right before running a call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Redemption {
    /// The token.
    pub token_id: MplpId,
    /// The request the agent believes it runs under, if it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_id: Option<MplpId>,
    /// The hash of the call it is about to run (`toolCallHash` of its canonical form).
    pub tool_call_hash: CallHash,
    /// The agent's device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_device_id: Option<String>,
}

/// Which check a redemption failed; each has its own code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RedeemError {
    /// No such token was ever minted.
    #[error("no token {0} was issued")]
    Unknown(MplpId),
    /// The token belongs to another request.
    #[error("token {token} was issued for request {issued_for}, not {presented_for}")]
    OtherApproval {
        /// The token.
        token: MplpId,
        /// The request it belongs to.
        issued_for: MplpId,
        /// The request the agent named.
        presented_for: MplpId,
    },
    /// Past its expiry.
    #[error("token {token} expired at {at}; ask again")]
    Expired {
        /// The token.
        token: MplpId,
        /// When it expired.
        at: Timestamp,
    },
    /// Redeemed before.
    #[error("token {token} was already used at {at}; a token runs one call")]
    AlreadyUsed {
        /// The token.
        token: MplpId,
        /// When.
        at: Timestamp,
    },
    /// The call differs from the approved one.
    #[error("the call about to run (hash {presented}) is not the approved call (hash {approved})")]
    HashMismatch {
        /// The approved call's hash.
        approved: CallHash,
        /// The presented call's hash.
        presented: CallHash,
    },
    /// Another device presents it.
    #[error("token {token} is bound to device `{bound}`, not `{presented}`")]
    DeviceMismatch {
        /// The token.
        token: MplpId,
        /// The device it was issued to.
        bound: String,
        /// The device presenting it (empty when none was given).
        presented: String,
    },
}

impl RedeemError {
    /// A stable machine code for the failed check.
    pub fn code(&self) -> ErrorCode {
        match self {
            RedeemError::Unknown(_) => ErrorCode::TokenUnknown,
            RedeemError::OtherApproval { .. } => ErrorCode::TokenOtherApproval,
            RedeemError::Expired { .. } => ErrorCode::TokenExpired,
            RedeemError::AlreadyUsed { .. } => ErrorCode::TokenUsed,
            RedeemError::HashMismatch { .. } => ErrorCode::TokenHashMismatch,
            RedeemError::DeviceMismatch { .. } => ErrorCode::TokenDeviceMismatch,
        }
    }
}

impl Token {
    /// Mints a token for `hash` at `now`, expiring after [`TOKEN_LIFETIME`].
    pub fn mint(
        token_id: MplpId,
        approval_id: MplpId,
        hash: CallHash,
        scope: Option<Scope>,
        device: Option<String>,
        now: DateTime<Utc>,
    ) -> Self {
        Token {
            token_id,
            approval_id,
            tool_call_hash: hash,
            expires_at: Timestamp::from_utc(now + TOKEN_LIFETIME),
            single_use: true,
            scope,
            issued_to_client_device_id: device,
            used_at: None,
        }
    }

    /// Checks a redemption in a fixed order (request, expiry, use, call, device)
    /// and returns the token marked used. O(1).
    pub fn redeem(&self, presented: &Redemption, now: DateTime<Utc>) -> Result<Token, RedeemError> {
        if presented.token_id != self.token_id {
            return Err(RedeemError::Unknown(presented.token_id));
        }
        if let Some(approval) = presented.approval_id {
            if approval != self.approval_id {
                return Err(RedeemError::OtherApproval {
                    token: self.token_id,
                    issued_for: self.approval_id,
                    presented_for: approval,
                });
            }
        }
        if now >= self.expires_at.to_utc() {
            return Err(RedeemError::Expired {
                token: self.token_id,
                at: self.expires_at.clone(),
            });
        }
        if let Some(at) = &self.used_at {
            if self.single_use {
                return Err(RedeemError::AlreadyUsed {
                    token: self.token_id,
                    at: at.clone(),
                });
            }
        }
        if presented.tool_call_hash != self.tool_call_hash {
            return Err(RedeemError::HashMismatch {
                approved: self.tool_call_hash.clone(),
                presented: presented.tool_call_hash.clone(),
            });
        }
        if let Some(bound) = &self.issued_to_client_device_id {
            if presented.client_device_id.as_deref() != Some(bound.as_str()) {
                return Err(RedeemError::DeviceMismatch {
                    token: self.token_id,
                    bound: bound.clone(),
                    presented: presented.client_device_id.clone().unwrap_or_default(),
                });
            }
        }
        let mut used = self.clone();
        used.used_at = Some(Timestamp::from_utc(now));
        Ok(used)
    }
}
