"""An MCP client (the official Python SDK) calling tools through a command.

Usage: client.py TOOL JSON_ARGUMENTS [TOOL JSON_ARGUMENTS]... -- COMMAND [ARGS]...
Starts COMMAND as a stdio MCP server (here `countersign mcp-gate ... -- server`),
calls each tool in turn, and prints one JSON line per call:
`{"tool", "is_error", "text"}`. A tool written `cancel:NAME` is called and
given up after 3 seconds (the SDK cancels the request): `{"tool", "cancelled"}`.
MCP_MODE=legacy speaks MCP 2025 (the `initialize` handshake) instead of 2026.
"""

import asyncio
import json
import os
import sys

import anyio
from mcp import Client, StdioServerParameters


async def main() -> None:
    split = sys.argv.index("--")
    calls = sys.argv[1:split]
    command = sys.argv[split + 1 :]
    # The whole environment: the SDK passes only a few variables by default.
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    async with Client(params, mode=os.environ.get("MCP_MODE", "auto")) as client:
        for tool, arguments in zip(calls[::2], calls[1::2]):
            if tool.startswith("cancel:"):
                tool = tool.removeprefix("cancel:")
                with anyio.move_on_after(3) as scope:
                    await client.call_tool(tool, json.loads(arguments))
                print(json.dumps({"tool": tool, "cancelled": scope.cancelled_caught}), flush=True)
                continue
            result = await client.call_tool(tool, json.loads(arguments))
            text = " ".join(block.text for block in result.content if block.type == "text")
            print(json.dumps({"tool": tool, "is_error": bool(result.is_error), "text": text}), flush=True)


asyncio.run(main())
