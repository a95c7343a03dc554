"""The agent's side of Countersign's HTTP API: ask about a call, wait for the
reviewer (the server holds the request open, no busy polling), withdraw, and
redeem an approval's single-use token after checking it offline. `Countersign`
blocks; `AsyncCountersign` is the same for asyncio."""

from __future__ import annotations

import json
import math
import os
import time
import uuid
import warnings
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from . import receipts
from .calls import JsonObject, call_hash, check_risk
from .errors import Denied, NotApproved, ReceiptInvalid, Refused, TimedOut, Unreachable, error_code
from .wire import Outcome, ToolCall, ToolCallSubmission

#: The longest the server holds one wait open; longer waits ask again.
LONGEST_WAIT = 60
#: How long a request waits for a reviewer unless told otherwise (seconds).
DEFAULT_TIMEOUT = 300.0
#: How long past its expiry a wait reads on, for the server to close it.
EXPIRY_GRACE = 2.0


@dataclass(frozen=True)
class Settings:
    """Where to ask, as whom, and what to trust."""

    url: str
    agent_key: str
    public_key: Ed25519PublicKey | None = None
    agent: str = "python-agent"
    session: str = ""
    run: str = field(default_factory=lambda: f"run-{uuid.uuid4()}")
    device: str | None = None

    @staticmethod
    def of(
        url: str | None,
        agent_key: str | None,
        public_key: str | None,
        agent: str,
        session: str | None,
        device: str | None = None,
    ) -> Settings:
        """Each setting from its argument, else from its own variable
        (`resolve`); `ValueError` when one is missing or the public key cannot
        be read."""
        url, agent_key, public_key = resolve(url, agent_key, public_key)
        key = receipts.public_key(public_key) if public_key else None
        return Settings(
            url.rstrip("/"), agent_key, key, agent, session or f"sess-{uuid.uuid4()}", device=device
        )

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.agent_key}", "Accept": "application/json"}


#: Said once per process when no receipt key is set.
_UNCHECKED_SAID = False


def resolve(url: str | None, agent_key: str | None, public_key: str | None) -> tuple[str, str, str | None]:
    """The server, agent key and receipt key: each the argument given, else its
    own variable (`COUNTERSIGN_URL`, `COUNTERSIGN_AGENT_KEY`,
    `COUNTERSIGN_PUBLIC_KEY`), each on its own. `ValueError` naming what is
    missing; with no receipt key at all, a warning (once) that receipts are
    not checked."""
    global _UNCHECKED_SAID
    url = url or os.environ.get("COUNTERSIGN_URL") or None
    agent_key = agent_key or os.environ.get("COUNTERSIGN_AGENT_KEY") or None
    public_key = public_key or os.environ.get("COUNTERSIGN_PUBLIC_KEY") or None
    if not url or not agent_key:
        missing = [n for n, v in (("COUNTERSIGN_URL", url), ("COUNTERSIGN_AGENT_KEY", agent_key)) if not v]
        raise ValueError(f"set {' and '.join(missing)} (the server's address and an agent key), or pass them")
    if public_key is None and not _UNCHECKED_SAID:
        _UNCHECKED_SAID = True
        warnings.warn(
            "Countersign: no receipt key (COUNTERSIGN_PUBLIC_KEY, or public_key=): approvals are not checked "
            "against the server's signature. Set it to what `countersign keys signing-key` prints "
            "(or GET /api/v1/signing-key).",
            UserWarning,
            stacklevel=3,
        )
    return url, agent_key, public_key


@dataclass(frozen=True)
class Approved:
    """What an approval allows: exactly this call, once, with this token."""

    review_id: str
    call: ToolCall
    token: dict[str, Any]
    receipt: dict[str, Any] | None
    edited: bool
    decided_by: str | None
    by_grant: str | None


def submission(
    settings: Settings,
    tool: str,
    args: JsonObject,
    *,
    risk: str,
    summary: str,
    timeout: float,
    session: str | None,
    editable: bool,
    workspace: str | None,
    reasons: list[str] | None,
    run: str | None = None,
) -> ToolCallSubmission:
    """The body of `POST /tool-calls`; `ValueError` before anything is sent."""
    check_risk(risk)
    if not tool:
        raise ValueError("the tool's name is empty")
    expires = datetime.now(timezone.utc) + timedelta(seconds=timeout)
    body: ToolCallSubmission = {
        "requestedByRole": settings.agent,
        "sessionId": session or settings.session,
        "runId": run or settings.run,
        "toolCall": {"name": tool, "args": args},
        "humanSummary": summary,
        "riskTier": risk,
        "expiresAt": expires.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "editable": editable,
    }
    if workspace is not None:
        body["workspace"] = workspace
    if settings.device is not None:
        body["clientDeviceId"] = settings.device
    if reasons:
        body["riskReasons"] = reasons
    return body


def read_answer(settings: Settings, response: httpx.Response) -> Any:
    """The JSON of an answer, or `Unreachable` when it is not Countersign's."""
    kind = response.headers.get("content-type", "")
    if "json" not in kind:
        raise Unreachable(
            f"{settings.url} answered {response.status_code} with {kind or 'no content type'}, not Countersign's JSON"
        )
    try:
        return response.json()
    except ValueError as e:
        raise Unreachable(f"{settings.url} answered {response.status_code} with unreadable JSON: {e}") from e


def refusal(status: int, body: Any, review_id: str | None = None) -> NotApproved:
    """The error for a refused request: `Refused` naming each problem's path."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return Unreachable(f"the server answered {status} without Countersign's error shape", review_id=review_id)
    if status >= 500:
        return Unreachable(f"the server failed ({status}): {error.get('message', '')}", review_id=review_id)
    listed = error.get("details")
    details: list[Any] = listed if isinstance(listed, list) else []
    problems = [
        (str(d.get("path", "")), str(d.get("message", ""))) for d in details if isinstance(d, dict)
    ]
    named = "; ".join(f"{path or '/'}: {message}" for path, message in problems)
    message = str(error.get("message", "refused"))
    return Refused(
        f"{message}" + (f" ({named})" if named else ""),
        status=status,
        code=error_code(error.get("code")),
        problems=problems,
        review_id=review_id,
    )


def asked_id(body: Any) -> str:
    """The review id in the answer to `POST /tool-calls`."""
    outcome = body.get("outcome") if isinstance(body, dict) else None
    review = outcome.get("confirm_id") if isinstance(outcome, dict) else None
    if not isinstance(review, str):
        raise Unreachable("the server's answer names no review")
    return review


def settle(review_id: str, body: Any, timeout: float | None) -> Approved | None:
    """An outcome read: `None` while pending, what was approved, or the
    `NotApproved` that says why not (raised)."""
    if not isinstance(body, dict) or body.get("outcome") not in (
        "TOOL_BLOCKED_PENDING_APPROVAL",
        "TOOL_DENIED",
        "APPROVED",
    ):
        raise Unreachable("the outcome could not be read", review_id=review_id)
    outcome: Outcome = body  # type: ignore[assignment]
    verdict = outcome["outcome"]
    kind = outcome.get("kind", "")
    if verdict == "TOOL_BLOCKED_PENDING_APPROVAL":
        return None
    if verdict == "TOOL_DENIED":
        if kind == "expired":
            within = "in time" if timeout is None else f"within {timeout:g} s"
            raise TimedOut(
                f"no reviewer decided {within}; the request expired and the call did not run",
                review_id=review_id,
            )
        reason = outcome.get("reason")
        by = outcome.get("decided_by_role")
        said = f"denied by {by or 'a reviewer'}" + (f": {reason}" if reason else "")
        raise Denied(said, review_id=review_id, reason=reason, kind=kind or "denied", decided_by=by)
    call = outcome.get("approved_tool_call")
    if call is None and isinstance(outcome.get("approved_call"), str):
        try:
            call = json.loads(outcome["approved_call"])
        except ValueError:
            call = None
    token = outcome.get("token")
    if (
        not isinstance(call, dict)
        or not isinstance(call.get("name"), str)
        or not isinstance(call.get("args"), dict)
        or not isinstance(token, dict)
        or not isinstance(token.get("tokenId"), str)
        or not isinstance(token.get("toolCallHash"), str)
    ):
        raise Unreachable("the approval carries no readable call and token", review_id=review_id)
    return Approved(
        review_id=review_id,
        call={"name": call["name"], "args": call["args"]},
        token=dict(token),
        receipt=outcome.get("receipt"),
        edited=kind == "edited",
        decided_by=outcome.get("decided_by_role"),
        by_grant=outcome.get("approved_by_grant"),
    )


def decided(review_id: str, status: int, body: Any) -> Approved:
    """A decided review's outcome read now: what was approved, or the
    `NotApproved` that says why not (raised), pending included."""
    if status != 200:
        raise refusal(status, body, review_id)
    approved = settle(review_id, body, None)
    if approved is None:
        raise NotApproved("no reviewer has decided it yet", review_id=review_id)
    return approved


def check_before_redeem(settings: Settings, approved: Approved) -> None:
    """`ReceiptInvalid` unless the token is for exactly this call and, with
    a public key, the receipt verifies and names this token and call."""
    name, args = approved.call["name"], approved.call["args"]
    try:
        hashed = call_hash(name, args)
    except (TypeError, ValueError) as e:
        raise ReceiptInvalid(f"the approved call has no canonical form: {e}", review_id=approved.review_id) from e
    if approved.token.get("toolCallHash") != hashed:
        raise ReceiptInvalid(
            "the approval's token is for another call than the one approved; nothing runs",
            review_id=approved.review_id,
        )
    if settings.public_key is not None:
        problem = receipts.receipt_problem(
            approved.receipt, settings.public_key, str(approved.token["tokenId"]), hashed
        )
        if problem is not None:
            raise ReceiptInvalid(f"{problem}; the token was not spent", review_id=approved.review_id)


def redemption(settings: Settings, approved: Approved) -> dict[str, Any]:
    """The body that spends an approval's token for its call (and this device)."""
    body: dict[str, Any] = {"tokenId": approved.token["tokenId"], "toolCall": approved.call}
    if settings.device is not None:
        body["clientDeviceId"] = settings.device
    return body


def wait_seconds(deadline: float) -> int:
    """How long the next wait asks the server to hold: whole seconds, at most
    `LONGEST_WAIT`, 0 once the deadline has passed."""
    return max(0, min(LONGEST_WAIT, math.ceil(deadline - time.monotonic())))


class _Approved:
    """What both kinds of approval show: the approved call and its proofs."""

    def __init__(self, approved: Approved) -> None:
        self._approved = approved

    @property
    def review_id(self) -> str:
        return self._approved.review_id

    @property
    def call(self) -> ToolCall:
        """The exact approved call: `{"name", "args"}`."""
        return self._approved.call

    @property
    def args(self) -> JsonObject:
        """The approved arguments."""
        return self._approved.call["args"]

    @property
    def edited(self) -> bool:
        """Whether the reviewer changed the arguments."""
        return self._approved.edited

    @property
    def token(self) -> dict[str, Any]:
        return self._approved.token

    @property
    def receipt(self) -> dict[str, Any] | None:
        """The signed receipt (`countersign verify` checks it too)."""
        return self._approved.receipt

    @property
    def approved_by_grant(self) -> str | None:
        """The standing grant that approved it without asking, if one did."""
        return self._approved.by_grant

    @property
    def decided_by(self) -> str | None:
        """The role that approved it."""
        return self._approved.decided_by


class Approval(_Approved):
    """An approved call, not yet run: `call` is exactly what may run (the
    reviewer's edit, if any); `redeem()` spends its token, after which run it."""

    def __init__(self, client: Countersign, approved: Approved) -> None:
        super().__init__(approved)
        self._client = client

    def check(self) -> None:
        """Checks the token and receipt offline, spending nothing:
        `ReceiptInvalid` when the call must not run."""
        check_before_redeem(self._client.settings, self._approved)

    def redeem(self) -> None:
        """Checks the token and receipt offline, then spends the token: run the
        call right after. `ReceiptInvalid` or `Refused` when it must not run."""
        self.check()
        body = redemption(self._client.settings, self._approved)
        status, answer = self._client._send("POST", f"/reviews/{self.review_id}/redeem", body)
        if status != 200:
            raise refusal(status, answer, self.review_id)


class Request:
    """A call waiting for a reviewer."""

    def __init__(self, client: Countersign, review_id: str, call: ToolCall, timeout: float) -> None:
        self._client = client
        self.review_id = review_id
        self.call = call
        self.timeout = timeout

    def wait(self, timeout: float | None = None) -> Approval:
        """Waits for the decision (`timeout` seconds, the request's by
        default): the approval, or `Denied` / `TimedOut` / `Unreachable`."""
        limit = self.timeout if timeout is None else timeout
        # The server closes the request at its expiry: give it a moment to.
        deadline = time.monotonic() + limit + EXPIRY_GRACE
        while True:
            seconds = wait_seconds(deadline)
            status, body = self._client._send(
                "GET", f"/reviews/{self.review_id}/outcome?wait={seconds}", read_timeout=seconds + 30
            )
            if status != 200:
                raise refusal(status, body, self.review_id)
            approved = settle(self.review_id, body, limit)
            if approved is not None:
                return Approval(self._client, approved)
            if seconds == 0:
                # Nobody may approve a call that will not run any more.
                self.withdraw("the agent stopped waiting")
                raise TimedOut(
                    f"no reviewer decided within {limit:g} s; the request was withdrawn and the call did not run",
                    review_id=self.review_id,
                )

    def withdraw(self, reason: str | None = None) -> None:
        """Withdraws the request (the call will not run); quiet if it was
        decided meanwhile or the server cannot be reached."""
        try:
            self._client._send(
                "POST", f"/reviews/{self.review_id}/withdraw", {"reason": reason} if reason else {}
            )
        except NotApproved:
            pass


class Countersign:
    """A Countersign server, asked with an agent key (blocking calls).
    `agent` is the requester reviewers see, `session` the one standing grants
    apply to (one per client by default), `device` binds each token to this
    device (`clientDeviceId`)."""

    def __init__(
        self,
        url: str | None = None,
        agent_key: str | None = None,
        public_key: str | None = None,
        *,
        agent: str = "python-agent",
        session: str | None = None,
        device: str | None = None,
        http: httpx.Client | None = None,
    ) -> None:
        self.settings = Settings.of(url, agent_key, public_key, agent, session, device)
        self._http = http or httpx.Client(timeout=httpx.Timeout(30.0))
        self._async: AsyncCountersign | None = None

    @classmethod
    def from_env(cls, *, agent: str = "python-agent") -> Countersign:
        """From `COUNTERSIGN_URL`, `COUNTERSIGN_AGENT_KEY` and
        `COUNTERSIGN_PUBLIC_KEY` (the same as `Countersign()`)."""
        return cls(agent=agent)

    def async_client(self) -> AsyncCountersign:
        """The same server, session and keys for `async def` functions."""
        if self._async is None:
            self._async = AsyncCountersign._sharing(self.settings)
        return self._async

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Countersign:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def ask(
        self,
        tool: str,
        args: JsonObject,
        *,
        risk: str,
        summary: str,
        timeout: float = DEFAULT_TIMEOUT,
        session: str | None = None,
        editable: bool = True,
        workspace: str | None = None,
        reasons: list[str] | None = None,
        run: str | None = None,
    ) -> Request:
        """Asks a reviewer about one call; returns at once with the request."""
        body = submission(
            self.settings, tool, args, risk=risk, summary=summary, timeout=timeout,
            session=session, editable=editable, workspace=workspace, reasons=reasons, run=run,
        )
        status, answer = self._send("POST", "/tool-calls", body)
        if status != 201:
            raise refusal(status, answer)
        return Request(self, asked_id(answer), body["toolCall"], timeout)

    def approval(self, review_id: str) -> Approval:
        """The approval of a review asked earlier (by this process or another),
        as it stands now, to redeem right before its call runs: `Denied`,
        `TimedOut` or another `NotApproved` when it is not approved."""
        return Approval(self, decided(review_id, *self._send("GET", f"/reviews/{review_id}/outcome")))

    def _send(self, method: str, path: str, body: Any = None, read_timeout: float = 30) -> tuple[int, Any]:
        try:
            response = self._http.request(
                method,
                f"{self.settings.url}/api/v1{path}",
                json=body,
                headers=self.settings.headers(),
                timeout=httpx.Timeout(30.0, read=read_timeout),
            )
        except httpx.HTTPError as e:
            raise Unreachable(f"cannot reach {self.settings.url}: {e}") from e
        return response.status_code, read_answer(self.settings, response)


class AsyncApproval(_Approved):
    """`Approval` for asyncio."""

    def __init__(self, client: AsyncCountersign, approved: Approved) -> None:
        super().__init__(approved)
        self._client = client

    def check(self) -> None:
        """Checks the token and receipt offline, spending nothing:
        `ReceiptInvalid` when the call must not run."""
        check_before_redeem(self._client.settings, self._approved)

    async def redeem(self) -> None:
        """As `Approval.redeem`."""
        self.check()
        body = redemption(self._client.settings, self._approved)
        status, answer = await self._client._send("POST", f"/reviews/{self.review_id}/redeem", body)
        if status != 200:
            raise refusal(status, answer, self.review_id)


class AsyncRequest:
    """`Request` for asyncio."""

    def __init__(self, client: AsyncCountersign, review_id: str, call: ToolCall, timeout: float) -> None:
        self._client = client
        self.review_id = review_id
        self.call = call
        self.timeout = timeout

    async def wait(self, timeout: float | None = None) -> AsyncApproval:
        """As `Request.wait`."""
        limit = self.timeout if timeout is None else timeout
        # The server closes the request at its expiry: give it a moment to.
        deadline = time.monotonic() + limit + EXPIRY_GRACE
        while True:
            seconds = wait_seconds(deadline)
            status, body = await self._client._send(
                "GET", f"/reviews/{self.review_id}/outcome?wait={seconds}", read_timeout=seconds + 30
            )
            if status != 200:
                raise refusal(status, body, self.review_id)
            approved = settle(self.review_id, body, limit)
            if approved is not None:
                return AsyncApproval(self._client, approved)
            if seconds == 0:
                await self.withdraw("the agent stopped waiting")
                raise TimedOut(
                    f"no reviewer decided within {limit:g} s; the request was withdrawn and the call did not run",
                    review_id=self.review_id,
                )

    async def withdraw(self, reason: str | None = None) -> None:
        """As `Request.withdraw`."""
        try:
            await self._client._send(
                "POST", f"/reviews/{self.review_id}/withdraw", {"reason": reason} if reason else {}
            )
        except NotApproved:
            pass


class AsyncCountersign:
    """`Countersign` for asyncio."""

    def __init__(
        self,
        url: str | None = None,
        agent_key: str | None = None,
        public_key: str | None = None,
        *,
        agent: str = "python-agent",
        session: str | None = None,
        device: str | None = None,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self.settings = Settings.of(url, agent_key, public_key, agent, session, device)
        self._http = http or httpx.AsyncClient(timeout=httpx.Timeout(30.0))

    @classmethod
    def _sharing(cls, settings: Settings) -> AsyncCountersign:
        client = cls.__new__(cls)
        client.settings = settings
        client._http = httpx.AsyncClient(timeout=httpx.Timeout(30.0))
        return client

    @classmethod
    def from_env(cls, *, agent: str = "python-agent") -> AsyncCountersign:
        """As `Countersign.from_env`."""
        return cls(agent=agent)

    def async_client(self) -> AsyncCountersign:
        return self

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncCountersign:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def ask(
        self,
        tool: str,
        args: JsonObject,
        *,
        risk: str,
        summary: str,
        timeout: float = DEFAULT_TIMEOUT,
        session: str | None = None,
        editable: bool = True,
        workspace: str | None = None,
        reasons: list[str] | None = None,
        run: str | None = None,
    ) -> AsyncRequest:
        """As `Countersign.ask`."""
        body = submission(
            self.settings, tool, args, risk=risk, summary=summary, timeout=timeout,
            session=session, editable=editable, workspace=workspace, reasons=reasons, run=run,
        )
        status, answer = await self._send("POST", "/tool-calls", body)
        if status != 201:
            raise refusal(status, answer)
        return AsyncRequest(self, asked_id(answer), body["toolCall"], timeout)

    async def approval(self, review_id: str) -> AsyncApproval:
        """The approval of a review asked earlier (by this process or another),
        as it stands now, to redeem right before its call runs: `Denied`,
        `TimedOut` or another `NotApproved` when it is not approved."""
        return AsyncApproval(self, decided(review_id, *await self._send("GET", f"/reviews/{review_id}/outcome")))

    async def _send(self, method: str, path: str, body: Any = None, read_timeout: float = 30) -> tuple[int, Any]:
        try:
            response = await self._http.request(
                method,
                f"{self.settings.url}/api/v1{path}",
                json=body,
                headers=self.settings.headers(),
                timeout=httpx.Timeout(30.0, read=read_timeout),
            )
        except httpx.HTTPError as e:
            raise Unreachable(f"cannot reach {self.settings.url}: {e}") from e
        return response.status_code, read_answer(self.settings, response)
