"""Why a gated call did not run. Every failure is a `NotApproved`: catch that
one class and the function is known not to have run."""

from __future__ import annotations


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
        code: str,
        problems: list[tuple[str, str]],
        review_id: str | None = None,
    ) -> None:
        super().__init__(message, review_id=review_id)
        self.status = status
        self.code = code
        self.problems = problems
