"""Countersign for the OpenAI Agents SDK (PyPI `openai-agents`).

A run stops on every tool declared with `needs_approval`; `run_reviewed` asks
Countersign about each call it stopped on (tool name, arguments, agent, run),
waits for the reviewer, and approves the call only once its single-use token
is redeemed, or rejects it with the reviewer's reason, which the model reads;
then it resumes the run, until the run ends. Fail closed: no decision in time,
an unreachable server or an answer that cannot be read rejects the call,
saying why. "Approve for this session" is Countersign's scope grant: a later
identical call is approved by the grant, each time with its own decision, and
a reviewer's later per-call decision still stands. The SDK cannot run edited
arguments, so the reviews say so (`editable: false`): the desk offers no edit,
and the server refuses one.

A run waiting for reviewers can be put aside: `PendingRun.save` keeps the
SDK's run state and the reviews asked; `resume_reviewed` picks it up in
another process and waits for the same reviews.

Given the server's public key (`countersign keys signing-key`), the bridge
checks each approval's signed receipt offline before it spends the token: a
receipt signed by another key, or for another call or token, rejects the call
and leaves the token unspent.

Needs the SDK; checking receipts also needs `cryptography` and `rfc8785`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from typing import Any

from agents import Agent, RunResult, Runner, RunState

ROLE_PREFIX = "openai-agents"


class CountersignError(Exception):
    """Countersign could not be asked, or its answer cannot be used."""


@dataclass
class Countersign:
    """A Countersign server and an agent key."""

    server: str
    key: str
    timeout: float = 300.0
    risk_tier: str = "R2"
    public_key: str | None = None
    """The server's receipt key (base64): approvals are checked offline with it."""

    def _call(self, method: str, path: str, body: Any = None, wait: float = 30) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.server.rstrip('/')}/api/v1{path}",
            data=data,
            method=method,
            headers={"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=wait + 30) as response:
                return response.status, json.load(response)
        except urllib.error.HTTPError as refused:
            try:
                return refused.code, json.load(refused)
            except ValueError:
                return refused.code, {}
        except (OSError, ValueError) as e:
            raise CountersignError(f"cannot reach {self.server}: {e}") from e

    def ask(self, tool: str, args: dict, *, agent: str, session: str, run: str) -> str:
        """Asks for a review of one call; returns its id."""
        expires = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + self.timeout))
        status, body = self._call("POST", "/tool-calls", {
            "requestedByRole": f"{ROLE_PREFIX}:{agent}",
            "sessionId": session,
            "runId": run,
            "toolCall": {"name": tool, "args": args},
            "humanSummary": f"{agent} (OpenAI Agents SDK) calls {tool}",
            "riskTier": self.risk_tier,
            "expiresAt": expires,
            # The SDK runs a call with the arguments the model gave, never edited ones.
            "editable": False,
        })
        review = body.get("outcome", {}).get("confirm_id") if isinstance(body, dict) else None
        if status != 201 or not isinstance(review, str):
            raise CountersignError(f"the review was refused ({status}): {body}")
        return review

    def decision(self, review: str, tool: str, args: dict) -> tuple[bool, str]:
        """Waits for the reviewer: (approved, what the model is told)."""
        deadline = time.monotonic() + self.timeout
        while True:
            left = max(0, min(60, int(deadline - time.monotonic())))
            status, outcome = self._call("GET", f"/reviews/{review}/outcome?wait={left}", wait=left)
            if status != 200 or "outcome" not in outcome:
                raise CountersignError(f"the outcome could not be read ({status})")
            if outcome["outcome"] != "TOOL_BLOCKED_PENDING_APPROVAL" or left == 0:
                break
        verdict, kind = outcome["outcome"], outcome.get("kind")
        by = outcome.get("decided_by_role") or "a reviewer"
        if verdict == "TOOL_BLOCKED_PENDING_APPROVAL" or kind in ("expired", "withdrawn"):
            return False, f"Countersign: no reviewer decided within {int(self.timeout)} s; the call did not run"
        if verdict == "TOOL_DENIED":
            reason = outcome.get("reason")
            return False, f"Denied in Countersign by {by}: {reason}" if reason else f"Denied in Countersign by {by}"
        try:
            approved = json.loads(outcome.get("approved_call") or "null") or {}
        except ValueError:
            return False, "Countersign: the approved call cannot be read; the call did not run"
        if approved.get("name") != tool or approved.get("args") != args:
            return False, "Countersign: the reviewer edited the call, and this agent cannot run edited arguments; the call did not run"
        token = (outcome.get("token") or {}).get("tokenId")
        if self.public_key:
            problem = receipt_problem(outcome, self.public_key, approved)
            if problem:
                return False, f"Countersign: {problem}; the call did not run"
        status, refused = self._call("POST", f"/reviews/{review}/redeem", {"tokenId": token, "toolCall": approved})
        if status != 200:
            return False, f"Countersign: the approval's token was refused ({status}): {refused.get('error', {}).get('message', '')}"
        return True, f"Approved in Countersign by {by}"


def receipt_problem(outcome: dict, public_key: str, call: dict) -> str | None:
    """What is wrong with an approval's signed receipt (None: it is sound):
    the Ed25519 signature over its RFC 8785 canonical body, by `public_key`,
    for this approval's token and exactly this call."""
    try:
        import rfc8785
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    except ImportError as missing:
        return f"receipts cannot be checked here ({missing}): install cryptography and rfc8785"

    receipt = outcome.get("receipt")
    if not isinstance(receipt, dict) or not isinstance(receipt.get("body"), dict):
        return "the approval carries no signed receipt"
    body = receipt["body"]
    try:
        key = Ed25519PublicKey.from_public_bytes(base64.b64decode(public_key, validate=True))
        key.verify(base64.b64decode(receipt.get("signature", ""), validate=True), rfc8785.dumps(body))
    except (InvalidSignature, ValueError, TypeError):
        return "the approval's receipt was not signed by the trusted key"
    token = body.get("token") if isinstance(body.get("token"), dict) else {}
    if body.get("status") != "approved" or token.get("token_id") != (outcome.get("token") or {}).get("tokenId"):
        return "the approval's receipt is not for this token"
    try:
        asked = hashlib.sha256(rfc8785.dumps(call)).hexdigest()
    except (ValueError, TypeError):
        return "the call about to run has no canonical form"
    if token.get("tool_call_hash") != asked:
        return "the approval's receipt is for another call"
    return None


@dataclass
class PendingRun:
    """A run stopped on calls that reviewers are asked about."""

    state: str
    session: str
    run: str
    reviews: dict[str, str] = field(default_factory=dict)

    def save(self) -> str:
        """The text to keep, for `resume_reviewed`."""
        return json.dumps({"state": self.state, "session": self.session, "run": self.run, "reviews": self.reviews})

    @staticmethod
    def load(text: str) -> PendingRun:
        saved = json.loads(text)
        return PendingRun(saved["state"], saved["session"], saved["run"], saved["reviews"])


def _arguments(item: Any) -> dict:
    raw = getattr(item.raw_item, "arguments", None)
    if raw is None and isinstance(item.raw_item, dict):
        raw = item.raw_item.get("arguments")
    try:
        args = json.loads(raw or "{}")
    except ValueError:
        return {"arguments": raw}
    return args if isinstance(args, dict) else {"arguments": args}


def _call_id(item: Any) -> str:
    raw = item.raw_item
    return (raw.get("call_id") if isinstance(raw, dict) else getattr(raw, "call_id", None)) or str(id(item))


def ask_all(result: RunResult, countersign: Countersign, session: str, run: str) -> PendingRun:
    """Asks for a review of every call the run stopped on, without waiting."""
    pending = PendingRun(result.to_state().to_string(), session, run)
    for item in result.interruptions:
        try:
            pending.reviews[_call_id(item)] = countersign.ask(
                item.tool_name, _arguments(item), agent=item.agent.name, session=session, run=run,
            )
        except CountersignError as e:
            pending.reviews[_call_id(item)] = f"error:{e}"
    return pending


async def resume_reviewed(agent: Agent, pending: PendingRun, countersign: Countersign, max_turns: int = 10) -> RunResult:
    """Waits for the reviewers of a pending run, answers the run, resumes it,
    and goes on until it no longer stops on a call."""
    state = await RunState.from_string(agent, pending.state)
    for item in state.get_interruptions():
        review = pending.reviews.get(_call_id(item), "error:the call was never asked about")
        try:
            if review.startswith("error:"):
                raise CountersignError(review.removeprefix("error:"))
            approved, message = countersign.decision(review, item.tool_name, _arguments(item))
        except CountersignError as e:
            approved, message = False, f"Countersign: {e}; the call did not run"
        if approved:
            state.approve(item)
        else:
            state.reject(item, rejection_message=message)
    result = await Runner.run(agent, state, max_turns=max_turns)
    if result.interruptions:
        return await resume_reviewed(agent, ask_all(result, countersign, pending.session, pending.run), countersign, max_turns)
    return result


async def run_reviewed(agent: Agent, prompt: str, countersign: Countersign, session: str | None = None, max_turns: int = 10) -> RunResult:
    """Runs `agent` on `prompt`, every call it stops on decided in Countersign."""
    session = session or f"openai-agents-{uuid.uuid4()}"
    result = await Runner.run(agent, prompt, max_turns=max_turns)
    if not result.interruptions:
        return result
    return await resume_reviewed(agent, ask_all(result, countersign, session, str(uuid.uuid4())), countersign, max_turns)
