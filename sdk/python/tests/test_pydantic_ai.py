"""Pydantic AI (the published package, its own `FunctionModel`: no network)
asking through Countersign, against a real `countersign serve`."""

from __future__ import annotations

import asyncio
import base64
import json
import textwrap
import uuid
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from pydantic import TypeAdapter
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults

from conftest import Server, resume_elsewhere, run_guide_example
from countersign.pydantic_ai import CountersignApprovals

CALL = {"amount": 120, "to": "Printer Co"}


def pay_the_printer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The model: asks for one transfer, then says what the tool answered."""
    returned = [
        part.content
        for message in messages
        for part in getattr(message, "parts", [])
        if isinstance(part, ToolReturnPart)
    ]
    if returned:
        return ModelResponse(parts=[TextPart(f"tool said: {returned[-1]}")])
    return ModelResponse(parts=[ToolCallPart("transfer", CALL, tool_call_id="call-1")])


def payments_agent(approvals: CountersignApprovals | None, ran: list[dict[str, Any]]) -> Agent[None, Any]:
    agent: Agent[None, Any] = Agent(
        FunctionModel(pay_the_printer), capabilities=[approvals] if approvals else []
    )

    @agent.tool_plain(requires_approval=True)
    def transfer(amount: int, to: str) -> str:
        """Send money."""
        ran.append({"amount": amount, "to": to})
        return f"sent {amount} to {to}"

    return agent


@pytest.fixture
def name() -> str:
    """An agent name of this test's own, so its reviews are told apart."""
    return f"payments-{uuid.uuid4().hex[:8]}"


def approvals(server: Server, name: str, **settings: Any) -> CountersignApprovals:
    """A reviewer has 30 s unless said otherwise: a test that goes wrong fails fast."""
    return CountersignApprovals(
        name, url=server.url, agent_key=server.agent_key, public_key=server.public_key,
        **{"timeout": 30, **settings},
    )


def test_an_approved_call_runs_once_with_the_asked_arguments(server: Server, name: str) -> None:
    ran: list[dict[str, Any]] = []
    reviewer = server.decide_when_asked(f"pydantic-ai:{name}", {"status": "approved"})
    result = payments_agent(approvals(server, name, risk="R3"), ran).run_sync("Pay the printer")
    reviewer.join()
    assert ran == [CALL]
    assert result.output == "tool said: sent 120 to Printer Co"


def test_an_edited_call_runs_with_exactly_the_reviewers_arguments(server: Server, name: str) -> None:
    ran: list[dict[str, Any]] = []
    edited = {"amount": 90, "to": "Printer Co"}
    reviewer = server.decide_when_asked(
        f"pydantic-ai:{name}", {"status": "approved", "tool_call": {"mode": "edit", "args": json.dumps(edited)}}
    )
    result = payments_agent(approvals(server, name), ran).run_sync("Pay the printer")
    reviewer.join()
    assert ran == [edited]
    assert result.output == "tool said: sent 90 to Printer Co"


def test_a_denied_call_does_not_run_and_the_model_reads_the_reason(server: Server, name: str) -> None:
    ran: list[dict[str, Any]] = []
    reviewer = server.decide_when_asked(
        f"pydantic-ai:{name}", {"status": "rejected", "reason": "Pay the printer next month"}
    )
    result = payments_agent(approvals(server, name), ran).run_sync("Pay the printer")
    reviewer.join()
    assert ran == []
    assert result.output == "tool said: Denied in Countersign by reviewer: Pay the printer next month"


def test_no_decision_in_time_does_not_run_and_withdraws_the_review(server: Server, name: str) -> None:
    ran: list[dict[str, Any]] = []
    result = payments_agent(approvals(server, name, timeout=1), ran).run_sync("Pay the printer")
    assert ran == []
    assert result.output.startswith("tool said: Countersign: no reviewer decided within 1 s")
    assert result.output.count("did not run") == 1, result.output
    assert server.pending(f"pydantic-ai:{name}") == []


def test_an_unreachable_server_does_not_run_the_call(name: str) -> None:
    ran: list[dict[str, Any]] = []
    unreachable = CountersignApprovals(name, url="http://127.0.0.1:1", agent_key="cs_agent_x")
    result = payments_agent(unreachable, ran).run_sync("Pay the printer")
    assert ran == []
    assert result.output.startswith("tool said: Countersign: cannot reach http://127.0.0.1:1")


def test_a_receipt_signed_by_another_key_does_not_run_the_call(server: Server, name: str) -> None:
    ran: list[dict[str, Any]] = []
    other_key = base64.b64encode(
        Ed25519PrivateKey.generate().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    ).decode()
    forged = CountersignApprovals(name, url=server.url, agent_key=server.agent_key, public_key=other_key)
    reviewer = server.decide_when_asked(f"pydantic-ai:{name}", {"status": "approved"})
    result = payments_agent(forged, ran).run_sync("Pay the printer")
    reviewer.join()
    assert ran == []
    assert "the call did not run" in result.output


def test_settings_that_cannot_work_are_refused_before_any_run(server: Server) -> None:
    with pytest.raises(ValueError, match="R5"):
        CountersignApprovals("payments", url=server.url, agent_key=server.agent_key, risk="R5")
    with pytest.raises(ValueError, match="R9"):
        CountersignApprovals("payments", url=server.url, agent_key=server.agent_key, risks={"transfer": "R9"})


def put_aside(name: str) -> tuple[Any, dict[str, Any]]:
    """A run paused on its approval, and what an application keeps of it."""
    paused = payments_agent(None, []).run_sync("Pay the printer", output_type=[str, DeferredToolRequests])
    assert isinstance(paused.output, DeferredToolRequests)
    return paused, {
        "name": name,
        "session": paused.conversation_id,
        "messages": ModelMessagesTypeAdapter.dump_python(paused.all_messages(), mode="json"),
        "requests": TypeAdapter(DeferredToolRequests).dump_python(paused.output, mode="json"),
    }


RESUME = textwrap.dedent(
    """
    import asyncio, json, sys
    from pydantic_ai.messages import ModelMessagesTypeAdapter
    from pydantic import TypeAdapter
    from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults
    from test_pydantic_ai import payments_agent
    from countersign.pydantic_ai import CountersignApprovals

    saved = json.load(sys.stdin)
    history = ModelMessagesTypeAdapter.validate_python(saved["messages"])
    requests = TypeAdapter(DeferredToolRequests).validate_python(saved["requests"])
    approvals = CountersignApprovals(saved["name"])
    results = asyncio.run(approvals.review(requests, session=saved["session"]))
    ran = []
    result = payments_agent(approvals, ran).run_sync(message_history=history, deferred_tool_results=results)
    kept = TypeAdapter(DeferredToolResults).dump_python(results, mode="json")
    print(json.dumps({"ran": ran, "output": result.output, "results": kept}))
    """
)

REPLAY = textwrap.dedent(
    """
    import json, sys
    from pydantic_ai.messages import ModelMessagesTypeAdapter
    from pydantic import TypeAdapter
    from pydantic_ai.tools import DeferredToolResults
    from test_pydantic_ai import payments_agent
    from countersign.pydantic_ai import CountersignApprovals

    saved = json.load(sys.stdin)
    history = ModelMessagesTypeAdapter.validate_python(saved["messages"])
    results = TypeAdapter(DeferredToolResults).validate_python(saved["results"])
    ran = []
    result = payments_agent(CountersignApprovals(saved["name"]), ran).run_sync(message_history=history, deferred_tool_results=results)
    print(json.dumps({"ran": ran, "output": result.output}))
    """
)


def test_a_run_put_aside_is_reviewed_and_resumed_in_another_process(server: Server, name: str) -> None:
    _, saved = put_aside(name)
    resumed = resume_elsewhere(server, RESUME, saved, f"pydantic-ai:{name}")
    assert resumed["ran"] == [CALL] and resumed["output"] == "tool said: sent 120 to Printer Co"


def test_deferred_results_handed_back_again_do_not_run_the_call_twice(server: Server, name: str) -> None:
    # The model call after the approved call fails once; the application
    # retries with the same history and results, as applications do.
    paused, saved = put_aside(name)
    approvals_ = approvals(server, name)
    reviewer = server.decide_when_asked(f"pydantic-ai:{name}", {"status": "approved"})
    results = asyncio.run(approvals_.review(paused.output, session=paused.conversation_id))
    reviewer.join()
    ran: list[dict[str, Any]] = []
    flaky = {"failures": 1}

    def fails_once_after_the_tool(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if any(isinstance(p, ToolReturnPart) for m in messages for p in getattr(m, "parts", [])) and flaky["failures"]:
            flaky["failures"] -= 1
            raise RuntimeError("the model provider is overloaded")
        return pay_the_printer(messages, info)

    agent = payments_agent(approvals_, ran)
    with pytest.raises(RuntimeError, match="overloaded"):
        agent.run_sync(message_history=paused.all_messages(), deferred_tool_results=results, model=FunctionModel(fails_once_after_the_tool))
    retried = agent.run_sync(message_history=paused.all_messages(), deferred_tool_results=results)
    assert ran == [CALL]
    assert retried.output == "tool said: Countersign: this approval was already used to run the call once; a replayed approval does not run it again"


def test_results_kept_and_handed_back_after_a_restart_do_not_run_the_call_again(server: Server, name: str) -> None:
    _, saved = put_aside(name)
    resumed = resume_elsewhere(server, RESUME, saved, f"pydantic-ai:{name}")
    assert resumed["ran"] == [CALL]
    replayed = resume_elsewhere(server, REPLAY, {**saved, "results": resumed["results"]}, f"pydantic-ai:{name}-none", wait=False)
    assert replayed["ran"] == []
    assert "already used to run the call once" in replayed["output"]


def test_an_approval_not_made_in_countersign_does_not_run(server: Server, name: str) -> None:
    paused, _ = put_aside(name)
    ran: list[dict[str, Any]] = []
    by_hand = DeferredToolResults(approvals={"call-1": True})
    result = payments_agent(approvals(server, name), ran).run_sync(message_history=paused.all_messages(), deferred_tool_results=by_hand)
    assert ran == []
    assert result.output == "tool said: Countersign: this call of transfer was not approved in Countersign; the call did not run"


def test_the_guide_s_example_runs_as_written(server: Server) -> None:
    printed = run_guide_example(server, "pydantic-ai.md", "pydantic-ai:payments")
    assert printed[:2] == ["sent 120 to Printer Co", "The printer is paid."]
