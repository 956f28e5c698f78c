"""The base class each wire format implements, and the helpers they share."""

from __future__ import annotations

import itertools
import json
from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import Any, ClassVar

from .recording import RecordedRequest, WireName
from .script import Fault, Reply, ToolCall


class Ids:
    """Unique, readable ids (``call_fake000001``); one counter per server."""

    def __init__(self) -> None:
        self._counter = itertools.count(1)

    def new(self, prefix: str, sep: str = "_") -> str:
        return f"{prefix}{sep}fake{next(self._counter):06d}"


class Wire(ABC):
    """One provider wire format: how a :class:`Reply` and a :class:`Fault` look on the wire."""

    name: ClassVar[WireName]
    paths: ClassVar[tuple[str, ...]]
    stream_content_type: ClassVar[str] = "text/event-stream; charset=utf-8"

    def __init__(self, ids: Ids, chunk_chars: int = 8):
        self.ids = ids
        self.chunk_chars = chunk_chars
        """Streamed text and tool arguments are cut into pieces of this many characters."""

    def handles(self, path: str) -> bool:
        """Whether this format answers ``path``: one of ``paths`` unless overridden
        (for paths with parameters, such as Bedrock's model id)."""
        return path in self.paths

    @abstractmethod
    def reply(self, reply: Reply, request: RecordedRequest) -> dict[str, Any]:
        """The non-streaming response body."""

    @abstractmethod
    def stream(self, reply: Reply, request: RecordedRequest) -> Iterator[bytes]:
        """The streaming response: one complete event per item (SSE unless
        ``stream_content_type`` says otherwise)."""

    @abstractmethod
    def error(self, fault: Fault) -> dict[str, Any]:
        """The error body sent with :meth:`error_status`."""

    def error_status(self, fault: Fault) -> int:
        """The HTTP status sent with :meth:`error`."""
        return fault.status

    def error_headers(self, fault: Fault) -> dict[str, str]:
        """Extra headers sent with :meth:`error` (none by default)."""
        return {}

    @abstractmethod
    def stream_error(self, fault: Fault, sequence: int) -> bytes:
        """The event reporting ``fault`` in the middle of a stream."""

    def pieces(self, text: str) -> list[str]:
        """``text`` cut into streaming fragments; at least one, possibly empty."""
        size = self.chunk_chars
        return [text[i:i + size] for i in range(0, len(text), size)] or [""]


def arguments_json(call: ToolCall) -> str:
    """The arguments string as the provider sends it: compact JSON, or a raw string verbatim."""
    if isinstance(call.arguments, str):
        return call.arguments
    return json.dumps(dict(call.arguments), separators=(",", ":"), ensure_ascii=False)


def arguments_object(call: ToolCall) -> Any:
    """The arguments as a JSON value, for formats that send an object (Anthropic ``input``).

    A raw string that is not valid JSON cannot be expressed there and is sent as a string.
    """
    if not isinstance(call.arguments, str):
        return dict(call.arguments)
    try:
        return json.loads(call.arguments)
    except ValueError:
        return call.arguments


def sse(data: dict[str, Any] | str, event: str | None = None) -> bytes:
    """One server-sent event, JSON-encoded unless ``data`` is already a string."""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()
