"""Pydantic AI: every tool declared with `requires_approval=True` is decided
in Countersign, through Pydantic AI's own deferred-tool results.

    from pydantic_ai import Agent
    from countersign.pydantic_ai import CountersignApprovals

    agent = Agent(model, capabilities=[CountersignApprovals("payments", risk="R3")])

    @agent.tool_plain(requires_approval=True)
    def transfer(amount: int, to: str) -> str: ...

Reviews are asked by `pydantic-ai:<agent>`, in the run's conversation (so
"approve for this session" lasts as long as it does). An approved call runs
with exactly the approved arguments (the reviewer's edit, as the framework's
`override_args`), after its token was checked and redeemed. Anything else
is the framework's denial, with a message the model reads: the reviewer's
reason, or why no decision could be had (no decision in time, an
unreachable server, an answer that cannot be read, a receipt that does not
match). Needs the extra: `pip install 'countersign-sdk[pydantic-ai]'`.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from typing import Any

from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, RunContext, ToolApproved, ToolDenied

from ._adapters import AdapterSettings, verdict
from .client import AsyncCountersign

__all__ = ["CountersignApprovals"]

REQUESTER_PREFIX = "pydantic-ai"


@dataclass
class CountersignApprovals(AdapterSettings, AbstractCapability[Any]):
    """A Pydantic AI capability that asks Countersign about every call waiting
    for approval, then answers the run with the decisions.

    `agent` names the agent to reviewers (`pydantic-ai:<agent>`); the
    other settings are those of `AdapterSettings`.
    """

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    async def handle_deferred_tool_calls(
        self, ctx: RunContext[Any], *, requests: DeferredToolRequests
    ) -> DeferredToolResults | None:
        return await self.review(requests, session=ctx.conversation_id, run=ctx.run_id)

    async def review(
        self, requests: DeferredToolRequests, *, session: str | None = None, run: str | None = None
    ) -> DeferredToolResults:
        """Asks about every call of `requests.approvals` at once and waits for
        the decisions: the results to continue the run with (as the capability
        does, or as `deferred_tool_results=` of a run resumed elsewhere)."""
        client = self.client(REQUESTER_PREFIX, session or f"pydantic-ai-{uuid.uuid4()}")
        async with client:
            answers = await asyncio.gather(*(self._decide(client, call, run) for call in requests.approvals))
        return DeferredToolResults(approvals={call.tool_call_id: answer for call, answer in zip(requests.approvals, answers)})

    async def _decide(self, client: AsyncCountersign, call: ToolCallPart, run: str | None) -> ToolApproved | ToolDenied:
        try:
            args = call.args_as_dict(raise_if_invalid=True)
        except ValueError as unreadable:
            return ToolDenied(f"Countersign: the arguments of {call.tool_name} are not a JSON object ({unreadable}); the call did not run")
        decided = await verdict(
            client, call.tool_name, args,
            risk=self.tier(call.tool_name),
            summary=f"{call.tool_name}, asked by the Pydantic AI agent {self.agent}",
            timeout=self.timeout, run=run, editable=True,
        )
        return ToolDenied(decided) if isinstance(decided, str) else ToolApproved(override_args=decided)
