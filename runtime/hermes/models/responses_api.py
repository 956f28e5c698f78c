"""The OpenAI Responses wire format: chat messages in, a ``ModelReply`` out."""

from __future__ import annotations

import json
from typing import Any

from hermes.models.content import content_parts
from hermes.models.types import StreamCallbacks, ToolCall


def to_responses_input(messages: list[dict[str, Any]]) -> tuple[str | None, list[dict[str, Any]]]:
    """``(instructions, input items)`` for ``litellm.responses`` from chat messages."""
    instructions: list[str] = []
    items: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        content = _text(message.get("content"))
        if role == "system":
            instructions.append(content)
        elif role == "tool":
            items.append({"type": "function_call_output", "call_id": message["tool_call_id"],
                          "output": content})
        else:
            parts = _input_parts(message.get("content")) if role == "user" else None
            if parts:
                items.append({"role": role, "content": parts})
            elif content:
                items.append({"role": role, "content": content})
            for call in message.get("tool_calls") or []:
                fn = call["function"]
                items.append({"type": "function_call", "call_id": call["id"],
                              "name": fn["name"], "arguments": fn["arguments"]})
    return ("\n\n".join(instructions) or None), items


def to_responses_tools(tools: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    """Chat-completions tool schemas flattened to the Responses shape."""
    if not tools:
        return None
    return [{"type": "function", **tool["function"]} for tool in tools]


def parse_output(output: list[Any]) -> tuple[str, list[ToolCall], str | None]:
    """Text, tool calls and reasoning from a finished response's output items."""
    text: list[str] = []
    calls: list[ToolCall] = []
    reasoning: list[str] = []
    for item in output:
        kind = _get(item, "type")
        if kind == "message":
            text += [_get(part, "text") or "" for part in _get(item, "content") or []]
        elif kind == "function_call":
            calls.append(ToolCall(_get(item, "call_id") or _get(item, "id") or "",
                                  _get(item, "name") or "", _get(item, "arguments") or ""))
        elif kind == "reasoning":
            reasoning += [_get(part, "text") or "" for part in _get(item, "summary") or []]
    return "".join(text), calls, ("".join(reasoning) or None)


def consume_stream(events: Any, callbacks: StreamCallbacks) -> Any:
    """Report deltas as they come; return the final response (``response.completed``)."""
    final = None
    for event in events:
        if callbacks.cancelled and callbacks.cancelled():
            return None
        kind = _get(event, "type")
        if kind == "response.output_text.delta" and callbacks.on_text:
            callbacks.on_text(_get(event, "delta") or "")
        elif kind == "response.output_item.added" and callbacks.on_tool_call:
            item = _get(event, "item")
            if _get(item, "type") == "function_call":
                callbacks.on_tool_call(_get(event, "output_index") or 0, _get(item, "name") or "")
        elif kind in ("response.completed", "response.incomplete"):
            final = _get(event, "response")
    return final


def _input_parts(content: Any) -> list[dict[str, Any]] | None:
    """A user message's text and images as Responses input parts; None when it holds no
    image (plain text is sent as a string)."""
    found = list(content_parts(content)) if isinstance(content, list) else []
    if not any(kind == "image" for kind, _ in found):
        return None
    parts: list[dict[str, Any]] = []
    for kind, value in found:
        if value and kind == "image":
            parts.append({"type": "input_image", "image_url": value})
        elif value:
            parts.append({"type": "input_text", "text": value})
    return parts


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return json.dumps(content)


def _get(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
