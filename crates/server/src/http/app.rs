//! The built app as the server serves it: from a folder (`--app-dir`, for
//! development) or from the files a release build carries (`build.rs`).
//! Files are served as they are, with their brotli or gzip copy when the
//! browser takes it; `index.html` answers every other path without a file
//! extension (the app's own routes, e.g. `/reviews/<id>`), marked so the app
//! knows a Countersign server serves it and opens on this server. The `/`
//! of a reviewer the server knows (signed in, or a key remembered on the
//! device: `page_key`) holds the inbox's first page and the stylesheet as
//! well, and their `/reviews/<id>` that review, so a slow link draws it in
//! one round trip (the app then takes over, as from the boot script's
//! drawing).

use super::auth::{Caller, SESSION_COOKIE};
use super::page_key::PAGE_KEY_COOKIE;
use super::signin::cookie_value;
use super::AppState;
use crate::store::keys::KeyKind;
use axum::body::Bytes;
use axum::extract::{FromRequestParts, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use sha2::{Digest, Sha256};
use std::path::Path;
use std::sync::Arc;
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

/// The app's routes over `state`, and its `index.html` as served (for its
/// Content-Security-Policy).
pub fn router(source: Source, state: AppState, desk: &str) -> Result<(Router, Bytes), String> {
    let (index, drawn) = pages(&source)?;
    let index = Bytes::from(index);
    let home = Arc::new(Home {
        index: index.clone(),
        drawn,
        state,
        desk: desk.to_owned(),
    });
    let pages = Router::new()
        .route("/", get(home_page))
        .route("/index.html", get(home_page))
        .route("/reviews/{id}", get(review_page))
        .with_state(home);
    let page = index.clone();
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

/// What `/` answers.
struct Home {
    /// `index.html` as served to everyone.
    index: Bytes,
    /// The page a known reviewer's inbox is drawn into, when the build's
    /// stylesheet could be put in it.
    drawn: Option<DrawnPage>,
    state: AppState,
    /// The address reviewers open the desk at (named in the drawing).
    desk: String,
}

/// `index.html` with its stylesheet inline (allowed by its hash), cut where
/// the drawn inbox goes: at the start of the body, which is marked as
/// painting (the app's own nodes stay hidden until the drawing gives way).
#[derive(Debug)]
struct DrawnPage {
    head: String,
    tail: String,
}

/// `/` and `/index.html`: the page, with the inbox's first page drawn in it
/// at `/` for a reviewer the server knows. That page is theirs alone: never stored by a
/// cache. Any failure to draw it serves the usual page.
async fn home_page(State(home): State<Arc<Home>>, request: Request) -> Response {
    let known = if request.uri().path() == "/" {
        known_reviewer(&home, request).await
    } else {
        None
    };
    let drawn = match known {
        Some((_, server)) => drawing(super::reviews::first_page(&home.state, server, "/").await),
        None => None,
    };
    page(&home, drawn)
}

/// `/reviews/{id}`: the page, with the review drawn in it for a reviewer the
/// server knows (a link from Slack or an e-mail opens it readable in one round
/// trip), as [`home_page`] does the inbox.
async fn review_page(State(home): State<Arc<Home>>, request: Request) -> Response {
    let uri = request.uri();
    let id = uri
        .path()
        .strip_prefix("/reviews/")
        .and_then(|id| countersign_domain::MplpId::parse(id).ok());
    // Opened from an e-mail's link (its `mail` token: only the app reads it).
    let from_mail = uri
        .query()
        .is_some_and(|q| super::query::Params::find(q, "mail").is_some());
    let drawn = match (id, known_reviewer(&home, request).await) {
        (Some(id), Some((caller, server))) => drawing(
            super::reviews::review_page(&home.state, &caller, id, server, "/", from_mail)
                .await
                .map(Some),
        ),
        _ => None,
    };
    page(&home, drawn)
}

/// A drawing, or None when it could not be drawn (logged when the server
/// failed; an address of no review is the app's to say): the page then loads
/// as usual and the app says what is wrong.
fn drawing(drawn: Result<Option<String>, super::error::ApiError>) -> Option<String> {
    drawn.unwrap_or_else(|e| {
        if e.status().is_server_error() {
            tracing::warn!("the reviewer's page was served without its drawing: {e}");
        }
        None
    })
}

/// The page as served: with `drawn` in it (private to its reviewer, never
/// cached), or as built.
fn page(home: &Home, drawn: Option<String>) -> Response {
    let html = HeaderValue::from_static("text/html; charset=utf-8");
    let by_cookie = HeaderValue::from_static("cookie");
    let drawn = drawn
        .zip(home.drawn.as_ref())
        .map(|(drawing, page)| format!("{}{drawing}{}", page.head, page.tail));
    match drawn {
        Some(page) => (
            [
                (header::CONTENT_TYPE, html),
                (
                    header::CACHE_CONTROL,
                    HeaderValue::from_static("private, no-store"),
                ),
                (header::VARY, by_cookie),
            ],
            page,
        )
            .into_response(),
        None => (
            [(header::CONTENT_TYPE, html), (header::VARY, by_cookie)],
            home.index.clone(),
        )
            .into_response(),
    }
}

/// The reviewer behind the request's session cookie, or else its remembered
/// key's cookie (`page_key`), with the desk's server as the drawings name
/// it; None for anyone else, or when the build's page cannot hold a drawing.
async fn known_reviewer(home: &Home, request: Request) -> Option<(Caller, &str)> {
    home.drawn.as_ref()?;
    let state = &home.state;
    let (mut parts, _) = request.into_parts();
    let caller = if cookie_value(&parts.headers, SESSION_COOKIE).is_some() {
        <Caller as FromRequestParts<AppState>>::from_request_parts(&mut parts, state).await
    } else {
        Caller::of_key(state, &cookie_value(&parts.headers, PAGE_KEY_COOKIE)?).await
    };
    let caller = caller.ok()?;
    caller.require(KeyKind::Reviewer).ok()?;
    let server = state
        .sign_in
        .as_ref()
        .map_or(home.desk.as_str(), |s| s.config.origin.as_str());
    Some((caller, server))
}

/// `index.html` as served (marked), and the page a reviewer's inbox is drawn into when
/// the build has a stylesheet that can be inlined under its policy.
fn pages(source: &Source) -> Result<(Vec<u8>, Option<DrawnPage>), String> {
    let index = match source {
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
    let text = marked(&index);
    let css = |href: &str| match source {
        Source::Dir(dir) => std::fs::read(dir.join(href.trim_start_matches('/'))).ok(),
        Source::Embedded => file(href).map(<[u8]>::to_vec),
    };
    Ok(match inlined(&text, css) {
        Some((index, page)) => (index.into_bytes(), Some(page)),
        None => (text.into_bytes(), None),
    })
}

/// `index` with its stylesheet's hash allowed by its policy, and the
/// page a reviewer's inbox is drawn into; None when the page has no stylesheet link,
/// its file cannot be read as text, or the policy's `style-src` is not the
/// build's own.
fn inlined(index: &str, read: impl Fn(&str) -> Option<Vec<u8>>) -> Option<(String, DrawnPage)> {
    let start = index.find(r#"<link rel="stylesheet" href=""#)?;
    let link = &index[start..start + index[start..].find('>')? + 1];
    let href = link.split(r#"href=""#).nth(1)?.split('"').next()?;
    let css = String::from_utf8(read(href)?).ok()?;
    if css.contains("</") {
        return None;
    }
    let own = "style-src 'self'";
    let index = if index.contains("Content-Security-Policy") {
        let hash = STANDARD.encode(Sha256::digest(css.as_bytes()));
        let allowed = format!("{own} 'sha256-{hash}'");
        index
            .contains(&format!("{own};"))
            .then(|| index.replacen(&format!("{own};"), &format!("{allowed};"), 1))?
    } else {
        index.to_owned()
    };
    let page = index.replacen(link, &format!("<style>{css}</style>"), 1);
    let (head, tail) = page.split_once("<body>")?;
    // The boot script runs after the drawing is parsed: a script met first holds the parser.
    let (head, tail) = match head.find("<script>").zip(head.find("</script>")) {
        Some((open, close)) if open < close => {
            let script = &head[open..close + "</script>".len()];
            let tail = tail.replacen("</body>", &format!("{script}</body>"), 1);
            (head.replacen(script, "", 1), tail)
        }
        _ => (head.to_owned(), tail.to_owned()),
    };
    let page = DrawnPage {
        head: format!(r#"{head}<body class="painting">"#),
        tail,
    };
    Some((index, page))
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
fn marked(index: &[u8]) -> String {
    let text = String::from_utf8_lossy(index);
    match text.find("<head>") {
        Some(at) => {
            let at = at + "<head>".len();
            format!("{}{SERVED_MARK}{}", &text[..at], &text[at..])
        }
        None => text.into_owned(),
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
        let text = marked(b"<!doctype html><html><head><title>x</title></head></html>");
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
        let refused = pages(&Source::Dir(&dir)).err().unwrap();
        assert!(
            refused.contains("under /countersign/ (COUNTERSIGN_BASE)"),
            "{refused}"
        );
        std::fs::write(dir.join("index.html"), page("/")).unwrap();
        assert!(pages(&Source::Dir(&dir)).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    const BUILT: &str = r#"<html><head><meta http-equiv="Content-Security-Policy" content="default-src 'self'; style-src 'self'; img-src 'self'" /><script>boot()</script><link rel="stylesheet" href="/main-0123456789abcdef.css" integrity="sha384-x"/></head><body></body></html>"#;

    #[test]
    fn the_drawn_page_holds_the_stylesheet_its_policy_allows_by_hash() {
        let css = "body{color:red}";
        let read =
            |href: &str| (href == "/main-0123456789abcdef.css").then(|| css.as_bytes().to_vec());
        let (index, page) = inlined(BUILT, read).unwrap();
        let hash = STANDARD.encode(Sha256::digest(css.as_bytes()));
        let allowed = format!("style-src 'self' 'sha256-{hash}'; img-src");
        assert!(index.contains(&allowed), "{index}");
        assert!(index.contains(r#"<link rel="stylesheet" href="/main-0123456789abcdef.css""#));
        assert!(page.head.contains(&allowed), "{page:?}");
        assert!(
            page.head.contains("<style>body{color:red}</style></head>"),
            "{page:?}"
        );
        assert!(!page.head.contains("<link rel=\"stylesheet\""), "{page:?}");
        assert!(
            page.head.ends_with(r#"<body class="painting">"#),
            "{page:?}"
        );
        // The boot script comes after the drawing, which it would otherwise hold up.
        assert!(!page.head.contains("<script>"), "{page:?}");
        assert_eq!(page.tail, "<script>boot()</script></body></html>");
        assert!(index.contains("<script>boot()</script><link"), "{index}");
    }

    #[test]
    fn no_drawn_page_where_the_stylesheet_cannot_be_inlined() {
        let css = |text: &'static str| move |_: &str| Some(text.as_bytes().to_vec());
        assert!(inlined(BUILT, css("a::after{content:'</style>'}")).is_none());
        assert!(inlined(BUILT, |_: &str| None).is_none());
        let other = BUILT.replace("style-src 'self';", "style-src 'self' https://cdn.test;");
        assert!(inlined(&other, css("body{}")).is_none());
        // No policy at all: nothing to allow, the stylesheet goes in as it is.
        let open = BUILT.replace("http-equiv=\"Content-Security-Policy\"", "name=\"x\"");
        assert!(inlined(&open, css("body{}"))
            .unwrap()
            .1
            .head
            .contains("<style>body{}</style>"));
    }
}
