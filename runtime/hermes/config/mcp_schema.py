"""The ``mcp_servers`` section: MCP servers whose tools the agent gets, checked when a
config is composed (``hermes.mcp`` connects to them)."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, Field, model_validator
from pydantic_core import PydanticCustomError

from hermes.config.sections import NonBlank, Section

SERVER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")
"""A server's name: it becomes part of tool names (``mcp_<server>_<tool>``)."""


def _server_names(value: dict[str, Any]) -> dict[str, Any]:
    for name in value:
        if not SERVER_NAME.fullmatch(name):
            raise PydanticCustomError(
                "as_written", "'{name}' is not a server name: letters, digits, - and _ "
                "(at most 32, starting with a letter or digit)", {"name": name})
    return value


def _http_url(value: str | None) -> str | None:
    if value is not None and not re.match(r"https?://[^/\s]+", value):
        raise PydanticCustomError("as_written", "not an http:// or https:// URL (a "
                                  "streamable HTTP endpoint such as https://host/mcp)")
    return value


class McpToolFilter(Section):
    """Which of a server's tools the agent gets, by the server's own tool names."""

    include: list[NonBlank] = Field(default_factory=list)
    """Only these tools (empty: every tool the server offers)."""
    exclude: list[NonBlank] = Field(default_factory=list)
    """Never these tools (applied after ``include``)."""


class McpServerConfig(Section):
    """One MCP server: a command spoken to over stdio (``command``, ``args``, ``env``)
    or a streamable HTTP endpoint (``url``, ``headers``)."""

    command: NonBlank | None = None
    """The program that serves MCP on its standard input and output (stdio)."""
    args: list[str] = Field(default_factory=list)
    """Its arguments."""
    env: dict[str, str | None] = Field(default_factory=dict)
    """Variables it gets besides PATH, HOME, USER, LANG, TERM, SHELL, TMPDIR and XDG_*
    (nothing else of ours is passed on); secrets by reference: ``${secret:NAME}``."""
    cwd: str | None = None
    """Its working directory; unset: the directory the runtime started in."""
    url: Annotated[str | None, AfterValidator(_http_url)] = None
    """A streamable HTTP endpoint (``https://host/mcp``) instead of a command."""
    headers: dict[str, str | None] = Field(default_factory=dict)
    """HTTP headers sent with every request; secrets by reference, e.g.
    ``Authorization: Bearer ${secret:GITHUB_MCP_TOKEN}``."""
    enabled: bool = True
    """Connect to this server (``false`` keeps its settings without starting it)."""
    timeout: float = Field(120.0, gt=0, le=3600)
    """Seconds one tool call may take; past them the model gets an error."""
    connect_timeout: float = Field(30.0, gt=0, le=600)
    """Seconds the server may take to start and list its tools; past them it is skipped
    (reported) and the runtime goes on without it."""
    tools: McpToolFilter = Field(default_factory=McpToolFilter)
    """Which of its tools the agent gets (``include``/``exclude``)."""

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise PydanticCustomError("as_written", "set either command (a stdio server) or "
                                      "url (a streamable HTTP server), not both or neither")
        if self.url is not None and (self.env or self.args or self.cwd):
            raise PydanticCustomError("as_written", "args, env and cwd are for a command; "
                                      "an HTTP server takes url and headers")
        if self.command is not None and self.headers:
            raise PydanticCustomError("as_written", "headers are for an HTTP server (url); "
                                      "a command takes args and env")
        return self


McpServers = Annotated[dict[str, McpServerConfig], AfterValidator(_server_names)]
"""``mcp_servers``: MCP servers by name."""
