//! What only a Countersign server keeps for its reviewers: standing
//! approvals, webhooks and paired devices. A screen asks
//! [`Desk::access`](super::Desk::access) once; with no `Access` the
//! backend keeps none of them. Each answer is the server's, recorded there
//! before it is returned.

use crate::backend::{HttpError, HttpStore};
use countersign_domain::wire::{Device, GrantRecord, Pairing, WebhookList};

/// The Countersign server's reviewer-side records (cheap to clone).
#[derive(Clone)]
pub struct Access(pub(super) HttpStore);

impl Access {
    /// The server's address.
    pub fn url(&self) -> &str {
        self.0.url()
    }

    /// The standing approvals, live and ended.
    pub async fn grants(self) -> Result<Vec<GrantRecord>, HttpError> {
        let listed = self.0.grants().await?;
        Ok(listed.items)
    }

    /// Revokes a standing approval: the agent's next such call is asked again.
    pub async fn revoke_grant(self, grant_id: String) -> Result<GrantRecord, HttpError> {
        self.0.revoke_grant(&grant_id).await
    }

    /// The webhooks and their latest deliveries.
    pub async fn webhooks(self) -> Result<WebhookList, HttpError> {
        self.0.webhooks().await
    }

    /// A one-time code that pairs another device with this reviewer key.
    pub async fn pairing(self) -> Result<Pairing, HttpError> {
        self.0.pairing().await
    }

    /// The devices paired from this key (or its owner).
    pub async fn devices(self) -> Result<Vec<Device>, HttpError> {
        let listed = self.0.devices().await?;
        Ok(listed.devices)
    }

    /// Revokes a paired device: its next request is refused.
    pub async fn revoke_device(self, key_id: String) -> Result<Device, HttpError> {
        self.0.revoke_device(&key_id).await
    }
}
