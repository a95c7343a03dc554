"""A udspy agent whose risky tool asks a human through Countersign.

Usage: python agent.py SERVER PATH  (the agent key in COUNTERSIGN_KEY; the
server's receipt key, to check approvals offline, in COUNTERSIGN_PUBLIC_KEY)

``archive_file`` is a ``@confirm_first`` tool: its first call raises
``ConfirmationRequired``; the bridge forwards it, and after the reviewer's
decision the tool is called again, as udspy resumes, running with the
reviewer's arguments when they were edited. Prints one JSON line: what ran.
"""

import json
import os
import sys

from udspy.confirmation import ConfirmationRejected, ConfirmationRequired, confirm_first

from countersign_bridge import Countersign

RAN = []


@confirm_first
def archive_file(path: str, keep_days: int = 30) -> str:
    RAN.append({"path": path, "keep_days": keep_days})
    return f"archived {path} for {keep_days} days"


def main():
    server, path = sys.argv[1], sys.argv[2]
    countersign = Countersign(
        server,
        os.environ["COUNTERSIGN_KEY"],
        role="udspy-agent",
        device="udspy-host",
        public_key=os.environ.get("COUNTERSIGN_PUBLIC_KEY"),
    )
    try:
        print(json.dumps({"result": archive_file(path)}))
        return
    except ConfirmationRequired as paused:
        outcome = countersign.decide(paused, session_id="udspy-session", run_id="run-1", risk_tier="R3")
    if outcome["outcome"] == "APPROVED":
        args = json.loads(outcome["approved_call"])["args"]
        try:
            countersign.redeem(outcome, "archive_file", args)
        except RuntimeError as refused:
            print(json.dumps({"status": "refused", "error": str(refused), "ran": RAN}))
            return
    try:
        result = archive_file(path)
        print(json.dumps({"status": outcome.get("kind"), "result": result, "ran": RAN}))
    except ConfirmationRejected as rejected:
        print(json.dumps({"status": "rejected", "reason": outcome.get("reason"), "message": rejected.message, "ran": RAN}))
    except ConfirmationRequired:
        print(json.dumps({"status": outcome.get("kind"), "feedback": outcome.get("reason"), "ran": RAN}))


if __name__ == "__main__":
    main()
