"""Forward udspy confirmations to a Countersign server, through the Python SDK.

udspy pauses a tool call by raising ``ConfirmationRequired``. ``decide`` asks
Countersign about the paused call, waits for a reviewer and answers udspy with
``respond_to_confirmation``: approved, edited (the reviewer's arguments),
feedback, or rejected. udspy is told "approved" only after ``Approval.redeem``
spent the single-use token for exactly that call, having checked the token's
hash and, given the server's public key (``countersign keys signing-key``), the
approval's signed receipt offline: one signed by another key, or for another
token or call, is a rejection and leaves the token unspent.

Needs the SDK (``pip install ./sdk/python``); works with any server that
speaks Countersign's API.
"""

from __future__ import annotations

from udspy.confirmation import ConfirmationRequired, respond_to_confirmation

from countersign import Approval, Countersign, Denied, NotApproved


def decide(
    countersign: Countersign, confirmation: ConfirmationRequired, session_id: str, run_id: str, risk_tier: str
) -> Approval:
    """Asks, waits, redeems the approval's token, and answers udspy. The
    approval (already spent: the tool may run now), or the `NotApproved` that
    says why not (udspy has been told no)."""
    call = confirmation.tool_call
    request = countersign.ask(
        call.name, call.args, risk=risk_tier, summary=confirmation.question, session=session_id, run=run_id
    )
    answer = confirmation.confirmation_id
    try:
        approval = request.wait()
    except Denied as denied:
        if denied.kind == "feedback":
            respond_to_confirmation(answer, approved=False, data={"feedback": denied.reason}, status="feedback")
        else:
            respond_to_confirmation(answer, approved=False, status="rejected")
        raise
    except NotApproved:
        respond_to_confirmation(answer, approved=False, status="rejected")
        raise
    # udspy hears "approved" only once the token is checked and spent: a
    # receipt that does not verify, or a refused token, is a rejection.
    try:
        approval.redeem()
    except NotApproved:
        respond_to_confirmation(answer, approved=False, status="rejected")
        raise
    if approval.edited:
        respond_to_confirmation(answer, approved=True, data=approval.args, status="edited")
    else:
        respond_to_confirmation(answer, approved=True)
    return approval
