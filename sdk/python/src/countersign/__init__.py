"""Countersign for Python agents: one decorator puts a human reviewer before a
function, and the function runs only with what the reviewer approved.

    from countersign import Countersign, require_approval

    cs = Countersign.from_env()

    @require_approval(cs, risk="R3")
    def refund(customer_id: str, amount: float) -> str: ...

Every failure is a `NotApproved` (`Denied`, `TimedOut`, `Unreachable`,
`ReceiptInvalid`, `Refused`), and the function did not run.
"""

from .calls import RISK_TIERS, call_hash
from .client import (
    Approval,
    AsyncApproval,
    AsyncCountersign,
    AsyncRequest,
    Countersign,
    Request,
)
from .decorator import require_approval
from .errors import ERROR_CODES, Denied, ErrorCode, NotApproved, ReceiptInvalid, Refused, TimedOut, Unreachable

__all__ = [
    "ERROR_CODES",
    "RISK_TIERS",
    "Approval",
    "AsyncApproval",
    "AsyncCountersign",
    "AsyncRequest",
    "Countersign",
    "Denied",
    "ErrorCode",
    "NotApproved",
    "ReceiptInvalid",
    "Refused",
    "Request",
    "TimedOut",
    "Unreachable",
    "call_hash",
    "require_approval",
]
