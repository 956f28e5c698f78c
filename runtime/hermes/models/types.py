"""Plain data the model layer hands to the agent: replies, tool calls, usage."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    """One tool call as the model wrote it; ``arguments`` is the raw JSON text."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Usage:
    """Tokens of one call (or a sum of calls). ``cost_usd`` is None when pricing is unknown."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float | None = None

    def __add__(self, other: Usage) -> Usage:
        cost = (None if self.cost_usd is None or other.cost_usd is None
                else self.cost_usd + other.cost_usd)
        return Usage(self.input_tokens + other.input_tokens,
                     self.output_tokens + other.output_tokens,
                     self.cache_read_tokens + other.cache_read_tokens,
                     self.cache_write_tokens + other.cache_write_tokens,
                     self.reasoning_tokens + other.reasoning_tokens, cost)


@dataclass(frozen=True)
class ModelReply:
    """The assistant's turn: text and/or tool calls, with usage and who answered."""

    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    reasoning: str | None = None
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    model: str = ""

    def as_message(self) -> dict[str, Any]:
        """The reply as an OpenAI-style assistant message for the transcript."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content or None}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function",
                 "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        return message


@dataclass
class StreamCallbacks:
    """What a streaming call reports as it goes; every callback is optional."""

    on_text: Callable[[str], None] | None = None
    """A piece of answer text."""
    on_reasoning: Callable[[str], None] | None = None
    """A piece of reasoning text."""
    on_tool_call: Callable[[int, str], None] | None = None
    """A tool call started: its index and name."""
    cancelled: Callable[[], bool] | None = None
    """Polled between chunks; True stops the stream (Ctrl-C)."""
