//! `/pair#server=…&code=…`: a phone opened a pairing link (or scanned its QR
//! code). Naming the device and pressing Pair trades the one-time code for
//! the phone's own reviewer key, kept on this device, and opens the inbox.

use crate::backend::{Connection, HttpStore, ServerKind};
use countersign_domain::wire::PairingRequest;
use leptos::prelude::*;

/// The server and code the link carries (in the fragment, which browsers
/// never send to a server, so no log holds the code).
fn from_link() -> Option<(String, String)> {
    let hash = web_sys::window()?.location().hash().ok()?;
    let mut server = None;
    let mut code = None;
    for pair in hash.trim_start_matches('#').split('&') {
        let (name, value) = pair.split_once('=')?;
        let value = js_sys::decode_uri_component(value).ok()?.as_string()?;
        match name {
            "server" => server = Some(value),
            "code" => code = Some(value),
            _ => {}
        }
    }
    Some((server?, code?))
}

/// The pairing page.
#[component]
pub fn PairPage() -> impl IntoView {
    let Some((server, code)) = from_link() else {
        return view! {
            <section class="card" aria-labelledby="pair-title">
                <h1 id="pair-title">"Pair this device"</h1>
                <p role="alert">"This pairing link is incomplete. On the device that is already connected, open Settings > Devices > Add a device, and open the new link here."</p>
            </section>
        }
        .into_any();
    };
    let device = RwSignal::new("Phone".to_owned());
    let shown_server = server.clone();
    let pairing = Action::new_unsync(move |device: &String| {
        pair(server.clone(), code.clone(), device.trim().to_owned())
    });
    // Paired: the page is being replaced, so the button stays off.
    let busy =
        move || pairing.pending().get() || pairing.value().with(|v| matches!(v, Some(Ok(()))));
    let message = move || match pairing.value().get() {
        _ if pairing.pending().get() => Some("Pairing…".to_owned()),
        Some(Err(e)) => Some(format!("Not paired: {e}")),
        _ => None,
    };
    view! {
        <section class="card pair" aria-labelledby="pair-title">
            <h1 id="pair-title">"Pair this device"</h1>
            <p>"Review the requests of "<strong>{shown_server}</strong>" on this device. It gets its own key, with the roles of the device that made the link, kept in this browser until it is revoked."</p>
            <form on:submit=move |ev| { ev.prevent_default(); pairing.dispatch(device.get_untracked()); }>
                <div class="field">
                    <label for="device-name">"Name this device"</label>
                    <input id="device-name" type="text" autocomplete="off" maxlength="60" prop:value=move || device.get() on:input=move |ev| device.set(event_target_value(&ev)) />
                </div>
                <div class="actions"><button type="submit" class="button-primary" disabled=busy>"Pair"</button></div>
            </form>
            <p role="status" class="subtle">{message}</p>
        </section>
    }
    .into_any()
}

/// Redeems the pairing code for this device's own key and keeps the
/// connection on this device, then starts again on the inbox, with the code
/// gone from the address and the history.
async fn pair(server: String, code: String, device: String) -> Result<(), String> {
    let unpaired = Connection {
        url: server.clone(),
        key: String::new(),
        backend: ServerKind::Countersign,
        graphs: String::new(),
        signed_in: false,
    };
    let request = PairingRequest { code, device };
    let paired = HttpStore::new(unpaired)
        .redeem_pairing(&request)
        .await
        .map_err(|e| e.to_string())?;
    let connection = Connection {
        url: server,
        key: paired.key,
        backend: ServerKind::Countersign,
        graphs: String::new(),
        signed_in: false,
    };
    connection.save(true)?;
    HttpStore::new(connection).keep_page(true).await;
    if let Some(window) = web_sys::window() {
        let _ = window.location().replace("/");
    }
    Ok(())
}
