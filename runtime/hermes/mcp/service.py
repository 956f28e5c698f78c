"""The runtime's MCP servers, as the container wires them (``mcp``, a Resource).

They start with the runtime, all at once, each within its ``connect_timeout``; the tool
registry waits for them when it is built, and a server that failed is reported in one
line and left out. A command the warm server runs asks the server's broker instead,
which keeps the servers running from one command to the next; anywhere else (the
gateway, an in-process chat, ``hermes mcp serve``) they live in this process as long as
the runtime. With no server configured the SDK is never imported.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from typing import Any

from hermes.config.mcp_schema import McpServerConfig
from hermes.home import Home
from hermes.mcp.base import Listing, McpClient
from hermes.mcp.spec import ServerSpec, server_specs
from hermes.mcp.tools import Warn, server_toolsets
from hermes.tools.base import ToolSpec
from hermes.tools.toolsets import ToolsetSpec


def _stderr_warning(line: str) -> None:
    sys.stderr.write(f"warning: {line}\n")
    sys.stderr.flush()


class McpService:
    """The configured servers of one runtime and their tools."""

    def __init__(self, client: McpClient | None, specs: list[ServerSpec],
                 problems: list[str], warn: Warn = _stderr_warning, log: Any = None):
        self.client = client
        self.specs = specs
        self.problems = problems
        self._warn = warn
        self._log = log
        self._toolsets: list[tuple[ToolsetSpec, list[ToolSpec]]] | None = None

    def listings(self) -> list[Listing]:
        """Each server's tools or failure (waits for start-up)."""
        return self.client.listings() if self.client is not None else []

    def toolsets(self) -> list[tuple[ToolsetSpec, list[ToolSpec]]]:
        """The servers' toolsets for the registry; failures reported once."""
        if self._toolsets is None:
            listings = self.listings()
            for problem in self.problems:
                self._warning(f"MCP server skipped: {problem}")
            for listing in listings:
                if listing.error is not None:
                    self._warning(f"MCP server {listing.server} skipped: {listing.error}")
            self._toolsets = [] if self.client is None else server_toolsets(
                self.client, self.specs, listings, self._warning)
        return self._toolsets

    def close(self) -> None:
        if self.client is not None:
            self.client.close()

    def _warning(self, line: str) -> None:
        if self._log is not None:
            self._log.warning(line)
        self._warn(line)


def open_mcp(home: Home, servers: Mapping[str, McpServerConfig],
             environ: Mapping[str, str]) -> Iterator[McpService]:
    """The container's resource: start the enabled servers; stop them (or let the
    broker keep them) when the runtime closes."""
    specs, problems = server_specs(servers, environ)
    if not specs:
        yield McpService(None, [], problems)
        return
    service = start_servers(home, environ, specs, problems)
    try:
        yield service
    finally:
        service.close()


def start_servers(home: Home, environ: Mapping[str, str], specs: list[ServerSpec],
                  problems: list[str], *, shared: bool = True) -> McpService:
    """Begin connecting to ``specs``: through the warm server's broker when this process
    is a command it runs (and ``shared``), else in a pool of this process."""
    from hermes.logs import home_logger
    from hermes.mcp.broker import broker_client
    from hermes.mcp.pool import McpPool

    log = home_logger(home, environ, "mcp")
    client = (broker_client(home, environ) if shared else None) or McpPool(log)
    client.start(specs)
    return McpService(client, specs, problems, log=log)
