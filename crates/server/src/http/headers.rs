//! Security headers on every response. The app's pages carry the
//! Content-Security-Policy its build put in `index.html` (see
//! `scripts/harden-dist.mjs`), plus `frame-ancestors 'none'`, which only a
//! header can carry; API answers get a policy that allows nothing.

use axum::body::Body;
use axum::extract::Request;
use axum::http::header::{self, HeaderMap, HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;

/// The policy of API answers: JSON is never a document that runs anything.
const API_POLICY: &str = "default-src 'none'; frame-ancestors 'none'";

/// The Content-Security-Policy of the app's pages, from the meta tag of its
/// `index.html`, with framing forbidden; None when the build has none.
pub fn app_policy(index_html: &str) -> Option<HeaderValue> {
    let start = index_html.find(r#"http-equiv="Content-Security-Policy""#)?;
    let tag_end = start + index_html[start..].find('>')?;
    let tag = &index_html[start..tag_end];
    let content = tag.split(r#"content=""#).nth(1)?.split('"').next()?;
    HeaderValue::from_str(&format!("{content}; frame-ancestors 'none'")).ok()
}

/// Adds the headers; `policy` is the app's (None: the app is not served or
/// was built without one).
pub async fn add(policy: Option<HeaderValue>, request: Request<Body>, next: Next) -> Response {
    let is_api = request.uri().path().starts_with("/api/");
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    let csp = if is_api {
        Some(HeaderValue::from_static(API_POLICY))
    } else {
        policy
    };
    if let Some(csp) = csp {
        headers.insert(header::CONTENT_SECURITY_POLICY, csp);
    }
    set_fixed(headers);
    response
}

fn set_fixed(headers: &mut HeaderMap) {
    let fixed = [
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::REFERRER_POLICY, "no-referrer"),
        (
            HeaderName::from_static("cross-origin-opener-policy"),
            "same-origin",
        ),
        (
            HeaderName::from_static("permissions-policy"),
            "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
        ),
    ];
    for (name, value) in fixed {
        headers.insert(name, HeaderValue::from_static(value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_comes_from_the_meta_tag_with_framing_forbidden() {
        let html = r#"<head><meta http-equiv="Content-Security-Policy" content="default-src 'self'; script-src 'self'" /></head>"#;
        assert_eq!(
            app_policy(html).unwrap(),
            "default-src 'self'; script-src 'self'; frame-ancestors 'none'"
        );
        assert!(app_policy("<head></head>").is_none());
    }
}
