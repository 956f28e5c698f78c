"""The declared shape of a tool (``ToolSpec``) and of one call's outcome (``ToolResult``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Image = tuple[str, str]
"""An image for the model: ``(MIME type, base64 data)``."""


@dataclass(frozen=True)
class ToolOutput:
    """What a handler returns when its result has images besides its JSON string: the
    model sees them as image parts of a message after the tool results."""

    content: str
    images: tuple[Image, ...] = ()


Handler = Callable[..., "str | ToolOutput"]
"""``handler(args, *, ctx, **_) -> str``: the result as a JSON string, always (or a
``ToolOutput``: that string and images)."""


def always_available() -> bool:
    return True


@dataclass(frozen=True)
class ToolSpec:
    """Everything the runtime needs to know about one tool."""

    name: str
    toolset: str
    description: str
    parameters: dict[str, Any]
    """JSON schema of the arguments (an object schema)."""
    handler: Handler
    """``handler(args, ctx=ToolContext) -> str`` (a JSON string, always)."""
    check: Callable[[], bool] = always_available
    """Availability check; a tool whose check fails is never shown to the model."""
    requires_env: tuple[str, ...] = ()
    """Environment variables that must be set for the tool to be shown."""
    parallel_safe: bool = False
    """Safe to run concurrently with other parallel-safe calls (no side effects)."""
    max_result_chars: int | None = None
    """Cap of one result; None uses the context's ``max_result_chars``."""

    def schema(self) -> dict[str, Any]:
        """The OpenAI-style function tool schema."""
        return {"type": "function", "function": {
            "name": self.name, "description": self.description, "parameters": self.parameters,
        }}


@dataclass(frozen=True)
class ToolResult:
    """The outcome of one ``ToolRegistry.dispatch``; ``content`` goes to the model."""

    name: str
    """The tool the model called (possibly unknown)."""
    content: str
    """JSON string for the tool message: redacted and capped."""
    is_error: bool
    """True when ``content`` is an error object (``{"error": ...}``)."""
    arguments: dict[str, Any] | None = None
    """The arguments after repair and validation; None if they were rejected."""
    spill_path: Path | None = None
    """Where the full result went when it was too long for ``content``."""
    duration_s: float = 0.0
    """Wall time of the call, in seconds."""
    images: tuple[Image, ...] = ()
    """Images the tool returned (``ToolOutput``), for the model to see."""


def object_schema(required: tuple[str, ...] = (), **properties: dict[str, Any]) -> dict[str, Any]:
    """A JSON object schema with ``properties`` that refuses unknown keys."""
    return {"type": "object", "properties": properties, "required": list(required),
            "additionalProperties": False}
