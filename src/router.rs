//! A small client-side router over the History API: the URL holds where the
//! reviewer is (path and query), links navigate without reloading, and the back
//! button works. Four routes do not need a router framework (leptos_router pulls
//! in a URL parser with IDNA tables: about 40 KB brotli of the budget).
//!
//! The app may be served under a sub-path (`/countersign/`, set at build time:
//! `scripts/rebase-dist.mjs` writes it into index.html as
//! `<meta name="countersign-base">`). Past this module every path is the app's
//! own, starting at `/`: [`Location`] strips the base as it reads the address,
//! [`href`] and [`Location::navigate`] put it back.

use leptos::ev;
use leptos::prelude::*;
use std::sync::OnceLock;
use wasm_bindgen::JsCast;

/// The path the app is served under: `/`, or e.g. `/countersign/` (always
/// starting and ending with `/`), read once from the page.
pub fn base() -> &'static str {
    static BASE: OnceLock<String> = OnceLock::new();
    BASE.get_or_init(|| {
        crate::browser::meta("countersign-base")
            .and_then(|meta| meta.get_attribute("content"))
            .filter(|base| base.starts_with('/') && base.ends_with('/'))
            .unwrap_or_else(|| "/".to_owned())
    })
}

/// The address of the app's `path` (which starts with `/`), for a link.
pub fn href(path: &str) -> String {
    based(base(), path)
}

fn based(base: &str, path: &str) -> String {
    format!("{base}{}", path.trim_start_matches('/'))
}

/// The app's own path of the address `pathname`; `None` when it is not under
/// `base` (another site on the same host).
fn app_path<'a>(base: &str, pathname: &'a str) -> Option<&'a str> {
    if pathname.len() + 1 == base.len() && base.starts_with(pathname) {
        return Some("/");
    }
    let rest = pathname.strip_prefix(base.trim_end_matches('/'))?;
    rest.starts_with('/').then_some(rest)
}

/// A screen of the app, parsed from the path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `/`
    Inbox,
    /// `/reviews/:confirm_id`
    Review(String),
    /// `/import`
    Import,
    /// `/settings`
    Settings,
    /// `/grants`
    Grants,
    /// `/pair` (the pairing code is in the fragment)
    Pair,
    /// Anything else.
    NotFound,
}

impl Route {
    /// The route of a path.
    pub fn parse(path: &str) -> Route {
        let trimmed = path.trim_end_matches('/');
        match trimmed {
            "" => Route::Inbox,
            "/import" => Route::Import,
            "/settings" => Route::Settings,
            "/grants" => Route::Grants,
            "/pair" => Route::Pair,
            _ => match trimmed.strip_prefix("/reviews/") {
                Some(id) if !id.is_empty() && !id.contains('/') => Route::Review(decode(id)),
                _ => Route::NotFound,
            },
        }
    }
}

/// Where the app is: reactive path and query string (without `?`).
#[derive(Clone, Copy)]
pub struct Location {
    /// `window.location.pathname` without the base: the app's own path.
    pub path: RwSignal<String>,
    /// `window.location.search` without the `?`.
    pub query: RwSignal<String>,
}

impl Location {
    /// The value of query parameter `key`, decoded.
    pub fn param(&self, key: &str) -> Option<String> {
        self.query.with(|q| {
            q.split('&')
                .filter_map(|pair| pair.split_once('=').or(Some((pair, ""))))
                .find(|(k, _)| decode(k) == key)
                .map(|(_, v)| decode(v))
        })
    }

    /// Goes to the app's `url` (path and query, or a query alone); `replace`
    /// keeps the history entry.
    pub fn navigate(&self, url: &str, replace: bool) {
        if let Some(history) = web_sys::window().and_then(|w| w.history().ok()) {
            let state = wasm_bindgen::JsValue::NULL;
            let url = if url.starts_with('/') {
                href(url)
            } else {
                url.to_owned()
            };
            let _ = if replace {
                history.replace_state_with_url(&state, "", Some(&url))
            } else {
                history.push_state_with_url(&state, "", Some(&url))
            };
        }
        let path_changed = self.sync();
        if path_changed {
            if let Some(w) = web_sys::window() {
                w.scroll_to_with_x_and_y(0.0, 0.0);
            }
        }
    }

    /// Reads the browser's location into the signals; whether the path changed.
    fn sync(&self) -> bool {
        let Some(location) = web_sys::window().map(|w| w.location()) else {
            return false;
        };
        let pathname = location.pathname().unwrap_or_else(|_| "/".into());
        let path = app_path(base(), &pathname).unwrap_or(&pathname).to_owned();
        let query = location
            .search()
            .unwrap_or_default()
            .trim_start_matches('?')
            .to_owned();
        let changed = self.path.with_untracked(|p| *p != path);
        if changed {
            self.path.set(path);
        }
        if self.query.with_untracked(|q| *q != query) {
            self.query.set(query);
        }
        changed
    }
}

/// Creates the location, follows the back and forward buttons, and turns clicks
/// on same-origin links into in-app navigation. Provided as context.
pub fn provide_location() -> Location {
    let location = Location {
        path: RwSignal::new(String::new()),
        query: RwSignal::new(String::new()),
    };
    location.sync();
    provide_context(location);
    let popstate = window_event_listener(ev::popstate, move |_| {
        location.sync();
    });
    let clicks = window_event_listener(ev::click, move |event| {
        if event.default_prevented()
            || event.button() != 0
            || event.ctrl_key()
            || event.meta_key()
            || event.shift_key()
            || event.alt_key()
        {
            return;
        }
        let anchor = event
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|el| el.closest("a[href]").ok().flatten())
            .and_then(|el| el.dyn_into::<web_sys::HtmlAnchorElement>().ok());
        let Some(anchor) = anchor else { return };
        let same_origin =
            web_sys::window().and_then(|w| w.location().origin().ok()) == Some(anchor.origin());
        let pathname = anchor.pathname();
        let Some(path) = app_path(base(), &pathname).filter(|_| same_origin) else {
            return;
        };
        // `rel="external"`: a page of the server's own (sign-in), not a screen.
        let external = anchor
            .get_attribute("rel")
            .is_some_and(|rel| rel.split_whitespace().any(|r| r == "external"));
        if !anchor.target().is_empty()
            || anchor.has_attribute("download")
            || anchor.hash().len() > 1
            || external
        {
            return;
        }
        event.prevent_default();
        location.navigate(&format!("{path}{}", anchor.search()), false);
    });
    on_cleanup(move || {
        popstate.remove();
        clicks.remove();
    });
    location
}

/// The location provided by [`provide_location`].
pub fn use_location() -> Location {
    expect_context::<Location>()
}

/// Settings, remembering where the reviewer was going (`/settings?next=…`),
/// for a desk that must be connected first.
pub fn settings_then(path: &str, query: &str) -> String {
    let next = if query.is_empty() {
        path.to_owned()
    } else {
        format!("{path}?{query}")
    };
    if next == "/" || Route::parse(path) == Route::Settings {
        return "/settings".to_owned();
    }
    let encoded: String = js_sys::encode_uri_component(&next).into();
    format!("/settings?next={encoded}")
}

/// Where connecting leads: the app path `next` names, else the inbox. Only
/// a path of this app is followed (never `//host` or another scheme), and
/// never Settings again.
pub fn after_connect(next: Option<&str>) -> String {
    next.filter(|n| n.starts_with('/') && !n.starts_with("//") && !n.starts_with("/\\"))
        .filter(|n| Route::parse(n.split('?').next().unwrap_or(n)) != Route::Settings)
        .unwrap_or("/")
        .to_owned()
}

/// Where signing in leads, as an app path: where connecting would (the page
/// `?next=` names), or Settings itself when it came with a task of its own
/// (`/settings?slack=…`, a Slack account to link), else the inbox.
pub fn after_sign_in(path: &str, query: &str) -> String {
    let on_settings = Route::parse(path) == Route::Settings;
    let next = query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(k, _)| *k == "next")
        .map(|(_, v)| decode(v));
    match next {
        Some(next) => after_connect(Some(&next)),
        None if on_settings && !query.is_empty() => format!("{path}?{query}"),
        None if on_settings => "/".to_owned(),
        None if query.is_empty() => path.to_owned(),
        None => format!("{path}?{query}"),
    }
}

/// Percent-decodes a URL component (`+` counts as a space, as in forms).
fn decode(text: &str) -> String {
    let text = text.replace('+', " ");
    js_sys::decode_uri_component(&text)
        .ok()
        .and_then(|s| s.as_string())
        .unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::*;

    wasm_bindgen_test_configure!(run_in_browser);

    #[wasm_bindgen_test]
    fn connecting_returns_to_the_link_that_brought_the_reviewer() {
        let id = "/reviews/c0ffee00-0000-4000-8000-000000002004";
        let settings = settings_then(id, "");
        assert_eq!(
            settings,
            "/settings?next=%2Freviews%2Fc0ffee00-0000-4000-8000-000000002004"
        );
        assert_eq!(settings_then("/", ""), "/settings");
        assert_eq!(
            settings_then("/", "status=all"),
            "/settings?next=%2F%3Fstatus%3Dall"
        );
        assert_eq!(after_connect(Some(id)), id);
        assert_eq!(after_connect(Some("/?status=all")), "/?status=all");
        assert_eq!(after_connect(None), "/");
        for elsewhere in [
            "//evil.example/x",
            "https://evil.example/",
            "/\\evil.example",
            "/settings",
            "reviews/x",
        ] {
            assert_eq!(after_connect(Some(elsewhere)), "/", "{elsewhere}");
        }
    }

    #[wasm_bindgen_test]
    fn signing_in_returns_to_the_page_that_asked_for_it() {
        let id = "/reviews/c0ffee00-0000-4000-8000-000000002004";
        let settings = settings_then(id, "");
        let (path, query) = settings.split_once('?').unwrap();
        assert_eq!(after_sign_in(path, query), id);
        assert_eq!(
            after_sign_in("/settings", "slack=slk_0a1b"),
            "/settings?slack=slk_0a1b"
        );
        assert_eq!(after_sign_in("/settings", ""), "/");
        assert_eq!(after_sign_in("/settings", "next=%2F%2Fevil.example"), "/");
        assert_eq!(after_sign_in(id, ""), id);
    }

    #[wasm_bindgen_test]
    fn routes_parse() {
        assert_eq!(Route::parse("/"), Route::Inbox);
        assert_eq!(Route::parse(""), Route::Inbox);
        assert_eq!(Route::parse("/import/"), Route::Import);
        assert_eq!(Route::parse("/settings"), Route::Settings);
        assert_eq!(
            Route::parse("/reviews/abc%20d"),
            Route::Review("abc d".into())
        );
        assert_eq!(Route::parse("/reviews/"), Route::NotFound);
        assert_eq!(Route::parse("/reviews/a/b"), Route::NotFound);
        assert_eq!(Route::parse("/nope"), Route::NotFound);
    }

    #[wasm_bindgen_test]
    fn paths_move_under_the_base_and_back() {
        assert_eq!(based("/", "/settings"), "/settings");
        assert_eq!(based("/countersign/", "/settings"), "/countersign/settings");
        assert_eq!(based("/countersign/", "/"), "/countersign/");
        assert_eq!(app_path("/", "/reviews/x"), Some("/reviews/x"));
        assert_eq!(
            app_path("/countersign/", "/countersign/reviews/x"),
            Some("/reviews/x")
        );
        assert_eq!(app_path("/countersign/", "/countersign/"), Some("/"));
        assert_eq!(app_path("/countersign/", "/countersign"), Some("/"));
        assert_eq!(app_path("/countersign/", "/countersigned/x"), None);
        assert_eq!(app_path("/countersign/", "/settings"), None);
        // Served at the root, this page's base is the root.
        assert_eq!(base(), "/");
        assert_eq!(href("/grants"), "/grants");
    }

    #[wasm_bindgen_test]
    fn query_values_are_decoded() {
        let location = Location {
            path: RwSignal::new("/".into()),
            query: RwSignal::new("q=db%20admin&type=plan&x".into()),
        };
        assert_eq!(location.param("q").as_deref(), Some("db admin"));
        assert_eq!(location.param("type").as_deref(), Some("plan"));
        assert_eq!(location.param("x").as_deref(), Some(""));
        assert_eq!(location.param("missing"), None);
    }
}
