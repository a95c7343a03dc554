//! Signing in: `GET /auth/login` sends the browser to the identity provider
//! (binding the attempt to this browser with a short-lived cookie), `GET
//! /auth/callback` takes the provider's answer once and sets the session
//! cookie, `POST /auth/logout` ends the session. Under `/api/v1`: `GET
//! /session` says who is signed in (and how one signs in), `GET /sessions`
//! and `POST /sessions/{id}/revoke` list and end the person's sessions.

use super::auth::{Caller, SESSION_COOKIE};
use super::error::{ApiError, ErrorCode};
use super::AppState;
use crate::signin::provider::ProviderError;
use crate::signin::{Answer, SignInError};
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::Json;
use cookie::{Cookie, SameSite};
use serde::{Deserialize, Serialize};

/// The cookie binding a sign-in under way to the browser that started it.
const ATTEMPT_COOKIE: &str = "__Host-countersign_signin";

/// Where the browser goes once signed in (`?return_to=` of `/auth/login`),
/// for the sign-in under way.
const RETURN_COOKIE: &str = "__Host-countersign_return";

/// Beside the session cookie, one the app can read: a hint to open on the
/// session without asking first. It proves nothing; the server never reads it.
const SIGNED_IN_HINT: &str = "countersign_signed_in";

/// A `__Host-` cookie of the desk (Secure, whole site, HttpOnly but for the
/// hint), for `max_age` if given, else for the browser's session.
pub(super) fn cookie(name: &str, value: String, max_age: Option<chrono::Duration>) -> HeaderValue {
    let mut built = Cookie::build((name, value))
        .path("/")
        .secure(true)
        .http_only(name != SIGNED_IN_HINT)
        // Lax for the attempt: the provider's redirect back is a cross-site navigation.
        .same_site(if name == ATTEMPT_COOKIE || name == RETURN_COOKIE {
            SameSite::Lax
        } else {
            SameSite::Strict
        });
    if let Some(age) = max_age {
        built = built.max_age(cookie::time::Duration::seconds(age.num_seconds()));
    }
    HeaderValue::from_str(&built.build().to_string()).unwrap_or(HeaderValue::from_static(""))
}

/// A cookie's value from the request's `Cookie` headers.
pub fn cookie_value(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(Cookie::split_parse)
        .filter_map(Result::ok)
        .find(|c| c.name() == name)
        .map(|c| c.value().to_owned())
}

fn not_configured() -> Response {
    page(
        StatusCode::NOT_FOUND,
        "Sign-in is not set up here",
        "This server has no identity provider configured (serve --sign-in). Reviewers connect with a reviewer key in Settings.",
        None,
    )
}

/// `?provider=&return_to=` of `/auth/login`.
#[derive(Deserialize)]
pub struct LoginQuery {
    provider: Option<String>,
    return_to: Option<String>,
}

/// `path` if it is a page of this desk a browser may be sent back to: a
/// path on this origin (never `//host` or `/\host`, which browsers read as
/// another site), in characters a cookie holds as they are.
fn local_path(path: &str) -> Option<&str> {
    let local = path.starts_with('/')
        && !path.starts_with("//")
        && !path.starts_with("/auth/")
        && path.len() <= 2048
        && path
            .bytes()
            .all(|b| b.is_ascii_graphic() && !matches!(b, b'"' | b',' | b';' | b'\\'));
    local.then_some(path)
}

/// `GET /auth/login`: to the provider, with a fresh state, nonce and PKCE.
pub async fn login(State(state): State<AppState>, Query(query): Query<LoginQuery>) -> Response {
    let Some(sign_in) = &state.sign_in else {
        return not_configured();
    };
    let browser = match crate::store::keys::random_hex(24) {
        Ok(b) => b,
        Err(e) => return ApiError::internal(e).into_response(),
    };
    match sign_in
        .begin(&state.db, query.provider.as_deref(), &browser)
        .await
    {
        Ok(url) => {
            let minutes = Some(chrono::Duration::minutes(10));
            let bound = cookie(ATTEMPT_COOKIE, browser, minutes);
            let mut response = Redirect::to(&url).into_response();
            response.headers_mut().append(header::SET_COOKIE, bound);
            if let Some(path) = query.return_to.as_deref().and_then(local_path) {
                let back = cookie(RETURN_COOKIE, path.to_owned(), minutes);
                response.headers_mut().append(header::SET_COOKIE, back);
            }
            response
        }
        Err(e) => failed(&e, query.provider.as_deref()),
    }
}

/// What the provider sends the browser back with.
#[derive(Deserialize)]
pub struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
    iss: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

/// `GET /auth/callback`: the provider's answer, taken once; sets the session cookie.
pub async fn callback(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(answer): Query<CallbackQuery>,
) -> Response {
    let Some(sign_in) = &state.sign_in else {
        return not_configured();
    };
    let clear_attempt = cookie(
        ATTEMPT_COOKIE,
        String::new(),
        Some(chrono::Duration::zero()),
    );
    if let Some(error) = &answer.error {
        // The state is taken anyway, so the attempt cannot be finished later.
        if let Some(s) = &answer.state {
            let _ = state.db.take_sign_in(s).await;
        }
        let why = answer.error_description.as_deref().unwrap_or(error);
        let mut response = page(
            StatusCode::FORBIDDEN,
            "Sign-in did not finish",
            &format!("The identity provider said: {why}."),
            Some("/auth/login"),
        );
        response
            .headers_mut()
            .append(header::SET_COOKIE, clear_attempt);
        return response;
    }
    let (Some(code), Some(state_param)) = (&answer.code, &answer.state) else {
        return page(
            StatusCode::BAD_REQUEST,
            "Sign-in did not finish",
            "The provider's answer has no code or state. Start again.",
            Some("/auth/login"),
        );
    };
    let user_agent = headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok());
    let browser = cookie_value(&headers, ATTEMPT_COOKIE);
    let finished = sign_in
        .finish(
            &state.db,
            Answer {
                code,
                state: state_param,
                iss: answer.iss.as_deref(),
                user_agent,
            },
            browser.as_deref(),
        )
        .await;
    let mut response = match finished {
        Ok(opened) => {
            let length = Some(sign_in.config.session_length);
            let session = cookie(SESSION_COOKIE, opened.secret, length);
            let hint = cookie(SIGNED_IN_HINT, "1".into(), length);
            // Checked again: the cookie is the browser's to change.
            let back = cookie_value(&headers, RETURN_COOKIE);
            let to = back.as_deref().and_then(local_path).unwrap_or("/");
            let mut response = Redirect::to(to).into_response();
            response.headers_mut().append(header::SET_COOKIE, session);
            response.headers_mut().append(header::SET_COOKIE, hint);
            response
        }
        Err(e) => failed(&e, None),
    };
    let clear_return = cookie(RETURN_COOKIE, String::new(), Some(chrono::Duration::zero()));
    let headers = response.headers_mut();
    headers.append(header::SET_COOKIE, clear_attempt);
    headers.append(header::SET_COOKIE, clear_return);
    response
}

fn failed(e: &SignInError, provider: Option<&str>) -> Response {
    tracing::warn!("sign-in refused: {e}");
    let status = match e {
        SignInError::Provider(ProviderError::Unreachable { .. }) => StatusCode::BAD_GATEWAY,
        SignInError::Db(_) => StatusCode::INTERNAL_SERVER_ERROR,
        SignInError::UnknownProvider(_) => StatusCode::NOT_FOUND,
        _ => StatusCode::FORBIDDEN,
    };
    let again = match provider {
        Some(id) => format!("/auth/login?provider={id}"),
        None => "/auth/login".to_owned(),
    };
    let message = match e {
        SignInError::Db(_) => {
            "The server failed to record the sign-in; nothing was kept.".to_owned()
        }
        other => format!("{other}."),
    };
    page(status, "Sign-in did not finish", &message, Some(&again))
}

/// A small page of its own: the callback's outcome is shown before the app loads.
fn page(status: StatusCode, title: &str, message: &str, again: Option<&str>) -> Response {
    let escape = |text: &str| {
        text.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
    };
    let again = again.map_or(String::new(), |href| {
        format!(
            r#"<p><a href="{}">Sign in again</a> · <a href="/">Open the desk</a></p>"#,
            escape(href)
        )
    });
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>{title} · Countersign</title></head><body><main><h1>{title}</h1><p role=\"alert\">{}</p>{again}</main></body></html>",
        escape(message),
        title = escape(title),
    );
    (
        status,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        html,
    )
        .into_response()
}

/// `POST /auth/logout` (a session, checked against cross-site requests): ends it.
pub async fn logout(State(state): State<AppState>, caller: Caller) -> Result<Response, ApiError> {
    let Some(session) = caller.session_id() else {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidRequest,
            "signing out ends a session; this request used an API key",
        ));
    };
    state.db.end_session(session, "signed out").await?;
    let mut response = StatusCode::NO_CONTENT.into_response();
    for name in [SESSION_COOKIE, SIGNED_IN_HINT] {
        let gone = cookie(name, String::new(), Some(chrono::Duration::zero()));
        response.headers_mut().append(header::SET_COOKIE, gone);
    }
    Ok(response)
}

/// `GET /api/v1/session`'s answer.
#[derive(Serialize)]
pub struct SessionAnswer {
    /// Whether a session signed this request.
    signed_in: bool,
    /// The providers one may sign in with (empty: sign-in is not set up).
    providers: Vec<ProviderLink>,
    /// Whether reviewer keys are accepted here.
    reviewer_keys: bool,
    /// The session, when signed in.
    #[serde(skip_serializing_if = "Option::is_none")]
    session: Option<SessionNow>,
}

/// A provider's sign-in button.
#[derive(Serialize)]
pub struct ProviderLink {
    id: String,
    name: String,
    login_url: String,
}

/// The signed-in session as the desk shows it.
#[derive(Serialize)]
pub struct SessionNow {
    id: String,
    person: countersign_domain::Person,
    roles: Vec<String>,
    /// Sent back as `X-Countersign-CSRF` with every state-changing request.
    csrf: String,
    expires_at: String,
}

/// `GET /api/v1/session` (no key needed): who is signed in, and how to sign in.
pub async fn current(State(state): State<AppState>, caller: Option<Caller>) -> Json<SessionAnswer> {
    let providers = state.sign_in.as_ref().map_or_else(Vec::new, |s| {
        s.providers()
            .map(|(id, name)| ProviderLink {
                login_url: format!("/auth/login?provider={id}"),
                id: id.to_owned(),
                name: name.to_owned(),
            })
            .collect()
    });
    let session = caller.and_then(|c| c.1).map(|s| SessionNow {
        id: s.id,
        person: s.person,
        roles: s.roles,
        csrf: s.csrf,
        expires_at: s.expires_at,
    });
    Json(SessionAnswer {
        signed_in: session.is_some(),
        providers,
        reviewer_keys: state
            .sign_in
            .as_ref()
            .is_none_or(|s| s.config.reviewer_keys),
        session,
    })
}

/// `GET /api/v1/sessions` (a session): the person's sessions, newest first.
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<serde_json::Value>, ApiError> {
    let person = caller.signed_in_person()?;
    let sessions = state.db.sessions(Some(&person)).await?;
    Ok(Json(serde_json::json!({
        "current": caller.session_id(),
        "sessions": sessions,
    })))
}

/// `POST /api/v1/sessions/{id}/revoke` (a session): ends one of the person's sessions.
pub async fn revoke(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let person = caller.signed_in_person()?;
    let theirs = state
        .db
        .session(&id)
        .await?
        .filter(|s| s.person.issuer == person.issuer && s.person.subject == person.subject);
    match theirs {
        Some(s) if s.ended_at.is_none() => {
            state.db.end_session(&id, "revoked by its person").await?;
            Ok(StatusCode::NO_CONTENT)
        }
        Some(_) => Err(ApiError::new(
            StatusCode::CONFLICT,
            ErrorCode::AlreadyRevoked,
            format!("session {id} has ended already"),
        )),
        None => Err(ApiError::not_found(&format!("session {id}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::local_path;

    #[test]
    fn a_browser_is_sent_back_only_to_a_page_of_this_desk() {
        for back in [
            "/settings?slack=slk_0a1b",
            "/reviews/c0ffee00-0000-4000-8000-000000000001",
            "/",
        ] {
            assert_eq!(local_path(back), Some(back));
        }
        for elsewhere in [
            "https://evil.example/",
            "//evil.example/",
            "/\\evil.example/",
            "/auth/callback?code=x",
            "/a b",
            "/a;b",
            "settings",
            "",
        ] {
            assert_eq!(local_path(elsewhere), None, "{elsewhere}");
        }
    }
}
