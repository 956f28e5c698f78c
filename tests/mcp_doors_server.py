"""An MCP server written with the official SDK for the issue-27 repairs (stdio): a tool
that waits and records whether it was cancelled, a tool that declares
``execution.taskSupport: "required"``, and a tool that returns an image.

``DOORS_MARKS`` names a file where ``wait`` appends ``started`` and then ``cancelled``
or ``finished``.
"""

from __future__ import annotations

import base64
import os

import anyio
from mcp.server.mcpserver import Image, MCPServer
from mcp.types import Tool, ToolExecution

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUHEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5E"
    "rkJggg==")
"""A 1×1 PNG."""


class DoorsServer(MCPServer):
    async def list_tools(self) -> list[Tool]:
        tools = await super().list_tools()
        return [t.model_copy(update={"execution": ToolExecution(task_support="required")})
                if t.name == "task_only" else t for t in tools]


app = DoorsServer("doors")


def _mark(word: str) -> None:
    with open(os.environ["DOORS_MARKS"], "a") as marks:
        marks.write(word + "\n")


@app.tool()
async def wait(seconds: float) -> str:
    """Wait, then answer."""
    _mark("started")
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        _mark("cancelled")
        raise
    _mark("finished")
    return f"waited {seconds}"


@app.tool()
def task_only() -> str:
    """Runs only as a task (it says so in execution.taskSupport)."""
    return "never called directly"


@app.tool(structured_output=False)
def picture() -> list[object]:
    """A picture and a caption."""
    return ["a red dot", Image(data=PNG, format="png")]


if __name__ == "__main__":
    app.run()
