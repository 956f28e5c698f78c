"""OpenAI Responses: ``POST /v1/responses``.

Output items are built first, so the ids in the streamed ``*.added``/``*.delta``/
``*.done`` events match those in the final ``response.completed`` object.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from .openai_chat import openai_error
from .recording import RecordedRequest
from .script import Fault, Reply, Usage
from .wire import Wire, arguments_json, sse


def usage_json(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": usage.cached_tokens},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }


class OpenAIResponses(Wire):
    name = "responses"
    paths = ("/v1/responses", "/responses")

    def reply(self, reply: Reply, request: RecordedRequest) -> dict[str, Any]:
        return self._response(request, reply, self._output(reply))

    def stream(self, reply: Reply, request: RecordedRequest) -> Iterator[bytes]:
        output = self._output(reply)
        final = self._response(request, reply, output)
        pending = {**final, "status": "in_progress", "output": [], "usage": None,
                   "incomplete_details": None}
        sequence = iter(range(1_000_000))

        def emit(kind: str, **fields: Any) -> bytes:
            return sse({"type": kind, "sequence_number": next(sequence), **fields}, event=kind)

        yield emit("response.created", response=pending)
        yield emit("response.in_progress", response=pending)
        for index, item in enumerate(output):
            at = {"item_id": item["id"], "output_index": index}
            if item["type"] == "reasoning":
                yield emit("response.output_item.added", output_index=index,
                           item={**item, "summary": []})
                part = item["summary"][0]
                yield emit("response.reasoning_summary_part.added", **at, summary_index=0,
                           part={**part, "text": ""})
                for piece in self.pieces(part["text"]):
                    yield emit("response.reasoning_summary_text.delta", **at, summary_index=0,
                               delta=piece)
                yield emit("response.reasoning_summary_text.done", **at, summary_index=0,
                           text=part["text"])
                yield emit("response.reasoning_summary_part.done", **at, summary_index=0,
                           part=part)
            elif item["type"] == "message":
                yield emit("response.output_item.added", output_index=index,
                           item={**item, "status": "in_progress", "content": []})
                part = item["content"][0]
                yield emit("response.content_part.added", **at, content_index=0,
                           part={**part, "text": ""})
                for piece in self.pieces(part["text"]):
                    yield emit("response.output_text.delta", **at, content_index=0,
                               delta=piece, logprobs=[])
                yield emit("response.output_text.done", **at, content_index=0,
                           text=part["text"], logprobs=[])
                yield emit("response.content_part.done", **at, content_index=0, part=part)
            else:
                yield emit("response.output_item.added", output_index=index,
                           item={**item, "status": "in_progress", "arguments": ""})
                for piece in self.pieces(item["arguments"]):
                    yield emit("response.function_call_arguments.delta", **at, delta=piece)
                yield emit("response.function_call_arguments.done", **at,
                           arguments=item["arguments"])
            yield emit("response.output_item.done", output_index=index, item=item)
        done = "response.incomplete" if reply.max_tokens_reached else "response.completed"
        yield emit(done, response=final)

    def error(self, fault: Fault) -> dict[str, Any]:
        return openai_error(fault, fault.responses_message)

    def stream_error(self, fault: Fault, sequence: int) -> bytes:
        # The SDK documents code/message/param at the top level; litellm reads a nested
        # "error" object (as seen on the wire). Sending both satisfies either reader.
        error = openai_error(fault, fault.responses_message)["error"]
        return sse({"type": "error", "sequence_number": sequence, "code": error["code"],
                    "message": error["message"], "param": error["param"], "error": error},
                   event="error")

    def _output(self, reply: Reply) -> list[dict[str, Any]]:
        output: list[dict[str, Any]] = []
        if reply.reasoning is not None:
            output.append({"id": self.ids.new("rs"), "type": "reasoning",
                           "summary": [{"type": "summary_text", "text": reply.reasoning}]})
        if reply.text is not None:
            output.append({"id": self.ids.new("msg"), "type": "message", "status": "completed",
                           "role": "assistant",
                           "content": [{"type": "output_text", "text": reply.text,
                                        "annotations": [], "logprobs": []}]})
        output += [{"id": self.ids.new("fc"), "type": "function_call", "status": "completed",
                    "arguments": arguments_json(call), "call_id": call.id or self.ids.new("call"),
                    "name": call.name}
                   for call in reply.tool_calls]
        return output

    def _response(self, request: RecordedRequest, reply: Reply,
                  output: list[dict[str, Any]]) -> dict[str, Any]:
        body = request.body
        incomplete = reply.max_tokens_reached
        return {
            "id": self.ids.new("resp"), "object": "response", "created_at": int(time.time()),
            "status": "incomplete" if incomplete else "completed",
            "background": False, "error": None,
            "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
            "instructions": body.get("instructions"),
            "max_output_tokens": body.get("max_output_tokens"),
            "model": request.model or "gpt-4o", "output": output,
            "parallel_tool_calls": True,
            "previous_response_id": body.get("previous_response_id"),
            "reasoning": {"effort": None, "summary": None}, "store": True, "temperature": 1.0,
            "text": {"format": {"type": "text"}}, "tool_choice": "auto",
            "tools": body.get("tools") or [], "top_p": 1.0, "truncation": "disabled",
            "usage": usage_json(reply.usage), "user": None, "metadata": {},
        }
