"""Forward udspy confirmations to a Countersign server.

udspy pauses a tool call by raising ``ConfirmationRequired``. This bridge sends
the call to Countersign (``POST /api/v1/tool-calls``), waits for a reviewer's
decision (``GET /api/v1/reviews/{id}/outcome?wait=...``) and answers udspy with
``respond_to_confirmation``: approved, edited (the reviewer's arguments),
feedback, or rejected. Before the approved call runs, ``redeem`` spends its
single-use token for exactly the arguments about to run; given the server's
public key (``countersign keys signing-key``), it first checks the approval's
signed receipt offline, and refuses one signed by another key, or for another
token or call, without spending the token.

Standard library only (checking receipts: ``cryptography`` and ``rfc8785``);
works with any server that speaks Countersign's API.
"""

import base64
import hashlib
import json
import time
import urllib.error
import urllib.request

from udspy.confirmation import ConfirmationRequired, respond_to_confirmation


class Countersign:
    """A Countersign server and the agent key to use."""

    def __init__(self, server, key, role="udspy-agent", device=None, public_key=None):
        self.server = server.rstrip("/")
        self.key = key
        self.role = role
        self.device = device
        self.public_key = public_key

    def _call(self, method, path, body=None):
        request = urllib.request.Request(
            f"{self.server}/api/v1{path}",
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=90) as response:
                return response.status, json.load(response)
        except urllib.error.HTTPError as error:
            return error.code, json.load(error)

    def ask(self, confirmation: ConfirmationRequired, session_id, run_id, risk_tier, **extra):
        """Sends the paused call for review; returns the review's confirm_id."""
        call = confirmation.tool_call
        body = {
            "requestedByRole": self.role,
            "sessionId": session_id,
            "runId": run_id,
            "toolCall": {"name": call.name, "args": call.args},
            "humanSummary": confirmation.question,
            "riskTier": risk_tier,
            **extra,
        }
        if self.device:
            body["clientDeviceId"] = self.device
        status, reply = self._call("POST", "/tool-calls", body)
        if status != 201:
            raise RuntimeError(f"Countersign refused the request ({status}): {reply['error']}")
        return reply["outcome"]["confirm_id"]

    def wait(self, confirm_id, timeout=600):
        """The outcome once a reviewer decided (or the request expired)."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            # The server waits whole seconds: the last part of one is waited
            # here, then read once, rather than asked with wait=0 in a loop.
            if remaining < 1:
                time.sleep(max(0, remaining))
            left = max(0, min(60, int(remaining)))
            status, outcome = self._call("GET", f"/reviews/{confirm_id}/outcome?wait={left}")
            if status != 200:
                raise RuntimeError(f"reading the outcome failed ({status}): {outcome}")
            if outcome["outcome"] != "TOOL_BLOCKED_PENDING_APPROVAL" or time.monotonic() >= deadline:
                return outcome

    def decide(self, confirmation: ConfirmationRequired, session_id, run_id, risk_tier, **extra):
        """Asks, waits, and answers udspy. Returns the Countersign outcome."""
        confirm_id = self.ask(confirmation, session_id, run_id, risk_tier, **extra)
        outcome = self.wait(confirm_id)
        answer = confirmation.confirmation_id
        kind = outcome.get("kind")
        if outcome["outcome"] == "APPROVED" and kind == "edited":
            args = json.loads(outcome["approved_call"])["args"]
            respond_to_confirmation(answer, approved=True, data=args, status="edited")
        elif outcome["outcome"] == "APPROVED":
            respond_to_confirmation(answer, approved=True)
        elif kind == "feedback":
            respond_to_confirmation(answer, approved=False, data={"feedback": outcome.get("reason")}, status="feedback")
        else:
            respond_to_confirmation(answer, approved=False, status="rejected")
        return outcome

    def redeem(self, outcome, name, args):
        """Spends the approval's token for the call about to run; raises when refused."""
        call = {"name": name, "args": args}
        if self.public_key:
            problem = receipt_problem(outcome, self.public_key, call)
            if problem:
                raise RuntimeError(f"{problem}; the call did not run")
        body = {"tokenId": outcome["token"]["tokenId"], "toolCall": call}
        if self.device:
            body["clientDeviceId"] = self.device
        status, reply = self._call("POST", f"/reviews/{outcome['confirm_id']}/redeem", body)
        if status != 200:
            raise RuntimeError(f"the token was refused ({status} {reply['error']['code']}): {reply['error']['message']}")


def receipt_problem(outcome, public_key, call):
    """What is wrong with an approval's signed receipt (None: it is sound): the
    Ed25519 signature over its RFC 8785 canonical body, by ``public_key``, for
    this approval's token and exactly this call."""
    try:
        import rfc8785
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    except ImportError as missing:
        return f"receipts cannot be checked here ({missing}): install cryptography and rfc8785"

    receipt = outcome.get("receipt")
    if not isinstance(receipt, dict) or not isinstance(receipt.get("body"), dict):
        return "the approval carries no signed receipt"
    body = receipt["body"]
    try:
        key = Ed25519PublicKey.from_public_bytes(base64.b64decode(public_key, validate=True))
        key.verify(base64.b64decode(receipt.get("signature", ""), validate=True), rfc8785.dumps(body))
    except (InvalidSignature, ValueError, TypeError):
        return "the approval's receipt was not signed by the trusted key"
    token = body.get("token") if isinstance(body.get("token"), dict) else {}
    if body.get("status") != "approved" or token.get("token_id") != (outcome.get("token") or {}).get("tokenId"):
        return "the approval's receipt is not for this token"
    try:
        asked = hashlib.sha256(rfc8785.dumps(call)).hexdigest()
    except (ValueError, TypeError):
        return "the call about to run has no canonical form"
    if token.get("tool_call_hash") != asked:
        return "the approval's receipt is for another call"
    return None
