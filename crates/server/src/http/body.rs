//! Request bodies: read whole before any handler runs, within the size limit;
//! JSON only, parsed with errors that say where the JSON broke. Field checks
//! name each unknown or missing field.

use super::error::{ApiError, Detail, ErrorCode};
use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, Request};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};

/// The largest request body accepted, in bytes (`--max-body`), set on every
/// request by the router.
#[derive(Debug, Clone, Copy)]
pub struct MaxBody(pub usize);

/// How much of a body over the limit is still read (and dropped) before the
/// 413 is sent: a client still writing when the server closes gets a reset
/// connection instead of the answer that says what is wrong.
const DRAINED: usize = 64 << 20;

/// The body, unless it is larger than `limit`: then a 413, sent once the
/// client finished sending (up to `DRAINED` bytes are read and dropped). The
/// error says whether the whole body was read.
async fn read_within(request: Request, limit: usize) -> Result<Bytes, (ApiError, bool)> {
    use futures_util::StreamExt;
    let too_large = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::BodyTooLarge,
            "the request body is larger than this server accepts (see --max-body)",
        )
    };
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<usize>().ok());
    if declared.is_some_and(|n| n > DRAINED) {
        return Err((too_large(), false));
    }
    let mut body = request.into_body().into_data_stream();
    let mut kept = Vec::with_capacity(declared.unwrap_or(0).min(limit));
    let mut read = 0usize;
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|e| {
            (
                ApiError::bad_request(ErrorCode::UnreadableBody, e.to_string()),
                false,
            )
        })?;
        read += chunk.len();
        if read > DRAINED {
            return Err((too_large(), false));
        }
        if read <= limit {
            kept.extend_from_slice(&chunk);
        }
    }
    if read > limit {
        return Err((too_large(), true));
    }
    Ok(Bytes::from(kept))
}

/// Reads every request's body before its handler runs, so that an answer
/// given without looking at the body (a 401 for a missing key, a 415, a 404)
/// still leaves the connection ready for the client's next request: a body
/// left unread makes the server drop a kept-alive connection, and a client
/// that sends its next request on it gets no answer. A body over the limit is
/// answered 413 once read; one declared too large to read says `Connection:
/// close`.
pub async fn read_first(request: Request, next: Next) -> Response {
    let has_body = request.headers().contains_key(header::TRANSFER_ENCODING)
        || request
            .headers()
            .get(header::CONTENT_LENGTH)
            .is_some_and(|n| n.as_bytes() != b"0");
    if !has_body {
        return next.run(request).await;
    }
    let limit = request
        .extensions()
        .get::<MaxBody>()
        .map_or(usize::MAX, |m| m.0);
    let (parts, body) = request.into_parts();
    match read_within(Request::from_parts(parts.clone(), body), limit).await {
        Ok(bytes) => {
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
        Err((error, drained)) => {
            let mut response = error.into_response();
            if !drained {
                response
                    .headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            response
        }
    }
}

/// A JSON request body, parsed but not yet interpreted.
pub struct JsonBody(pub Value);

impl<S: Send + Sync> FromRequest<S> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, _: &S) -> Result<Self, ApiError> {
        let content_type = request
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let essence = content_type.split(';').next().unwrap_or("").trim();
        if !essence.eq_ignore_ascii_case("application/json") {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                ErrorCode::UnsupportedMediaType,
                format!(
                    "send the body as JSON with `Content-Type: application/json` (got `{}`)",
                    if content_type.is_empty() {
                        "nothing"
                    } else {
                        content_type
                    }
                ),
            ));
        }
        // Already read whole, within the limit, by `read_first`.
        let bytes = axum::body::to_bytes(request.into_body(), usize::MAX)
            .await
            .map_err(|e| ApiError::bad_request(ErrorCode::UnreadableBody, e.to_string()))?;
        let value = serde_json::from_slice::<Value>(&bytes).map_err(|e| {
            ApiError::bad_request(
                ErrorCode::MalformedJson,
                format!(
                    "the body is not valid JSON: {e} (line {}, column {})",
                    e.line(),
                    e.column()
                ),
            )
        })?;
        Ok(JsonBody(value))
    }
}

/// The body as an object, or a 422 naming what it is instead.
pub fn object<'a>(value: &'a Value, path: &str) -> Result<&'a Map<String, Value>, Detail> {
    value.as_object().ok_or_else(|| {
        Detail::new(
            path,
            format!("expected a JSON object, found {}", kind_of(value)),
        )
    })
}

/// Problems for fields outside `allowed` and for `required` fields missing.
pub fn check_fields(
    object: &Map<String, Value>,
    path: &str,
    allowed: &[&str],
    required: &[&str],
) -> Vec<Detail> {
    let mut details: Vec<Detail> = object
        .keys()
        .filter(|k| !allowed.contains(&k.as_str()))
        .map(|k| {
            Detail::new(
                format!("{path}/{}", k.replace('~', "~0").replace('/', "~1")),
                format!(
                    "unknown field `{k}`; expected one of: {}",
                    allowed.join(", ")
                ),
            )
        })
        .collect();
    details.extend(
        required
            .iter()
            .filter(|k| !object.contains_key(**k))
            .map(|k| Detail::new(format!("{path}/{k}"), format!("`{k}` is required"))),
    );
    details
}

/// An optional string field, or a problem when it has another type.
pub fn optional_string(
    object: &Map<String, Value>,
    path: &str,
    field: &str,
) -> Result<Option<String>, Detail> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(Detail::new(
            format!("{path}/{field}"),
            format!("expected a string, found {}", kind_of(other)),
        )),
    }
}

/// "a number", "an array", ... for messages.
pub fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
