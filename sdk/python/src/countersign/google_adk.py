"""Google's Agent Development Kit: every tool declared with
`require_confirmation=True` is decided in Countersign, answered with ADK's own
`ToolConfirmation`.

    from google.adk.agents import LlmAgent
    from google.adk.tools import FunctionTool
    from countersign.google_adk import CountersignConfirmations

    confirmations = CountersignConfirmations("payments", risk="R3")
    agent = LlmAgent(..., tools=[FunctionTool(transfer, require_confirmation=True)],
                     before_tool_callback=confirmations.before_tool_callback,
                     after_tool_callback=confirmations.after_tool_callback)
    events = await confirmations.run(runner, user_id=..., session_id=..., new_message=...)

Reviews are asked by `google-adk:<agent>`, in the ADK session (so "approve
for this session" lasts as long as that session). A call is confirmed once a
reviewer approved it and its receipt was checked; the confirmation names the
review, and `before_tool_callback` spends its token right before the tool's
body, for the arguments the body gets. A confirmation sent again (the same
events or message handed back, even after a restart) meets a spent token and
does not run the call twice. ADK runs confirmed tools with the model's
arguments, so reviews say `editable: false`. Anything else is not confirmed,
and `after_tool_callback` tells the model why (the reviewer's reason, or why
no decision could be had) instead of ADK's own "This tool call is
rejected.". `run` refuses an agent with tools that lacks the callbacks. Needs
the extra: `pip install 'countersign-sdk[google-adk]'`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from google.adk.agents import BaseAgent, LlmAgent
from google.adk.events.event import Event
from google.adk.runners import Runner
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_confirmation import ToolConfirmation
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from ._adapters import AdapterSettings, Cleared, redeem_before_run, verdict
from .client import AsyncCountersign

__all__ = ["CountersignConfirmations"]

REQUEST_CONFIRMATION = "adk_request_confirmation"
REASON = "countersign"
"""The key of a `ToolConfirmation` payload that carries why a call may not run."""
REVIEW = "countersign_review"
"""The key of a confirmed `ToolConfirmation` payload that names its review."""


@dataclass
class CountersignConfirmations(AdapterSettings):
    """Answers ADK's tool confirmations through Countersign.

    `agent` names the agent to reviewers (`google-adk:<agent>`); the
    other settings are those of `AdapterSettings`.
    """

    async def run(self, runner: Runner, *, user_id: str, session_id: str, new_message: types.Content) -> list[Event]:
        """Runs the agent on `new_message`, answering every confirmation it
        asks for through Countersign, until it asks for none: every event.
        `ValueError` before anything runs when an agent with tools lacks
        `before_tool_callback` (its confirmed calls would run unspent)."""
        self._check_callbacks(runner.agent)
        events: list[Event] = []
        message: types.Content | None = new_message
        while message is not None:
            turn = [e async for e in runner.run_async(user_id=user_id, session_id=session_id, new_message=message)]
            events.extend(turn)
            message = await self.answer(turn, session=session_id)
        return events

    async def answer(self, events: Iterable[Event], *, session: str | None = None) -> types.Content | None:
        """The message that answers every confirmation request of `events`
        not answered yet, once each was decided (asked all at once); `None`
        when none waits. Send it to the runner as the next `new_message`."""
        asked = waiting(events)
        if not asked:
            return None
        client = self.client("google-adk", session)
        async with client:
            parts = await asyncio.gather(*(self._confirm(client, call, session) for call in asked))
        return types.Content(role="user", parts=list(parts))

    async def before_tool_callback(
        self, tool: BaseTool, args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        """For ADK's `before_tool_callback`: spends a confirmed call's token
        right before the tool runs, for exactly `args`; a call confirmed
        elsewhere, or a confirmation used before, answers the model with why
        instead of running."""
        confirmation = tool_context.tool_confirmation
        if confirmation is None or not confirmation.confirmed:
            return None
        payload = confirmation.payload
        review = payload.get(REVIEW) if isinstance(payload, dict) else None
        async with self.client("google-adk", tool_context.session.id) as client:
            refused = await redeem_before_run(client, review if isinstance(review, str) else None, tool.name, args)
        return None if refused is None else {"error": refused}

    def after_tool_callback(
        self, tool: BaseTool, args: dict[str, Any], tool_context: ToolContext, tool_response: Any
    ) -> dict[str, Any] | None:
        """For ADK's `after_tool_callback`: a call Countersign did not confirm
        answers the model with why, instead of ADK's fixed refusal."""
        confirmation = tool_context.tool_confirmation
        if confirmation is None or confirmation.confirmed or not isinstance(confirmation.payload, dict):
            return None
        reason = confirmation.payload.get(REASON)
        return {"error": reason} if isinstance(reason, str) else None

    async def _confirm(self, client: AsyncCountersign, call: types.FunctionCall, run: str | None) -> types.Part:
        original = (call.args or {}).get("originalFunctionCall")
        name = original.get("name") if isinstance(original, dict) else None
        args = original.get("args") if isinstance(original, dict) else None
        if not isinstance(name, str) or not isinstance(args, dict):
            decided: Cleared | str = "Countersign: the confirmation names no call; the call did not run"
        else:
            decided = await verdict(
                client, name, args,
                risk=self.tier(name),
                summary=f"{name}, asked by the ADK agent {self.agent}",
                timeout=self.timeout, run=run, editable=False,
            )
        confirmation = ToolConfirmation(
            confirmed=isinstance(decided, Cleared),
            payload={REVIEW: decided.review} if isinstance(decided, Cleared) else {REASON: decided},
        )
        return types.Part(
            function_response=types.FunctionResponse(
                name=REQUEST_CONFIRMATION, id=call.id, response=confirmation.model_dump(by_alias=True, mode="json")
            )
        )

    def _check_callbacks(self, agent: object) -> None:
        if isinstance(agent, LlmAgent) and agent.tools:
            given = agent.before_tool_callback
            callbacks = given if isinstance(given, list) else [given]
            if self.before_tool_callback not in callbacks:
                raise ValueError(
                    f"the ADK agent {agent.name} has tools but not before_tool_callback=confirmations.before_tool_callback: "
                    "its confirmed calls would run without spending their approval"
                )
        for sub in agent.sub_agents if isinstance(agent, BaseAgent) else []:
            self._check_callbacks(sub)


def waiting(events: Iterable[Event]) -> list[types.FunctionCall]:
    """The confirmation requests of `events` with no response yet."""
    requests: list[types.FunctionCall] = []
    answered: set[str] = set()
    for event in events:
        requests.extend(c for c in event.get_function_calls() if c.name == REQUEST_CONFIRMATION)
        answered.update(r.id for r in event.get_function_responses() if r.name == REQUEST_CONFIRMATION and r.id)
    return [request for request in requests if request.id not in answered]
