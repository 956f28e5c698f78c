"""Assembling a streamed chat completion from its chunks, for both ways a call goes out:
litellm's chunk objects and the JSON objects of ``openai_wire`` (fields are read from
either)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from hermes.models.errors import CallCancelledError
from hermes.models.types import ModelReply, StreamCallbacks, ToolCall, Usage


class StreamEndedEarly(Exception):
    """The stream ended before a chunk said how the reply finished."""


def assemble(chunks: Iterable[Any], model: str, callbacks: StreamCallbacks,
             usage_of: Callable[[Any], Usage]) -> ModelReply:
    """The reply the chunks make up, reporting deltas to ``callbacks`` as they arrive."""
    text: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, dict[str, str]] = {}
    finish: str | None = None
    usage: Any = None
    for chunk in chunks:
        raise_if_cancelled(callbacks)
        usage = field(chunk, "usage") or usage
        for choice in (field(chunk, "choices") or [])[:1]:
            finish = field(choice, "finish_reason") or finish
            delta = field(choice, "delta")
            if delta is not None:
                _take(delta, text, reasoning, calls, callbacks)
    if finish is None:
        raise StreamEndedEarly(f"{model}: stream ended before the reply finished")
    tool_calls = tuple(ToolCall(c["id"], c["name"], c["arguments"])
                       for _, c in sorted(calls.items()))
    return ModelReply("".join(text), tool_calls, "".join(reasoning) or None, finish,
                      usage_of(usage), model)


def field(obj: Any, name: str) -> Any:
    """``obj[name]`` of a dict, else the attribute; None when missing."""
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def raise_if_cancelled(callbacks: StreamCallbacks) -> None:
    if callbacks.cancelled and callbacks.cancelled():
        raise CallCancelledError("model call interrupted")


def _take(delta: Any, text: list[str], reasoning: list[str], calls: dict[int, dict[str, str]],
          callbacks: StreamCallbacks) -> None:
    content = field(delta, "content")
    if content:
        text.append(content)
        if callbacks.on_text:
            callbacks.on_text(content)
    thought = field(delta, "reasoning_content") or field(delta, "reasoning")
    if isinstance(thought, str) and thought:
        reasoning.append(thought)
        if callbacks.on_reasoning:
            callbacks.on_reasoning(thought)
    for call in field(delta, "tool_calls") or []:
        index = field(call, "index") or 0
        entry = calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
        entry["id"] = field(call, "id") or entry["id"]
        function = field(call, "function")
        if function is None:
            continue
        name = field(function, "name")
        if name and not entry["name"]:
            entry["name"] = name
            if callbacks.on_tool_call:
                callbacks.on_tool_call(index, name)
        entry["arguments"] += field(function, "arguments") or ""


def usage_of(usage: Any) -> Usage:
    """Tokens of a usage object (chat's or the Responses API's names); no cost."""
    if usage is None:
        return Usage()

    def number(obj: Any, *names: str) -> int:
        for name in names:
            value = field(obj, name) if obj is not None else None
            if isinstance(value, int | float) and not isinstance(value, bool):
                return int(value)
        return 0

    prompt = field(usage, "prompt_tokens_details") or field(usage, "input_tokens_details")
    output = field(usage, "completion_tokens_details") or field(usage, "output_tokens_details")
    return Usage(input_tokens=number(usage, "prompt_tokens", "input_tokens"),
                 output_tokens=number(usage, "completion_tokens", "output_tokens"),
                 cache_read_tokens=number(usage, "cache_read_input_tokens")
                 or number(prompt, "cached_tokens"),
                 cache_write_tokens=number(usage, "cache_creation_input_tokens"),
                 reasoning_tokens=number(output, "reasoning_tokens"))
