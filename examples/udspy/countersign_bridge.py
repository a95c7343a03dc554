"""Forward udspy confirmations to a Countersign server, through the Python SDK.

udspy pauses a tool call by raising ``ConfirmationRequired``. ``decide`` asks
Countersign about the paused call, waits for a reviewer and answers udspy with
``respond_to_confirmation``: approved, edited (the reviewer's arguments),
feedback, or rejected. udspy is told "approved" only once the token's hash and,
given the server's public key (``countersign keys signing-key``), the
approval's signed receipt were checked offline: one signed by another key, or
for another token or call, is a rejection and leaves the token unspent.

The token is spent by ``spends_approval``, under ``@confirm_first``: right
before the tool's body, for exactly the arguments it runs with. An approval
runs the tool once: udspy's confirmation answered again, or the tool called
again after its body failed, finds no approval left and raises instead.

Needs the SDK (``pip install ./sdk/python``); works with any server that
speaks Countersign's API.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from udspy.confirmation import ConfirmationRequired, respond_to_confirmation

from countersign import Approval, Countersign, Denied, NotApproved, call_hash

F = TypeVar("F", bound=Callable[..., Any])

#: Approvals checked but not spent yet, by the hash of the call they allow.
_UNSPENT: dict[str, Approval] = {}


def decide(
    countersign: Countersign, confirmation: ConfirmationRequired, session_id: str, run_id: str, risk_tier: str
) -> Approval:
    """Asks, waits, checks the approval offline, and answers udspy. The
    approval (its token not spent yet: the tool spends it as it runs), or the
    `NotApproved` that says why not (udspy has been told no)."""
    call = confirmation.tool_call
    request = countersign.ask(
        call.name, call.args, risk=risk_tier, summary=confirmation.question, session=session_id, run=run_id
    )
    answer = confirmation.confirmation_id
    try:
        approval = request.wait()
        approval.check()
    except Denied as denied:
        if denied.kind == "feedback":
            respond_to_confirmation(answer, approved=False, data={"feedback": denied.reason}, status="feedback")
        else:
            respond_to_confirmation(answer, approved=False, status="rejected")
        raise
    except NotApproved:
        respond_to_confirmation(answer, approved=False, status="rejected")
        raise
    _UNSPENT[call_hash(approval.call["name"], dict(approval.args))] = approval
    if approval.edited:
        respond_to_confirmation(answer, approved=True, data=approval.args, status="edited")
    else:
        respond_to_confirmation(answer, approved=True)
    return approval


def spends_approval(func: F) -> F:
    """Put under ``@confirm_first``: the body runs only after the token of the
    approval ``decide`` checked for exactly this call (these arguments, defaults
    filled in) is spent; otherwise `NotApproved`, and it does not run."""
    signature = inspect.signature(func)

    @functools.wraps(func)
    def gated(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        approval = _UNSPENT.pop(call_hash(func.__name__, dict(bound.arguments)), None)
        if approval is None:
            raise NotApproved(f"this call of {func.__name__} was not approved in Countersign, or its approval was used; it did not run")
        approval.redeem()
        return func(*args, **kwargs)

    return gated  # type: ignore[return-value]
