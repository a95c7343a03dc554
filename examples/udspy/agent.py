"""A udspy agent whose risky tool asks a human through Countersign.

Usage: python agent.py SERVER PATH  (the agent key in COUNTERSIGN_AGENT_KEY; the
server's receipt key, to check approvals offline, in COUNTERSIGN_PUBLIC_KEY)

``archive_file`` is a ``@confirm_first`` tool: its first call raises
``ConfirmationRequired``; the bridge forwards it, and after the reviewer's
decision the tool is called again, as udspy resumes, running with the
reviewer's arguments when they were edited (``@spends_approval`` spends the
approval's token right before the body). Prints one JSON line: what ran.
"""

import json
import os
import sys

from udspy.confirmation import ConfirmationRejected, ConfirmationRequired, confirm_first

from countersign import Countersign, Denied, NotApproved
from countersign_bridge import decide, spends_approval

RAN = []


@confirm_first
@spends_approval
def archive_file(path: str, keep_days: int = 30) -> str:
    RAN.append({"path": path, "keep_days": keep_days})
    return f"archived {path} for {keep_days} days"


def main():
    server, path = sys.argv[1], sys.argv[2]
    countersign = Countersign(
        server,
        os.environ["COUNTERSIGN_AGENT_KEY"],
        os.environ.get("COUNTERSIGN_PUBLIC_KEY"),
        agent="udspy-agent",
        device="udspy-host",
    )
    try:
        print(json.dumps({"result": archive_file(path)}))
        return
    except ConfirmationRequired as paused:
        try:
            approval = decide(countersign, paused, session_id="udspy-session", run_id="run-1", risk_tier="R3")
        except Denied as denied:
            status = {"status": denied.kind, "reason": denied.reason}
        except NotApproved as refused:
            print(json.dumps({"status": "refused", "error": str(refused), "ran": RAN}))
            return
        else:
            status = {"status": "edited" if approval.edited else "approved"}
    try:
        print(json.dumps({**status, "result": archive_file(path), "ran": RAN}))
    except NotApproved as refused:
        print(json.dumps({"status": "refused", "error": str(refused), "ran": RAN}))
    except ConfirmationRejected as rejected:
        print(json.dumps({"status": "rejected", "reason": status.get("reason"), "message": rejected.message, "ran": RAN}))
    except ConfirmationRequired:
        print(json.dumps({"status": status["status"], "feedback": status.get("reason"), "ran": RAN}))


if __name__ == "__main__":
    main()
