//! Pairing devices: `POST /pairings` (reviewer) mints a one-time code valid
//! for 10 minutes; `POST /pairings/redeem` (no key: the code is the
//! credential) trades it once for the device's own reviewer key; `GET
//! /devices` and `POST /devices/{key_id}/revoke` (reviewer) list and revoke
//! the paired devices.

use super::auth::Caller;
use super::body::{check_fields, object, JsonBody};
use super::error::{ApiError, Detail, ErrorCode};
use super::AppState;
use crate::store::devices::PairingRefused;
use crate::store::keys::{ApiKey, KeyKind};
use crate::usecases;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use countersign_domain::wire::{Device, DeviceList, Paired, Pairing, PairingRequest};
use serde::Deserialize;

/// The longest device name kept.
const DEVICE_NAME_CHARS: usize = 60;

/// `POST /api/v1/pairings` (reviewer): a one-time code that pairs one device.
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<(StatusCode, Json<Pairing>), ApiError> {
    caller.require(KeyKind::Reviewer)?;
    if caller.session_id().is_some() {
        // A key minted from a session would outlive the checks of the
        // person's groups: a signed-in person signs in on the other device.
        return Err(ApiError::forbidden(
            ErrorCode::WrongKeyKind,
            "a signed-in person adds a device by signing in on it: open this desk there and sign in",
        ));
    }
    let pairing = usecases::issue_pairing_code(state.service(), &caller.0).await?;
    Ok((StatusCode::CREATED, Json(pairing)))
}

/// `POST /api/v1/pairings/redeem` (no key): the device's own reviewer key.
pub async fn redeem(
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<Paired>), ApiError> {
    let refuse = |details| ApiError::invalid("the pairing request was refused", details);
    let fields = object(&body, "").map_err(|d| refuse(vec![d]))?;
    let details = check_fields(fields, "", &["code", "device"], &["code", "device"]);
    if !details.is_empty() {
        return Err(refuse(details));
    }
    let request = PairingRequest::deserialize(&body)
        .map_err(|e| refuse(vec![Detail::new("", e.to_string())]))?;
    let device = request.device.trim();
    if device.is_empty() || device.chars().count() > DEVICE_NAME_CHARS {
        return Err(refuse(vec![Detail::new(
            "/device",
            format!("a name of 1 to {DEVICE_NAME_CHARS} characters, e.g. \"Sam's phone\""),
        )]));
    }
    let minted = usecases::pair_device(state.service(), request.code.trim(), device).await??;
    let key = minted.key;
    Ok((
        StatusCode::CREATED,
        Json(Paired {
            key: minted.secret,
            key_id: key.id,
            roles: key.roles,
            owner: key.owner,
        }),
    ))
}

impl From<PairingRefused> for ApiError {
    fn from(refused: PairingRefused) -> Self {
        let status = match refused {
            PairingRefused::Unknown => StatusCode::NOT_FOUND,
            _ => StatusCode::GONE,
        };
        ApiError::new(status, ErrorCode::PairingRefused, refused.to_string())
            .with_details(vec![Detail::new("/code", refused.to_string())])
    }
}

/// `GET /api/v1/devices` (reviewer): the devices paired from this key (or
/// from the key that paired it) and its owner's.
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<DeviceList>, ApiError> {
    caller.require(KeyKind::Reviewer)?;
    let devices = state.db.devices_of(&caller.0).await?;
    Ok(Json(DeviceList {
        devices: devices.iter().map(|d| device(d, &caller.0)).collect(),
    }))
}

/// `POST /api/v1/devices/{key_id}/revoke` (reviewer): the device's next
/// request is refused (401). Only a device the caller sees can be revoked.
pub async fn revoke(
    State(state): State<AppState>,
    caller: Caller,
    Path(key_id): Path<String>,
) -> Result<Json<Device>, ApiError> {
    caller.require(KeyKind::Reviewer)?;
    let revoked = usecases::revoke_device(state.service(), &caller.0, &key_id).await?;
    Ok(Json(device(&revoked, &caller.0)))
}

fn device(key: &ApiKey, caller: &ApiKey) -> Device {
    Device {
        key_id: key.id.clone(),
        device: key.device.clone().unwrap_or_default(),
        paired_at: key.created_at.clone(),
        last_used_at: key.last_used_at.clone(),
        revoked_at: key.revoked_at.clone(),
        this_device: key.id == caller.id,
    }
}
