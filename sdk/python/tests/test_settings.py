"""Where each setting comes from: an argument wins, else its own variable,
each on its own. Against a server that approves everything, unsigned or
with a forged receipt: a receipt key given either way stops the call."""

from __future__ import annotations

import asyncio
import base64
import http.server
import json
import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from countersign import Countersign, ReceiptInvalid, call_hash, client, require_approval
from countersign.pydantic_ai import CountersignApprovals
from test_pydantic_ai import payments_agent

ARGS = {"invoice": "INV-7"}


def key_pair() -> tuple[Ed25519PrivateKey, str]:
    private = Ed25519PrivateKey.generate()
    public = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return private, base64.b64encode(public).decode()


@pytest.fixture(params=["unsigned", "forged"])
def approving_server(request: pytest.FixtureRequest) -> Iterator[str]:
    """Approves every call it is asked about, its receipt missing or signed
    by a key nobody trusts; counts nothing, checks nothing."""
    forger, _ = key_pair()
    asked: dict[str, dict[str, Any]] = {}

    class Approver(http.server.BaseHTTPRequestHandler):
        def send(self, status: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
            if self.path.endswith("/tool-calls"):
                review = str(uuid.uuid4())
                asked[review] = body["toolCall"]
                self.send(201, {"outcome": {"confirm_id": review}})
            else:
                self.send(200, {"redeemed": True})

        def do_GET(self) -> None:
            review = self.path.split("/")[4]
            call = asked[review]
            token = {"tokenId": str(uuid.uuid4()), "toolCallHash": call_hash(call["name"], call["args"])}
            receipt = None
            if request.param == "forged":
                body = {"status": "approved", "token": {"token_id": token["tokenId"], "tool_call_hash": token["toolCallHash"]}}
                signature = forger.sign(json.dumps(body, separators=(",", ":"), sort_keys=True).encode())
                receipt = {"body": body, "signature": base64.b64encode(signature).decode()}
            self.send(200, {"outcome": "APPROVED", "approved_tool_call": call, "token": token, "receipt": receipt})

        def log_message(self, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Approver)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture
def trusted(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Callable[[], dict[str, str]]:
    """The real server's key, given as an argument or only in the environment."""
    _, key = key_pair()

    def given() -> dict[str, str]:
        if request.param == "argument":
            return {"public_key": key}
        monkeypatch.setenv("COUNTERSIGN_PUBLIC_KEY", key)
        return {}

    return given


@pytest.mark.parametrize("trusted", ["argument", "environment"], indirect=True)
def test_the_decorator_refuses_an_approval_whose_receipt_does_not_verify(
    approving_server: str, trusted: Callable[[], dict[str, str]]
) -> None:
    ran: list[str] = []

    @require_approval(Countersign(approving_server, "cs_agent_x", **trusted()))
    def pay(invoice: str) -> None:
        ran.append(invoice)

    with pytest.raises(ReceiptInvalid):
        pay(**ARGS)
    assert ran == []


@pytest.mark.parametrize("trusted", ["argument", "environment"], indirect=True)
def test_an_adapter_given_url_and_key_still_reads_the_receipt_key(
    approving_server: str, trusted: Callable[[], dict[str, str]]
) -> None:
    ran: list[dict[str, Any]] = []
    approvals = CountersignApprovals("payments", url=approving_server, agent_key="cs_agent_x", timeout=5, **trusted())
    result = payments_agent(approvals, ran).run_sync("Pay the printer")
    assert ran == []
    assert result.output.startswith("tool said: Countersign: the ")
    assert result.output.endswith("the call did not run")


def test_with_no_receipt_key_anywhere_it_says_so_once_naming_the_variable(
    approving_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COUNTERSIGN_PUBLIC_KEY", raising=False)
    monkeypatch.setattr(client, "_UNCHECKED_SAID", False)
    with pytest.warns(UserWarning, match="COUNTERSIGN_PUBLIC_KEY") as said:
        Countersign(approving_server, "cs_agent_x")
        Countersign(approving_server, "cs_agent_x")
    assert len(said) == 1


def test_an_explicit_url_wins_over_the_environment_and_each_setting_falls_back_alone(
    approving_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, key = key_pair()
    monkeypatch.setenv("COUNTERSIGN_URL", "http://127.0.0.1:1")
    monkeypatch.setenv("COUNTERSIGN_AGENT_KEY", "cs_agent_from_env")
    monkeypatch.setenv("COUNTERSIGN_PUBLIC_KEY", key)
    cs = Countersign(approving_server)
    assert (cs.settings.url, cs.settings.agent_key) == (approving_server, "cs_agent_from_env")
    assert cs.settings.public_key is not None
    monkeypatch.delenv("COUNTERSIGN_AGENT_KEY")
    with pytest.raises(ValueError, match="COUNTERSIGN_AGENT_KEY"):
        Countersign(approving_server)


def test_the_async_client_reads_the_receipt_key_from_the_environment_too(
    approving_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, key = key_pair()
    monkeypatch.setenv("COUNTERSIGN_PUBLIC_KEY", key)
    ran: list[str] = []

    async def go() -> None:
        cs = client.AsyncCountersign(approving_server, "cs_agent_x")

        @require_approval(cs)
        async def pay(invoice: str) -> None:
            ran.append(invoice)

        await pay(**ARGS)

    with pytest.raises(ReceiptInvalid):
        asyncio.run(go())
    assert ran == []
