"""Clicks a button of a Countersign message as Slack does: the interaction
payload of a `block_actions` click, form-encoded, POSTed to the app's
Request URL with the headers that the official Python SDK (slack-sdk,
PyPI) signs, never Countersign's own code.

    python click.py SPEC_JSON
SPEC_JSON: {"url", "secret", "team", "user", "user_name", "action_id",
"review", "reason"?, "action_ts", "response_url", "timestamp"?, "tamper"?}
where "tamper" is "body" (one byte changed after signing) or "signature"
(signed with another secret). Prints the HTTP status and the body sent,
as JSON, so a test can send the same request again (a replay).
"""

import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

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


def main():
    spec = json.loads(sys.argv[1])
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
    status, text = send(spec["url"], sent, headers)
    print(json.dumps({"status": status, "text": text, "body": body, "timestamp": timestamp, "signature": signature}))


if __name__ == "__main__":
    main()
