"""A small filesystem MCP server written with the official SDK, for the README's MCP
section: it stands in for ``npx -y @modelcontextprotocol/server-filesystem DIR`` (a
test puts an ``npx`` shim on PATH that starts this), offering the same tool names over
stdio, confined to DIR."""

from __future__ import annotations

import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

ROOT = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else Path.cwd()
app = MCPServer("filesystem")


def inside(path: str) -> Path:
    """``path`` (absolute, or relative to the root) when it lies under the root."""
    resolved = (ROOT / path).resolve()
    if not resolved.is_relative_to(ROOT):
        raise ValueError(f"access denied: {path} is outside {ROOT}")
    return resolved


@app.tool()
def read_text_file(path: str) -> str:
    """Read a text file."""
    return inside(path).read_text()


@app.tool()
def list_directory(path: str) -> str:
    """List a directory: [FILE] or [DIR] and each name."""
    entries = sorted(inside(path).iterdir())
    return "\n".join(f"[{'DIR' if e.is_dir() else 'FILE'}] {e.name}" for e in entries)


@app.tool()
def write_file(path: str, content: str) -> str:
    """Write a text file."""
    inside(path).write_text(content)
    return f"wrote {path}"


if __name__ == "__main__":
    app.run()
