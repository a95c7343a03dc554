"""Two LangChain agents for Countersign's browser tests, built as their users
build them: `create_agent` with `HumanInTheLoopMiddleware`, once in each of
its interrupt modes. The model is a scripted chat model (no network, no keys):
its first turn asks for fixed tool calls, and its last turn echoes every tool
message it received, so a test reads from the thread's state exactly what ran
and what the model was told.

- `batched`: one model turn asks for two gated tools; the middleware raises one
  interrupt listing both (`action_requests`), answered together.
- `per_call`: one model turn asks for three gated tools; the middleware raises
  one `tool_approval` interrupt per call, each with its `response_schema`, each
  answered by its interrupt id.
- `tickets`: `per_call` again, one model turn asking for the same tool twice
  (two tickets), so two similar calls wait in one thread.
"""

import json
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from pydantic import Field


class ScriptedModel(BaseChatModel):
    """Asks for `calls` first; once tool results are back, echoes them as JSON."""

    calls: list[dict[str, Any]]

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools, **kwargs):
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        results = [m for m in messages if isinstance(m, ToolMessage)]
        if results:
            seen = [{"tool": m.name, "status": m.status, "content": m.content} for m in results]
            reply = AIMessage(content=json.dumps(seen))
        else:
            reply = AIMessage(
                content="",
                tool_calls=[
                    {"name": c["name"], "args": c["args"], "id": f"call_{i}_{c['name']}", "type": "tool_call"}
                    for i, c in enumerate(self.calls)
                ],
            )
        return ChatResult(generations=[ChatGeneration(message=reply)])


@tool
def issue_refund(order_id: str, amount: float) -> str:
    """Refund an order."""
    return f"refunded {amount} on order {order_id}"


@tool
def ask_customer(question: str) -> str:
    """Ask the customer a question (a human answers in its place)."""
    return f"the tool ran and asked: {question}"


@tool
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


@tool
def send_email(to: str, subject: str) -> str:
    """Send an email."""
    return f"sent '{subject}' to {to}"


@tool
def create_ticket(title: str, priority: str) -> str:
    """Open a ticket in the tracker."""
    return f"opened '{title}' at priority {priority}"


@tool
def run_query(sql: str, limit: int = Field(default=100, ge=1, le=1000)) -> str:
    """Run a read-only SQL query."""
    return f"ran {sql} with limit {limit}"


batched = create_agent(
    ScriptedModel(
        calls=[
            {"name": "issue_refund", "args": {"order_id": "A-1001", "amount": 42.5}},
            {"name": "ask_customer", "args": {"question": "Which address should the replacement go to?"}},
        ]
    ),
    tools=[issue_refund, ask_customer],
    middleware=[
        HumanInTheLoopMiddleware(
            interrupt_on={
                "issue_refund": {"allowed_decisions": ["approve", "edit", "reject"]},
                "ask_customer": {
                    "allowed_decisions": ["approve", "reject", "respond"],
                    "description": "Ask the customer where the replacement goes",
                },
            }
        )
    ],
)

per_call = create_agent(
    ScriptedModel(
        calls=[
            {"name": "delete_file", "args": {"path": "reports/q3.csv"}},
            {"name": "send_email", "args": {"to": "ana@example.com", "subject": "Q3 report"}},
            {"name": "run_query", "args": {"sql": "SELECT * FROM orders", "limit": 100}},
        ]
    ),
    tools=[delete_file, send_email, run_query],
    middleware=[
        HumanInTheLoopMiddleware(
            interrupt_on={
                "delete_file": {"allowed_decisions": ["approve", "reject"]},
                "send_email": True,
                "run_query": {"allowed_decisions": ["approve", "edit", "reject"]},
            },
            interrupt_mode="per_call",
        )
    ],
)

tickets = create_agent(
    ScriptedModel(
        calls=[
            {"name": "create_ticket", "args": {"title": "Printer on floor 2 is down", "priority": "high"}},
            {"name": "create_ticket", "args": {"title": "Order more toner", "priority": "low"}},
        ]
    ),
    tools=[create_ticket],
    middleware=[
        HumanInTheLoopMiddleware(
            interrupt_on={"create_ticket": {"allowed_decisions": ["approve", "edit", "reject"]}},
            interrupt_mode="per_call",
        )
    ],
)
