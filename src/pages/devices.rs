//! Settings → Devices: pairing a phone without typing a key (a one-time link
//! and QR code made by the server for this key), and the paired devices with
//! their last use, each revocable.

use crate::backend::HttpError;
use crate::browser;
use crate::components::loaded::Loaded;
use crate::desk::Access;
use countersign_domain::wire::{Device, Pairing};
use countersign_domain::Timestamp;
use leptos::prelude::*;

/// The devices card.
#[component]
pub fn Devices(access: Access) -> impl IntoView {
    let listed = {
        let access = access.clone();
        LocalResource::new(move || access.clone().devices())
    };
    let server = access.url().to_owned();
    let (pair, revoke) = (access.clone(), access);
    let add = Action::new_unsync(move |(): &()| pair.clone().pairing());
    let revoke = Action::new_unsync(move |key_id: &String| {
        let (access, key_id) = (revoke.clone(), key_id.clone());
        async move { (key_id.clone(), access.revoke_device(key_id).await) }
    });
    // A new code or a revocation: the list as the server now has it.
    Effect::new(move |first: Option<()>| {
        add.version().track();
        revoke.version().track();
        if first.is_some() {
            listed.refetch();
        }
    });
    let listing = move |devices: Vec<Device>| {
        if devices.is_empty() {
            return view! { <p class="subtle">"No device is paired yet."</p> }.into_any();
        }
        view! {
            <ul class="device-list" aria-label="Paired devices">
                {devices.into_iter().map(|device| view! { <DeviceItem device revoke /> }).collect_view()}
            </ul>
        }
        .into_any()
    };
    view! {
        <section class="card devices" aria-labelledby="devices-title">
            <h2 id="devices-title">"Devices"</h2>
            <p class="subtle">"Review from your phone without typing a key: open the link or scan the code on the phone. It works once, for 10 minutes, and gives the phone its own key with your roles; your key stays on this device."</p>
            <div class="actions"><button type="button" class="button-primary" on:click=move |_| { add.dispatch(()); }>"Add a device"</button></div>
            {move || add.value().get().map(|made| match made {
                Err(e) => view! { <p class="field-error" role="alert">{format!("No pairing code: {e}")}</p> }.into_any(),
                Ok(pairing) => view! { <PairingCode pairing server=server.clone() /> }.into_any(),
            })}
            <Loaded resource=listed what="The paired devices" shown=listing />
        </section>
    }
}

/// A pairing link as text and as a QR code.
#[component]
fn PairingCode(pairing: Pairing, server: String) -> impl IntoView {
    let origin = web_sys::window()
        .and_then(|w| w.location().origin().ok())
        .unwrap_or_default();
    let link = format!(
        "{origin}/pair#server={}&code={}",
        js_sys::encode_uri_component(&server),
        js_sys::encode_uri_component(&pairing.code)
    );
    let until = Timestamp::parse(&pairing.expires_at)
        .map(|t| format!("Works once, until {}.", t.exact()))
        .unwrap_or_default();
    let picture = qr_svg(&link);
    view! {
        <div class="pairing" role="group" aria-label="Pairing code">
            {picture.map(|svg| view! { <img class="qr" alt="QR code of the pairing link" src=format!("data:image/svg+xml;utf8,{}", js_sys::encode_uri_component(&svg)) /> })}
            <p><a href=link.clone() class="pairing-link">{link.clone()}</a></p>
            <p class="subtle">{until}</p>
        </div>
    }
}

/// The link as an SVG QR code (medium error correction: readable from a screen).
fn qr_svg(text: &str) -> Option<String> {
    let code = qrcode::QrCode::with_error_correction_level(text, qrcode::EcLevel::M).ok()?;
    Some(
        code.render::<qrcode::render::svg::Color>()
            .min_dimensions(200, 200)
            .quiet_zone(true)
            .build(),
    )
}

/// Revoking a paired device on the server: its key id, and the server's answer.
type Revoke = Action<String, (String, Result<Device, HttpError>)>;

/// One paired device: its name, when it was paired and last used, and its revocation.
#[component]
fn DeviceItem(device: Device, revoke: Revoke) -> impl IntoView {
    let now = browser::now();
    let when = |text: &Option<String>| {
        text.as_deref()
            .and_then(|t| Timestamp::parse(t).ok())
            .map(|t| t.ago(now))
    };
    let used =
        when(&device.last_used_at).map_or("never used".to_owned(), |a| format!("last used {a}"));
    let paired = when(&Some(device.paired_at.clone())).unwrap_or_default();
    let id = device.key_id.clone();
    let failed = {
        let id = id.clone();
        move || match revoke.value().get() {
            Some((of, Err(e))) if of == id => Some(format!("Not revoked: {e}")),
            _ => None,
        }
    };
    let label = format!("Revoke {}", device.device);
    view! {
        <li>
            <strong>{device.device.clone()}</strong>
            {device.this_device.then(|| view! { " " <span class="badge">"this device"</span> })}
            <p class="subtle">{format!("paired {paired} · {used}")}</p>
            {match device.revoked_at.as_ref() {
                Some(_) => view! { <p class="subtle">"Revoked"</p> }.into_any(),
                None => view! { <button type="button" class="button-reject" aria-label=label on:click=move |_| { revoke.dispatch(id.clone()); }>"Revoke"</button> }.into_any(),
            }}
            {move || failed().map(|e| view! { <p class="field-error" role="alert">{e}</p> })}
        </li>
    }
}
