"""Clicks a button of a Countersign message as Slack does: the interaction
payload of a `block_actions` click, form-encoded, POSTed to the app's
Request URL with the headers that the official Python SDK (slack-sdk,
PyPI) signs, never Countersign's own code.

    python click.py SPEC_JSON
SPEC_JSON: {"url", "secret", "team", "user", "user_name", "action_id",
"review", "reason"?, "action_ts", "response_url", "timestamp"?, "tamper"?}
where "tamper" is "body" (one byte changed after signing) or "signature"
(signed with another secret). Prints the HTTP status, the body sent and
when (`sent_at`, ms since the epoch), as JSON, so a test can send the same
request again (a replay). Given a
JSON list of specs, sends them all at once and prints a list.
"""

import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from slack_sdk.signature import SignatureVerifier


def payload(spec):
    state = {}
    if spec.get("reason") is not None:
        state = {"countersign_why": {"countersign_reason": {"type": "plain_text_input", "value": spec["reason"]}}}
    return {
        "type": "block_actions",
        "user": {"id": spec["user"], "username": spec["user_name"], "name": spec["user_name"], "team_id": spec["team"]},
        "api_app_id": "A0COUNTERSIGN",
        "token": "deprecated-verification-token",
        "container": {"type": "message", "message_ts": "1700000000.000100", "channel_id": "C0REVIEWS", "is_ephemeral": False},
        "trigger_id": "1.2.3",
        "team": {"id": spec["team"], "domain": "example"},
        "channel": {"id": "C0REVIEWS", "name": "reviews"},
        "response_url": spec["response_url"],
        "actions": [
            {
                "action_id": spec["action_id"],
                "block_id": "countersign_decide",
                "text": {"type": "plain_text", "text": "Approve"},
                "value": spec["review"],
                "type": "button",
                "action_ts": spec["action_ts"],
            }
        ],
        "state": {"values": state},
    }


def send(url, body, headers):
    request = urllib.request.Request(url, data=body.encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()


def signed(spec):
    """The request Slack would send for `spec`: body, timestamp, signature, headers."""
    body = spec.get("body") or urllib.parse.urlencode({"payload": json.dumps(payload(spec))})
    timestamp = str(spec.get("timestamp") or int(time.time()))
    secret = spec["secret"] if spec.get("tamper") != "signature" else "not-the-signing-secret"
    signature = SignatureVerifier(secret).generate_signature(timestamp=timestamp, body=body)
    sent = body
    if spec.get("tamper") == "body":
        # One byte changed after signing.
        sent = body[:-1] + ("A" if body[-1] != "A" else "B")
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Slack-Request-Timestamp": timestamp,
        "X-Slack-Signature": signature,
        "User-Agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
    }
    return body, sent, timestamp, signature, headers


def click(spec):
    body, sent, timestamp, signature, headers = signed(spec)
    sent_at = time.time() * 1000
    status, text = send(spec["url"], sent, headers)
    return {"status": status, "text": text, "body": body, "timestamp": timestamp, "signature": signature, "sent_at": sent_at}


def main():
    spec = json.loads(sys.argv[1])
    if isinstance(spec, list):
        # Many clicks at once (several people, or one person clicking fast).
        with ThreadPoolExecutor(max_workers=len(spec) or 1) as pool:
            print(json.dumps(list(pool.map(click, spec))))
    else:
        print(json.dumps(click(spec)))


if __name__ == "__main__":
    main()
