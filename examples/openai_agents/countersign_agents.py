"""Countersign for the OpenAI Agents SDK (PyPI `openai-agents`).

A run stops on every tool declared with `needs_approval`; `run_reviewed` asks
Countersign about each call it stopped on (tool name, arguments, agent, run),
waits for the reviewer, and approves the call once its receipt is checked, or
rejects it with the reviewer's reason, which the model reads; then it resumes
the run, until the run ends, with the agent's function tools wrapped so that an
approved call's single-use token is spent right before the tool's body, for
the model's exact arguments: a pending run resumed twice does not run a call
twice. Fail closed: no decision in time,
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

Needs the OpenAI Agents SDK and Countersign's Python SDK (`pip install ./sdk/python`).
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from agents import Agent, FunctionTool, RunResult, Runner, RunState
from agents.tool_context import ToolContext

from countersign import Countersign as Client
from countersign import Denied, NotApproved, Refused, Request, TimedOut, call_hash

ROLE_PREFIX = "openai-agents"


class CountersignError(Exception):
    """Countersign could not be asked, or its answer cannot be used."""


@dataclass
class Countersign:
    """A Countersign server and an agent key (asked through the Python SDK)."""

    server: str
    key: str
    timeout: float = 300.0
    risk_tier: str = "R2"
    public_key: str | None = None
    """The server's receipt key (base64): approvals are checked offline with it."""

    _clients: dict[str, Client] = field(default_factory=dict, repr=False)

    def _client(self, agent: str) -> Client:
        """One SDK client (and its connections) per agent name."""
        if agent not in self._clients:
            try:
                self._clients[agent] = Client(self.server, self.key, self.public_key, agent=f"{ROLE_PREFIX}:{agent}")
            except ValueError as unusable:  # a public key that cannot be read
                raise CountersignError(str(unusable)) from unusable
        return self._clients[agent]

    def ask(self, tool: str, args: dict, *, agent: str, session: str, run: str) -> str:
        """Asks for a review of one call; returns its id."""
        try:
            return self._client(agent).ask(
                tool, args, risk=self.risk_tier, summary=f"{agent} (OpenAI Agents SDK) calls {tool}",
                timeout=self.timeout, session=session, run=run,
                # The SDK runs a call with the arguments the model gave, never edited ones.
                editable=False,
            ).review_id
        except NotApproved as e:
            raise CountersignError(str(e)) from e

    def decision(self, review: str, tool: str, args: dict) -> tuple[bool, str]:
        """Waits for the reviewer: (approved, what the model is told). The
        approval's receipt is checked before it says yes; its token is spent
        by `spend` as the tool runs."""
        request = Request(self._client("reviewed"), review, {"name": tool, "args": args}, self.timeout)
        try:
            approval = request.wait()
        except TimedOut:
            return False, f"Countersign: no reviewer decided within {int(self.timeout)} s; the call did not run"
        except Denied as denied:
            if denied.kind == "withdrawn":
                return False, f"Countersign: no reviewer decided within {int(self.timeout)} s; the call did not run"
            by = denied.decided_by or "a reviewer"
            return False, f"Denied in Countersign by {by}: {denied.reason}" if denied.reason else f"Denied in Countersign by {by}"
        except NotApproved as e:
            raise CountersignError(str(e)) from e
        if approval.call != {"name": tool, "args": args}:
            return False, "Countersign: the reviewer edited the call, and this agent cannot run edited arguments; the call did not run"
        try:
            approval.check()
        except NotApproved as refused:
            return False, f"Countersign: {refused}; the call did not run"
        return True, f"Approved in Countersign by {approval.decided_by or 'a reviewer'}"

    def spend(self, review: str, tool: str, args: dict) -> str | None:
        """Spends the token of `review` for exactly `tool(args)`, the call about
        to run: None when it may run now, else what the model is told."""
        try:
            approval = self._client("reviewed").approval(review)
            if approval.token.get("toolCallHash") != call_hash(tool, args):
                return f"Countersign: the approval is for another call than {tool} as it was about to run; the call did not run"
            approval.redeem()
        except Refused as refused:
            if refused.code == "token_used":
                return "Countersign: this approval was already used to run the call once; a replayed approval does not run it again"
            return f"Countersign: {refused}; the call did not run"
        except NotApproved as refused:
            return f"Countersign: {refused}; the call did not run"
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


def _gated(agent: Agent, cleared: dict[str, str], countersign: Countersign) -> Agent:
    """`agent` with each function tool spending an approved call's token right
    before its body runs."""

    def gate(tool: FunctionTool) -> FunctionTool:
        async def invoke(context: ToolContext[Any], arguments: str) -> Any:
            review = cleared.get(context.tool_call_id)
            if review is None:
                return await tool.on_invoke_tool(context, arguments)
            try:
                args = json.loads(arguments or "{}")
            except ValueError:
                args = {"arguments": arguments}
            refused = countersign.spend(review, tool.name, args if isinstance(args, dict) else {"arguments": args})
            return refused if refused is not None else await tool.on_invoke_tool(context, arguments)

        return dataclasses.replace(tool, on_invoke_tool=invoke)

    return agent.clone(tools=[gate(t) if isinstance(t, FunctionTool) else t for t in agent.tools])


async def resume_reviewed(agent: Agent, pending: PendingRun, countersign: Countersign, max_turns: int = 10) -> RunResult:
    """Waits for the reviewers of a pending run, answers the run, resumes it
    (each approved call's token spent as its tool runs), and goes on until it
    no longer stops on a call."""
    cleared: dict[str, str] = {}
    gated = _gated(agent, cleared, countersign)
    state = await RunState.from_string(gated, pending.state)
    for item in state.get_interruptions():
        review = pending.reviews.get(_call_id(item), "error:the call was never asked about")
        try:
            if review.startswith("error:"):
                raise CountersignError(review.removeprefix("error:"))
            approved, message = countersign.decision(review, item.tool_name, _arguments(item))
        except CountersignError as e:
            approved, message = False, f"Countersign: {e}; the call did not run"
        if approved:
            cleared[_call_id(item)] = review
            state.approve(item)
        else:
            state.reject(item, rejection_message=message)
    result = await Runner.run(gated, state, max_turns=max_turns)
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
