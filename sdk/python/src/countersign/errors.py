"""Why a gated call did not run. Every failure is a `NotApproved`: catch that
one class and the function is known not to have run."""

from __future__ import annotations

from typing import Literal, cast, get_args

ErrorCode = Literal[
    "already_decided",
    "already_exists",
    "already_revoked",
    "body_too_large",
    "busy",
    "cannot_resubmit",
    "cannot_withdraw",
    "changed_meanwhile",
    "cross_site",
    "idempotency_key_required",
    "idempotency_key_reused",
    "internal",
    "invalid_parameter",
    "invalid_request",
    "invalid_target",
    "malformed_json",
    "mail_link_refused",
    "method_not_allowed",
    "no_role",
    "not_found",
    "pairing_refused",
    "policy_refused",
    "provider_unavailable",
    "rate_limited",
    "request_expired",
    "reviewer_keys_off",
    "role_not_allowed",
    "target_not_awaiting_approval",
    "token_unknown",
    "token_expired",
    "token_used",
    "token_hash_mismatch",
    "token_device_mismatch",
    "token_other_approval",
    "unauthorized",
    "unknown_parameter",
    "unreadable_body",
    "unsupported_media_type",
    "wrong_key_kind",
    "unknown",
]
"""A stable code the server refuses with, e.g. `"token_used"` (the OpenAPI
document's `ErrorCode`); `"unknown"` for one this SDK does not know (from a
newer server: its message still says what happened)."""

ERROR_CODES: tuple[str, ...] = tuple(c for c in get_args(ErrorCode) if c != "unknown")
"""Every code the server's OpenAPI document lists."""


def error_code(value: object) -> ErrorCode:
    """The code as the SDK types it: a listed one, else `"unknown"`."""
    if isinstance(value, str) and value in ERROR_CODES:
        return cast(ErrorCode, value)
    return "unknown"


class NotApproved(Exception):
    """The call did not run: nobody approved it, or the approval could not be
    trusted or spent. `review_id` names the review when one was made."""

    def __init__(self, message: str, *, review_id: str | None = None) -> None:
        super().__init__(message)
        self.review_id = review_id


class Denied(NotApproved):
    """A reviewer said no. `reason` is their text (also for feedback, which
    answers the agent instead of running the call); `kind` is `denied`,
    `feedback`, `cancelled` or `withdrawn`; `decided_by` the role that decided."""

    def __init__(
        self,
        message: str,
        *,
        review_id: str,
        reason: str | None,
        kind: str,
        decided_by: str | None,
    ) -> None:
        super().__init__(message, review_id=review_id)
        self.reason = reason
        self.kind = kind
        self.decided_by = decided_by


class TimedOut(NotApproved):
    """No reviewer decided in time; the request is closed as denied."""


class Unreachable(NotApproved):
    """The server could not be reached, or answered something that is not
    Countersign's API (HTML from a proxy, a truncated body)."""


class ReceiptInvalid(NotApproved):
    """The approval's signed receipt does not verify with the trusted public
    key, or does not name this token and this exact call. The token was not
    spent."""


class Refused(NotApproved):
    """The server refused a request (`status`, its stable `code`). For an
    invalid request `problems` lists `(path, message)` with JSON-pointer paths
    into what was sent, e.g. `("/riskTier", "...")`."""

    def __init__(
        self,
        message: str,
        *,
        status: int,
        code: ErrorCode,
        problems: list[tuple[str, str]],
        review_id: str | None = None,
    ) -> None:
        super().__init__(message, review_id=review_id)
        self.status = status
        self.code = code
        self.problems = problems
