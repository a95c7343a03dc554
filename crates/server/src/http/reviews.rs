//! The review endpoints: agents create reviews, wait for their outcome and
//! resubmit after a rejection; reviewers list, read and decide. Every rule is
//! the domain crate's (`validate`, `decide`, `resubmit`), as in the browser.

use super::auth::{Caller, ReviewId};
use super::body::JsonBody;
use super::error::{ApiError, Detail, ErrorCode};
use super::input;
use super::query::Params;
use super::AppState;
use crate::store::keys::KeyKind;
use crate::store::Cursor;
use crate::usecases::{
    self, Asked, Decided, DecisionRequest, NotAsked, NotDecided, NotResubmitted,
};
use axum::extract::{RawQuery, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::Json;
use countersign_domain::review::{Resubmission, ResubmitError};
use countersign_domain::toolcall::ToolDecideError;
use countersign_domain::wire::{Answer, Outcome, Refusal, Requesters, ReviewQuery, SummaryPage};
use countersign_domain::{Channel, DecideError, MplpId};
use countersign_markup::{Inbox, ReviewDrawing};
use serde_json::{json, Value};
use std::time::Duration;

/// `POST /api/v1/reviews` (agent): create a review. 201 with the review and its
/// outcome; 200 when the same review was already created (a retry); 409 when
/// the id is taken by a different review; 422 with every problem.
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<Answer>), ApiError> {
    caller.require(KeyKind::Agent)?;
    let review = input::new_review(&body)?;
    Ok(
        match usecases::ask_review(state.service(), &caller.0, review).await? {
            Asked::New(answer) => (StatusCode::CREATED, Json(answer)),
            Asked::Again(answer) => (StatusCode::OK, Json(answer)),
        },
    )
}

/// `GET /api/v1/reviews` (reviewer): filtered, in the asked order, cursor paging;
/// whole reviews, or with `view=summary` what a list row shows of each.
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, ApiError> {
    caller.require(KeyKind::Reviewer)?;
    let params = Params::parse(
        raw.as_deref(),
        &[
            "status",
            "target_type",
            "requester",
            "q",
            "cursor",
            "limit",
            "view",
            "order",
        ],
    )?;
    let mut details: Vec<Detail> = Vec::new();
    let query = ReviewQuery::from_pairs(|name| params.get(name).map(String::as_str))
        .unwrap_or_else(|problems| {
            details.extend(problems.into_iter().map(|p| Detail::new(p.name, p.message)));
            ReviewQuery::default()
        });
    let cursor = match query
        .cursor
        .as_deref()
        .map(|text| (text, Cursor::decode(text, query.order)))
    {
        Some((_, Some(c))) => Some(c),
        Some((_, None)) => {
            details.push(Detail::new(
                "cursor",
                "not a cursor this server returned for this order",
            ));
            None
        }
        None => None,
    };
    // `summary`: what a list row shows of each review, a few hundred bytes
    // instead of the whole review.
    let summaries = match params.get("view").map(String::as_str) {
        None | Some("full") => false,
        Some("summary") => true,
        Some(_) => {
            details.push(Detail::new("view", "one of: full, summary"));
            false
        }
    };
    if !details.is_empty() {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidParameter,
            "the query has invalid parameters",
        )
        .with_details(details));
    }
    // Read first: a change committed while the page is read is then also
    // after this position, so a stream opened after it misses nothing.
    let position = state.db.last_change().await?;
    let counts = state.db.status_counts().await?;
    if summaries {
        let page = state
            .db
            .list_summaries(&query, cursor.as_ref(), &counts)
            .await?;
        return Ok(Json(json!(SummaryPage {
            items: page.items,
            next_cursor: page.next.map(|c| c.encode()),
            counts,
            position: Some(position),
        })));
    }
    let page = state
        .db
        .list_reviews(&query, cursor.as_ref(), &counts)
        .await?;
    Ok(Json(json!({
        "items": page.items,
        "next_cursor": page.next.map(|c| c.encode()),
        "counts": counts,
        "position": position,
    })))
}

/// `GET /api/v1/inbox?base=/&server=URL` (reviewer): the inbox's first page of
/// pending reviews (what expires first), as the desk draws it: HTML written
/// by `countersign-markup`, with links under `base` (the path the desk is
/// served under) and `server` named as the desk's server. A desk served by
/// this server draws it before the app's code arrives; 204 when nothing is
/// pending (the app then says so itself).
pub async fn inbox(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    caller.require(KeyKind::Reviewer)?;
    let params = Params::parse(raw.as_deref(), &["base", "server"])?;
    let (base, server) = drawn_for(&params)?;
    Ok(match first_page(&state, server, base).await? {
        Some(drawn) => Html(drawn).into_response(),
        None => StatusCode::NO_CONTENT.into_response(),
    })
}

/// `GET /api/v1/reviews/{id}/page?base=/&server=URL` (reviewer): the review's
/// page as the desk draws it before its code has loaded, for reading (what
/// was asked, the exact call and its summary's check, the plan, the
/// problems, the history; the decision form is the app's): HTML written by
/// `countersign-markup`, links under `base`, `server` named as the desk's.
pub async fn page(
    State(state): State<AppState>,
    caller: Caller,
    ReviewId(id): ReviewId,
    RawQuery(raw): RawQuery,
) -> Result<Html<String>, ApiError> {
    caller.require(KeyKind::Reviewer)?;
    let params = Params::parse(raw.as_deref(), &["base", "server"])?;
    let (base, server) = drawn_for(&params)?;
    Ok(Html(
        review_page(&state, &caller, id, server, base, false).await?,
    ))
}

/// The review `id` as [`page`] draws it for `caller`, links under `base`,
/// said to be opened from an e-mail's link when `from_mail`.
pub async fn review_page(
    state: &AppState,
    caller: &Caller,
    id: MplpId,
    server: &str,
    base: &str,
    from_mail: bool,
) -> Result<String, ApiError> {
    let stored = caller.review(state, id).await?;
    let pending = state.db.status_counts().await?.pending;
    let drawing = ReviewDrawing::new(&stored.review, server, pending).from_mail(from_mail);
    Ok(drawing.first_paint(chrono::Utc::now(), base))
}

/// A drawing's `base` (the path the desk is served under, `/` by default)
/// and `server` (the desk's server URL, named in its header).
fn drawn_for(params: &Params) -> Result<(&str, &str), ApiError> {
    let mut details = Vec::new();
    let base = params.get("base").map_or("/", String::as_str);
    if !is_base(base) {
        details.push(Detail::new(
            "base",
            "a path that starts and ends with / (like / or /countersign/), of letters, digits and - . _ ~",
        ));
    }
    let server = params.get("server").map_or("", String::as_str);
    if server.is_empty() || server.len() > 2_048 {
        details.push(Detail::new(
            "server",
            "the desk's server URL, 1 to 2,048 characters",
        ));
    }
    if !details.is_empty() {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidParameter,
            "the query has invalid parameters",
        )
        .with_details(details));
    }
    Ok((base, server))
}

/// The inbox's first page of pending reviews as the desk draws it, links
/// under `base` and `server` named as its server; None when nothing is
/// pending. `GET /api/v1/inbox` answers it, and `/` holds it for a signed-in
/// reviewer.
pub async fn first_page(
    state: &AppState,
    server: &str,
    base: &str,
) -> Result<Option<String>, ApiError> {
    // The desk's first question (`ReviewQuery` at its defaults, pending).
    let query = ReviewQuery {
        status: Some(countersign_domain::model::ConfirmStatus::Pending),
        order: countersign_domain::wire::Order::Expiring,
        limit: countersign_domain::wire::PAGE_SIZE as u32,
        ..ReviewQuery::default()
    };
    let position = state.db.last_change().await?;
    let counts = state.db.status_counts().await?;
    let page = state.db.list_summaries(&query, None, &counts).await?;
    let page = SummaryPage {
        items: page.items,
        next_cursor: page.next.map(|c| c.encode()),
        counts,
        position: Some(position),
    };
    Ok(Inbox::served(&page, server).map(|inbox| inbox.first_paint(chrono::Utc::now(), base)))
}

/// Whether `text` is a path the desk can be served under: `/`, or segments
/// of unreserved URL characters each followed by `/`.
fn is_base(text: &str) -> bool {
    text.strip_prefix('/').is_some_and(|rest| {
        rest.is_empty()
            || rest.strip_suffix('/').is_some_and(|inner| {
                inner.split('/').all(|segment| {
                    !segment.is_empty()
                        && segment
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b))
                })
            })
    })
}

/// How many requesters the list of requesters names at most.
const REQUESTERS_LISTED: u32 = 1_000;

/// `GET /api/v1/requesters` (reviewer): every role that asked for a review,
/// in order (at most 1,000), for the inbox's requester filter.
pub async fn requesters(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<Requesters>, ApiError> {
    caller.require(KeyKind::Reviewer)?;
    Ok(Json(Requesters {
        items: state.db.requesters(REQUESTERS_LISTED).await?,
    }))
}

/// `GET /api/v1/reviews/{id}` (reviewer, or the agent that created it): the
/// review with its target, decisions and events, and its validation problems.
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    ReviewId(id): ReviewId,
) -> Result<Json<Value>, ApiError> {
    let stored = caller.review(&state, id).await?;
    let problems: Vec<Detail> = stored.review.validate().iter().map(Detail::from).collect();
    Ok(Json(json!({
        "review": stored.review,
        "outcome": state.outcome(&stored.review)?,
        "problems": problems,
    })))
}

/// `GET /api/v1/reviews/{id}/outcome?wait=N` (agent): the outcome, waiting up
/// to N seconds (at most 60) while it is still pending.
pub async fn outcome(
    State(state): State<AppState>,
    caller: Caller,
    ReviewId(id): ReviewId,
    RawQuery(raw): RawQuery,
) -> Result<Json<Outcome>, ApiError> {
    let params = Params::parse(raw.as_deref(), &["wait"])?;
    let wait = match params.get("wait").map(|w| w.parse::<u64>()) {
        None => 0,
        Some(Ok(n)) if n <= 60 => n,
        Some(_) => {
            return Err(ApiError::bad_request(
                ErrorCode::InvalidParameter,
                "wait is a number of seconds from 0 to 60",
            )
            .with_details(vec![Detail::new("wait", "a whole number from 0 to 60")]))
        }
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(wait);
    let waiting = state.feed.wait_on(&id.to_string());
    loop {
        // Enabled before the review is read: a change stored after the read wakes it.
        let changed = waiting.changed();
        tokio::pin!(changed);
        changed.as_mut().enable();
        let stored = caller.review(&state, id).await?;
        if state
            .changes
            .close_if_expired(&stored, chrono::Utc::now())
            .await?
        {
            continue; // closed now, without waiting for the next sweep
        }
        let outcome = state.outcome(&stored.review)?;
        if !outcome.is_pending() || tokio::time::Instant::now() >= deadline {
            return Ok(Json(outcome));
        }
        tokio::select! {
            () = changed => {}
            () = tokio::time::sleep_until(deadline) => {}
            // Shutting down: answer now with the outcome as it stands.
            () = state.feed.closed() => return Ok(Json(outcome)),
        }
    }
}

/// `POST /api/v1/reviews/{id}/decisions` (reviewer, `Idempotency-Key` header):
/// the [`usecases::decide`] use case. A retry with the same key returns the
/// first result and adds nothing; a decision on a decided review is 409
/// naming the decision that stands.
pub async fn post_decision(
    State(state): State<AppState>,
    caller: Caller,
    ReviewId(review): ReviewId,
    headers: HeaderMap,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    caller.require(KeyKind::Reviewer)?;
    let idempotency_key = idempotency_key(&headers)?;
    let input::DecisionBody { input, mail_link } = input::decision(&body)?;
    caller.may_sign_as(&input.decided_by_role)?;
    let mail_link = mail_link.as_deref();
    // A signed-in session is the desk (or an e-mail's link opened in it); a
    // reviewer key, whatever holds it, the API.
    let channel = match (&caller.1, mail_link) {
        (Some(_), Some(_)) => Channel::Email,
        (None, Some(_)) => return Err(mail_link_refused("a link from an e-mail is used signed in to the desk, as the person it was sent to; a reviewer key cannot use it")),
        (Some(_), None) => Channel::Desk,
        (None, None) => Channel::Api,
    };
    let request = DecisionRequest {
        review,
        input,
        idempotency_key,
        channel,
    };
    if let (Some(session), Some(token)) = (&caller.1, mail_link) {
        // A retry (the desk's, after a timeout) gets the first answer, though
        // that decision spent the link.
        let first = usecases::decide::answered_before(state.service(), &caller.0, &request);
        if let Some(Decided(answer)) = first.await? {
            return Ok(json_text(answer));
        }
        check_mail_link(&state, review, &session.person, token).await?;
    }
    let Decided(answer) = usecases::decide(state.service(), &caller.0, request).await?;
    if let Some(token) = mail_link {
        // The decision stands whatever happens here; a link left unspent
        // can only come with a later decision of the same person on a
        // request they have decided.
        if let Err(e) = state.db.spend_mail_link(token).await {
            tracing::warn!(review = %review, "an e-mail's link was not marked spent: {e}");
        }
    }
    Ok(json_text(answer))
}

fn mail_link_refused(message: impl Into<String>) -> ApiError {
    ApiError::forbidden(ErrorCode::MailLinkRefused, message)
}

/// Whether the e-mail link `token` may come with `person`'s decision on `review`.
async fn check_mail_link(
    state: &AppState,
    review: MplpId,
    person: &countersign_domain::Person,
    token: &str,
) -> Result<(), ApiError> {
    let link = state.db.mail_link(token).await?;
    let link = link.filter(|l| !l.used).ok_or_else(|| {
        mail_link_refused("this e-mail's link is unknown or was used for a decision already: decide in the desk without it")
    })?;
    if link.review_id != review.to_string() {
        return Err(mail_link_refused(
            "this e-mail's link is about another request",
        ));
    }
    if link.expires_at <= chrono::Utc::now() {
        return Err(mail_link_refused(format!(
            "this e-mail's link expired at {} UTC: decide in the desk without it",
            link.expires_at.format("%Y-%m-%d %H:%M")
        )));
    }
    let yours = person
        .email
        .as_deref()
        .is_some_and(|email| email.eq_ignore_ascii_case(&link.email));
    if !yours {
        return Err(mail_link_refused(format!(
            "this e-mail was sent to {}, and you are signed in as {}: it decides only for the person it was sent to",
            link.email,
            person.label()
        )));
    }
    Ok(())
}

impl From<NotDecided> for ApiError {
    fn from(e: NotDecided) -> Self {
        match e {
            NotDecided::NotFound(id) => ApiError::not_found(&format!("review {id}")),
            NotDecided::Refused(refused) => refusal(refused),
            NotDecided::KeyReused => ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                ErrorCode::IdempotencyKeyReused,
                e.to_string(),
            ),
            NotDecided::Busy => ApiError::busy(),
            NotDecided::Broken(e) => ApiError::internal(e),
        }
    }
}

fn idempotency_key(headers: &HeaderMap) -> Result<String, ApiError> {
    let key = headers
        .get("idempotency-key")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .unwrap_or("");
    if key.is_empty() || key.len() > 200 {
        return Err(ApiError::bad_request(
            ErrorCode::IdempotencyKeyRequired,
            "send an `Idempotency-Key` header (1 to 200 characters, new for each decision, the same for its retries)",
        ));
    }
    Ok(key.to_owned())
}

/// A 200 response whose JSON body is already serialized.
fn json_text(body: String) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// How a refused decision is reported: the field at fault, or the decision
/// that stands, and the domain's error itself.
fn refusal(e: DecideError) -> ApiError {
    let typed = Refusal::Decide(e.clone());
    report_refusal(e).with_refusal(typed)
}

fn report_refusal(e: DecideError) -> ApiError {
    let message = e.to_string();
    match e {
        DecideError::NotPending { status, last } => {
            let details = last
                .map(|d| {
                    vec![Detail::new(
                        "/confirm/decisions/-",
                        format!(
                            "{} by {} at {}{}",
                            d.status,
                            d.decided_by_role,
                            d.decided_at,
                            d.reason.map(|r| format!(": {r}")).unwrap_or_default()
                        ),
                    )]
                })
                .unwrap_or_default();
            ApiError::new(
                StatusCode::CONFLICT,
                ErrorCode::AlreadyDecided,
                format!("this review is already {status}"),
            )
            .with_details(details)
        }
        DecideError::EmptyRole => ApiError::invalid(
            message.clone(),
            vec![Detail::new("/decided_by_role", message)],
        ),
        DecideError::ReasonRequired => {
            ApiError::invalid(message.clone(), vec![Detail::new("/reason", message)])
        }
        DecideError::InvalidTarget(issues) => ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            ErrorCode::InvalidTarget,
            "this request cannot be approved while it has problems",
        )
        .with_details(issues.iter().map(Detail::from).collect()),
        DecideError::Policy(_) => ApiError::forbidden(ErrorCode::PolicyRefused, message),
        DecideError::TargetNotAwaitingApproval(_) => ApiError::new(
            StatusCode::CONFLICT,
            ErrorCode::TargetNotAwaitingApproval,
            message,
        ),
        DecideError::ToolCall(ToolDecideError::Expired(_)) => {
            ApiError::new(StatusCode::CONFLICT, ErrorCode::RequestExpired, message)
        }
        DecideError::ToolCall(e) => {
            let path = match e {
                ToolDecideError::BadArgs(_) => "/tool_call/args",
                ToolDecideError::BadScope(_)
                | ToolDecideError::ScopeRefused
                | ToolDecideError::NeedsConfirmation => "/tool_call/scope",
                _ => "/tool_call",
            };
            ApiError::invalid(message.clone(), vec![Detail::new(path, message)])
        }
    }
}

/// `POST /api/v1/reviews/{id}/resubmit` (the agent that created it): re-open a
/// rejected review, optionally with a revised plan.
pub async fn resubmit_review(
    State(state): State<AppState>,
    caller: Caller,
    ReviewId(id): ReviewId,
    JsonBody(body): JsonBody,
) -> Result<Json<Answer>, ApiError> {
    caller.require(KeyKind::Agent)?;
    let input = input::resubmission(&body)?;
    let resubmission = Resubmission {
        by_role: input.by_role,
        revised_plan: input.plan,
        reason: input.reason,
    };
    let answer = usecases::resubmit_review(state.service(), &caller.0, id, resubmission).await?;
    Ok(Json(answer))
}

impl From<NotResubmitted> for ApiError {
    fn from(e: NotResubmitted) -> Self {
        match e {
            NotResubmitted::NotFound(id) => ApiError::not_found(&format!("review {id}")),
            NotResubmitted::Refused(ResubmitError::Unhashable(problem)) => ApiError::invalid(
                "the revised plan was refused",
                vec![Detail::new(
                    format!("/plan{}", problem.path()),
                    problem.to_string(),
                )],
            ),
            NotResubmitted::Refused(refused) => ApiError::new(
                StatusCode::CONFLICT,
                ErrorCode::CannotResubmit,
                refused.to_string(),
            ),
            NotResubmitted::Invalid(problems) => ApiError::invalid(
                "the revised review has problems",
                problems.iter().map(Detail::from).collect(),
            ),
            e @ NotResubmitted::ChangedMeanwhile => ApiError::new(
                StatusCode::CONFLICT,
                ErrorCode::ChangedMeanwhile,
                e.to_string(),
            ),
            NotResubmitted::Broken(e) => ApiError::internal(e),
        }
    }
}

impl From<NotAsked> for ApiError {
    fn from(e: NotAsked) -> Self {
        match e {
            NotAsked::Taken(_) => ApiError::new(
                StatusCode::CONFLICT,
                ErrorCode::AlreadyExists,
                e.to_string(),
            )
            .with_details(vec![Detail::new("/confirm/confirm_id", "already taken")]),
            NotAsked::ApprovalTaken => ApiError::new(
                StatusCode::CONFLICT,
                ErrorCode::AlreadyExists,
                e.to_string(),
            )
            .with_details(vec![Detail::new("/approvalId", "already taken")]),
            NotAsked::Invalid(ref issues) => {
                ApiError::invalid(e.to_string(), issues.iter().map(Detail::from).collect())
            }
            NotAsked::Broken(e) => ApiError::internal(e),
        }
    }
}
