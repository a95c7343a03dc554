"""A small LangGraph graph for Countersign's browser tests: its nodes ask a
human through `interrupt()` in both shapes reviewers meet, and record the
answer they get in the state, so a test can read back exactly what was decided.

Start a thread with the input `{"case": ...}`:
- "human": one interrupt in the "human interrupt" shape (a list of one);
- "middleware": one interrupt in the human-in-the-loop middleware shape;
- "pair": two nodes run side by side, so the thread waits on two interrupts;
- "raw": an interrupt whose value is in neither shape;
- "batch": one middleware interrupt asking about two actions at once;
- "guarded": a human interrupt whose node refuses an edit above its limit (the
  run fails, and the interrupt still waits for a better answer).
"""

from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt


def merge(left: dict, right: dict) -> dict:
    return {**(left or {}), **(right or {})}


class State(TypedDict, total=False):
    case: str
    answers: Annotated[dict, merge]


def human_interrupt(action: str, args: dict, description: str, **allow) -> list:
    config = {"allow_accept": True, "allow_edit": True, "allow_respond": True, "allow_ignore": True}
    config.update(allow)
    return [{"action_request": {"action": action, "args": args}, "config": config, "description": description}]


def send_email(state: State) -> dict:
    response = interrupt(
        human_interrupt(
            "send_email",
            {"to": "ana@example.com", "subject": "Quarterly numbers", "body": "Attached."},
            "Send the **quarterly numbers** to Ana.\n\n- to: `ana@example.com`\n- one attachment",
        )
    )
    return {"answers": {"send_email": response}}


def wire_transfer(state: State) -> dict:
    response = interrupt(
        {
            "action_requests": [
                {
                    "name": "wire_transfer",
                    "args": {"amount": 1200, "currency": "EUR", "to": "DE89 3704 0044 0532 0130 00"},
                    "description": "Pay invoice *2026-114* to the supplier",
                }
            ],
            "review_configs": [{"action_name": "wire_transfer", "allowed_decisions": ["approve", "edit", "reject"]}],
        }
    )
    return {"answers": {"wire_transfer": response}}


def delete_branch(state: State) -> dict:
    response = interrupt(
        human_interrupt(
            "delete_branch",
            {"repo": "acme/shop", "branch": "old-checkout"},
            "Delete the merged branch `old-checkout`",
            allow_edit=False,
        )
    )
    return {"answers": {"delete_branch": response}}


def restart_service(state: State) -> dict:
    response = interrupt(
        {
            "action_requests": [{"name": "restart_service", "args": {"service": "billing"}, "description": "Restart billing"}],
            "review_configs": [{"action_name": "restart_service", "allowed_decisions": ["approve", "reject"]}],
        }
    )
    return {"answers": {"restart_service": response}}


def batch(state: State) -> dict:
    response = interrupt(
        {
            "action_requests": [
                {"name": "write_file", "args": {"path": "notes.txt", "text": "hello"}, "description": "Write notes.txt"},
                {"name": "run_sql", "args": {"query": "DELETE FROM sessions"}, "description": "Clear the sessions table"},
            ],
            "review_configs": [
                {"action_name": "write_file", "allowed_decisions": ["approve", "edit", "reject"]},
                {"action_name": "run_sql", "allowed_decisions": ["approve", "reject"]},
            ],
        }
    )
    return {"answers": {"batch": response}}


def pay_supplier(state: State) -> dict:
    response = interrupt(
        human_interrupt(
            "pay_supplier",
            {"supplier": "Nordwind AG", "amount": 800},
            "Pay Nordwind AG for the March delivery",
            allow_respond=False,
            allow_ignore=False,
        )
    )
    edit = response[0]
    if edit["type"] == "edit" and edit["args"]["args"].get("amount", 0) > 1000:
        raise ValueError("payments above 1000 need the finance desk's approval")
    return {"answers": {"pay_supplier": response}}


def raw(state: State) -> dict:
    response = interrupt({"question": "Which region should the backup go to?", "options": ["eu", "us"]})
    return {"answers": {"raw": response}}


def route(state: State) -> list:
    return {
        "human": ["send_email"],
        "middleware": ["wire_transfer"],
        "pair": ["delete_branch", "restart_service"],
        "raw": ["raw"],
        "batch": ["batch"],
        "guarded": ["pay_supplier"],
    }[state["case"]]


builder = StateGraph(State)
nodes = (send_email, wire_transfer, delete_branch, restart_service, raw, batch, pay_supplier)
for node in nodes:
    builder.add_node(node.__name__, node)
    builder.add_edge(node.__name__, END)
builder.add_conditional_edges(START, route, [node.__name__ for node in nodes])
graph = builder.compile()
