//! One JSON request (over `gloo-net`), shared by the HTTP stores.

use super::HttpError;
use serde_json::Value;

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
    // Only these two are sent; another one is refused, never sent as a GET.
    let method = match method {
        "POST" => gloo_net::http::Method::POST,
        "GET" => gloo_net::http::Method::GET,
        other => {
            return Err(HttpError::Garbled(format!(
                "the app does not send {other} requests"
            )))
        }
    };
    let mut builder = gloo_net::http::RequestBuilder::new(url).method(method);
    for (name, value) in headers {
        builder = builder.header(name, value);
    }
    let request = match body {
        Some(body) => builder
            .header("Content-Type", "application/json")
            .body(body.to_string())
            .map_err(unreachable)?,
        None => builder.build().map_err(unreachable)?,
    };
    let response = request.send().await.map_err(unreachable)?;
    let text = response.text().await.map_err(unreachable)?;
    Ok((response.status(), text))
}
