"""What the framework adapters share: where to ask, the tiers, and one
verdict per call, with the sentence a model reads when it may not run."""

from __future__ import annotations

from collections.abc import Mapping

from .calls import JsonObject, check_risk
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


def check_tiers(risk: str, risks: Mapping[str, str]) -> None:
    """`ValueError` for a tier outside R0-R4."""
    for tier in (risk, *risks.values()):
        check_risk(tier)


async def verdict(
    client: AsyncCountersign, tool: str, args: JsonObject, *,
    risk: str, summary: str, timeout: float, run: str | None, editable: bool,
) -> Verdict:
    """Asks about one call and waits: the approved arguments once its token
    was checked and redeemed, else the reason the model reads."""
    try:
        request = await client.ask(tool, args, risk=risk, summary=summary, timeout=timeout, run=run, editable=editable)
        approval = await request.wait()
        await approval.redeem()
    except Denied as denied:
        return f"Denied in Countersign by {denied.decided_by or 'a reviewer'}: {denied.reason or 'no reason given'}"
    except NotApproved as failed:
        return f"Countersign: {failed}; the call did not run"
    return dict(approval.args)
