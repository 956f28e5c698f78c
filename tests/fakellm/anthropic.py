"""Anthropic messages: ``POST /v1/messages``.

Anthropic sends tool input as a JSON object, so malformed arguments (a raw string
that does not parse) can only be reproduced faithfully when streaming, as
``input_json_delta`` fragments; non-streaming, such a string is sent as ``input``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .recording import RecordedRequest
from .script import Fault, Reply, ToolCall, Usage
from .wire import Wire, arguments_json, arguments_object, sse


def usage_json(usage: Usage, *, output_tokens: int | None = None) -> dict[str, Any]:
    # Anthropic's input_tokens counts only the uncached part of the prompt.
    uncached = usage.input_tokens - usage.cached_tokens - usage.cache_write_tokens
    return {
        "input_tokens": uncached,
        "cache_creation_input_tokens": usage.cache_write_tokens,
        "cache_read_input_tokens": usage.cached_tokens,
        "output_tokens": usage.output_tokens if output_tokens is None else output_tokens,
        "service_tier": "standard",
    }


def stop_reason(reply: Reply) -> str:
    if reply.max_tokens_reached:
        return "max_tokens"
    return "tool_use" if reply.tool_calls else "end_turn"


class AnthropicMessages(Wire):
    name = "anthropic"
    paths = ("/v1/messages",)

    def reply(self, reply: Reply, request: RecordedRequest) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if reply.reasoning is not None:
            content.append({"type": "thinking", "thinking": reply.reasoning,
                            "signature": self.ids.new("sig")})
        if reply.text is not None:
            content.append({"type": "text", "text": reply.text})
        content += [{**self._tool_use(call), "input": arguments_object(call)}
                    for call in reply.tool_calls]
        return {**self._message(request), "content": content, "stop_reason": stop_reason(reply),
                "usage": usage_json(reply.usage)}

    def stream(self, reply: Reply, request: RecordedRequest) -> Iterator[bytes]:
        start = {**self._message(request), "content": [], "stop_reason": None,
                 "usage": usage_json(reply.usage, output_tokens=1)}
        yield event({"type": "message_start", "message": start})
        yield event({"type": "ping"})
        index = 0
        if reply.reasoning is not None:
            yield from self._block(index, {"type": "thinking", "thinking": "", "signature": ""},
                                   "thinking_delta", "thinking", reply.reasoning)
            yield event({"type": "content_block_delta", "index": index,
                         "delta": {"type": "signature_delta", "signature": self.ids.new("sig")}})
            yield event({"type": "content_block_stop", "index": index})
            index += 1
        if reply.text is not None:
            yield from self._block(index, {"type": "text", "text": ""},
                                   "text_delta", "text", reply.text)
            yield event({"type": "content_block_stop", "index": index})
            index += 1
        for call in reply.tool_calls:
            yield from self._block(index, {**self._tool_use(call), "input": {}},
                                   "input_json_delta", "partial_json", arguments_json(call))
            yield event({"type": "content_block_stop", "index": index})
            index += 1
        yield event({"type": "message_delta",
                     "delta": {"stop_reason": stop_reason(reply), "stop_sequence": None},
                     "usage": {"output_tokens": reply.usage.output_tokens}})
        yield event({"type": "message_stop"})

    def error(self, fault: Fault) -> dict[str, Any]:
        return {"type": "error",
                "error": {"type": fault.anthropic_type,
                          "message": fault.anthropic_message or fault.message},
                "request_id": self.ids.new("req")}

    def stream_error(self, fault: Fault, sequence: int) -> bytes:
        return event(self.error(fault))

    def _block(self, index: int, block: dict[str, Any], delta_type: str, key: str,
               text: str) -> Iterator[bytes]:
        yield event({"type": "content_block_start", "index": index, "content_block": block})
        for piece in self.pieces(text):
            yield event({"type": "content_block_delta", "index": index,
                         "delta": {"type": delta_type, key: piece}})

    def _tool_use(self, call: ToolCall) -> dict[str, Any]:
        return {"type": "tool_use", "id": call.id or self.ids.new("toolu"), "name": call.name}

    def _message(self, request: RecordedRequest) -> dict[str, Any]:
        return {"id": self.ids.new("msg"), "type": "message", "role": "assistant",
                "model": request.model or "claude-sonnet-4-5", "stop_sequence": None}


def event(data: dict[str, Any]) -> bytes:
    """Anthropic names every SSE event after its ``type``."""
    return sse(data, event=data["type"])
