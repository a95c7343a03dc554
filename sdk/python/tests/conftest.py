"""A real `countersign serve --demo` for the SDK's tests, and a scripted
reviewer that decides through the server's API."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest

REPO = Path(__file__).resolve().parents[3]
BINARY = os.environ.get("COUNTERSIGN_BIN", str(REPO / "target" / "debug" / "countersign"))


class Server:
    """`countersign serve --demo` on a free port, with its demo keys."""

    def __init__(self) -> None:
        self.data = tempfile.TemporaryDirectory()
        self.process = subprocess.Popen(
            [BINARY, "serve", "--demo", "--listen", "127.0.0.1:0", "--data", self.data.name],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        found: dict[str, str] = {}
        assert self.process.stdout is not None
        while len(found) < 3:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError("countersign serve exited")
            if line.startswith("countersign: listening on "):
                found["url"] = line.split()[-1]
            elif line.startswith("Demo reviewer key"):
                found["reviewer"] = line.split()[-1]
            elif line.startswith("Demo agent key"):
                found["agent"] = line.split()[-1]
        self.url, self.reviewer_key, self.agent_key = found["url"], found["reviewer"], found["agent"]
        self.public_key = subprocess.run(
            [BINARY, "keys", "--data", self.data.name, "signing-key"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
        self.http = httpx.Client(base_url=f"{self.url}/api/v1", headers={"Authorization": f"Bearer {self.reviewer_key}"})

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()
        self.http.close()
        self.data.cleanup()

    def pending(self, agent: str) -> list[dict[str, Any]]:
        """The pending reviews asked by `agent`."""
        answer = self.http.get("/reviews", params={"status": "pending", "requester": agent})
        answer.raise_for_status()
        items: list[dict[str, Any]] = answer.json()["items"]
        return items

    def review(self, review_id: str) -> dict[str, Any]:
        answer = self.http.get(f"/reviews/{review_id}")
        answer.raise_for_status()
        found: dict[str, Any] = answer.json()
        return found

    def decide(self, review_id: str, decision: dict[str, Any]) -> dict[str, Any]:
        answer = self.http.post(
            f"/reviews/{review_id}/decisions",
            json={"decided_by_role": "reviewer", **decision},
            headers={"Idempotency-Key": f"sdk-{uuid.uuid4()}"},
        )
        assert answer.status_code == 200, answer.text
        decided: dict[str, Any] = answer.json()
        return decided

    def decide_when_asked(self, agent: str, decision: dict[str, Any], count: int = 1) -> threading.Thread:
        """Decides the next `count` reviews `agent` asks for, as they come."""

        def run() -> None:
            done: set[str] = set()
            deadline = time.monotonic() + 30
            while len(done) < count and time.monotonic() < deadline:
                for item in self.pending(agent):
                    review_id = item["confirm"]["confirm_id"]
                    if review_id not in done:
                        self.decide(review_id, decision)
                        done.add(review_id)
                time.sleep(0.05)

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        return thread


def run_guide_example(server: Server, page: str, requester: str) -> list[str]:
    """Runs the first Python block of docs/`page` in a fresh interpreter, a
    reviewer approving what `requester` asks: the lines it printed."""
    guide = (REPO / "docs" / page).read_text()
    example = re.findall(r"```python\n(.*?)```", guide, re.S)[0]
    env = {**os.environ, "COUNTERSIGN_URL": server.url, "COUNTERSIGN_AGENT_KEY": server.agent_key}
    reviewer = server.decide_when_asked(requester, {"status": "approved"})
    ran = subprocess.run([sys.executable, "-c", example], env=env, capture_output=True, text=True, timeout=120)
    reviewer.join()
    assert ran.returncode == 0, ran.stderr
    return ran.stdout.split("\n")


def resume_elsewhere(server: Server, script: str, saved: dict[str, Any], requester: str, *, wait: bool = True) -> Any:
    """Runs `script` in a fresh interpreter (these tests importable, `saved`
    as JSON on its standard input), a reviewer approving what `requester`
    asks (nothing, when not `wait`): the JSON it printed."""
    env = {
        **os.environ,
        "COUNTERSIGN_URL": server.url,
        "COUNTERSIGN_AGENT_KEY": server.agent_key,
        "PYTHONPATH": os.pathsep.join([str(REPO / "sdk" / "python" / "tests"), str(REPO / "sdk" / "python" / "src")]),
    }
    reviewer = server.decide_when_asked(requester, {"status": "approved"}) if wait else None
    resumed = subprocess.run(
        [sys.executable, "-c", script], input=json.dumps(saved), env=env, capture_output=True, text=True, timeout=120
    )
    if reviewer is not None:
        reviewer.join()
    assert resumed.returncode == 0, resumed.stderr
    return json.loads(resumed.stdout)


@pytest.fixture(scope="session")
def server() -> Iterator[Server]:
    running = Server()
    yield running
    running.stop()


@pytest.fixture
def agent() -> str:
    """A requester name of this test's own, so its reviews are told apart."""
    return f"sdk-test-{uuid.uuid4().hex[:8]}"
