"""What the MCP client's parts exchange: a server's tools, a call's outcome, and the
interface the in-process pool and the broker's client both offer. No SDK import here."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hermes.mcp.spec import ServerSpec


@dataclass(frozen=True)
class ToolInfo:
    """One tool as the server lists it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    task_only: bool = False
    """It declares ``execution.taskSupport: "required"``: it runs only as an MCP task,
    which this client does not start, so the model is not offered it."""

    def to_wire(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description,
                "input_schema": self.input_schema, "task_only": self.task_only}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> ToolInfo:
        return cls(str(data["name"]), str(data.get("description") or ""),
                   dict(data.get("input_schema") or {}), bool(data.get("task_only")))


TASK_ONLY = "not offered: it runs only as an MCP task (execution.taskSupport: required)"


@dataclass(frozen=True)
class Listing:
    """A server after start-up: its tools, or why it could not be used."""

    server: str
    tools: tuple[ToolInfo, ...] = ()
    error: str | None = None
    """One line: what failed (the server is skipped)."""
    seconds: float = 0.0
    """How long connecting and listing took."""
    stderr: tuple[str, ...] = ()
    """The last lines a stdio server that failed to start wrote to its stderr."""

    def to_wire(self) -> dict[str, Any]:
        return {"server": self.server, "tools": [t.to_wire() for t in self.tools],
                "error": self.error, "seconds": self.seconds, "stderr": list(self.stderr)}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Listing:
        return cls(str(data["server"]), tuple(ToolInfo.from_wire(t) for t in data["tools"]),
                   data.get("error"), float(data.get("seconds") or 0.0),
                   tuple(data.get("stderr") or ()))


@dataclass(frozen=True)
class CallResult:
    """What a tool call returned (its content as text, and whether the server reported
    an error), or why there is no answer (``failure``, with what the server or the
    transport said about it in ``text``)."""

    text: str = ""
    """Everything the server sent: its content, or the text of its error."""
    is_error: bool = False
    structured: Any = field(default=None)
    """The call's structured content, when the server sent some."""
    failure: str | None = None
    """Our own account of a call without an answer (a timeout, the server gone): never
    the server's words, which go in ``text``."""
    images: tuple[tuple[str, str], ...] = ()
    """The image parts of its content: ``(MIME type, base64 data)``."""

    @classmethod
    def failed(cls, failure: str, said: str = "") -> CallResult:
        """No answer: ``failure`` in our words, ``said`` what came from outside (a
        JSON-RPC error's message, an exception's text)."""
        return cls(text=said, is_error=True, failure=failure)

    def to_wire(self) -> dict[str, Any]:
        return {"text": self.text, "is_error": self.is_error, "structured": self.structured,
                "failure": self.failure, "images": [list(image) for image in self.images]}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> CallResult:
        return cls(str(data["text"]), bool(data["is_error"]), data.get("structured"),
                   data.get("failure"), tuple((str(m), str(d)) for m, d in
                                              data.get("images") or ()))


Cancelled = Callable[[], bool]
"""True once the user interrupted the turn the call belongs to."""
CANCEL_EVERY = 0.1
"""Seconds between two looks at whether a running call was cancelled."""


def never() -> bool:
    return False


def interrupted(tool: str) -> CallResult:
    """A call the user interrupted (the server was told to stop it)."""
    return CallResult.failed(f"{tool} was cancelled: the user interrupted the turn")


class McpClient(ABC):
    """Connections to a runtime's MCP servers (the pool in this process, or the warm
    server's broker)."""

    @abstractmethod
    def start(self, specs: Sequence[ServerSpec]) -> None:
        """Begin connecting to every server, in parallel; returns at once."""

    @abstractmethod
    def listings(self) -> list[Listing]:
        """Each server's tools (or failure), waiting for start-up to end (bounded by
        each server's ``connect_timeout``)."""

    @abstractmethod
    def call(self, spec: ServerSpec, tool: str, arguments: dict[str, Any],
             cancelled: Cancelled = never) -> CallResult:
        """Call ``tool`` of the server of ``spec`` (bounded by its ``timeout``, and ended
        within ``CANCEL_EVERY`` once ``cancelled()``: the server is told the request is
        cancelled); never raises for what the server or the transport did: that is an
        error result."""

    @abstractmethod
    def close(self) -> None:
        """Stop what this client started."""
