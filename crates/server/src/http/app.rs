//! The built app as the server serves it: from a folder (`--app-dir`, for
//! development) or from the files a release build carries (`build.rs`).
//! Files are served as they are, with their brotli or gzip copy when the
//! browser takes it; `index.html` answers every other path without a file
//! extension (the app's own routes, e.g. `/reviews/<id>`), marked so the app
//! knows a Countersign server serves it and opens on this server.

use axum::body::Bytes;
use axum::extract::Request;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use std::path::Path;
use tower_http::services::ServeDir;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/app_files.rs"));
}

/// The tag that tells the app a Countersign server serves it (read by the
/// app and by its boot script; a static host's copy has none).
const SERVED_MARK: &str = r#"<meta name="countersign-server" content="same-origin">"#;

/// Where the app's files come from.
pub enum Source<'a> {
    /// A folder holding a build (trunk's `dist/`).
    Dir(&'a Path),
    /// The build this binary carries.
    Embedded,
}

/// Whether this binary carries a built app.
pub fn embedded() -> bool {
    !embedded::FILES.is_empty()
}

/// The app's routes, and its `index.html` as served (for its
/// Content-Security-Policy).
pub fn router(source: Source) -> Result<(Router, Bytes), String> {
    let index = match &source {
        Source::Dir(dir) => std::fs::read(dir.join("index.html")).map_err(|e| {
            format!(
                "no built app in {} ({e}); build it with ./scripts/build-app.sh or leave out --app-dir",
                dir.display()
            )
        })?,
        Source::Embedded => file("/index.html")
            .ok_or("this countersign carries no built app")?
            .to_vec(),
    };
    if let Some(base) = sub_path(&index) {
        return Err(format!(
            "the built app was made for a static host serving it under {base} (COUNTERSIGN_BASE); \
             countersign serves it at /: build it again without COUNTERSIGN_BASE"
        ));
    }
    let index = Bytes::from(marked(&index));
    let page = index.clone();
    let start = {
        let index = index.clone();
        move || {
            let index = index.clone();
            async move { ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], index) }
        }
    };
    let pages = Router::new()
        .route("/", get(start.clone()))
        .route("/index.html", get(start));
    let fallback = move |request: Request| {
        let index = index.clone();
        async move { fallback(&request, index) }
    };
    let router = match source {
        Source::Dir(dir) => {
            // The build writes brotli and gzip copies beside each file (scripts/compress-dist.mjs).
            let files = ServeDir::new(dir)
                .precompressed_br()
                .precompressed_gzip()
                .fallback(tower::service_fn(move |request: Request| {
                    let respond = fallback.clone();
                    async move { Ok::<_, std::convert::Infallible>(respond(request).await) }
                }));
            pages.fallback_service(files)
        }
        Source::Embedded => pages.fallback(move |request: Request| {
            let respond = fallback.clone();
            async move {
                match file(request.uri().path()) {
                    Some(bytes) => embedded_file(request.uri().path(), bytes, request.headers()),
                    None => respond(request).await,
                }
            }
        }),
    };
    Ok((router, page))
}

/// `index.html` for the app's routes (and `/`, `/index.html`), 404 for a
/// missing file, 405 for anything but GET and HEAD.
fn fallback(request: &Request, index: Bytes) -> Response {
    let path = request.uri().path();
    let is_file = path
        .rsplit('/')
        .next()
        .is_some_and(|name| name.contains('.'));
    if request.method() != Method::GET && request.method() != Method::HEAD {
        StatusCode::METHOD_NOT_ALLOWED.into_response()
    } else if is_file {
        (StatusCode::NOT_FOUND, "not found").into_response()
    } else {
        ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], index).into_response()
    }
}

/// The sub-path `index.html` was built for (`scripts/rebase-dist.mjs`), if
/// not `/`.
fn sub_path(index: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(index);
    let (_, rest) = text.split_once(r#"<meta name="countersign-base" content=""#)?;
    let base = rest.split('"').next()?;
    (base != "/").then(|| base.to_owned())
}

/// `index.html` with [`SERVED_MARK`] as the first thing in its head.
fn marked(index: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(index);
    match text.find("<head>") {
        Some(at) => {
            let at = at + "<head>".len();
            format!("{}{SERVED_MARK}{}", &text[..at], &text[at..]).into_bytes()
        }
        None => index.to_vec(),
    }
}

fn file(path: &str) -> Option<&'static [u8]> {
    let files = embedded::FILES;
    files
        .binary_search_by(|(name, _)| (*name).cmp(path))
        .ok()
        .map(|at| files[at].1)
}

/// A carried file, as its brotli or gzip copy when the browser takes it.
fn embedded_file(path: &str, raw: &'static [u8], headers: &HeaderMap) -> Response {
    let accepts = |coding: &str| {
        headers
            .get_all(header::ACCEPT_ENCODING)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .any(|item| {
                let mut parts = item.split(';');
                let name = parts.next().unwrap_or("").trim();
                let refused = parts.any(|p| p.trim().replace(' ', "") == "q=0");
                name == coding && !refused
            })
    };
    let copy = ["br", "gzip"]
        .into_iter()
        .filter(|coding| accepts(coding))
        .find_map(|coding| Some((coding, file(&format!("{path}.{}", ext_of(coding)))?)));
    let mut response = match copy {
        Some((coding, bytes)) => {
            let mut response = bytes.into_response();
            response
                .headers_mut()
                .insert(header::CONTENT_ENCODING, HeaderValue::from_static(coding));
            response
        }
        None => raw.into_response(),
    };
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(content_type(path)),
    );
    headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    response
}

fn ext_of(coding: &str) -> &'static str {
    if coding == "br" {
        "br"
    } else {
        "gz"
    }
}

/// The types a trunk build holds.
fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "wasm" => "application/wasm",
        "css" => "text/css; charset=utf-8",
        "json" => "application/json",
        "webmanifest" => "application/manifest+json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_served_mark_opens_the_head() {
        let page = marked(b"<!doctype html><html><head><title>x</title></head></html>");
        let text = String::from_utf8(page).unwrap();
        assert!(text.starts_with(&format!("<!doctype html><html><head>{SERVED_MARK}<title>")));
    }

    #[test]
    fn a_build_for_a_sub_path_is_refused_with_its_path() {
        let dir = std::env::temp_dir().join(format!("countersign-app-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let page = |base: &str| {
            format!(
                r#"<html><head><meta name="countersign-base" content="{base}" /></head></html>"#
            )
        };
        std::fs::write(dir.join("index.html"), page("/countersign/")).unwrap();
        let refused = router(Source::Dir(&dir)).err().unwrap();
        assert!(
            refused.contains("under /countersign/ (COUNTERSIGN_BASE)"),
            "{refused}"
        );
        std::fs::write(dir.join("index.html"), page("/")).unwrap();
        assert!(router(Source::Dir(&dir)).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
