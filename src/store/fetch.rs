//! One JSON request over `fetch`, shared by the HTTP stores.

use super::HttpError;
use serde_json::Value;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// Sends `body` (as JSON) with `headers` to `url` and reads the JSON answer,
/// whatever its status. `base` names the server in errors. A network failure
/// (down, offline, blocked by CORS) is `Unreachable`, an answer that is not
/// JSON is `Garbled`.
pub async fn fetch_json(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
    base: &str,
) -> Result<(u16, Value), HttpError> {
    let (status, text) = fetch_text(method, url, headers, body, base).await?;
    let value = serde_json::from_str(&text)
        .map_err(|e| HttpError::Garbled(format!("{status} {url}: {e}")))?;
    Ok((status, value))
}

/// As [`fetch_json`], with the answer's text left to the caller to read
/// into its own type.
pub async fn fetch_text(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
    base: &str,
) -> Result<(u16, String), HttpError> {
    let unreachable = |_| HttpError::Unreachable(base.to_owned());
    let request_headers = web_sys::Headers::new().map_err(unreachable)?;
    for (name, value) in headers {
        request_headers.set(name, value).map_err(unreachable)?;
    }
    let init = web_sys::RequestInit::new();
    init.set_method(method);
    if let Some(body) = body {
        request_headers
            .set("Content-Type", "application/json")
            .map_err(unreachable)?;
        init.set_body(&JsValue::from_str(&body.to_string()));
    }
    init.set_headers(&request_headers);
    let request = web_sys::Request::new_with_str_and_init(url, &init).map_err(unreachable)?;
    let window = web_sys::window().ok_or_else(|| HttpError::Unreachable("no window".into()))?;
    let response: web_sys::Response = JsFuture::from(window.fetch_with_request(&request))
        .await
        .map_err(unreachable)?
        .unchecked_into();
    let text = JsFuture::from(response.text().map_err(unreachable)?)
        .await
        .map_err(unreachable)?
        .as_string()
        .unwrap_or_default();
    Ok((response.status(), text))
}
