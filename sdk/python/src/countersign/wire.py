"""The HTTP contract's shapes this SDK sends and reads, as in
`crates/server/openapi.json` (a test checks every field against it)."""


from typing import Any, Literal, NotRequired, TypedDict

Verdict = Literal["TOOL_BLOCKED_PENDING_APPROVAL", "TOOL_DENIED", "APPROVED"]


class ToolCall(TypedDict):
    """`{"name", "args"}`: what is hashed, approved and run."""

    name: str
    args: dict[str, Any]


class ToolCallSubmission(TypedDict):
    """`POST /api/v1/tool-calls`."""

    requestedByRole: str
    sessionId: str
    runId: str
    toolCall: ToolCall
    humanSummary: str
    riskTier: str
    approvalId: NotRequired[str]
    workspace: NotRequired[str]
    clientDeviceId: NotRequired[str]
    riskReasons: NotRequired[list[str]]
    sideEffects: NotRequired[list[str]]
    rollbackNotes: NotRequired[list[str]]
    expiresAt: NotRequired[str]
    diff: NotRequired[str]
    suggestedAlternatives: NotRequired[list[str]]
    dryRun: NotRequired[str]
    editable: NotRequired[bool]
    reason: NotRequired[str]


class Token(TypedDict):
    """The single-use token an approval mints."""

    tokenId: str
    approvalId: str
    toolCallHash: str
    expiresAt: str
    singleUse: bool
    scope: NotRequired[str]
    issuedToClientDeviceId: NotRequired[str]
    usedAt: NotRequired[str]


class Outcome(TypedDict):
    """`GET /api/v1/reviews/{id}/outcome`: what the agent may do now."""

    confirm_id: str
    status: str
    outcome: Verdict
    reason: NotRequired[str]
    decided_by_role: NotRequired[str]
    decided_at: NotRequired[str]
    kind: NotRequired[str]
    approved_call: NotRequired[str]
    approved_tool_call: NotRequired[ToolCall]
    approved_by_grant: NotRequired[str]
    token: NotRequired[Token]
    receipt: NotRequired[dict[str, Any]]


class Redemption(TypedDict):
    """`POST /api/v1/reviews/{id}/redeem`."""

    tokenId: str
    approvalId: NotRequired[str]
    toolCall: NotRequired[ToolCall]
    toolCallHash: NotRequired[str]
    clientDeviceId: NotRequired[str]


class WithdrawInput(TypedDict, total=False):
    """`POST /api/v1/reviews/{id}/withdraw`."""

    reason: str
