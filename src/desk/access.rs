//! What only a Countersign server keeps for its reviewers: standing
//! approvals, webhooks and paired devices. A screen asks
//! [`Origin::access`](super::Origin::access) once; with no `Access` the
//! backend keeps none of them. Each answer is the server's, recorded there
//! before it is returned.

use crate::backend::HttpStore;
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
    pub async fn grants(self) -> Result<Vec<GrantRecord>, String> {
        let listed = self.0.grants().await.map_err(|e| e.to_string())?;
        Ok(listed.items)
    }

    /// Revokes a standing approval: the agent's next such call is asked again.
    pub async fn revoke_grant(self, grant_id: String) -> Result<GrantRecord, String> {
        self.0
            .revoke_grant(&grant_id)
            .await
            .map_err(|e| e.to_string())
    }

    /// The webhooks and their latest deliveries.
    pub async fn webhooks(self) -> Result<WebhookList, String> {
        self.0.webhooks().await.map_err(|e| e.to_string())
    }

    /// A one-time code that pairs another device with this reviewer key.
    pub async fn pairing(self) -> Result<Pairing, String> {
        self.0.pairing().await.map_err(|e| e.to_string())
    }

    /// The devices paired from this key (or its owner).
    pub async fn devices(self) -> Result<Vec<Device>, String> {
        let listed = self.0.devices().await.map_err(|e| e.to_string())?;
        Ok(listed.devices)
    }

    /// Revokes a paired device: its next request is refused.
    pub async fn revoke_device(self, key_id: String) -> Result<Device, String> {
        self.0
            .revoke_device(&key_id)
            .await
            .map_err(|e| e.to_string())
    }
}
