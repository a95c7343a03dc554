//! Settings → Devices: pairing a phone without typing a key (a one-time link
//! and QR code made by the server for this key), and the paired devices with
//! their last use, each revocable.

use crate::browser;
use crate::desk::Origin;
use countersign_domain::wire::{Device, Pairing};
use countersign_domain::Timestamp;
use leptos::prelude::*;

/// The devices card.
#[component]
pub fn Devices() -> impl IntoView {
    let origin = Origin::from_context();
    let listed = RwSignal::new(None::<Result<Vec<Device>, String>>);
    let reload = move || {
        leptos::task::spawn_local(async move {
            if let Some(answer) = origin.devices().await {
                listed.set(Some(answer.map(|l| l.devices).map_err(|e| e.to_string())));
            }
        });
    };
    reload();
    view! {
        <section class="card devices" aria-labelledby="devices-title">
            <h2 id="devices-title">"Devices"</h2>
            <p class="subtle">"Review from your phone without typing a key: open the link or scan the code on the phone. It works once, for 10 minutes, and gives the phone its own key with your roles; your key stays on this device."</p>
            <AddDevice reload />
            {move || match listed.get() {
                None => view! { <p role="status" class="subtle">"Loading…"</p> }.into_any(),
                Some(Err(e)) => view! { <p class="field-error" role="alert">{format!("The paired devices cannot be read: {e}")}</p> }.into_any(),
                Some(Ok(devices)) if devices.is_empty() => view! { <p class="subtle">"No device is paired yet."</p> }.into_any(),
                Some(Ok(devices)) => view! {
                    <ul class="device-list" aria-label="Paired devices">
                        {devices.into_iter().map(|device| view! { <DeviceItem device reload /> }).collect_view()}
                    </ul>
                }.into_any(),
            }}
        </section>
    }
}

/// The button that makes a pairing code, then its link and QR code.
#[component]
fn AddDevice(reload: impl Fn() + Copy + Send + Sync + 'static) -> impl IntoView {
    let origin = Origin::from_context();
    let made = RwSignal::new(None::<Result<Pairing, String>>);
    let add = move |_| {
        leptos::task::spawn_local(async move {
            made.set(Some(origin.pairing().await));
            reload();
        });
    };
    let server = origin.remote_url().unwrap_or_default();
    view! {
        <div class="actions"><button type="button" class="button-primary" on:click=add>"Add a device"</button></div>
        {move || made.get().map(|made| match made {
            Err(e) => view! { <p class="field-error" role="alert">{format!("No pairing code: {e}")}</p> }.into_any(),
            Ok(pairing) => view! { <PairingCode pairing server=server.clone() /> }.into_any(),
        })}
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

#[component]
fn DeviceItem(device: Device, reload: impl Fn() + Copy + Send + Sync + 'static) -> impl IntoView {
    let origin = Origin::from_context();
    let now = browser::now();
    let failed = RwSignal::new(None::<String>);
    let when = |text: &Option<String>| {
        text.as_deref()
            .and_then(|t| Timestamp::parse(t).ok())
            .map(|t| t.ago(now))
    };
    let used =
        when(&device.last_used_at).map_or("never used".to_owned(), |a| format!("last used {a}"));
    let paired = when(&Some(device.paired_at.clone())).unwrap_or_default();
    let id = device.key_id.clone();
    let revoke = move |_| {
        let id = id.clone();
        leptos::task::spawn_local(async move {
            match origin.revoke_device(&id).await {
                Ok(_) => reload(),
                Err(e) => failed.set(Some(format!("Not revoked: {e}"))),
            }
        });
    };
    let label = format!("Revoke {}", device.device);
    view! {
        <li>
            <strong>{device.device.clone()}</strong>
            {device.this_device.then(|| view! { " " <span class="badge">"this device"</span> })}
            <p class="subtle">{format!("paired {paired} · {used}")}</p>
            {match device.revoked_at.as_ref() {
                Some(_) => view! { <p class="subtle">"Revoked"</p> }.into_any(),
                None => view! { <button type="button" class="button-reject" aria-label=label on:click=revoke>"Revoke"</button> }.into_any(),
            }}
            {move || failed.get().map(|e| view! { <p class="field-error" role="alert">{e}</p> })}
        </li>
    }
}
