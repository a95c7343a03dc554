"""Pydantic AI: every tool declared with `requires_approval=True` is decided
in Countersign, through Pydantic AI's own deferred-tool results.

    from pydantic_ai import Agent
    from countersign.pydantic_ai import CountersignApprovals

    agent = Agent(model, capabilities=[CountersignApprovals("payments", risk="R3")])

    @agent.tool_plain(requires_approval=True)
    def transfer(amount: int, to: str) -> str: ...

Reviews are asked by `pydantic-ai:<agent>`, in the run's conversation
(`conversation_id`: "approve for this session" lasts as long as that
conversation, and never reaches another one the same agent serves). An
approved call runs with exactly the approved arguments (the reviewer's edit,
as the framework's `override_args`); its token is spent by the capability's
`wrap_tool_execute`, right before the tool's body, for the arguments the body
gets. The review travels in the results' `metadata`, so results kept and
handed back (`deferred_tool_results=` of a run resumed elsewhere, even after
a restart) find it, and a second run of one approval is refused. Anything
else is the framework's denial, with a message the model reads: the
reviewer's reason, or why no decision could be had (no decision in time, an
unreachable server, an answer that cannot be read, a receipt that does not
match, an approval already used). The agent that runs approved calls must
carry the capability. Needs the extra: `pip install 'countersign-sdk[pydantic-ai]'`.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from typing import Any

from pydantic_ai.capabilities import AbstractCapability, WrapToolExecuteHandler
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.tools import (
    DeferredToolRequests,
    DeferredToolResults,
    RunContext,
    ToolApproved,
    ToolDefinition,
    ToolDenied,
)

from ._adapters import AdapterSettings, Cleared, redeem_before_run, verdict
from .client import AsyncCountersign

__all__ = ["CountersignApprovals"]

REQUESTER_PREFIX = "pydantic-ai"
REVIEW = "countersign_review"
"""The key of a call's `DeferredToolResults.metadata` that names its review."""


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
        does, or as `deferred_tool_results=` of a run resumed elsewhere, by an
        agent carrying this capability). `session` is the conversation
        (`conversation_id` of the paused run)."""
        client = self.client(REQUESTER_PREFIX, session or f"pydantic-ai-{uuid.uuid4()}")
        async with client:
            answers = await asyncio.gather(*(self._decide(client, call, run) for call in requests.approvals))
        results = DeferredToolResults()
        for call, answer in zip(requests.approvals, answers):
            if isinstance(answer, Cleared):
                results.approvals[call.tool_call_id] = ToolApproved(override_args=answer.args)
                results.metadata[call.tool_call_id] = {REVIEW: answer.review}
            else:
                results.approvals[call.tool_call_id] = ToolDenied(answer)
        return results

    async def wrap_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
        handler: WrapToolExecuteHandler,
    ) -> Any:
        """Spends an approved call's token right before its body runs, for
        exactly the arguments it gets; a call approved elsewhere, or an
        approval used before, is denied instead."""
        if not ctx.tool_call_approved:
            return await handler(args)
        metadata = ctx.tool_call_metadata
        review = metadata.get(REVIEW) if isinstance(metadata, dict) else None
        async with self.client(REQUESTER_PREFIX, ctx.conversation_id) as client:
            refused = await redeem_before_run(client, review if isinstance(review, str) else None, call.tool_name, args)
        return ToolDenied(refused) if refused is not None else await handler(args)

    async def _decide(self, client: AsyncCountersign, call: ToolCallPart, run: str | None) -> Cleared | str:
        try:
            args = call.args_as_dict(raise_if_invalid=True)
        except ValueError as unreadable:
            return f"Countersign: the arguments of {call.tool_name} are not a JSON object ({unreadable}); the call did not run"
        return await verdict(
            client, call.tool_name, args,
            risk=self.tier(call.tool_name),
            summary=f"{call.tool_name}, asked by the Pydantic AI agent {self.agent}",
            timeout=self.timeout, run=run, editable=True,
        )
