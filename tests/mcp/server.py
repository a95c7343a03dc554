"""An MCP server (the official Python SDK) whose tools record what ran.

`write_note` and `delete_notes` change things; `list_notes` only reads. Each
call that reaches the server appends `{"tool", "arguments"}` to the file named
by NOTES_LOG, so a test can see exactly what ran and with which arguments.
"""

import json
import os

from mcp.server import MCPServer

server = MCPServer("notes")
LOG = os.environ["NOTES_LOG"]


def record(tool: str, arguments: dict) -> None:
    with open(LOG, "a", encoding="utf-8") as log:
        log.write(json.dumps({"tool": tool, "arguments": arguments}) + "\n")


@server.tool()
def write_note(title: str, text: str) -> str:
    """Write a note."""
    record("write_note", {"title": title, "text": text})
    return f"wrote {title}"


@server.tool()
def list_notes() -> str:
    """List the notes."""
    record("list_notes", {})
    return "no notes yet"


if __name__ == "__main__":
    server.run()
