"""The packages as an agent's project gets them: `scripts/package-sdks.sh`
builds the wheel and the sdist, each installs into a new virtual
environment, and the guide's example runs there against a real server."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, Server


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("packages")
    subprocess.run([str(REPO / "scripts" / "package-sdks.sh"), str(out)], check=True, capture_output=True)
    return out


@pytest.mark.parametrize("kind", ["py3-none-any.whl", "tar.gz"])
def test_each_package_installs_into_a_new_environment_and_runs_the_guide(
    packages: Path, kind: str, server: Server, tmp_path: Path
) -> None:
    (package,) = packages.glob(f"countersign_sdk-0.1.0*{kind}")
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "venv")], check=True)
    python = tmp_path / "venv" / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", str(package)], check=True)
    typed = subprocess.run(
        [str(python), "-c", "import countersign, pathlib; print((pathlib.Path(countersign.__file__).parent / 'py.typed').exists())"],
        capture_output=True, text=True, check=True,
    )
    assert typed.stdout.strip() == "True"
    licences = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(sorted(f.name for f in m.files('countersign-sdk') if 'LICENSE' in f.name))"],
        capture_output=True, text=True, check=True,
    )
    assert licences.stdout.strip() == "['LICENSE-APACHE', 'LICENSE-MIT']"
    guide = (REPO / "docs" / "python.md").read_text()
    example = re.findall(r"```python\n(.*?)```", guide, re.S)[0]
    env = {**os.environ, "COUNTERSIGN_URL": server.url, "COUNTERSIGN_AGENT_KEY": server.agent_key}
    env.pop("PYTHONPATH", None)  # the installed package, not the checkout's source
    reviewer = server.decide_when_asked("python-agent", {"status": "approved"})
    ran = subprocess.run([str(python), "-c", example], env=env, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    reviewer.join()
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "refunded 120.0 to cus_42"
