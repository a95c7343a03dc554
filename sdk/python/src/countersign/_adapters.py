"""What the framework adapters share: where to ask, the tiers, and one
verdict per call, with the sentence a model reads when it may not run."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .calls import JsonObject, call_hash, check_risk
from .client import AsyncCountersign, Settings
from .errors import Denied, NotApproved

Verdict = JsonObject | str
"""The arguments a call may run with, or why it may not run."""


def server_of(url: str | None, agent_key: str | None, public_key: str | None) -> tuple[str, str, str | None]:
    """The server, key and public key, from the arguments or the environment;
    `ValueError` naming what is missing or unreadable."""
    if url is None or agent_key is None:
        env_url, env_key, env_public = Settings.from_env()
        url, agent_key, public_key = url or env_url, agent_key or env_key, public_key or env_public
    Settings.of(url, agent_key, public_key, "check", None)
    return url, agent_key, public_key


@dataclass
class AdapterSettings:
    """Where an adapter asks, for which agent, at which tiers.

    `agent` names the agent to reviewers (`<framework>:<agent>`); `url`,
    `agent_key` and `public_key` default to `COUNTERSIGN_URL`,
    `COUNTERSIGN_AGENT_KEY` and `COUNTERSIGN_PUBLIC_KEY`. `risk` is the tier
    of every call, `risks` a tier per tool name; `timeout` the seconds a
    reviewer has. A tier outside R0-R4, a missing address or key, or a public
    key that cannot be read is a `ValueError` here, before any run.
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
        self._server = server_of(self.url, self.agent_key, self.public_key)

    def client(self, framework: str, session: str | None) -> AsyncCountersign:
        """A client asking as `<framework>:<agent>` in `session`."""
        return AsyncCountersign(*self._server, agent=f"{framework}:{self.agent}", session=session)

    def tier(self, tool: str) -> str:
        return self.risks.get(tool, self.risk)


async def verdict(
    client: AsyncCountersign, tool: str, args: JsonObject, *,
    risk: str, summary: str, timeout: float, run: str | None, editable: bool,
) -> Verdict:
    """Asks about one call and waits: the approved arguments once its token
    was checked and redeemed, else the reason the model reads."""
    try:
        request = await client.ask(tool, args, risk=risk, summary=summary, timeout=timeout, run=run, editable=editable)
        approval = await request.wait()
        # A framework that cannot run edits runs the call as asked: only an
        # approval of exactly that call may let it, checked before the token is spent.
        if not editable and (approval.call["name"] != tool or call_hash(tool, dict(approval.args)) != call_hash(tool, args)):
            return f"Countersign: the approval is for another call than {tool} as the model made it; the call did not run"
        await approval.redeem()
    except Denied as denied:
        return f"Denied in Countersign by {denied.decided_by or 'a reviewer'}: {denied.reason or 'no reason given'}"
    except NotApproved as failed:
        return f"Countersign: {failed}; the call did not run"
    return dict(approval.args)
