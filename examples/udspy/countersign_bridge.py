"""Forward udspy confirmations to a Countersign server.

udspy pauses a tool call by raising ``ConfirmationRequired``. This bridge sends
the call to Countersign (``POST /api/v1/tool-calls``), waits for a reviewer's
decision (``GET /api/v1/reviews/{id}/outcome?wait=...``) and answers udspy with
``respond_to_confirmation``: approved, edited (the reviewer's arguments),
feedback, or rejected. Before the approved call runs, ``redeem`` spends its
single-use token for exactly the arguments about to run.

Standard library only; works with any server that speaks Countersign's API.
"""

import json
import time
import urllib.error
import urllib.request

from udspy.confirmation import ConfirmationRequired, respond_to_confirmation


class Countersign:
    """A Countersign server and the agent key to use."""

    def __init__(self, server, key, role="udspy-agent", device=None):
        self.server = server.rstrip("/")
        self.key = key
        self.role = role
        self.device = device

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
            left = max(0, min(60, int(deadline - time.monotonic())))
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
        body = {"tokenId": outcome["token"]["tokenId"], "toolCall": {"name": name, "args": args}}
        if self.device:
            body["clientDeviceId"] = self.device
        status, reply = self._call("POST", f"/reviews/{outcome['confirm_id']}/redeem", body)
        if status != 200:
            raise RuntimeError(f"the token was refused ({status} {reply['error']['code']}): {reply['error']['message']}")
