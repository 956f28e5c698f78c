"""What the client sent: one :class:`RecordedRequest` per HTTP request, with helpers
that read the same facts out of every wire format."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import unquote

WireName = Literal["openai_chat", "anthropic", "responses", "bedrock"]

# Shown as "***" in repr() so assertion failures never print a credential.
SECRET_HEADERS = frozenset({"authorization", "x-api-key", "api-key", "proxy-authorization"})


@dataclass(frozen=True)
class ToolResult:
    """A tool result the client sent back: the call it answers and its content."""

    call_id: str
    content: Any


@dataclass(frozen=True)
class RecordedRequest:
    """One request as received. ``headers`` keys are lower-case; ``body`` is the parsed JSON."""

    index: int
    method: str
    path: str
    headers: Mapping[str, str]
    body: Any
    wire: WireName | None
    """Which format the path selected; None for an unknown path."""
    raw_body: bytes = field(default=b"", repr=False)
    received_at: float = field(default=0.0, repr=False)
    """When it arrived (``time.monotonic()``): concurrency tests measure overlap with it."""

    def __repr__(self) -> str:
        shown = {k: ("***" if k in SECRET_HEADERS else v) for k, v in self.headers.items()}
        return (f"RecordedRequest(index={self.index}, {self.method} {self.path}, wire={self.wire}, "
                f"headers={shown}, body={self.body!r})")

    @property
    def model(self) -> str | None:
        if self.wire == "bedrock":  # /model/{percent-encoded id}/converse
            return unquote(self.path.split("/")[2])
        model = self._get("model")
        return model if isinstance(model, str) else None

    @property
    def stream(self) -> bool:
        if self.wire == "bedrock":
            return self.path.endswith("/converse-stream")
        return bool(self._get("stream"))

    @property
    def tool_names(self) -> list[str]:
        """Names of the function tools offered, in order."""
        if self.wire == "bedrock":
            tools = (self._get("toolConfig") or {}).get("tools") or []
            return [t["toolSpec"]["name"] for t in tools if "toolSpec" in t]
        tools = self._get("tools") or []
        if self.wire == "openai_chat":
            return [t["function"]["name"] for t in tools if t.get("type") == "function"]
        return [t["name"] for t in tools if "name" in t]

    @property
    def tool_results(self) -> list[ToolResult]:
        """Every tool result in the conversation, oldest first."""
        return [result for item in self._items() for result in _tool_results(self.wire, item)]

    @property
    def last_user_text(self) -> str | None:
        """The text of the last user message (tool results excluded), if any."""
        prompt = self._get("input")
        if self.wire == "responses" and isinstance(prompt, str):
            return prompt
        for item in reversed(self._items()):
            if item.get("role") == "user":
                text = _text_of(item.get("content"))
                if text:
                    return text
        return None

    def _get(self, key: str) -> Any:
        return self.body.get(key) if isinstance(self.body, dict) else None

    def _items(self) -> list[dict[str, Any]]:
        items = self._get("input" if self.wire == "responses" else "messages")
        return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


def _tool_results(wire: WireName | None, item: dict[str, Any]) -> list[ToolResult]:
    if wire == "openai_chat" and item.get("role") == "tool":
        return [ToolResult(item.get("tool_call_id", ""), item.get("content"))]
    if wire == "responses" and item.get("type") == "function_call_output":
        return [ToolResult(item.get("call_id", ""), item.get("output"))]
    if wire == "anthropic" and isinstance(item.get("content"), list):
        return [ToolResult(block.get("tool_use_id", ""), block.get("content"))
                for block in item["content"]
                if isinstance(block, dict) and block.get("type") == "tool_result"]
    if wire == "bedrock" and isinstance(item.get("content"), list):
        return [ToolResult(block["toolResult"].get("toolUseId", ""),
                           _text_of(block["toolResult"].get("content")) or
                           block["toolResult"].get("content"))
                for block in item["content"] if isinstance(block, dict) and "toolResult" in block]
    return []


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    # Bedrock's content blocks have no "type": {"text": ...}
    texts = [part.get("text", "") for part in content if isinstance(part, dict)
             and part.get("type", "text") in ("text", "input_text")]
    return "".join(texts)
