"""Google ADK (the published package, with a `BaseLlm` of the test's own: no
network) asking through Countersign, against a real `countersign serve`."""

from __future__ import annotations

import asyncio
import base64
import json
import textwrap
import threading
import time
import uuid
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner, Runner
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.tools import FunctionTool
from google.genai import types

from conftest import Server, resume_elsewhere, run_guide_example
from countersign.google_adk import CountersignConfirmations

CALL = {"amount": 120, "to": "Printer Co"}


class PayThePrinter(BaseLlm):
    """The model: asks for one transfer, then says what the tool answered."""

    model: str = "pay-the-printer"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        answered = [
            part.function_response.response
            for content in llm_request.contents
            for part in content.parts or []
            if part.function_response and part.function_response.name == "transfer"
        ]
        if answered:
            said = answered[-1] or {}
            text = f"tool said: {said.get('result', said.get('error'))}"
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))
        else:
            call = types.FunctionCall(name="transfer", args=CALL, id="call-1")
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))


def payments_agent(confirmations: CountersignConfirmations, ran: list[dict[str, Any]]) -> LlmAgent:
    def transfer(amount: int, to: str) -> str:
        """Send money."""
        ran.append({"amount": amount, "to": to})
        return f"sent {amount} to {to}"

    return LlmAgent(
        name="payments", model=PayThePrinter(), instruction="Pay the invoice.",
        tools=[FunctionTool(transfer, require_confirmation=True)],
        before_tool_callback=confirmations.before_tool_callback,
        after_tool_callback=confirmations.after_tool_callback,
    )


def last_text(events: list[Any]) -> str:
    return [p.text for e in events if e.content for p in e.content.parts or [] if p.text][-1]


def run_agent(confirmations: CountersignConfirmations, ran: list[dict[str, Any]]) -> str:
    """The agent through ADK's own runner; what the model said last."""
    agent = payments_agent(confirmations, ran)

    async def go() -> str:
        runner = InMemoryRunner(agent=agent, app_name="payments")
        session = await runner.session_service.create_session(app_name="payments", user_id="someone")
        message = types.Content(role="user", parts=[types.Part(text="Pay the printer")])
        return last_text(await confirmations.run(runner, user_id="someone", session_id=session.id, new_message=message))

    return asyncio.run(go())


@pytest.fixture
def name() -> str:
    """An agent name of this test's own, so its reviews are told apart."""
    return f"payments-{uuid.uuid4().hex[:8]}"


def confirmations(server: Server, name: str, **settings: Any) -> CountersignConfirmations:
    """A reviewer has 30 s unless said otherwise: a test that goes wrong fails fast."""
    return CountersignConfirmations(
        name, url=server.url, agent_key=server.agent_key,
        **{"public_key": server.public_key, "timeout": 30, **settings},
    )


def test_a_confirmed_call_runs_once_and_its_review_refuses_an_edit(server: Server, name: str) -> None:
    ran: list[dict[str, Any]] = []
    refused: list[int] = []

    def reviewer() -> None:
        for _ in range(600):
            pending = server.pending(f"google-adk:{name}")
            if pending:
                review = pending[0]["confirm"]["confirm_id"]
                edit = {"decided_by_role": "reviewer", "status": "approved",
                        "tool_call": {"mode": "edit", "args": json.dumps({"amount": 1, "to": "Printer Co"})}}
                answer = server.http.post(f"/reviews/{review}/decisions", json=edit, headers={"Idempotency-Key": f"e-{review}"})
                refused.append(answer.status_code)
                server.decide(review, {"status": "approved"})
                return
            time.sleep(0.05)

    thread = threading.Thread(target=reviewer, daemon=True)
    thread.start()
    said = run_agent(confirmations(server, name, risk="R3"), ran)
    thread.join()
    assert refused == [422]
    assert ran == [CALL]
    assert said == "tool said: sent 120 to Printer Co"


def test_a_denied_call_does_not_run_and_the_model_reads_the_reason(server: Server, name: str) -> None:
    ran: list[dict[str, Any]] = []
    reviewer = server.decide_when_asked(f"google-adk:{name}", {"status": "rejected", "reason": "Pay the printer next month"})
    said = run_agent(confirmations(server, name), ran)
    reviewer.join()
    assert ran == []
    assert said == "tool said: Denied in Countersign by reviewer: Pay the printer next month"


def test_no_decision_in_time_does_not_run_and_withdraws_the_review(server: Server, name: str) -> None:
    ran: list[dict[str, Any]] = []
    said = run_agent(confirmations(server, name, timeout=1), ran)
    assert ran == []
    assert said.startswith("tool said: Countersign: no reviewer decided within 1 s")
    assert server.pending(f"google-adk:{name}") == []


def test_an_unreachable_server_does_not_run_the_call(name: str) -> None:
    ran: list[dict[str, Any]] = []
    said = run_agent(CountersignConfirmations(name, url="http://127.0.0.1:1", agent_key="cs_agent_x"), ran)
    assert ran == []
    assert said.startswith("tool said: Countersign: cannot reach http://127.0.0.1:1")


def test_a_receipt_signed_by_another_key_does_not_run_the_call(server: Server, name: str) -> None:
    ran: list[dict[str, Any]] = []
    other = base64.b64encode(
        Ed25519PrivateKey.generate().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    ).decode()
    reviewer = server.decide_when_asked(f"google-adk:{name}", {"status": "approved"})
    said = run_agent(confirmations(server, name, public_key=other), ran)
    reviewer.join()
    assert ran == []
    assert said.endswith("the call did not run")


def test_settings_that_cannot_work_are_refused_before_any_run(server: Server) -> None:
    with pytest.raises(ValueError, match="R5"):
        CountersignConfirmations("payments", url=server.url, agent_key=server.agent_key, risk="R5")
    with pytest.raises(ValueError, match="not base64"):
        CountersignConfirmations("payments", url=server.url, agent_key=server.agent_key, public_key="%%%")


RESUME = textwrap.dedent(
    """
    import asyncio, json, sys
    from google.adk.runners import Runner
    from google.adk.sessions.sqlite_session_service import SqliteSessionService
    from test_google_adk import last_text, payments_agent
    from countersign.google_adk import CountersignConfirmations

    saved = json.load(sys.stdin)
    confirmations = CountersignConfirmations(saved["name"], timeout=30)
    ran = []

    async def go():
        sessions = SqliteSessionService(saved["db"])
        stored = await sessions.get_session(app_name="payments", user_id="someone", session_id=saved["session"])
        answer = await confirmations.answer(stored.events, session=stored.id)
        runner = Runner(agent=payments_agent(confirmations, ran), app_name="payments", session_service=sessions)
        events = await confirmations.run(runner, user_id="someone", session_id=stored.id, new_message=answer)
        return last_text(events)

    print(json.dumps({"ran": ran, "said": asyncio.run(go())}))
    """
)


def test_a_session_left_waiting_is_answered_and_resumed_in_another_process(
    server: Server, name: str, tmp_path: Path
) -> None:
    ran: list[dict[str, Any]] = []
    db = str(tmp_path / "sessions.db")
    checked = confirmations(server, name)

    async def ask_and_leave() -> str:
        sessions = SqliteSessionService(db)
        runner = Runner(agent=payments_agent(checked, ran), app_name="payments", session_service=sessions)
        session = await sessions.create_session(app_name="payments", user_id="someone")
        message = types.Content(role="user", parts=[types.Part(text="Pay the printer")])
        async for _ in runner.run_async(user_id="someone", session_id=session.id, new_message=message):
            pass
        return session.id

    session = asyncio.run(ask_and_leave())
    assert ran == []
    saved = {"name": name, "db": db, "session": session}
    resumed = resume_elsewhere(server, RESUME, saved, f"google-adk:{name}")
    assert resumed == {"ran": [CALL], "said": "tool said: sent 120 to Printer Co"}


class FailsOnceAfterTheTool(PayThePrinter):
    """The model, whose provider fails once when the tool has answered."""

    failures: int = 1

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        answered = any(
            part.function_response and part.function_response.name == "transfer"
            for content in llm_request.contents for part in content.parts or []
        )
        if answered and self.failures:
            self.failures -= 1
            raise RuntimeError("the model provider is overloaded")
        async for response in super().generate_content_async(llm_request, stream):
            yield response


def test_a_confirmation_sent_again_does_not_run_the_call_twice(server: Server, name: str) -> None:
    # The model call after the confirmed call fails once; the application
    # sends the same confirmation again, as applications retry.
    ran: list[dict[str, Any]] = []
    checked = confirmations(server, name)
    agent = payments_agent(checked, ran)
    agent.model = FailsOnceAfterTheTool()
    reviewer = server.decide_when_asked(f"google-adk:{name}", {"status": "approved"})

    async def go() -> list[str]:
        runner = InMemoryRunner(agent=agent, app_name="payments")
        session = await runner.session_service.create_session(app_name="payments", user_id="someone")
        message = types.Content(role="user", parts=[types.Part(text="Pay the printer")])
        asked = [e async for e in runner.run_async(user_id="someone", session_id=session.id, new_message=message)]
        answer = await checked.answer(asked, session=session.id)
        assert answer is not None
        with pytest.raises(RuntimeError, match="overloaded"):
            async for _ in runner.run_async(user_id="someone", session_id=session.id, new_message=answer):
                pass
        replayed = [e async for e in runner.run_async(user_id="someone", session_id=session.id, new_message=answer)]
        return [str(r.response) for e in replayed for r in e.get_function_responses() if r.name == "transfer"]

    responses = asyncio.run(go())
    reviewer.join()
    assert ran == [CALL]
    assert all("sent 120" not in r for r in responses)


def test_a_confirmation_not_made_in_countersign_does_not_run(server: Server, name: str) -> None:
    ran: list[dict[str, Any]] = []
    checked = confirmations(server, name)

    async def go() -> str:
        runner = InMemoryRunner(agent=payments_agent(checked, ran), app_name="payments")
        session = await runner.session_service.create_session(app_name="payments", user_id="someone")
        message = types.Content(role="user", parts=[types.Part(text="Pay the printer")])
        asked = [e async for e in runner.run_async(user_id="someone", session_id=session.id, new_message=message)]
        [request] = [c for e in asked for c in e.get_function_calls() if c.name == "adk_request_confirmation"]
        by_hand = types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
            name="adk_request_confirmation", id=request.id, response={"confirmed": True}))])
        return last_text([e async for e in runner.run_async(user_id="someone", session_id=session.id, new_message=by_hand)])

    said = asyncio.run(go())
    assert ran == []
    assert said == "tool said: Countersign: this call of transfer was not approved in Countersign; the call did not run"


def test_an_agent_without_the_callback_is_refused_before_it_runs(server: Server, name: str) -> None:
    checked = confirmations(server, name)
    agent = payments_agent(checked, [])
    agent.before_tool_callback = None
    runner = InMemoryRunner(agent=agent, app_name="payments")
    message = types.Content(role="user", parts=[types.Part(text="Pay the printer")])
    with pytest.raises(ValueError, match="before_tool_callback"):
        asyncio.run(checked.run(runner, user_id="someone", session_id="s", new_message=message))


def test_the_guide_s_example_runs_as_written(server: Server) -> None:
    printed = run_guide_example(server, "google-adk.md", "google-adk:payments")
    assert printed[:2] == ["sent 120 to Printer Co", "The printer is paid."]
