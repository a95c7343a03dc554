//! The one error shape of every API response:
//! `{"error": {"code", "message", "details": [{"path", "message"}]}}`.

use crate::store::DbError;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use countersign_domain::wire::{ErrorBody, ErrorReport, Refusal};

pub use countersign_domain::wire::ErrorCode;

pub use countersign_domain::wire::Detail;

/// An API error response.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    code: ErrorCode,
    message: String,
    details: Vec<Detail>,
    /// Boxed: rare, and it keeps every `Result<_, ApiError>` small.
    refusal: Option<Box<Refusal>>,
    /// Seconds until a request over the key's rate would be accepted.
    retry_after: Option<u64>,
}

impl ApiError {
    /// An error with a status, a stable code and a message.
    pub fn new(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
            details: Vec::new(),
            refusal: None,
            retry_after: None,
        }
    }

    /// 429: the key sent more requests than its rate; the next is accepted after `wait`.
    pub fn rate_limited(over: crate::limits::OverRate) -> Self {
        let (key, wait) = (over.key_id, over.wait);
        let seconds = (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1);
        ApiError {
            retry_after: Some(seconds),
            ..ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                ErrorCode::RateLimited,
                format!(
                    "key {key} sent more requests than its rate allows; try again in {seconds} s"
                ),
            )
        }
    }

    /// 503: a review kept changing under a compare-and-swap; the client may retry.
    pub fn busy() -> Self {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::Busy,
            "the review kept changing; try again",
        )
    }

    /// The HTTP status it is answered with.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// Adds the typed reason a decision was refused.
    pub fn with_refusal(mut self, refusal: Refusal) -> Self {
        self.refusal = Some(Box::new(refusal));
        self
    }

    /// Adds the precise problems.
    pub fn with_details(mut self, details: Vec<Detail>) -> Self {
        self.details = details;
        self
    }

    /// 400: the request itself is malformed.
    pub fn bad_request(code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, code, message)
    }

    /// 404: no such review (or not one this key may see).
    pub fn not_found(what: &str) -> Self {
        ApiError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::NotFound,
            format!("{what} was not found"),
        )
    }

    /// 422: well-formed JSON that breaks the rules, with every problem.
    pub fn invalid(message: impl Into<String>, details: Vec<Detail>) -> Self {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            ErrorCode::InvalidRequest,
            message,
        )
        .with_details(details)
    }

    /// 403: this key may not do this.
    pub fn forbidden(code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::FORBIDDEN, code, message)
    }

    /// 500: the server failed; the cause goes to the log, not to the client.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        tracing::error!("internal error: {cause}");
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::Internal,
            "the server failed to handle this request; nothing was changed",
        )
    }
}

impl From<DbError> for ApiError {
    fn from(e: DbError) -> Self {
        ApiError::internal(e)
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.code, self.status, self.message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: ErrorReport {
                code: self.code,
                message: self.message,
                details: self.details,
                refusal: self.refusal.map(|r| *r),
            },
        };
        let mut response = (self.status, axum::Json(body)).into_response();
        if let Some(seconds) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, header::HeaderValue::from(seconds));
        }
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer realm=\"countersign\""),
            );
        }
        response
    }
}
