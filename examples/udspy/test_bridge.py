"""The udspy bridge against a real `countersign serve`: one approval runs the
tool once, however udspy's confirmation is answered or the tool called again.
Run: `.venv-udspy/bin/python -m unittest examples/udspy/test_bridge.py`
(COUNTERSIGN_BIN names the binary; target/debug/countersign by default).
"""

import json
import os
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.request

from udspy.confirmation import ConfirmationRequired, confirm_first, respond_to_confirmation

from countersign import Countersign, NotApproved
from countersign_bridge import decide, spends_approval

BINARY = os.environ.get("COUNTERSIGN_BIN", "target/debug/countersign")
RAN: list = []


@confirm_first
@spends_approval
def archive_file(path: str, keep_days: int = 30) -> str:
    RAN.append({"path": path, "keep_days": keep_days})
    if path.endswith(".fails"):
        raise OSError("the disk is full")
    return f"archived {path}"


class BridgeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.data = tempfile.TemporaryDirectory()
        cls.process = subprocess.Popen(
            [BINARY, "serve", "--demo", "--listen", "127.0.0.1:0", "--data", cls.data.name, "--log-filter", "warn"],
            stdout=subprocess.PIPE, text=True,
        )
        found = {}
        while len(found) < 3:
            line = cls.process.stdout.readline()
            if not line:
                raise RuntimeError("countersign serve exited")
            for start, name in (("countersign: listening on ", "url"), ("Demo reviewer key", "reviewer"), ("Demo agent key", "agent")):
                if line.startswith(start):
                    found[name] = line.split()[-1]
        cls.url, cls.reviewer, cls.agent = found["url"], found["reviewer"], found["agent"]

    @classmethod
    def tearDownClass(cls) -> None:
        cls.process.kill()
        cls.process.wait()
        cls.data.cleanup()

    def approve_when_asked(self) -> threading.Thread:
        def approve() -> None:
            for _ in range(400):
                request = urllib.request.Request(
                    f"{self.url}/api/v1/reviews?status=pending&requester=udspy-test",
                    headers={"Authorization": f"Bearer {self.reviewer}"},
                )
                items = json.load(urllib.request.urlopen(request))["items"]
                if items:
                    review = items[0]["confirm"]["confirm_id"]
                    urllib.request.urlopen(urllib.request.Request(
                        f"{self.url}/api/v1/reviews/{review}/decisions", method="POST",
                        data=json.dumps({"status": "approved", "decided_by_role": "reviewer"}).encode(),
                        headers={"Authorization": f"Bearer {self.reviewer}", "Content-Type": "application/json",
                                 "Idempotency-Key": f"u-{review}"},
                    ))
                    return
                time.sleep(0.05)

        thread = threading.Thread(target=approve)
        thread.start()
        return thread

    def approved(self, path: str) -> ConfirmationRequired:
        """Asks about `archive_file(path)` and has it approved: udspy's confirmation."""
        countersign = Countersign(self.url, self.agent, agent="udspy-test")
        with self.assertRaises(ConfirmationRequired) as paused:
            archive_file(path)
        reviewer = self.approve_when_asked()
        decide(countersign, paused.exception, session_id="s", run_id="r", risk_tier="R2")
        reviewer.join()
        return paused.exception

    def test_a_confirmation_answered_again_does_not_run_the_tool_twice(self) -> None:
        RAN.clear()
        confirmation = self.approved("reports/2025.csv")
        self.assertEqual(archive_file("reports/2025.csv"), "archived reports/2025.csv")
        respond_to_confirmation(confirmation.confirmation_id, approved=True)
        with self.assertRaisesRegex(NotApproved, "not approved in Countersign, or its approval was used"):
            archive_file("reports/2025.csv")
        self.assertEqual(RAN, [{"path": "reports/2025.csv", "keep_days": 30}])

    def test_a_tool_called_again_after_its_body_failed_does_not_run_again(self) -> None:
        RAN.clear()
        self.approved("reports/2025.fails")
        with self.assertRaises(OSError):
            archive_file("reports/2025.fails")
        # udspy keeps the confirmation when the body raises: the approval is spent.
        with self.assertRaises(NotApproved):
            archive_file("reports/2025.fails")
        self.assertEqual(len(RAN), 1)


if __name__ == "__main__":
    unittest.main()
