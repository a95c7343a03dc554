"""An SMTP server for the e-mail tests: aiosmtpd (PyPI), the real thing,
on a free port of 127.0.0.1. Prints `listening: PORT`, then one JSON line per
message received: {"from", "to": [...], "subject", "body" (decoded, as a
mail reader shows it), "data" (the message as sent)}. Stops when its
standard input closes.

    python smtp.py
"""

import email
import email.policy
import json
import socket
import sys

from aiosmtpd.controller import Controller


class Printer:
    async def handle_DATA(self, server, session, envelope):
        parsed = email.message_from_bytes(envelope.content, policy=email.policy.default)
        message = {
            "from": envelope.mail_from,
            "to": envelope.rcpt_tos,
            "subject": str(parsed["subject"]),
            "body": parsed.get_content(),
            "data": envelope.content.decode("utf-8", "replace"),
        }
        print(json.dumps(message), flush=True)
        return "250 Message accepted for delivery"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    port = free_port()
    controller = Controller(Printer(), hostname="127.0.0.1", port=port)
    controller.start()
    print(f"listening: {port}", flush=True)
    sys.stdin.read()
    controller.stop()


if __name__ == "__main__":
    main()
