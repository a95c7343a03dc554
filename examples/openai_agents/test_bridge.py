"""The OpenAI Agents SDK bridge against a real `countersign serve`.

An agent with a deterministic model (the SDK's own `ScriptedModel`: no
network, no keys) calls a tool declared with `needs_approval`; a reviewer
decides through Countersign's API; the test checks what the tool ran with and
what the model was told. Run: `.venv-openai-agents/bin/python -m unittest
examples/openai_agents/test_bridge.py` (COUNTERSIGN_BIN names the binary;
target/debug/countersign by default).
"""

import asyncio
import base64
import json
import os

# No traces leave the machine (the SDK would try to send them to OpenAI).
os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
import re
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request

from pathlib import Path

from agents import Agent, function_tool
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

from countersign_agents import Countersign, PendingRun, ask_all, resume_reviewed, run_reviewed

BINARY = os.environ.get("COUNTERSIGN_BIN", "target/debug/countersign")


class Server:
    """`countersign serve --demo` on a free port, with its demo keys."""

    def __init__(self) -> None:
        self.data = tempfile.TemporaryDirectory()
        self.process = subprocess.Popen(
            [BINARY, "serve", "--demo", "--listen", "127.0.0.1:0", "--data", self.data.name,
             "--log-filter", "warn"],
            stdout=subprocess.PIPE, text=True,
        )
        self.url = self.reviewer = self.agent = None
        while not (self.url and self.reviewer and self.agent):
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError("countersign serve exited")
            if line.startswith("countersign: listening on "):
                self.url = line.split()[-1]
            elif line.startswith("Demo reviewer key"):
                self.reviewer = line.split()[-1]
            elif line.startswith("Demo agent key"):
                self.agent = line.split()[-1]

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()
        self.data.cleanup()

    def api(self, method: str, path: str, body=None, headers=None):
        request = urllib.request.Request(
            f"{self.url}/api/v1{path}", method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {self.reviewer}", "Content-Type": "application/json", **(headers or {})},
        )
        with urllib.request.urlopen(request) as response:
            return json.load(response)

    def decide_when_asked(self, decision: dict) -> threading.Thread:
        """Decides the next pending review of the payments agent, once it is there."""
        def decide() -> None:
            for _ in range(400):
                items = self.api("GET", "/reviews?status=pending&requester=openai-agents:payments")["items"]
                if items:
                    review = items[0]["confirm"]["confirm_id"]
                    self.api("POST", f"/reviews/{review}/decisions", decision, {"Idempotency-Key": f"d-{review}"})
                    return
                time.sleep(0.05)
        thread = threading.Thread(target=decide)
        thread.start()
        return thread


RAN: list = []


@function_tool(needs_approval=True)
def transfer(amount: int, to: str) -> str:
    """Send money."""
    RAN.append({"amount": amount, "to": to})
    return f"sent {amount} to {to}"


def echo_tool_output(call) -> list:
    """The model's second turn: it says what the tool answered (or why it did not run)."""
    outputs = [item for item in call.input if isinstance(item, dict) and item.get("type") == "function_call_output"]
    return [assistant_message(f"tool said: {outputs[-1]['output']}")]


def payments_agent() -> Agent:
    model = ScriptedModel([
        ModelStep(output=[function_call("transfer", {"amount": 120, "to": "Printer Co"}, call_id="call_1")]),
        ModelStep.respond(echo_tool_output),
    ])
    return Agent(name="payments", instructions="Pay the invoice.", tools=[transfer], model=model)


class BridgeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = Server()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()

    def setUp(self) -> None:
        RAN.clear()
        self.countersign = Countersign(self.server.url, self.server.agent, timeout=60)

    def run_agent(self, session: str):
        return asyncio.run(run_reviewed(payments_agent(), "Pay the printer", self.countersign, session=session))

    def test_an_approved_call_runs_and_the_model_reads_its_result(self) -> None:
        reviewer = self.server.decide_when_asked({"status": "approved", "decided_by_role": "reviewer", "tool_call": {"mode": "once"}})
        result = self.run_agent("s-approve")
        reviewer.join()
        self.assertEqual(RAN, [{"amount": 120, "to": "Printer Co"}])
        self.assertEqual(result.final_output, "tool said: sent 120 to Printer Co")

    def test_the_guide_s_example_runs_as_written(self) -> None:
        guide = (Path(__file__).resolve().parents[2] / "docs" / "openai-agents.md").read_text()
        example = re.findall(r"```python\n(.*?)```", guide, re.S)[0]
        env = {**os.environ, "COUNTERSIGN_URL": self.server.url, "COUNTERSIGN_AGENT_KEY": self.server.agent,
               "PYTHONPATH": str(Path(__file__).resolve().parent)}
        reviewer = self.server.decide_when_asked({"status": "approved", "decided_by_role": "reviewer"})
        ran = subprocess.run([sys.executable, "-c", example], env=env, capture_output=True, text=True, timeout=120)
        reviewer.join()
        self.assertEqual(ran.returncode, 0, ran.stderr)
        self.assertEqual(ran.stdout.split("\n")[:2], ["sent 120 to Printer Co", "The printer is paid."])

    def test_a_rejected_call_does_not_run_and_the_model_reads_the_reason(self) -> None:
        reviewer = self.server.decide_when_asked({"status": "rejected", "decided_by_role": "reviewer", "reason": "Pay the printer next month"})
        result = self.run_agent("s-reject")
        reviewer.join()
        self.assertEqual(RAN, [])
        self.assertEqual(result.final_output, "tool said: Denied in Countersign by reviewer: Pay the printer next month")

    def test_no_edit_is_offered_or_taken_for_a_call_the_sdk_cannot_run_edited(self) -> None:
        refused = []

        def edit_then_approve() -> None:
            for _ in range(400):
                items = self.server.api("GET", "/reviews?status=pending&requester=openai-agents:payments")["items"]
                if items:
                    break
                time.sleep(0.05)
            review = items[0]
            self.assertFalse(review["target"]["tool_call"]["request"]["editable"])
            review_id = review["confirm"]["confirm_id"]
            edit = {"status": "approved", "decided_by_role": "reviewer", "tool_call": {"mode": "edit", "args": json.dumps({"amount": 12, "to": "Printer Co"})}}
            try:
                self.server.api("POST", f"/reviews/{review_id}/decisions", edit, {"Idempotency-Key": "edit"})
            except urllib.error.HTTPError as e:
                refused.append((e.code, json.load(e)["error"]["details"][0]["path"]))
            once = {"status": "approved", "decided_by_role": "reviewer", "tool_call": {"mode": "once"}}
            self.server.api("POST", f"/reviews/{review_id}/decisions", once, {"Idempotency-Key": "once"})

        reviewer = threading.Thread(target=edit_then_approve)
        reviewer.start()
        result = self.run_agent("s-edit")
        reviewer.join()
        self.assertEqual(refused, [(422, "/tool_call")])
        self.assertEqual(RAN, [{"amount": 120, "to": "Printer Co"}])
        self.assertEqual(result.final_output, "tool said: sent 120 to Printer Co")

    def test_a_session_grant_approves_the_same_call_again_with_its_own_decision(self) -> None:
        reviewer = self.server.decide_when_asked({"status": "approved", "decided_by_role": "reviewer", "tool_call": {"mode": "scope", "scope": "session"}})
        self.run_agent("s-grant")
        reviewer.join()
        self.run_agent("s-grant")
        self.assertEqual(len(RAN), 2)
        approved = self.server.api("GET", "/reviews?status=approved&requester=openai-agents:payments")["items"]
        sessions = [r["target"]["tool_call"]["request"]["sessionId"] for r in approved]
        self.assertEqual(sessions.count("s-grant"), 2)

    def test_a_run_put_aside_while_waiting_resumes_from_its_state_after_a_restart(self) -> None:
        async def stop_and_save() -> str:
            from agents import Runner
            result = await Runner.run(payments_agent(), "Pay the printer")
            return ask_all(result, self.countersign, "s-resume", "r-1").save()

        saved = asyncio.run(stop_and_save())
        self.assertEqual(RAN, [])
        # A new process would start here: only the saved text is carried over.
        reviewer = self.server.decide_when_asked({"status": "approved", "decided_by_role": "reviewer", "tool_call": {"mode": "once"}})
        agent = payments_agent()
        # The resumed run's model starts at its second turn.
        agent.model = ScriptedModel([ModelStep.respond(echo_tool_output)])
        result = asyncio.run(resume_reviewed(agent, PendingRun.load(saved), self.countersign))
        reviewer.join()
        self.assertEqual(RAN, [{"amount": 120, "to": "Printer Co"}])
        self.assertEqual(result.final_output, "tool said: sent 120 to Printer Co")

    def test_a_pending_run_resumed_again_does_not_run_the_call_twice(self) -> None:
        async def stop_and_save() -> str:
            from agents import Runner
            result = await Runner.run(payments_agent(), "Pay the printer")
            return ask_all(result, self.countersign, "s-replay", "r-1").save()

        saved = asyncio.run(stop_and_save())
        reviewer = self.server.decide_when_asked({"status": "approved", "decided_by_role": "reviewer"})
        results = []
        for _ in range(2):
            # Resumed twice from the same saved text, as an application retries.
            agent = payments_agent()
            agent.model = ScriptedModel([ModelStep.respond(echo_tool_output)])
            results.append(asyncio.run(resume_reviewed(agent, PendingRun.load(saved), self.countersign)).final_output)
        reviewer.join()
        self.assertEqual(RAN, [{"amount": 120, "to": "Printer Co"}])
        self.assertEqual(results[1], "tool said: Countersign: this approval was already used to run the call once; a replayed approval does not run it again")

    def test_a_receipt_checked_with_the_servers_key_lets_the_call_run(self) -> None:
        key = self.server.api("GET", "/signing-key")["public_key"]
        self.countersign = Countersign(self.server.url, self.server.agent, timeout=60, public_key=key)
        reviewer = self.server.decide_when_asked({"status": "approved", "decided_by_role": "reviewer"})
        result = self.run_agent("s-receipt")
        reviewer.join()
        self.assertEqual(RAN, [{"amount": 120, "to": "Printer Co"}])
        self.assertEqual(result.final_output, "tool said: sent 120 to Printer Co")

    def test_a_receipt_signed_by_another_key_stops_the_call_and_spends_nothing(self) -> None:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
        from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

        other = Ed25519PrivateKey.generate().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.countersign = Countersign(self.server.url, self.server.agent, timeout=60, public_key=base64.b64encode(other).decode())
        reviewer = self.server.decide_when_asked({"status": "approved", "decided_by_role": "reviewer"})
        result = self.run_agent("s-forged")
        reviewer.join()
        self.assertEqual(RAN, [])
        self.assertEqual(result.final_output, "tool said: Countersign: the receipt was not signed by the trusted key; the token was not spent; the call did not run")
        items = self.server.api("GET", "/reviews?status=approved&requester=openai-agents:payments&order=newest&limit=1")["items"]
        events = [e["event_type"] for e in items[0]["confirm"]["events"]]
        self.assertNotIn("token.redeemed", events, "the token is still unspent")

    def test_an_unreachable_countersign_rejects_the_call_and_says_so(self) -> None:
        self.countersign = Countersign("http://127.0.0.1:1", "cs_agent_x", timeout=5)
        result = self.run_agent("s-down")
        self.assertEqual(RAN, [])
        self.assertIn("Countersign: cannot reach http://127.0.0.1:1", result.final_output)


if __name__ == "__main__":
    unittest.main()
