"""What the Python SDK adds to a gated call, against raw HTTP doing the same.

Usage: python bench/sdk.py URL AGENT_KEY REVIEWER_KEY PUBLIC_KEY RUNS

Two cases, interleaved run by run against one `countersign serve`:
- asked and decided: ask, a scripted reviewer approves, read the outcome,
  redeem, run (the SDK's `ask` / `wait` / `redeem`, checking the receipt);
- the decorator on a call a session grant approves at once: the whole
  `@require_approval` path against the same requests by hand.
Prints one line per case: medians per call and their difference.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
import uuid

import httpx

from countersign import Countersign, require_approval

url, agent_key, reviewer_key, public_key, runs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
api = f"{url}/api/v1"
agent_http = httpx.Client(headers={"Authorization": f"Bearer {agent_key}"})
reviewer_http = httpx.Client(headers={"Authorization": f"Bearer {reviewer_key}"})


def decide(review_id: str, decision: dict[str, object]) -> None:
    answer = reviewer_http.post(
        f"{api}/reviews/{review_id}/decisions",
        json={"status": "approved", "decided_by_role": "reviewer", **decision},
        headers={"Idempotency-Key": str(uuid.uuid4())},
    )
    assert answer.status_code == 200, answer.text


def ran(amount: int) -> int:
    return amount


def raw_call(session: str, amount: int, reviewer: bool) -> None:
    asked = agent_http.post(f"{api}/tool-calls", json={
        "requestedByRole": "bench-raw", "sessionId": session, "runId": "r",
        "toolCall": {"name": "transfer", "args": {"amount": amount}},
        "humanSummary": "transfer", "riskTier": "R2",
    }).json()
    review_id = asked["outcome"]["confirm_id"]
    if reviewer:
        decide(review_id, {})
    outcome = agent_http.get(f"{api}/reviews/{review_id}/outcome?wait=0").json()
    call = json.loads(outcome["approved_call"])
    redeemed = agent_http.post(f"{api}/reviews/{review_id}/redeem", json={"tokenId": outcome["token"]["tokenId"], "toolCall": call})
    assert redeemed.status_code == 200, redeemed.text
    ran(**call["args"])


def sdk_call(cs: Countersign, amount: int) -> None:
    request = cs.ask("transfer", {"amount": amount}, risk="R2", summary="transfer")
    decide(request.review_id, {})
    approval = request.wait()
    approval.redeem()
    ran(**approval.args)


def grant(session: str, agent: str) -> None:
    """A session grant for `transfer(amount=1)`: later identical calls are approved at once."""
    asked = agent_http.post(f"{api}/tool-calls", json={
        "requestedByRole": agent, "sessionId": session, "runId": "r",
        "toolCall": {"name": "transfer", "args": {"amount": 1}},
        "humanSummary": "transfer", "riskTier": "R2",
    }).json()
    decide(asked["outcome"]["confirm_id"], {"tool_call": {"mode": "scope", "scope": "session"}})


def median_ms(times: list[float]) -> float:
    return statistics.median(times) * 1000


cs = Countersign(url, agent_key, public_key, agent="bench-sdk")
session = f"bench-{uuid.uuid4()}"
cs_granted = Countersign(url, agent_key, public_key, agent="bench-sdk", session=session)
raw_session = f"bench-{uuid.uuid4()}"
grant(session, "bench-sdk")
grant(raw_session, "bench-raw")
gated = require_approval(cs_granted, summary="transfer", tool="transfer")(ran)

# Warm both paths (connections, imports) before measuring.
for n in range(3):
    raw_call(raw_session, 1, reviewer=False)
    gated(1)
    raw_call(f"warm-{n}", n, reviewer=True)
    sdk_call(cs, n)

cases = {"asked and decided": ([], []), "decorator, approved by a session grant": ([], [])}
for n in range(runs):
    for name, (raw_times, sdk_times) in cases.items():
        started = time.perf_counter()
        if name == "asked and decided":
            raw_call(f"raw-{n}", n, reviewer=True)
        else:
            raw_call(raw_session, 1, reviewer=False)
        raw_times.append(time.perf_counter() - started)
        started = time.perf_counter()
        if name == "asked and decided":
            sdk_call(cs, n)
        else:
            gated(1)
        sdk_times.append(time.perf_counter() - started)

for name, (raw_times, sdk_times) in cases.items():
    raw, sdk = median_ms(raw_times), median_ms(sdk_times)
    print(f"python, {name}: raw HTTP {raw:.2f} ms, SDK {sdk:.2f} ms, SDK adds {sdk - raw:.2f} ms (median of {runs})")
