"""What the framework adapters share: where to ask, the tiers, one verdict
per call, the token spent right before the call runs, and the sentence a
model reads when it may not run.

A framework answers an approval with an object the application may keep and
hand back (messages, deferred results, run state, events). So an adapter
never spends the token when it answers: it spends it in the framework's last
step before the tool's body, for exactly the arguments the body gets. A
replayed approval then meets a spent token and is the framework's own denial.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from . import receipts
from .calls import JsonObject, call_hash, check_risk
from .client import AsyncCountersign, resolve
from .errors import Denied, NotApproved, Refused


@dataclass(frozen=True)
class Cleared:
    """An approved call, its token not spent yet: the review that approved
    it and the arguments it may run with (the reviewer's edit, if any)."""

    review: str
    args: JsonObject


Verdict = Cleared | str
"""An approved call, or why it may not run (what the model reads)."""


@dataclass
class AdapterSettings:
    """Where an adapter asks, for which agent, at which tiers.

    `agent` names the agent to reviewers (`<framework>:<agent>`); `url`,
    `agent_key` and `public_key` each default to their own variable,
    `COUNTERSIGN_URL`, `COUNTERSIGN_AGENT_KEY` and `COUNTERSIGN_PUBLIC_KEY`.
    `risk` is the tier of every call, `risks` a tier per tool name; `timeout`
    the seconds a reviewer has. A tier outside R0-R4, a missing address or
    key, or a public key that cannot be read is a `ValueError` here, before
    any run.
    """

    agent: str
    url: str | None = None
    agent_key: str | None = None
    public_key: str | None = None
    risk: str = "R2"
    risks: Mapping[str, str] = field(default_factory=dict)
    timeout: float = 300.0
    _server: tuple[str, str, str | None] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # Checked here, so a mistake stops the agent before it runs.
        for tier in (self.risk, *self.risks.values()):
            check_risk(tier)
        self._server = resolve(self.url, self.agent_key, self.public_key)
        if self._server[2] is not None:
            receipts.public_key(self._server[2])

    def client(self, framework: str, session: str | None) -> AsyncCountersign:
        """A client asking as `<framework>:<agent>` in `session`."""
        return AsyncCountersign(*self._server, agent=f"{framework}:{self.agent}", session=session)

    def tier(self, tool: str) -> str:
        return self.risks.get(tool, self.risk)


async def verdict(
    client: AsyncCountersign, tool: str, args: JsonObject, *,
    risk: str, summary: str, timeout: float, run: str | None, editable: bool,
) -> Verdict:
    """Asks about one call and waits: the approval, its token and receipt
    checked offline but not spent, else the reason the model reads."""
    try:
        request = await client.ask(tool, args, risk=risk, summary=summary, timeout=timeout, run=run, editable=editable)
        approval = await request.wait()
        # A framework that cannot run edits runs the call as asked: only an
        # approval of exactly that call may let it.
        if not editable and (approval.call["name"] != tool or call_hash(tool, dict(approval.args)) != call_hash(tool, args)):
            return f"Countersign: the approval is for another call than {tool} as the model made it; the call did not run"
        approval.check()
    except NotApproved as failed:
        return refusal_text(failed)
    return Cleared(approval.review_id, dict(approval.args))


async def redeem_before_run(client: AsyncCountersign, review: str | None, tool: str, args: JsonObject) -> str | None:
    """Spends the token of `review` for exactly `tool(args)`, the call about
    to run: `None` when it may run now, else why not (what the model reads)."""
    if review is None:
        return f"Countersign: this call of {tool} was not approved in Countersign; the call did not run"
    try:
        approval = await client.approval(review)
        if approval.call["name"] != tool or approval.token.get("toolCallHash") != call_hash(tool, args):
            return f"Countersign: the approval is for another call than {tool} as it was about to run; the call did not run"
        await approval.redeem()
    except NotApproved as failed:
        return refusal_text(failed)
    return None


def refusal_text(failed: NotApproved) -> str:
    """What the model reads when a call may not run, once."""
    if isinstance(failed, Denied):
        return f"Denied in Countersign by {failed.decided_by or 'a reviewer'}: {failed.reason or 'no reason given'}"
    if isinstance(failed, Refused) and failed.code == "token_used":
        return "Countersign: this approval was already used to run the call once; a replayed approval does not run it again"
    said = str(failed)
    return f"Countersign: {said}" if "did not run" in said else f"Countersign: {said}; the call did not run"
