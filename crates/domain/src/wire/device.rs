//! Pairing a second device (a phone) with a reviewer key, without the key
//! leaving the first device: `POST /pairings` mints a one-time code, the
//! device trades it at `POST /pairings/redeem` for a key of its own, and
//! `GET /devices` lists the paired devices, each revocable.

use serde::{Deserialize, Serialize};

/// A one-time pairing code (`POST /api/v1/pairings`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pairing {
    /// The code, shown once; the app puts it in a link and a QR code.
    pub code: String,
    /// When it stops working if not used.
    pub expires_at: String,
}

/// What a device sends to pair (`POST /api/v1/pairings/redeem`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PairingRequest {
    /// The code from the link or QR code.
    pub code: String,
    /// How the device is listed ("Sam's phone").
    pub device: String,
}

/// The device's own reviewer key, shown once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Paired {
    /// The secret the device sends as `Authorization: Bearer`.
    pub key: String,
    /// The key's public id (what decisions record).
    pub key_id: String,
    /// The roles it may sign as (the pairing key's).
    pub roles: Vec<String>,
    /// The person it belongs to (the pairing key's owner).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
}

/// One paired device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Device {
    /// Its key's public id.
    pub key_id: String,
    /// The name it gave.
    pub device: String,
    /// When it was paired.
    pub paired_at: String,
    /// Its last request (to the minute), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<String>,
    /// When it was revoked, if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<String>,
    /// Whether it is the device asking.
    pub this_device: bool,
}

/// The paired devices, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceList {
    /// Each device.
    pub devices: Vec<Device>,
}
