"""OpenAI chat completions: ``POST /v1/chat/completions``.

Reasoning text goes in ``reasoning_content``, the field OpenAI-compatible servers
(DeepSeek, vLLM, OpenRouter) use; OpenAI itself only reports reasoning tokens.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from .recording import RecordedRequest
from .script import Fault, Reply, Usage
from .wire import Wire, arguments_json, sse


def usage_json(usage: Usage) -> dict[str, Any]:
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cached_tokens, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": usage.reasoning_tokens,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def openai_error(fault: Fault, message: str | None = None) -> dict[str, Any]:
    """OpenAI's error body, shared with the Responses API."""
    return {"error": {"message": message or fault.message, "type": fault.openai_type,
                      "param": fault.param, "code": fault.openai_code}}


def finish_reason(reply: Reply) -> str:
    if reply.max_tokens_reached:
        return "length"
    return "tool_calls" if reply.tool_calls else "stop"


class OpenAIChat(Wire):
    name = "openai_chat"
    paths = ("/v1/chat/completions", "/chat/completions")

    def reply(self, reply: Reply, request: RecordedRequest) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text,
                                   "refusal": None, "annotations": []}
        if reply.reasoning is not None:
            message["reasoning_content"] = reply.reasoning
        if reply.tool_calls:
            message["tool_calls"] = [
                {"id": call.id or self.ids.new("call"), "type": "function",
                 "function": {"name": call.name, "arguments": arguments_json(call)}}
                for call in reply.tool_calls
            ]
        return {
            **self._envelope(request, "chat.completion"),
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": finish_reason(reply)}],
            "usage": usage_json(reply.usage),
        }

    def stream(self, reply: Reply, request: RecordedRequest) -> Iterator[bytes]:
        envelope = self._envelope(request, "chat.completion.chunk")
        options = request.body.get("stream_options") or {}
        include_usage = bool(options.get("include_usage"))
        if include_usage:
            envelope["usage"] = None

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            return sse({**envelope, "choices": [choice]})

        yield chunk({"role": "assistant", "content": "", "refusal": None})
        for piece in self.pieces(reply.reasoning) if reply.reasoning else ():
            yield chunk({"reasoning_content": piece})
        for piece in self.pieces(reply.text) if reply.text else ():
            yield chunk({"content": piece})
        for index, call in enumerate(reply.tool_calls):
            call_id = call.id or self.ids.new("call")
            yield chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                         "function": {"name": call.name, "arguments": ""}}]})
            for piece in self.pieces(arguments_json(call)):
                yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        yield chunk({}, finish_reason(reply))
        if include_usage:
            yield sse({**envelope, "choices": [], "usage": usage_json(reply.usage)})
        yield sse("[DONE]")

    def error(self, fault: Fault) -> dict[str, Any]:
        return openai_error(fault)

    def stream_error(self, fault: Fault, sequence: int) -> bytes:
        return sse(openai_error(fault))

    def _envelope(self, request: RecordedRequest, kind: str) -> dict[str, Any]:
        return {"id": self.ids.new("chatcmpl", "-"), "object": kind, "created": int(time.time()),
                "model": request.model or "gpt-4o", "service_tier": "default",
                "system_fingerprint": "fp_fake"}
