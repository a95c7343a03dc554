"""The SDK against a real `countersign serve`: what runs is exactly what was
approved, and every failure leaves the function not run."""

from __future__ import annotations

import asyncio
import base64
import http.server
import json
import socket
import threading
from typing import Any, Iterator

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from conftest import Server
from countersign import (
    AsyncCountersign,
    Countersign,
    Denied,
    NotApproved,
    ReceiptInvalid,
    Refused,
    TimedOut,
    Unreachable,
    call_hash,
    require_approval,
)


def client(server: Server, agent: str, public_key: str | None = None) -> Countersign:
    return Countersign(server.url, server.agent_key, public_key or server.public_key, agent=agent)


def test_an_approved_call_runs_once_with_its_arguments(server: Server, agent: str) -> None:
    ran: list[tuple[str, float]] = []

    @require_approval(client(server, agent), risk="R3", summary=lambda customer_id, amount: f"Refund {amount} to {customer_id}")
    def refund(customer_id: str, amount: float = 10.0) -> str:
        ran.append((customer_id, amount))
        return "refunded"

    reviewer = server.decide_when_asked(agent, {"status": "approved"})
    assert refund("cus_42") == "refunded"
    reviewer.join()
    assert ran == [("cus_42", 10.0)]
    review = server.pending(agent)
    assert review == []


def test_an_edited_call_runs_once_with_exactly_the_edited_arguments(server: Server, agent: str) -> None:
    ran: list[dict[str, Any]] = []

    @require_approval(client(server, agent), risk="R2")
    def transfer(to: str, amount: int, memo: str = "") -> None:
        ran.append({"to": to, "amount": amount, "memo": memo})

    edit = {"mode": "edit", "args": json.dumps({"to": "ACME GmbH", "amount": 50, "memo": "capped"})}
    reviewer = server.decide_when_asked(agent, {"status": "approved", "tool_call": edit})
    transfer("ACME GmbH", 5000)
    reviewer.join()
    assert ran == [{"to": "ACME GmbH", "amount": 50, "memo": "capped"}]


def test_a_denial_does_not_run_and_carries_the_reason(server: Server, agent: str) -> None:
    ran: list[str] = []

    @require_approval(client(server, agent), risk="R4")
    def drop_table(name: str) -> None:
        ran.append(name)

    reviewer = server.decide_when_asked(agent, {"status": "rejected", "reason": "Not in production."})
    with pytest.raises(Denied) as denied:
        drop_table("orders")
    reviewer.join()
    assert ran == []
    assert denied.value.reason == "Not in production."
    assert denied.value.kind == "denied"
    assert isinstance(denied.value, NotApproved)


@pytest.mark.parametrize(
    ("decision", "kind", "reason"),
    [
        ({"status": "cancelled"}, "cancelled", None),
        ({"status": "rejected", "reason": "Ask finance.", "tool_call": {"mode": "feedback"}}, "feedback", "Ask finance."),
    ],
)
def test_a_cancel_and_feedback_are_denials_told_apart_by_kind(
    server: Server, agent: str, decision: dict[str, Any], kind: str, reason: str | None
) -> None:
    ran: list[str] = []

    @require_approval(client(server, agent))
    def archive(name: str) -> None:
        ran.append(name)

    reviewer = server.decide_when_asked(agent, decision)
    with pytest.raises(Denied) as denied:
        archive("q3")
    reviewer.join()
    assert ran == []
    assert (denied.value.kind, denied.value.reason) == (kind, reason)


def test_no_decision_in_time_does_not_run_and_the_review_expires(server: Server, agent: str) -> None:
    ran: list[str] = []

    @require_approval(client(server, agent), timeout=1)
    def deploy(service: str) -> None:
        ran.append(service)

    with pytest.raises(TimedOut) as timed_out:
        deploy("billing")
    assert ran == []
    assert timed_out.value.review_id is not None
    stored = server.review(timed_out.value.review_id)
    assert stored["review"]["confirm"]["status"] != "pending"
    assert stored["outcome"]["kind"] in ("expired", "withdrawn")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_no_server_does_not_run(agent: str) -> None:
    ran: list[str] = []
    cs = Countersign(f"http://127.0.0.1:{free_port()}", "key_nobody", agent=agent)

    @require_approval(cs)
    def send(to: str) -> None:
        ran.append(to)

    with pytest.raises(Unreachable):
        send("ana@example.com")
    assert ran == []


@pytest.fixture
def html_server() -> Iterator[str]:
    """A web server that answers every request with an HTML page (a proxy's error page)."""

    class Page(http.server.BaseHTTPRequestHandler):
        def answer(self) -> None:
            body = b"<html><body>502 Bad Gateway</body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = answer

        def log_message(self, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def test_a_server_that_answers_html_does_not_run(html_server: str, agent: str) -> None:
    ran: list[str] = []

    @require_approval(Countersign(html_server, "key_x", agent=agent))
    def send(to: str) -> None:
        ran.append(to)

    with pytest.raises(Unreachable, match="not Countersign's JSON"):
        send("ana@example.com")
    assert ran == []


def test_a_receipt_signed_by_another_key_does_not_run_and_the_token_stays_unspent(server: Server, agent: str) -> None:
    other = Ed25519PrivateKey.generate().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    cs = client(server, agent, public_key=base64.b64encode(other).decode())
    ran: list[str] = []

    @require_approval(cs)
    def pay(invoice: str) -> None:
        ran.append(invoice)

    reviewer = server.decide_when_asked(agent, {"status": "approved"})
    with pytest.raises(ReceiptInvalid, match="not signed by the trusted key") as refused:
        pay("INV-7")
    reviewer.join()
    assert ran == []
    assert refused.value.review_id is not None
    token = server.review(refused.value.review_id)["outcome"]["token"]
    assert "usedAt" not in token


def test_an_async_function_is_gated_the_same_way(server: Server, agent: str) -> None:
    ran: list[str] = []
    cs = AsyncCountersign(server.url, server.agent_key, server.public_key, agent=agent)

    @require_approval(cs, risk="R1")
    async def notify(channel: str, text: str) -> str:
        ran.append(f"{channel}: {text}")
        return "sent"

    reviewer = server.decide_when_asked(agent, {"status": "approved"})
    assert asyncio.run(notify("#ops", "deploy done")) == "sent"
    reviewer.join()
    assert ran == ["#ops: deploy done"]

    # A sync client gates async functions too.
    @require_approval(client(server, agent))
    async def archive(path: str) -> None:
        ran.append(path)

    reviewer = server.decide_when_asked(agent, {"status": "rejected", "reason": "keep it"})
    with pytest.raises(Denied):
        asyncio.run(archive("/reports"))
    reviewer.join()
    assert ran == ["#ops: deploy done"]


def test_arguments_that_are_not_json_send_nothing(server: Server, agent: str) -> None:
    @require_approval(client(server, agent))
    def upload(path: str, data: Any) -> None:
        raise AssertionError("must not run")

    with pytest.raises(TypeError, match="argument `data`"):
        upload("/tmp/x", object())
    with pytest.raises(TypeError, match="argument `data`"):
        upload("/tmp/x", {"n": float("nan")})
    assert server.pending(agent) == []
    everything = server.http.get("/reviews", params={"status": "all", "requester": agent}).json()
    assert everything["items"] == []


def test_a_summary_that_fails_or_a_bad_risk_send_nothing(server: Server, agent: str) -> None:
    def broken(name: str) -> str:
        raise KeyError("no template")

    @require_approval(client(server, agent), summary=broken)
    def rename(name: str) -> None:
        raise AssertionError("must not run")

    with pytest.raises(KeyError):
        rename("x")
    with pytest.raises(ValueError, match="R0, R1, R2, R3, R4"):
        require_approval(client(server, agent), risk="R9")
    assert server.http.get("/reviews", params={"status": "all", "requester": agent}).json()["items"] == []


def test_a_request_the_server_refuses_names_the_field(server: Server) -> None:
    @require_approval(Countersign(server.url, server.agent_key, agent="   "))
    def act() -> None:
        raise AssertionError("must not run")

    with pytest.raises(Refused) as refused:
        act()
    assert refused.value.status == 422
    assert [path for path, _ in refused.value.problems] == ["/requestedByRole"]
    assert "/requestedByRole" in str(refused.value)


def test_a_session_grant_lets_the_same_call_through_with_its_own_decision(server: Server, agent: str) -> None:
    cs = client(server, agent)
    ran: list[int] = []

    @require_approval(cs)
    def restart(replicas: int) -> None:
        ran.append(replicas)

    reviewer = server.decide_when_asked(
        agent, {"status": "approved", "tool_call": {"mode": "scope", "scope": "session"}}
    )
    restart(3)
    reviewer.join()
    # The same call again in the same session: no reviewer, approved by the grant.
    request = cs.ask("restart", {"replicas": 3}, risk="R2", summary="restart(replicas=3)")
    approval = request.wait()
    assert approval.approved_by_grant is not None
    restart(3)
    assert ran == [3, 3]
    first, second = (
        server.review(r["confirm"]["confirm_id"])
        for r in server.http.get("/reviews", params={"status": "approved", "requester": agent}).json()["items"][:2]
    )
    assert first["outcome"]["token"]["tokenId"] != second["outcome"]["token"]["tokenId"]


def test_the_lower_level_asks_waits_redeems_and_withdraws(server: Server, agent: str) -> None:
    cs = client(server, agent)
    request = cs.ask("delete_branch", {"name": "old"}, risk="R2", summary="Delete branch old")
    request.withdraw("not needed after all")
    with pytest.raises(Denied) as withdrawn:
        request.wait(5)
    assert withdrawn.value.kind == "withdrawn"

    request = cs.ask("delete_branch", {"name": "old"}, risk="R2", summary="Delete branch old")
    server.decide(request.review_id, {"status": "approved"})
    approval = request.wait(5)
    assert approval.call == {"name": "delete_branch", "args": {"name": "old"}}
    assert approval.token["toolCallHash"] == call_hash("delete_branch", {"name": "old"})
    assert approval.receipt is not None
    approval.redeem()
    with pytest.raises(Refused) as spent:
        approval.redeem()
    assert spent.value.code == "token_used"


def test_a_token_bound_to_this_device_is_redeemed_with_it_and_by_no_other(server: Server, agent: str) -> None:
    from countersign import Request

    bound = Countersign(server.url, server.agent_key, server.public_key, agent=agent, device="laptop-7")
    request = bound.ask("reboot", {"host": "db-1"}, risk="R2", summary="Reboot db-1")
    server.decide(request.review_id, {"status": "approved"})
    approval = request.wait(5)
    assert approval.token["issuedToClientDeviceId"] == "laptop-7"
    elsewhere = Countersign(server.url, server.agent_key, agent=agent, device="phone-2")
    stolen = Request(elsewhere, request.review_id, request.call, 5).wait()
    with pytest.raises(Refused) as refused:
        stolen.redeem()
    assert refused.value.code == "token_device_mismatch"
    approval.redeem()
