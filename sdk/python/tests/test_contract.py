"""The SDK's wire types against the server's OpenAPI document, and the
README's quickstart run as written."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, Server
from countersign import wire

OPENAPI = json.loads((REPO / "crates" / "server" / "openapi.json").read_text())
SCHEMAS: dict[str, Any] = OPENAPI["components"]["schemas"]
# Optional on the wire, always present in what the SDK sends and accepts:
# a call without arguments is sent as `"args": {}`.
ALWAYS_PRESENT = {("ToolCall", "args")}


def test_the_error_codes_are_the_ones_the_openapi_document_lists() -> None:
    from countersign import ERROR_CODES
    from countersign.errors import error_code

    assert list(ERROR_CODES) == SCHEMAS["ErrorCode"]["enum"]
    assert error_code("token_used") == "token_used"
    assert error_code("a_code_from_a_newer_server") == "unknown"
    assert error_code(None) == "unknown"


@pytest.mark.parametrize(
    "typed, schema",
    [
        (wire.ToolCall, "ToolCall"),
        (wire.ToolCallSubmission, "ToolCallSubmission"),
        (wire.Token, "Token"),
        (wire.Outcome, "Outcome"),
        (wire.Redemption, "Redemption"),
        (wire.WithdrawInput, "WithdrawInput"),
    ],
)
def test_each_wire_type_has_the_fields_the_openapi_document_names(typed: Any, schema: str) -> None:
    documented = SCHEMAS[schema]
    required = set(documented.get("required", [])) | {f for s, f in ALWAYS_PRESENT if s == schema}
    assert set(typed.__required_keys__) == required, schema
    assert set(typed.__optional_keys__) == set(documented["properties"]) - required, schema


def test_the_readme_quickstart_runs_as_written(server: Server, agent: str) -> None:
    readme = (REPO / "sdk" / "python" / "README.md").read_text()
    quickstart = re.findall(r"```python\n(.*?)```", readme, re.S)[0]
    env = {
        **os.environ,
        "COUNTERSIGN_URL": server.url,
        "COUNTERSIGN_AGENT_KEY": server.agent_key,
        "COUNTERSIGN_PUBLIC_KEY": server.public_key,
    }
    reviewer = server.decide_when_asked("python-agent", {"status": "approved"})
    ran = subprocess.run([sys.executable, "-c", quickstart], env=env, capture_output=True, text=True, timeout=60)
    reviewer.join()
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "refunded 120.0 to cus_42"


def section(readme: str, heading: str) -> str:
    start = readme.index(heading)
    end = readme.find("\n## ", start + len(heading))
    return readme[start : end if end >= 0 else len(readme)]


@pytest.mark.parametrize(
    ("where", "block", "outcome", "printed"),
    [
        (where, block, outcome, printed)
        for where in ["README.md", "docs/python.md"]
        for block, outcome, printed in [
            (1, "APPROVED", "refunded 120.0 to cus_42"),
            (2, "TOOL_DENIED", "not refunded: Refunds over 100 need a ticket."),
        ]
    ],
)
def test_the_quickstart_and_its_curl_reviewer_run_as_written(
    server: Server, where: str, block: int, outcome: str, printed: str
) -> None:
    text = (REPO / where).read_text()
    agent_sdks = section(text, "## Agent SDKs") if where == "README.md" else text
    quickstart = re.findall(r"```python\n(.*?)```", agent_sdks, re.S)[0]
    reviewer = re.findall(r"```sh\n(.*?)```", agent_sdks, re.S)[block]
    # What the page says the script prints is what it prints.
    assert f"prints `{printed}`" in " ".join(agent_sdks.split())
    env = {
        **os.environ,
        "COUNTERSIGN_URL": server.url,
        "COUNTERSIGN_AGENT_KEY": server.agent_key,
        "REVIEWER_KEY": server.reviewer_key,
    }
    agent = subprocess.Popen(
        [sys.executable, "-c", quickstart], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    for _ in range(200):
        if server.pending("python-agent"):
            break
        time.sleep(0.05)
    decided = subprocess.run(["bash", "-euo", "pipefail", "-c", reviewer], env=env, capture_output=True, text=True, timeout=60)
    assert decided.returncode == 0, decided.stderr
    assert json.loads(decided.stdout)["outcome"]["outcome"] == outcome
    out, err = agent.communicate(timeout=60)
    assert agent.returncode == 0, err
    assert out.strip() == printed
